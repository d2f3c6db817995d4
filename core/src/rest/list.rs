//! LIST of a collection, with limit and continue.

use super::{object, table, Scope};
use crate::negotiation::Shape;
use crate::server::Step;
use crate::status::ApiError;
use crate::storage::{Revision, StorageOp, StorageOutput};
use base64::Engine;
use serde_json::{json, Map, Value};

/// The opaque continue token: the revision the first page was read at and the last key
/// returned, relative to the collection's prefix.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct ContinueToken {
    v: String,
    rv: Revision,
    start: String,
}

fn encode_continue(revision: Revision, last_key_suffix: &str) -> String {
    let token = ContinueToken {
        v: "meta.k8s.io/v1".to_owned(),
        rv: revision,
        start: format!("{last_key_suffix}\u{0}"),
    };
    base64::engine::general_purpose::URL_SAFE.encode(serde_json::to_vec(&token).unwrap_or_default())
}

fn decode_continue(token: &str) -> Result<ContinueToken, ApiError> {
    let bad = || ApiError::bad_request(format!("continue key is not valid: {token}"));
    let raw = base64::engine::general_purpose::URL_SAFE
        .decode(token)
        .or_else(|_| base64::engine::general_purpose::STANDARD.decode(token))
        .map_err(|_| bad())?;
    let t: ContinueToken = serde_json::from_slice(&raw).map_err(|_| bad())?;
    if t.v != "meta.k8s.io/v1" || t.start.contains("..") || t.start.starts_with('/') {
        return Err(bad());
    }
    Ok(t)
}

pub(super) fn list(scope: Scope) -> Step {
    let limit = match scope.query.get("limit").filter(|l| !l.is_empty()) {
        None => None,
        Some(l) => match l.parse::<i64>() {
            Ok(n) if n > 0 => Some(n as usize),
            Ok(_) => None,
            Err(_) => return scope.fail(ApiError::bad_request(format!("invalid value for limit: {l}"))),
        },
    };
    let prefix = scope.prefix();
    let (revision, start_after) = match scope.query.get("continue").filter(|c| !c.is_empty()) {
        Some(token) => match decode_continue(token) {
            Ok(t) => {
                let start = t.start.trim_end_matches('\u{0}');
                (Some(t.rv), Some(format!("{prefix}{start}")))
            }
            Err(e) => return scope.fail(e),
        },
        None => (None, None),
    };
    let op = StorageOp::List {
        prefix: prefix.clone(),
        revision,
        start_after,
        limit,
    };
    scope.then(op, move |scope, done| {
        let page = match done {
            Ok(StorageOutput::Listed(page)) => page,

            Err(crate::storage::StorageError::Compacted { .. }) if revision.is_some() => {
                return scope.fail(ApiError::gone(
                    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                ));
            }
            other => return scope.fail_storage("", other),
        };
        let mut items = Vec::with_capacity(page.items.len());
        for kv in &page.items {
            match object::from_storage(kv) {
                Ok(obj) => items.push(obj),
                Err(e) => return scope.fail(ApiError::internal(e)),
            }
        }
        let rv = page.revision.to_string();
        let next = match (page.more, page.items.last()) {
            (true, Some(last)) => Some(encode_continue(page.revision, &last.key[prefix.len()..])),
            _ => None,
        };
        if let Shape::Table(version) = scope.output.shape {
            let t = table::table(&scope, version, &items, &rv, next.as_deref());
            return scope.respond(200, &t);
        }
        let mut meta = Map::new();
        meta.insert("resourceVersion".into(), Value::String(rv));
        if let Some(token) = next {
            meta.insert("continue".into(), Value::String(token));
            meta.insert("remainingItemCount".into(), json!(page.remaining));
        }
        let items: Vec<Value> = items
            .into_iter()
            .map(|mut obj| {
                // Items of a built-in list carry no type information of their own.
                obj.remove("kind");
                obj.remove("apiVersion");
                Value::Object(obj)
            })
            .collect();
        let r = scope.resource();
        let list = json!({
            "kind": r.list_kind(),
            "apiVersion": r.api_version(),
            "metadata": meta,
            "items": items,
        });
        scope.respond(200, &list)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let t = decode_continue(&encode_continue(42, "x/a")).unwrap();
        assert_eq!((t.rv, t.start.as_str()), (42, "x/a\u{0}"));
        assert_eq!(decode_continue("%%%").unwrap_err().code, 400);
        let sneaky = base64::engine::general_purpose::URL_SAFE
            .encode(br#"{"v":"meta.k8s.io/v1","rv":1,"start":"../secrets"}"#);
        assert_eq!(decode_continue(&sneaky).unwrap_err().code, 400);
    }
}

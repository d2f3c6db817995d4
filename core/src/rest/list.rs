//! LIST of a collection, with limit and continue, filtered by label and field selectors.

use super::object::Object;
use super::scope::Scope;
use super::table;
use crate::negotiation::Shape;
use crate::selection::Selection;
use crate::effect::Step;
use crate::status::ApiError;
use crate::storage::{KeyValue, Revision, StorageOp, StorageOutput};
use bytes::Bytes;
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

/// The most keys one storage step reads while a selector filters them out (upstream's
/// etcd store grows its page up to the same bound).
const MAX_STEP: usize = 10_000;

/// The request's `labelSelector` and `fieldSelector`, for its resource.
pub(super) fn selection(scope: &Scope) -> Result<Selection, ApiError> {
    Selection::parse(
        scope.resource(),
        scope.query.get("labelSelector"),
        scope.query.get("fieldSelector"),
    )
}

/// A LIST under way: the matches so far and where to read next.
struct Listing {
    /// The resourceVersion semantics the client asked for.
    read_at: super::read_at::ReadAt,
    selection: Selection,
    prefix: String,
    /// How many matches the client asked for.
    limit: Option<usize>,
    /// How many keys the next storage step reads.
    step: Option<usize>,
    /// The revision every page is read at: the continue token's, then the first page's.
    revision: Option<Revision>,
    /// Whether the revision came from the client's continue token.
    continued: bool,
    start_after: Option<String>,
    items: Vec<Item>,
    /// Whether items can be served from their stored bytes without parsing: plain
    /// JSON objects, no selector.
    spliced: bool,
    /// Whether items can be served as protobuf made from their stored bytes alone
    /// (plain objects of a built-in kind, no selector), kept in the watch cache.
    spliced_protobuf: bool,
    /// Whether items lose their kind and apiVersion (built-in lists).
    untyped_items: bool,
}

/// One object of the list, parsed or already encoded as a list item (in the response's
/// encoding).
enum Item {
    Parsed(Object),
    Encoded(bytes::Bytes),
}

pub(super) fn list(scope: Scope) -> Step {
    let limit = match scope.query.get("limit").filter(|l| !l.is_empty()) {
        None => None,
        Some(l) => match l.parse::<i64>() {
            Ok(n) if n > 0 => Some(n as usize),
            Ok(_) => None,
            Err(_) => {
                return scope.fail(ApiError::bad_request(format!(
                    "invalid value for limit: {l}"
                )))
            }
        },
    };
    let selection = match selection(&scope) {
        Ok(s) => s,
        Err(e) => return scope.fail(e),
    };
    let read_at = match super::read_at::for_list(&scope.query) {
        Ok(r) => r,
        Err(e) => return scope.fail(e),
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
        None => (read_at.revision(), None),
    };
    let selection_is_everything = selection.is_everything();
    let listing = Listing {
        read_at,
        selection,
        prefix,
        limit,
        step: limit,
        revision,
        continued: start_after.is_some(),
        start_after,
        items: Vec::new(),
        spliced: scope.output == crate::negotiation::Output::JSON && selection_is_everything && scope.splices(),
        spliced_protobuf: selection_is_everything && scope.protobuf_from_stored_bytes(),
        untyped_items: !scope.resource().strategy.typed_list_items(),
    };
    match from_cache(scope, listing) {
        Ok(step) => step,
        Err(back) => {
            let (scope, listing) = *back;
            read_page(scope, listing)
        }
    }
}

/// Serve a whole list from the resource's watch cache, when the client accepts any
/// state (`resourceVersion=0`, or one the cache has reached) and asks for no paging;
/// otherwise hand the request back for storage.
fn from_cache(scope: Scope, mut listing: Listing) -> Result<Step, Box<(Scope, Listing)>> {
    use super::read_at::ReadAt;
    if scope.resource().strategy.conversion_webhook().is_some() {
        // The cache holds the storage version; storage's answers are converted.
        return Err(Box::new((scope, listing)));
    }
    let at_least = match listing.read_at {
        ReadAt::Any => 0,
        ReadAt::NotOlderThan(n) => n,
        ReadAt::Latest if listing.limit.is_none() && !listing.continued => {
            // A consistent read: the cache serves it once it has caught up with the
            // backend's current revision.
            return Ok(
                scope.then(StorageOp::CurrentRevision, move |scope, done| match done {
                    Ok(StorageOutput::Revision(current)) => {
                        listing.read_at = ReadAt::NotOlderThan(current);
                        match from_cache(scope, listing) {
                            Ok(step) => step,
                            Err(back) => {
                                let (scope, mut listing) = *back;
                                listing.read_at = ReadAt::Latest;
                                read_page(scope, listing)
                            }
                        }
                    }
                    other => scope.fail_storage("", other),
                }),
            );
        }
        ReadAt::Latest | ReadAt::Exact(_) => return Err(Box::new((scope, listing))),
    };
    if listing.limit.is_some() || listing.continued {
        return Err(Box::new((scope, listing)));
    }
    let snapshot = scope
        .shared
        .watch_cache_of(scope.resource())
        .and_then(|cache| cache.snapshot(&listing.prefix, at_least));
    let Some((items, revision)) = snapshot else {
        return Err(Box::new((scope, listing)));
    };
    let mut made = protobuf_items(&scope, &listing, &items).into_iter();
    for kv in &items {
        if let Err(e) = keep(&scope, &mut listing, kv, made.next().flatten()) {
            return Ok(scope.fail(e));
        }
    }
    Ok(respond(scope, listing, revision, false, 0))
}

/// Add `kv` to the list if the selection matches it: as its stored bytes spliced, as
/// the protobuf item `made` of them, or parsed.
fn keep(scope: &Scope, listing: &mut Listing, kv: &KeyValue, made: Option<Bytes>) -> Result<(), ApiError> {
    if let Some(item) = made {
        listing.items.push(Item::Encoded(item));
        return Ok(());
    }
    if listing.spliced {
        if let Some(item) = crate::stored_json::serve(&kv.value, kv.mod_revision, listing.untyped_items) {
            listing.items.push(Item::Encoded(Bytes::from(item)));
            return Ok(());
        }
    }
    let obj = scope.read(kv).map_err(ApiError::internal)?;
    if listing.selection.matches(&obj) {
        listing.items.push(Item::Parsed(obj));
    }
    Ok(())
}

/// Read the next page from storage and keep the objects the selection matches; read on
/// (at the same revision, with a growing page) until `limit` objects match or the keys
/// run out, as kube-apiserver's storage layer does, so a page of a selective LIST is
/// full unless it is the last, and its continue token points after the last key read.
fn read_page(scope: Scope, mut listing: Listing) -> Step {
    let op = StorageOp::List {
        prefix: listing.prefix.clone(),
        revision: listing.revision,
        start_after: listing.start_after.clone(),
        limit: listing.step,
    };
    scope.then(op, move |scope, done| {
        let page = match done {
            Ok(StorageOutput::Listed(page)) => page,
            Err(crate::storage::StorageError::Compacted { .. }) if listing.continued => {
                return scope.fail(ApiError::gone(
                    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                ));
            }
            other => return scope.fail_storage("", other),
        };
        if let Err(e) = listing.read_at.check(page.revision) {
            return scope.fail(e);
        }
        let mut more = page.more;
        let mut read = 0;
        let wanted = listing.limit.map_or(page.items.len(), |l| l.saturating_sub(listing.items.len()));
        let made = protobuf_items(&scope, &listing, &page.items[..wanted.min(page.items.len())]);
        let mut made = made.into_iter();
        for kv in &page.items {
            if listing.limit.is_some_and(|l| listing.items.len() >= l) {
                more = true;
                break;
            }
            read += 1;
            listing.start_after = Some(kv.key.clone());
            if let Err(e) = keep(&scope, &mut listing, kv, made.next().flatten()) {
                return scope.fail(e);
            }
        }
        listing.revision = Some(page.revision);
        let full = listing.limit.is_some_and(|l| listing.items.len() >= l);
        if more && listing.limit.is_some() && !full && read > 0 {
            listing.step = listing.step.map(|s| if s < MAX_STEP { (s * 2).min(MAX_STEP) } else { s });
            return read_page(scope, listing);
        }
        // What remains after the page; unknown (and not reported) under a selector.
        let remaining = page.remaining + (page.items.len() - read) as u64;
        respond(scope, listing, page.revision, more, remaining)
    })
}

fn respond(scope: Scope, listing: Listing, revision: Revision, more: bool, remaining: u64) -> Step {
    let rv = revision.to_string();
    let next = match (more, listing.start_after.as_deref()) {
        (true, Some(last)) => Some(encode_continue(revision, &last[listing.prefix.len()..])),
        _ => None,
    };
    if let Shape::Table(version) = scope.output.shape {
        let objects: Vec<Object> = listing.items.into_iter().filter_map(Item::parsed).collect();
        let t = table::table(&scope, version, &objects, &rv, next.as_deref());
        return scope.respond(200, &t);
    }
    let mut meta = Map::new();
    meta.insert("resourceVersion".into(), Value::String(rv));
    if let Some(token) = next {
        meta.insert("continue".into(), Value::String(token));
        if listing.selection.is_everything() {
            meta.insert("remainingItemCount".into(), json!(remaining));
        }
    }
    let r = scope.resource();
    if listing.spliced {
        return encoded_list(&scope, &Value::Object(meta), listing.items);
    }
    if listing.spliced_protobuf {
        let meta = Value::Object(meta);
        let items: Option<Vec<Bytes>> = listing
            .items
            .into_iter()
            .map(|item| match item {
                Item::Encoded(bytes) => Some(bytes),
                Item::Parsed(obj) => crate::protobuf::encode_item(&r.api_version(), &r.kind, &Value::Object(obj)).ok().map(Bytes::from),
            })
            .collect();
        let body = items
            .ok_or_else(|| crate::protobuf::EncodeError(format!("an item is no {}", r.kind)))
            .and_then(|items| crate::protobuf::encode_list(&r.api_version(), &r.list_kind(), &meta, &items));
        return match body {
            Ok(body) => Step::Respond(
                http::Response::builder()
                    .status(200)
                    .header(http::header::CONTENT_TYPE, scope.output.content_type())
                    .body(Bytes::from(body))
                    .expect("valid response"),
            ),
            Err(e) => scope.fail(ApiError::internal(e)),
        };
    }
    let items: Vec<Value> = listing
        .items
        .into_iter()
        .filter_map(Item::parsed)
        .map(|obj| Value::Object(as_item(&scope, obj)))
        .collect();
    let list = json!({
        "kind": r.list_kind(),
        "apiVersion": r.api_version(),
        "metadata": meta,
        "items": items,
    });
    scope.respond(200, &list)
}

/// The protobuf list items of `objects` when the listing serves them from stored
/// bytes ([`Scope::protobuf_items`]); none (each object takes another path) otherwise.
fn protobuf_items(scope: &Scope, listing: &Listing, objects: &[KeyValue]) -> Vec<Option<Bytes>> {
    if !listing.spliced_protobuf {
        return Vec::new();
    }
    scope.protobuf_items(objects)
}

impl Item {
    fn parsed(self) -> Option<Object> {
        match self {
            Item::Parsed(obj) => Some(obj),
            Item::Encoded(_) => None,
        }
    }
}

/// Items of a built-in list carry no type information of their own (a custom
/// resource's keep theirs).
fn as_item(scope: &Scope, mut obj: Object) -> Object {
    if !scope.resource().strategy.typed_list_items() {
        obj.remove("kind");
        obj.remove("apiVersion");
    }
    obj
}

/// The list as compact JSON, written around items that are already encoded: a
/// built-in kind's list in its Go type's order (`kind`, `apiVersion`, `metadata`,
/// `items`), a custom resource's with sorted keys, as upstream writes each.
fn encoded_list(scope: &Scope, meta: &Value, items: Vec<Item>) -> Step {
    let r = scope.resource();
    let size: usize = items
        .iter()
        .map(|i| match i {
            Item::Encoded(b) => b.len() + 1,
            Item::Parsed(_) => 1024,
        })
        .sum();
    let typed = !r.strategy.typed_list_items();
    let mut body = Vec::with_capacity(size + 256);
    let write_items = |body: &mut Vec<u8>, items: Vec<Item>| {
        body.extend_from_slice(b"\"items\":[");
        for (n, item) in items.into_iter().enumerate() {
            if n > 0 {
                body.push(b',');
            }
            match item {
                Item::Encoded(bytes) => body.extend_from_slice(&bytes),
                Item::Parsed(obj) => {
                    let obj = Value::Object(as_item(scope, obj));
                    match crate::typed_json::encode_as(&r.api_version(), &r.kind, &obj).filter(|_| typed) {
                        Some(bytes) => body.extend_from_slice(&bytes),
                        None => serde_json::to_writer(&mut *body, &obj).expect("JSON values serialize"),
                    }
                }
            }
        }
        body.push(b']');
    };
    if typed {
        body.extend_from_slice(b"{\"kind\":");
        crate::typed_json::write_string(&mut body, &r.list_kind());
        body.extend_from_slice(b",\"apiVersion\":");
        crate::typed_json::write_string(&mut body, &r.api_version());
        body.extend_from_slice(b",\"metadata\":");
        match crate::typed_json::encode_message("meta.v1.ListMeta", meta) {
            Some(bytes) => body.extend_from_slice(&bytes),
            None => serde_json::to_writer(&mut body, meta).expect("JSON values serialize"),
        }
        body.push(b',');
        write_items(&mut body, items);
    } else {
        body.extend_from_slice(b"{\"apiVersion\":");
        serde_json::to_writer(&mut body, &r.api_version()).expect("strings serialize");
        body.push(b',');
        write_items(&mut body, items);
        body.extend_from_slice(b",\"kind\":");
        serde_json::to_writer(&mut body, &r.list_kind()).expect("strings serialize");
        body.extend_from_slice(b",\"metadata\":");
        serde_json::to_writer(&mut body, meta).expect("JSON values serialize");
    }
    body.extend_from_slice(b"}\n");
    Step::Respond(
        http::Response::builder()
            .status(200)
            .header(http::header::CONTENT_TYPE, scope.output.content_type())
            .body(bytes::Bytes::from(body))
            .expect("valid response"),
    )
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

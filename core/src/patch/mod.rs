//! The patch documents PATCH takes: JSON merge patch (RFC 7386,
//! `application/merge-patch+json`) and JSON patch (RFC 6902,
//! `application/json-patch+json`), which need no schema, and strategic merge patch
//! (`application/strategic-merge-patch+json`, [`strategic`]), which merges lists as the
//! kind's schema says.

use serde_json::{Map, Value};

pub mod strategic;

pub use strategic::strategic_merge_patch;

/// The most operations one JSON patch may hold (kube-apiserver's limit).
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// Why a patch was not applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchError {
    /// The patch document itself is malformed (400).
    Malformed(String),
    /// A well-formed patch does not apply to this object (422), such as a failed `test`
    /// or a path that does not exist.
    NotApplicable(String),
    /// A failure kube-apiserver does not classify (it answers 500 with this message),
    /// such as a strategic merge patch list item without its merge key.
    Internal(String),
}

/// Apply a JSON merge patch: objects merge key by key, `null` removes a key, anything
/// else (arrays included) replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target) = target else { unreachable!("made an object above") };
    for (key, value) in patch {
        if value.is_null() {
            target.remove(key);
        } else {
            merge_patch(target.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// Apply a JSON patch, all operations or none.
pub fn json_patch(target: &Value, patch: &Value) -> Result<Value, PatchError> {
    let Value::Array(operations) = patch else {
        return Err(PatchError::Malformed(
            "a JSON patch must be an array of operations".into(),
        ));
    };
    if operations.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(PatchError::Malformed(format!(
            "the JSON patch has {} operations, more than the {MAX_JSON_PATCH_OPERATIONS} allowed",
            operations.len()
        )));
    }
    let mut doc = target.clone();
    for operation in operations {
        apply(&mut doc, operation)?;
    }
    Ok(doc)
}

fn field<'a>(operation: &'a Value, name: &str) -> Result<&'a Value, PatchError> {
    operation
        .get(name)
        .ok_or_else(|| PatchError::Malformed(format!("operation {operation} has no \"{name}\"")))
}

fn pointer(operation: &Value, name: &str) -> Result<Vec<String>, PatchError> {
    match field(operation, name)? {
        Value::String(text) => parse_pointer(text),
        other => Err(PatchError::Malformed(format!("\"{name}\" must be a string, not {other}"))),
    }
}

/// An RFC 6901 JSON pointer as its reference tokens.
fn parse_pointer(text: &str) -> Result<Vec<String>, PatchError> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = text.strip_prefix('/') else {
        return Err(PatchError::Malformed(format!("{text:?} is not a JSON pointer")));
    };
    Ok(rest.split('/').map(|t| t.replace("~1", "/").replace("~0", "~")).collect())
}

fn apply(doc: &mut Value, operation: &Value) -> Result<(), PatchError> {
    let op = match field(operation, "op")? {
        Value::String(op) => op.as_str(),
        other => return Err(PatchError::Malformed(format!("\"op\" must be a string, not {other}"))),
    };
    let path = pointer(operation, "path")?;
    match op {
        "add" => add(doc, &path, field(operation, "value")?.clone()),
        "remove" => remove(doc, &path).map(drop),
        "replace" => {
            let value = field(operation, "value")?.clone();
            *get_mut(doc, &path)? = value;
            Ok(())
        }
        "move" => {
            let from = pointer(operation, "from")?;
            if path.len() > from.len() && path[..from.len()] == from[..] {
                return Err(PatchError::NotApplicable(format!(
                    "cannot move {} into its own child",
                    display(&from)
                )));
            }
            let value = remove(doc, &from)?;
            add(doc, &path, value)
        }
        "copy" => {
            let value = get_mut(doc, &pointer(operation, "from")?)?.clone();
            add(doc, &path, value)
        }
        "test" => {
            let expected = field(operation, "value")?;
            let actual = get_mut(doc, &path)?;
            if actual != expected {
                return Err(PatchError::NotApplicable(format!(
                    "testing value {} failed",
                    display(&path)
                )));
            }
            Ok(())
        }
        other => Err(PatchError::Malformed(format!("unknown operation {other:?}"))),
    }
}

fn display(path: &[String]) -> String {
    path.iter()
        .map(|t| format!("/{}", t.replace('~', "~0").replace('/', "~1")))
        .collect()
}

fn missing(path: &[String]) -> PatchError {
    PatchError::NotApplicable(format!("path {} does not exist", display(path)))
}

/// The value at `path`.
fn get_mut<'a>(doc: &'a mut Value, path: &[String]) -> Result<&'a mut Value, PatchError> {
    let mut at = doc;
    for (depth, token) in path.iter().enumerate() {
        at = match at {
            Value::Object(map) => map.get_mut(token),
            Value::Array(items) => index(token, items.len(), false)
                .ok()
                .and_then(|i| items.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| missing(&path[..=depth]))?;
    }
    Ok(at)
}

/// An array index token: digits without leading zeros, or `-` (one past the end) where
/// that is allowed.
fn index(token: &str, len: usize, dash_allowed: bool) -> Result<usize, ()> {
    if token == "-" && dash_allowed {
        return Ok(len);
    }
    if token.is_empty() || (token.len() > 1 && token.starts_with('0')) || !token.bytes().all(|b| b.is_ascii_digit()) {
        return Err(());
    }
    token.parse().map_err(|_| ())
}

fn split(path: &[String]) -> Result<(&[String], &String), PatchError> {
    path.split_last()
        .map(|(last, parent)| (parent, last))
        .ok_or_else(|| PatchError::NotApplicable("the whole document cannot be the target".into()))
}

fn add(doc: &mut Value, path: &[String], value: Value) -> Result<(), PatchError> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = split(path)?;
    match get_mut(doc, parent)? {
        Value::Object(map) => {
            map.insert(last.clone(), value);
            Ok(())
        }
        Value::Array(items) => {
            let i = index(last, items.len(), true).map_err(|()| missing(path))?;
            if i > items.len() {
                return Err(missing(path));
            }
            items.insert(i, value);
            Ok(())
        }
        _ => Err(missing(path)),
    }
}

fn remove(doc: &mut Value, path: &[String]) -> Result<Value, PatchError> {
    let (parent, last) = split(path)?;
    match get_mut(doc, parent)? {
        Value::Object(map) => map.remove(last).ok_or_else(|| missing(path)),
        Value::Array(items) => {
            let i = index(last, items.len(), false).map_err(|()| missing(path))?;
            if i >= items.len() {
                return Err(missing(path));
            }
            Ok(items.remove(i))
        }
        _ => Err(missing(path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_follows_rfc_7386() {
        // The examples of RFC 7386, appendix A.
        let cases = [
            (json!({"a":"b"}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"b"}), json!({"b":"c"}), json!({"a":"b","b":"c"})),
            (json!({"a":"b"}), json!({"a":null}), json!({})),
            (json!({"a":"b","b":"c"}), json!({"a":null}), json!({"b":"c"})),
            (json!({"a":["b"]}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"c"}), json!({"a":["b"]}), json!({"a":["b"]})),
            (json!({"a":{"b":"c"}}), json!({"a":{"b":"d","c":null}}), json!({"a":{"b":"d"}})),
            (json!({"a":[{"b":"c"}]}), json!({"a":[1]}), json!({"a":[1]})),
            (json!(["a","b"]), json!(["c","d"]), json!(["c","d"])),
            (json!({"a":"b"}), json!(["c"]), json!(["c"])),
            (json!({"a":"foo"}), json!(null), json!(null)),
            (json!({"a":"foo"}), json!("bar"), json!("bar")),
            (json!({"e":null}), json!({"a":1}), json!({"e":null,"a":1})),
            (json!([1,2]), json!({"a":"b","c":null}), json!({"a":"b"})),
            (json!({}), json!({"a":{"bb":{"ccc":null}}}), json!({"a":{"bb":{}}})),
        ];
        for (target, patch, want) in cases {
            let mut got = target.clone();
            merge_patch(&mut got, &patch);
            assert_eq!(got, want, "{target} + {patch}");
        }
    }

    #[test]
    fn json_patch_follows_rfc_6902() {
        let doc = json!({"foo": "bar", "list": ["a", "c"], "a/b": 1, "m~n": 2});
        let patch = json!([
            {"op": "add", "path": "/baz", "value": "qux"},
            {"op": "add", "path": "/list/1", "value": "b"},
            {"op": "add", "path": "/list/-", "value": "d"},
            {"op": "replace", "path": "/foo", "value": "boo"},
            {"op": "remove", "path": "/a~1b"},
            {"op": "copy", "from": "/m~0n", "path": "/copied"},
            {"op": "move", "from": "/baz", "path": "/moved"},
            {"op": "test", "path": "/list", "value": ["a", "b", "c", "d"]}
        ]);
        assert_eq!(
            json_patch(&doc, &patch),
            Ok(json!({"foo": "boo", "list": ["a", "b", "c", "d"], "m~n": 2, "copied": 2, "moved": "qux"}))
        );
    }

    #[test]
    fn json_patch_applies_all_or_nothing_and_says_why() {
        let doc = json!({"a": {"b": [1, 2]}});
        let not = |patch: Value| match json_patch(&doc, &patch) {
            Err(PatchError::NotApplicable(why)) => why,
            other => panic!("{patch}: {other:?}"),
        };
        assert_eq!(not(json!([{"op": "test", "path": "/a/b/0", "value": 2}])), "testing value /a/b/0 failed");
        assert_eq!(not(json!([{"op": "remove", "path": "/a/c"}])), "path /a/c does not exist");
        assert_eq!(not(json!([{"op": "replace", "path": "/x/y", "value": 1}])), "path /x does not exist");
        assert_eq!(not(json!([{"op": "add", "path": "/a/b/5", "value": 1}])), "path /a/b/5 does not exist");
        assert_eq!(not(json!([{"op": "remove", "path": "/a/b/01"}])), "path /a/b/01 does not exist");
        not(json!([{"op": "move", "from": "/a", "path": "/a/c"}]));
        let malformed = |patch: Value| matches!(json_patch(&doc, &patch), Err(PatchError::Malformed(_)));
        assert!(malformed(json!({"op": "add"})));
        assert!(malformed(json!([{"op": "add", "path": "/x"}])));
        assert!(malformed(json!([{"op": "frobnicate", "path": "/x"}])));
        assert!(malformed(json!([{"op": "add", "path": "x", "value": 1}])));
        assert!(malformed(Value::Array(vec![json!({"op": "test", "path": "", "value": 1}); MAX_JSON_PATCH_OPERATIONS + 1])));
    }
}

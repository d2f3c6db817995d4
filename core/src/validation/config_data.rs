//! The rules ConfigMaps and Secrets share: their keys, the size of what they hold, and
//! `immutable: true` freezing it.

use super::FieldError;
use crate::rest::object::Object;
use serde_json::Value;

/// The most bytes a ConfigMap's or Secret's data may hold in all (upstream's
/// `MaxSecretSize`).
pub const MAX_DATA_BYTES: usize = 1024 * 1024;

const KEY_MAX: usize = 253;
const KEY_FMT: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/// Problems with `key` as a key of `data` (apimachinery's `IsConfigMapKey`): it may
/// become a file name.
pub fn config_key(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > KEY_MAX {
        errs.push(format!("must be no more than {KEY_MAX} characters"));
    }
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_')) {
        errs.push(KEY_FMT.to_owned());
    }
    match key {
        "." => errs.push("must not be '.'".to_owned()),
        ".." => errs.push("must not be '..'".to_owned()),
        k if k.starts_with("..") => errs.push("must not start with '..'".to_owned()),
        _ => {}
    }
    errs
}

/// The errors of each key of the map at `field`, at `field[key]`.
pub fn keys(obj: &Object, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for key in obj.get(field).and_then(Value::as_object).into_iter().flat_map(|m| m.keys()) {
        let at = format!("{field}[{key}]");
        errs.extend(config_key(key).into_iter().map(|msg| FieldError::invalid(&at, key, msg)));
    }
    errs
}

/// The bytes the values of the map at `field` hold: as they are, or base64-decoded for
/// a map of bytes.
pub fn size(obj: &Object, field: &str, encoded: bool) -> usize {
    let values = obj.get(field).and_then(Value::as_object).into_iter().flat_map(|m| m.values());
    values
        .filter_map(Value::as_str)
        .map(|v| if encoded { decoded_len(v) } else { v.len() })
        .sum()
}

/// How many bytes a base64 text decodes to (its length when it does not decode: the
/// decoder refuses it before validation anyway).
fn decoded_len(text: &str) -> usize {
    let padding = text.bytes().rev().take_while(|b| *b == b'=').count().min(2);
    match text.len() % 4 {
        0 => (text.len() / 4 * 3).saturating_sub(padding),
        _ => text.len() * 3 / 4,
    }
}

/// Whether `immutable: true` is set on `obj`.
pub fn immutable(obj: &Object) -> bool {
    obj.get("immutable").and_then(Value::as_bool) == Some(true)
}

/// Once stored with `immutable: true`, `immutable` may not be unset nor the `fields`
/// change (upstream compares the typed maps: absent and null are alike).
pub fn frozen(new: &Object, old: &Object, fields: &[&str]) -> Vec<FieldError> {
    const WHY: &str = "field is immutable when `immutable` is set";
    if !immutable(old) {
        return Vec::new();
    }
    let mut errs = Vec::new();
    if !immutable(new) {
        errs.push(FieldError::forbidden("immutable", WHY));
    }
    let present = |o: &Object, f: &str| o.get(f).filter(|v| !v.is_null()).cloned();
    for field in fields {
        if present(new, field) != present(old, field) {
            errs.push(FieldError::forbidden(field, WHY));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_may_be_file_names() {
        assert!(config_key("key.name_1-A").is_empty());
        assert_eq!(config_key(".."), ["must not be '..'"]);
        assert_eq!(config_key("..x"), ["must not start with '..'"]);
        assert_eq!(config_key("a/b"), [KEY_FMT]);
        assert_eq!(config_key(""), [KEY_FMT]);
    }

    #[test]
    fn bytes_are_counted_decoded() {
        for (text, n) in [("", 0), ("AA==", 1), ("AAA=", 2), ("AAAA", 3), ("AAAAAA==", 4)] {
            assert_eq!(decoded_len(text), n, "{text}");
        }
        let obj = json!({"binaryData": {"a": "AAAA"}, "data": {"b": "xy"}});
        assert_eq!(size(obj.as_object().unwrap(), "binaryData", true), 3);
        assert_eq!(size(obj.as_object().unwrap(), "data", false), 2);
    }
}

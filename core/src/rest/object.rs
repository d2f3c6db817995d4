//! Object metadata as the generic registry manages it: what is stamped on create,
//! carried over on update, and filled in on read.

use crate::storage::KeyValue;
use serde_json::{Map, Value};

/// A decoded object: a JSON map with `metadata` in it.
pub type Object = Map<String, Value>;

/// The `metadata` map of an object, created if missing.
pub fn meta_mut(obj: &mut Object) -> &mut Map<String, Value> {
    let entry = obj.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut().expect("metadata was just made an object")
}

/// A string field of `metadata` ("" when absent or not a string).
pub fn meta_str<'a>(obj: &'a Object, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub use crate::time::{parse_rfc3339, rfc3339};

/// The strings of a JSON list (what is not a string is skipped); none for anything else.
pub fn strings(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// A version-4 UUID from 16 random bytes.
pub fn uuid_v4(bytes: &[u8; 16]) -> String {
    let mut b = *bytes;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    // One per create: written by hand, 36 characters in one allocation.
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(36);
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(HEX[usize::from(x >> 4)] as char);
        out.push(HEX[usize::from(x & 0xf)] as char);
    }
    out
}

/// The characters kube-apiserver draws generateName suffixes from (no vowels, no
/// look-alikes).
const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `generateName` plus five random characters, the prefix cut to keep it within 63.
pub fn generated_name(prefix: &str, entropy: &[u8]) -> String {
    let cut = prefix.char_indices().nth(58).map(|(i, _)| i).unwrap_or(prefix.len());
    let mut name = prefix[..cut].to_owned();
    for i in 0..5 {
        let b = entropy.get(i).copied().unwrap_or(0) as usize;
        name.push(SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.len()] as char);
    }
    name
}

/// Fill in what storage knows and the stored bytes do not carry: resourceVersion.
pub fn from_storage(kv: &KeyValue) -> Result<Object, String> {
    let mut obj: Object = serde_json::from_slice(&kv.value).map_err(|e| format!("stored object is corrupt: {e}"))?;
    if !kv.value.starts_with(b"{\"kind\"") {
        // Stored before built-in objects were stored as their Go types write them.
        crate::typed_json::normalize(&mut obj);
    }
    meta_mut(&mut obj).insert("resourceVersion".into(), Value::String(kv.mod_revision.to_string()));
    Ok(obj)
}

/// The bytes to store: the object without its resourceVersion (storage tracks it).
pub fn to_storage(obj: &Object) -> bytes::Bytes {
    into_storage(obj.clone())
}

/// [`to_storage`] of an object no longer needed (no copy).
pub fn into_storage(mut obj: Object) -> bytes::Bytes {
    let meta = meta_mut(&mut obj);
    meta.remove("resourceVersion");
    meta.remove("selfLink");
    // A built-in kind is stored as Go writes its type, so reads serve it as it is.
    let obj = Value::Object(obj);
    let json = crate::typed_json::encode(&obj).unwrap_or_else(|| serde_json::to_vec(&obj).expect("JSON values serialize"));
    // Exact-size: stores keep these bytes for as long as the object lives.
    bytes::Bytes::from(json.into_boxed_slice())
}

/// Whether two objects differ outside `metadata` and `status`: a spec change.
pub fn spec_changed(old: &Object, new: &Object) -> bool {
    let keys = old.keys().chain(new.keys());
    for k in keys {
        if matches!(k.as_str(), "metadata" | "status" | "kind" | "apiVersion") {
            continue;
        }
        if old.get(k) != new.get(k) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_version_4() {
        let u = uuid_v4(&[0xff; 16]);
        assert_eq!(u, "ffffffff-ffff-4fff-bfff-ffffffffffff");
        let bytes: [u8; 16] = std::array::from_fn(|i| i as u8);
        assert_eq!(uuid_v4(&bytes), "00010203-0405-4607-8809-0a0b0c0d0e0f");
    }

    #[test]
    fn generated_names_have_five_character_suffixes() {
        let n = generated_name("web-", &[0, 1, 2, 3, 4]);
        assert_eq!(n, "web-bcdfg");
        let long = "a".repeat(70);
        assert_eq!(generated_name(&long, &[0; 5]).len(), 63);
    }

    #[test]
    fn spec_changes_ignore_metadata_and_status() {
        let a: Object = serde_json::from_str(r#"{"metadata":{"labels":{"a":"1"}},"spec":{"x":1},"status":{"y":1}}"#).unwrap();
        let b: Object = serde_json::from_str(r#"{"metadata":{"labels":{"a":"2"}},"spec":{"x":1},"status":{"y":2}}"#).unwrap();
        let c: Object = serde_json::from_str(r#"{"metadata":{},"spec":{"x":2}}"#).unwrap();
        assert!(!spec_changed(&a, &b));
        assert!(spec_changed(&a, &c));
    }
}

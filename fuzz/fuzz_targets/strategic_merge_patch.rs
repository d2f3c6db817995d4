//! Strategic merge patch over any stored object and patch of four built-in kinds:
//! never panics, gives an object or one of upstream's errors, changes nothing with an
//! empty patch, and leaves alone the fields the patch does not name.
#![no_main]

use apiary_core::patch::{strategic_merge_patch, PatchError};
use apiary_core::schema::SchemaNode;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

const KINDS: [(&str, &str, &str); 4] = [
    ("apps", "v1", "Deployment"),
    ("", "v1", "Pod"),
    ("", "v1", "ConfigMap"),
    ("", "v1", "Service"),
];

fuzz_target!(|data: &[u8]| {
    // The first byte picks the kind; the rest is the original and the patch, separated
    // by a zero byte.
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Some(split) = rest.iter().position(|&b| b == 0) else {
        return;
    };
    let (Ok(original), Ok(patch)) = (
        serde_json::from_slice::<Value>(&rest[..split]),
        serde_json::from_slice::<Value>(&rest[split + 1..]),
    ) else {
        return;
    };
    let (group, version, kind) = KINDS[pick as usize % KINDS.len()];
    let schema = SchemaNode::of_kind(group, version, kind).expect("a built-in kind");

    let result = strategic_merge_patch(&original, &patch, schema);
    let (Value::Object(before), Value::Object(changes)) = (&original, &patch) else {
        // Only objects are documents; anything else is refused, never merged.
        if !original.is_object() || !(patch.is_object() || patch.is_null()) {
            assert_eq!(
                result,
                Err(PatchError::Malformed("invalid JSON document".into()))
            );
        }
        return;
    };
    assert_eq!(
        strategic_merge_patch(&original, &json!({}), schema).as_ref(),
        Ok(&original),
        "an empty patch changed the object"
    );
    let after = match result {
        Ok(Value::Object(after)) => after,
        Ok(other) => panic!("the result is not an object: {other}"),
        Err(PatchError::Malformed(why)) => {
            assert!(why.starts_with("invalid patch format of "), "{why}");
            return;
        }
        Err(PatchError::NotApplicable(why)) => {
            assert_eq!(why, "lists of lists are not supported");
            return;
        }
        Err(PatchError::Internal(why)) => {
            assert!(!why.is_empty());
            return;
        }
    };
    // Directives at the top may replace, empty or trim the whole object.
    if changes.contains_key("$patch") || changes.contains_key("$retainKeys") {
        return;
    }
    for (key, value) in before {
        let named = changes.contains_key(key)
            || changes.contains_key(&format!("$setElementOrder/{key}"))
            || changes.contains_key(&format!("$deleteFromPrimitiveList/{key}"));
        if !named {
            assert_eq!(
                after.get(key),
                Some(value),
                "{key} changed without being patched"
            );
        }
    }
    // A plain value the patch sets is what the object holds after.
    for (key, value) in changes {
        // (A deletion list for the same key may be merged after it, as upstream may.)
        let plain = !key.starts_with('$')
            && !value.is_null()
            && !value.is_object()
            && !value.is_array()
            && !changes.contains_key(&format!("$deleteFromPrimitiveList/{key}"));
        if plain {
            assert_eq!(after.get(key), Some(value), "{key} was not set");
        }
    }
});

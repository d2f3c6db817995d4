//! The byte splicer that serves stored objects without parsing them: whatever it
//! accepts from valid JSON comes out as the same object with its resourceVersion set.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, stored)) = data.split_first() else { return };
    let drop_type = flags & 1 == 1;
    let Some(out) = apiary_core::stored_json::serve(stored, 42, drop_type) else { return };
    let Ok(Value::Object(mut input)) = serde_json::from_slice::<Value>(stored) else { return };
    let Value::Object(output) = serde_json::from_slice::<Value>(&out).expect("spliced output is JSON") else {
        panic!("spliced output is not an object")
    };
    if drop_type {
        input.remove("kind");
        input.remove("apiVersion");
    }
    if let Some(Value::Object(meta)) = input.get_mut("metadata") {
        meta.insert("resourceVersion".into(), Value::String("42".into()));
    }
    // Duplicate keys: the splicer keeps every member and serde_json the last of each,
    // on both sides, so the parsed objects still agree.
    assert_eq!(Value::Object(input), Value::Object(output));
});

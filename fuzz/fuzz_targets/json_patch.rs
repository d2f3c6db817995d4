//! JSON patch and JSON merge patch, as PATCH bodies apply them to stored objects:
//! never panic, and a merge patch applied twice changes nothing more (it is
//! idempotent).
#![no_main]

use apiary_core::patch::{json_patch, merge_patch};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    // The input is a target document and a patch, separated by a zero byte.
    let Some(split) = data.iter().position(|&b| b == 0) else { return };
    let (Ok(target), Ok(patch)) = (
        serde_json::from_slice::<Value>(&data[..split]),
        serde_json::from_slice::<Value>(&data[split + 1..]),
    ) else {
        return;
    };
    let _ = json_patch(&target, &patch);
    let mut once = target.clone();
    merge_patch(&mut once, &patch);
    let mut twice = once.clone();
    merge_patch(&mut twice, &patch);
    assert_eq!(once, twice, "a merge patch applied twice changed more");
});

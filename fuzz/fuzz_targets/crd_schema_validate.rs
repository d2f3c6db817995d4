#![no_main]
//! `apiary_core::schema::compiled`: any CRD schema and custom resources against it.
//! The input is three JSON documents separated by zero bytes: an `openAPIV3Schema`, a
//! body, and a stored object (the update's old one). The schema compiles, the body
//! decodes as a request body would (metadata, pruning, nulls, embedded resources,
//! defaults; and as a server-side apply configuration, defaulted once merged), and
//! both are validated (schema, status, embedded resources, lists) as a
//! create and as an update. Never panics, whatever the depth; what decoding keeps has
//! no unknown field left; ratcheting only ever takes errors away.

use apiary_core::negotiation::Format;
use apiary_core::schema::compiled::StructuralSchema;
use apiary_core::schema::{FieldValidation, ResourceSchema};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |b| *b == 0);
    let (Some(schema), Some(body)) = (parts.next(), parts.next()) else {
        return;
    };
    let Ok(openapi) = serde_json::from_slice::<Value>(schema) else {
        return;
    };
    let old: Option<Map<String, Value>> = parts.next().and_then(|o| serde_json::from_slice(o).ok());
    let compiled = StructuralSchema::compile(&openapi);
    let resource = ResourceSchema::custom(openapi);
    let gvk = ("example.com", "v1", "Widget");

    // An apply configuration decodes without defaults; the merged object gets them.
    if let Ok(config) = resource.decode_apply_config(Format::Json, body, gvk, FieldValidation::Strict) {
        let mut merged = config.object;
        resource.shape_stored(&mut merged);
    }
    let Ok(decoded) = resource.decode(Format::Json, body, gvk, FieldValidation::Warn) else {
        return;
    };
    let mut new = decoded.object;
    // Nothing decoding kept is unknown to the schema.
    let again = compiled.shape_request(&mut new.clone(), true).expect("a decoded body decodes again");
    assert!(again.unknown.is_empty(), "kept unknown fields: {:?}", again.unknown);

    let created = compiled.validate(&new, None);
    let _ = compiled.validate_embedded(&new);
    let _ = compiled.validate_lists(&new);
    if let Some(mut old) = old {
        compiled.shape_stored(&mut old);
        let updated = compiled.validate(&new, Some(&old));
        for e in &updated {
            assert!(created.contains(e), "ratcheting added {e}");
        }
        let _ = compiled.validate_status(&new, &old);
        let _ = compiled.validate_lists(&old);
    }
    // Each error reads as a field error.
    for e in created {
        assert!(!e.to_string().is_empty());
    }
    new.clear();
});

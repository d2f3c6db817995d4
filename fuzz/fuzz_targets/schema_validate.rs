#![no_main]
//! `apiary_core::schema::decode`: any bytes as a JSON or YAML body of a few kinds, under
//! each field validation. Never panics; what it keeps decodes again, strictly, to itself
//! (no unknown field survives, nothing it stores is of the wrong type).
//!
//! The first byte is a control byte: the kind (low bits), the validation (bits 4-5: Ignore,
//! Warn, Strict) and YAML instead of JSON (bit 7). The rest is the body.

use apiary_core::negotiation::Format;
use apiary_core::schema::{decode, DecodeError, FieldValidation};
use libfuzzer_sys::fuzz_target;

const KINDS: &[(&str, &str, &str)] = &[
    ("", "v1", "Pod"),
    ("apps", "v1", "Deployment"),
    ("", "v1", "ConfigMap"),
    ("", "v1", "Secret"),
    ("", "v1", "Service"),
    ("batch", "v1", "CronJob"),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
    ("events.k8s.io", "v1", "Event"),
];

fuzz_target!(|data: &[u8]| {
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    let kind = KINDS[usize::from(control & 0x0f) % KINDS.len()];
    let validation = match (control >> 4) & 3 {
        0 => FieldValidation::Ignore,
        1 => FieldValidation::Warn,
        _ => FieldValidation::Strict,
    };
    let format = if control & 0x80 != 0 {
        Format::Yaml
    } else {
        Format::Json
    };
    match decode(format, body, kind, validation) {
        Ok(decoded) => {
            if validation != FieldValidation::Warn {
                assert!(decoded.warnings.is_empty());
            }
            let again = serde_json::to_vec(&decoded.object).expect("a decoded object serializes");
            match decode(Format::Json, &again, kind, FieldValidation::Strict) {
                Ok(d) => assert_eq!(d.object, decoded.object),
                Err(e) => panic!(
                    "kept {} but it fails again: {e:?}",
                    String::from_utf8_lossy(&again)
                ),
            }
        }
        Err(DecodeError::Strict(errors)) => {
            assert_eq!(validation, FieldValidation::Strict);
            assert!(!errors.is_empty() && errors.len() <= 101);
        }
        Err(_) => {}
    }
});

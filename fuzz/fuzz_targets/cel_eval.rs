//! CEL rules: parse, check, estimate and evaluate an arbitrary expression as an
//! `x-kubernetes-validations` rule (and message expression) at several nodes of a
//! small schema, against an arbitrary JSON object as both new and old value. Never a
//! panic, a stack overflow or an endless loop, whatever the expression or the data.
//!
//! Input: the expression, a NUL byte, then the object's JSON.
#![no_main]

use apiary_core::cel::{compile_schema, CompiledSchema};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let Ok(expr) = std::str::from_utf8(&data[..split]) else { return };
    let object: Value = data
        .get(split + 1..)
        .and_then(|rest| serde_json::from_slice(rest).ok())
        .unwrap_or_else(|| json!({"spec": {"name": "a", "items": [{"k": "x", "v": 1}], "m": {"a": "b"}, "n": 1}}));
    let rule = json!([{"rule": expr, "messageExpression": expr}]);
    let transition = json!([{"rule": expr, "optionalOldSelf": true}]);
    let schema = json!({
        "type": "object",
        "x-kubernetes-validations": rule,
        "properties": {"spec": {
            "type": "object",
            "x-kubernetes-validations": transition,
            "properties": {
                "name": {"type": "string", "maxLength": 64, "x-kubernetes-validations": rule},
                "n": {"x-kubernetes-int-or-string": true, "x-kubernetes-validations": rule},
                "m": {"type": "object", "additionalProperties": {"type": "string"}, "x-kubernetes-validations": rule},
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": {"type": "object", "required": ["k"], "properties": {
                        "k": {"type": "string"}, "v": {"type": "integer"}
                    }, "x-kubernetes-validations": transition}
                }
            }
        }}
    });
    let _ = compile_schema(&schema, "spec.versions[0].schema.openAPIV3Schema");
    let compiled = CompiledSchema::build(&schema);
    let _ = compiled.validate(&object, None);
    let _ = compiled.validate_with_warnings(&object, Some(&object));
});

//! A conversion webhook as a test writes one: the answer to a ConversionReview.

use serde_json::{json, Value};

/// The successful answer to `review` (a ConversionReview request, v1): each object
/// sent, given the desired apiVersion, then changed by `convert` (the object and that
/// apiVersion).
pub fn conversion_answer(review: &Value, convert: impl Fn(&mut Value, &str)) -> Value {
    let desired = review["request"]["desiredAPIVersion"].as_str().unwrap_or("");
    let objects: Vec<Value> = review["request"]["objects"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut o| {
            o["apiVersion"] = json!(desired);
            convert(&mut o, desired);
            o
        })
        .collect();
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
           "response": {"uid": review["request"]["uid"], "convertedObjects": objects, "result": {"status": "Success"}}})
}

/// Rename `spec.<from>` to `spec.<to>` in `object`, when it has it.
pub fn rename_spec_field(object: &mut Value, from: &str, to: &str) {
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
        if let Some(value) = spec.remove(from) {
            spec.insert(to.into(), value);
        }
    }
}

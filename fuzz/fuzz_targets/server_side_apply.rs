//! Server-side apply and managed fields, as PATCH (apply-patch+yaml) and every write
//! run them on stored objects: never panic; a successful apply leaves an object whose
//! managed fields read back, and applying the same configuration again as the same
//! manager neither conflicts nor changes it; recording an update never panics either.
//! Built-in kinds by their generated schemas, and a custom resource by its CRD schema.
#![no_main]

use apiary_core::apply::{FieldManager, FieldSet};
use apiary_core::schema::SchemaNode;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use std::sync::OnceLock;

const KINDS: &[(&str, &str, &str)] = &[
    ("apps", "v1", "Deployment"),
    ("", "v1", "ConfigMap"),
    ("", "v1", "Pod"),
    ("", "v1", "Service"),
    ("example.com", "v1", "Widget"),
];
const NOW: &str = "2026-11-22T00:00:00Z";

/// The custom resource's schema: every way a CRD schema marks lists and maps.
fn widget_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["port", "protocol"],
                      "items": {"type": "object", "properties": {
                          "port": {"type": "integer"},
                          "protocol": {"type": "string", "default": "TCP"},
                          "name": {"type": "string"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "args": {"type": "array", "items": {"type": "string"}},
            "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                         "additionalProperties": {"type": "string"}},
            "value": {"x-kubernetes-int-or-string": true},
            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                         "x-kubernetes-preserve-unknown-fields": true}}}}})
    })
}

fuzz_target!(|data: &[u8]| {
    // One byte picks the kind and force; then the live object and the configuration,
    // separated by a zero byte.
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Some(split) = rest.iter().position(|&b| b == 0) else {
        return;
    };
    let (Ok(live), Ok(mut config)) = (
        serde_json::from_slice::<Value>(&rest[..split]),
        serde_json::from_slice::<Value>(&rest[split + 1..]),
    ) else {
        return;
    };
    let (group, version, kind) = KINDS[pick as usize % KINDS.len()];
    let force = pick & 0x80 != 0;
    let manager = match kind {
        "Widget" => FieldManager::with_schema(
            SchemaNode::custom_root(widget_schema()),
            group,
            version,
            kind,
            "",
            false,
        ),
        _ => FieldManager::new(group, version, kind, "", kind != "ConfigMap"),
    };
    let api_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    if let Value::Object(c) = &mut config {
        c.insert("apiVersion".into(), json!(api_version));
        c.insert("kind".into(), json!(kind));
    }
    let live = live.is_object().then_some(live);

    if let Ok(applied) = manager.apply(live.as_ref(), &config, "fuzz", force, NOW) {
        let applied = Value::Object(applied);
        if let Some(entries) = applied["metadata"]["managedFields"].as_array() {
            for entry in entries {
                FieldSet::from_fields_v1(&entry["fieldsV1"]).expect("managed fields read back");
            }
        }
        let again = manager
            .apply(Some(&applied), &config, "fuzz", false, NOW)
            .expect("re-applying the same configuration does not conflict");
        assert_eq!(
            Value::Object(again),
            applied,
            "re-applying changed the object"
        );
    }
    if let (Some(Value::Object(live)), Value::Object(mut new)) = (live, config) {
        manager.record_update(Some(&live), &mut new, "writer", NOW);
    }
});

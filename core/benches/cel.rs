//! CEL validation rules: compiling the 10 `x-kubernetes-validations` rules of a typical
//! CRD version (done once per version), and evaluating them on a small custom
//! resource on create and on update (done on every write), beside a schema without
//! rules (what objects of CRDs without rules pay: nothing).
//!
//! Run: `cargo bench -p apiary-core --bench cel`

use apiary_core::cel::{compile_schema, CompiledSchema};
use serde_json::{json, Value};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn schema() -> Value {
    json!({
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.size() <= 63", "message": "name too long"}
        ],
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [
                    {"rule": "self.minReplicas <= self.replicas", "message": "minReplicas must not exceed replicas"},
                    {"rule": "!has(self.maxReplicas) || self.replicas <= self.maxReplicas"},
                    {"rule": "self.mode in ['Auto', 'Manual', 'Off']", "reason": "FieldValueInvalid", "fieldPath": ".mode"},
                    {"rule": "self.ports.all(p, p.port > 0 && p.port < 65536)", "message": "ports must be valid"}
                ],
                "properties": {
                    "replicas": {"type": "integer"},
                    "minReplicas": {"type": "integer"},
                    "maxReplicas": {"type": "integer"},
                    "mode": {"type": "string", "maxLength": 16},
                    "image": {"type": "string", "maxLength": 256,
                        "x-kubernetes-validations": [{"rule": "self.matches('^[a-z0-9./:-]+$')", "message": "bad image"}]},
                    "memory": {"type": "string", "maxLength": 16,
                        "x-kubernetes-validations": [{"rule": "isQuantity(self) && quantity(self).isLessThan(quantity('64Gi'))"}]},
                    "ports": {
                        "type": "array", "maxItems": 16,
                        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "required": ["name"], "properties": {
                            "name": {"type": "string", "maxLength": 15}, "port": {"type": "integer"}
                        }, "x-kubernetes-validations": [{"rule": "self.name.size() > 0"}]}
                    },
                    "labels": {"type": "object", "maxProperties": 32,
                        "additionalProperties": {"type": "string", "maxLength": 63},
                        "x-kubernetes-validations": [{"rule": "self.all(k, k.size() <= 63)"}]},
                    "version": {"type": "string", "maxLength": 32,
                        "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "version is immutable"}]}
                }
            }
        }
    })
}

fn object() -> Value {
    json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "widget-1", "namespace": "default"},
        "spec": {
            "replicas": 3, "minReplicas": 1, "maxReplicas": 5, "mode": "Auto",
            "image": "registry.example.com/widget:1.2.3", "memory": "512Mi",
            "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
            "labels": {"app": "widget", "tier": "backend"},
            "version": "v1"
        }
    })
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time<F: FnMut()>(rounds: usize, per_round: usize, mut f: F) -> Duration {
    let samples = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..per_round {
                f();
            }
            start.elapsed() / per_round as u32
        })
        .collect();
    median(samples)
}

fn main() {
    let schema = schema();
    let object = object();
    let compile = time(9, 20, || {
        black_box(compile_schema(black_box(&schema), "spec.versions[0].schema.openAPIV3Schema").unwrap());
    });
    let compiled = compile_schema(&schema, "spec.versions[0].schema.openAPIV3Schema").unwrap();
    assert!(compiled.validate(&object, Some(&object)).is_empty());
    let create = time(9, 2000, || {
        black_box(compiled.validate(black_box(&object), None));
    });
    let update = time(9, 2000, || {
        black_box(compiled.validate(black_box(&object), Some(black_box(&object))));
    });
    let empty = CompiledSchema::build(&json!({"type": "object", "properties": {"spec": {"type": "object"}}}));
    let none = time(9, 20000, || {
        black_box(empty.validate(black_box(&object), None));
    });
    // What decoding the same object from its JSON costs, for scale.
    let text = object.to_string();
    let parse = time(9, 2000, || {
        black_box(serde_json::from_str::<Value>(black_box(&text)).unwrap());
    });
    println!("compile 10 rules (one CRD version):   {compile:>10.2?}");
    println!("validate, create (10 rules):           {create:>10.2?}");
    println!("validate, update (11 rules, oldSelf):  {update:>10.2?}");
    println!("validate, schema without rules:        {none:>10.2?}");
    println!("for scale: parse the object's JSON:    {parse:>10.2?}");
}

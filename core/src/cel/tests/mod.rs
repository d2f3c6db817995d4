//! Tests over the whole pipeline: expressions evaluated against objects, checker and
//! cost errors against upstream's wording, CRD-validation errors, object validation.

mod checker_errors;
mod costs;
mod crd_errors;
mod expressions;
mod validation;

use super::compile::compile_expression;
use super::decl::{schema_decl_type, ROOT_TYPE_NAME};
use super::eval::Activation;
use super::value::Value;
use serde_json::{json, Value as Json};

/// The schema most expression tests run against.
pub fn sample_schema() -> Json {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 20},
            "replicas": {"type": "integer"},
            "ratio": {"type": "number"},
            "enabled": {"type": "boolean"},
            "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}},
            "labels": {"type": "object", "maxProperties": 10, "additionalProperties": {"type": "string", "maxLength": 10}},
            "port": {"x-kubernetes-int-or-string": true},
            "timeout": {"type": "string", "format": "duration"},
            "created": {"type": "string", "format": "date-time"},
            "data": {"type": "string", "format": "byte"},
            "nested": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"}, "port": {"type": "integer"}
                }}
            },
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}},
            "foo-bar": {"type": "string"},
            "namespace": {"type": "string"}
        }
    })
}

pub fn sample_object() -> Json {
    json!({
        "name": "web",
        "replicas": 3,
        "ratio": 0.5,
        "enabled": true,
        "tags": ["a", "b", "c"],
        "labels": {"app": "web", "tier": "front"},
        "port": "http",
        "timeout": "1m30s",
        "created": "2024-01-02T03:04:05Z",
        "data": "aGVsbG8=",
        "nested": {"a": 1, "b": 2},
        "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
        "set": [3, 1, 2],
        "foo-bar": "dash",
        "namespace": "default"
    })
}

/// Compile `expr` against `schema` and evaluate it with `object` as `self`: the
/// value as it prints, or `error: ...` (a compile error starts `compile: `).
pub fn eval_with(schema: &Json, object: &Json, expr: &str) -> String {
    let decl = schema_decl_type(schema, false, ROOT_TYPE_NAME).expect("schema has a CEL type");
    let compiled = match compile_expression(expr, &decl, false) {
        Ok(c) => c,
        Err(e) => return format!("compile: {e}"),
    };
    let activation = Activation {
        self_value: Value::from_json(object, &decl),
        old_self: None,
        named: Vec::new(),
    };
    match compiled.program.eval(&activation, super::PER_CALL_LIMIT).value {
        Ok(Value::Error(e)) => format!("error: {e}"),
        Ok(v) => v.to_string(),
        Err(_) => "error: cost limit".to_owned(),
    }
}

pub fn eval(expr: &str) -> String {
    eval_with(&sample_schema(), &sample_object(), expr)
}

/// The lead caches compiled schemas in the custom resource strategy, shared by the
/// threads that serve requests.
#[test]
fn compiled_schemas_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<super::CompiledSchema>();
}

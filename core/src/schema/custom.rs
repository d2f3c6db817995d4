//! Schemas a resource brings itself (a CRD's OpenAPI v3 schema), beside the generated
//! definitions of the built-in kinds.
//!
//! A built-in resource says [`ResourceSchema::Builtin`] and keeps the fast path: its
//! kind is looked up in the compact form of `definitions.json` built once per process.
//! A custom resource carries its schema in an `Arc`, so a request borrows it through
//! the resource it was routed to and never copies the tree.
//!
//! Decoding against a custom schema prunes what the schema does not declare, as
//! kube-apiserver prunes custom resources: unknown fields are dropped and reported
//! (`unknown field "spec.foo"`) under the request's `fieldValidation`.

use super::{DecodeError, Decoded, FieldValidation};
use crate::negotiation::Format;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Where the schema of a resource's objects comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ResourceSchema {
    /// The generated definitions of the built-in kinds, found by group, version and
    /// kind.
    #[default]
    Builtin,
    /// A schema of the resource's own.
    Custom(Arc<CustomSchema>),
}

impl ResourceSchema {
    /// A resource's own schema: `openapi_v3` is an OpenAPI v3 schema of one object, as
    /// a CRD's `openAPIV3Schema`.
    pub fn custom(openapi_v3: Value) -> ResourceSchema {
        ResourceSchema::Custom(Arc::new(CustomSchema { openapi_v3 }))
    }

    /// Decode a body as an object of the resource: against its own schema when it
    /// brings one, else against the generated definition of `group`/`version`/`kind`
    /// ([`super::decode`]).
    pub fn decode(
        &self,
        format: Format,
        body: &[u8],
        gvk: (&str, &str, &str),
        validation: FieldValidation,
    ) -> Result<Decoded, DecodeError> {
        match self {
            ResourceSchema::Builtin => super::decode(format, body, gvk, validation),
            ResourceSchema::Custom(custom) => custom.decode(format, body, validation),
        }
    }
}

/// An OpenAPI v3 schema of one object, brought by its resource.
#[derive(Debug, PartialEq, Eq)]
pub struct CustomSchema {
    openapi_v3: Value,
}

/// Fields every object has whatever its schema declares: type meta and object meta
/// (kube-apiserver checks `metadata` against ObjectMeta, not the CRD's schema).
const ALWAYS_KEPT: &[&str] = &["apiVersion", "kind", "metadata"];

impl CustomSchema {
    /// The schema as given.
    pub fn openapi_v3(&self) -> &Value {
        &self.openapi_v3
    }

    /// Decode a JSON or YAML body as an object of this schema under `validation`.
    pub fn decode(
        &self,
        format: Format,
        body: &[u8],
        validation: FieldValidation,
    ) -> Result<Decoded, DecodeError> {
        let value = crate::negotiation::decode(format, body).map_err(DecodeError::Syntax)?;
        let Value::Object(mut object) = value else {
            return Err(DecodeError::NotAnObject);
        };
        let mut unknown = Vec::new();
        prune_object(&self.openapi_v3, &mut object, "", true, &mut unknown);
        let unknown: Vec<String> = unknown
            .into_iter()
            .map(|path| format!("unknown field {}", super::go_quote(&path)))
            .collect();
        match validation {
            FieldValidation::Strict if !unknown.is_empty() => Err(DecodeError::Strict(unknown)),
            FieldValidation::Warn => Ok(Decoded { object, warnings: unknown }),
            FieldValidation::Strict | FieldValidation::Ignore => Ok(Decoded {
                object,
                warnings: Vec::new(),
            }),
        }
    }

    /// The OpenAPI v2 definitions this schema adds for `kind` (and its list) in
    /// `group`/`version`, named as kube-apiserver names a CRD's: the group reversed,
    /// then version and kind (`com.example.v1.Widget`).
    pub fn definitions(&self, group: &str, version: &str, kind: &str) -> Vec<(String, Value)> {
        let reversed: Vec<&str> = group.split('.').rev().collect();
        let name = format!("{}.{version}.{kind}", reversed.join("."));
        let gvk = |kind: &str| json!([{ "group": group, "kind": kind, "version": version }]);
        let meta = "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1";
        let mut object = match &self.openapi_v3 {
            Value::Object(schema) => schema.clone(),
            _ => Map::new(),
        };
        let properties = object
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(properties) = properties {
            properties.insert("apiVersion".into(), json!({ "type": "string" }));
            properties.insert("kind".into(), json!({ "type": "string" }));
            properties.insert("metadata".into(), json!({ "$ref": format!("{meta}.ObjectMeta") }));
        }
        object.insert("x-kubernetes-group-version-kind".into(), gvk(kind));
        let list_kind = format!("{kind}List");
        let list = json!({
            "description": format!("{list_kind} is a list of {kind}"),
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": { "type": "string" },
                "items": { "type": "array", "items": { "$ref": format!("#/definitions/{name}") } },
                "kind": { "type": "string" },
                "metadata": { "$ref": format!("{meta}.ListMeta") },
            },
            "x-kubernetes-group-version-kind": gvk(&list_kind),
        });
        vec![(format!("{name}List"), list), (name, Value::Object(object))]
    }
}

/// Drop from `object` the fields `schema` does not declare, recording each one's path.
fn prune_object(
    schema: &Value,
    object: &mut Map<String, Value>,
    path: &str,
    root: bool,
    unknown: &mut Vec<String>,
) {
    let preserves = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties").filter(|a| a.is_object());
    let declared = |name: &str| {
        (root && ALWAYS_KEPT.contains(&name))
            || properties.is_some_and(|p| p.contains_key(name))
            || additional.is_some()
            || preserves
    };
    let dropped: Vec<String> = object.keys().filter(|k| !declared(k)).cloned().collect();
    for name in dropped {
        object.remove(&name);
        unknown.push(join(path, &name));
    }
    for (name, value) in object.iter_mut() {
        if root && ALWAYS_KEPT.contains(&name.as_str()) {
            continue;
        }
        let field_schema = properties.and_then(|p| p.get(name)).or(additional);
        if let Some(field_schema) = field_schema {
            prune_value(field_schema, value, &join(path, name), unknown);
        }
    }
}

/// Prune one value: an object by its properties, each item of an array by `items`.
fn prune_value(schema: &Value, value: &mut Value, path: &str, unknown: &mut Vec<String>) {
    match value {
        Value::Object(object) => prune_object(schema, object, path, false, unknown),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    prune_value(item_schema, item, &format!("{path}[{i}]"), unknown);
                }
            }
        }
        _ => {}
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

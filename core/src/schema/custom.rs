//! Schemas a resource brings itself (a CRD's OpenAPI v3 schema), beside the generated
//! definitions of the built-in kinds.
//!
//! A built-in resource says [`ResourceSchema::Builtin`] and keeps the fast path: its
//! kind is looked up in the compact form of `definitions.json` built once per process.
//! A custom resource carries its schema in an `Arc`, so a request borrows it through
//! the resource it was routed to and never copies the tree.
//!
//! Decoding against a custom schema does what kube-apiserver's apiextensions codec does
//! to a custom resource: `metadata` is read as an ObjectMeta, then the compiled schema
//! ([`super::compiled`]) prunes, drops disallowed nulls, coerces embedded resources
//! and defaults. Unknown fields are dropped and reported (`unknown field "spec.foo"`)
//! under the request's `fieldValidation`. Objects read back from storage are shaped by
//! the schema as it is now ([`ResourceSchema::shape_stored`]), so a default added to
//! the CRD shows on objects stored before it.

use super::compiled::StructuralSchema;
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
        let structural = Arc::new(StructuralSchema::compile(&openapi_v3));
        ResourceSchema::compiled(openapi_v3, structural)
    }

    /// [`ResourceSchema::custom`] with its schema compiled already (by the resource's
    /// strategy, which validates with it).
    pub fn compiled(openapi_v3: Value, structural: Arc<StructuralSchema>) -> ResourceSchema {
        ResourceSchema::Custom(Arc::new(CustomSchema { openapi_v3, structural }))
    }

    /// Make an object read from storage, or merged by a server-side apply, what the
    /// resource's schema makes it now (a custom resource: pruned and defaulted);
    /// built-in objects are left as they are.
    pub fn shape_stored(&self, object: &mut Map<String, Value>) {
        if let ResourceSchema::Custom(custom) = self {
            custom.structural.shape_stored(object);
        }
    }

    /// Whether stored objects are served exactly as stored (so their bytes may be sent
    /// without being read).
    pub fn serves_stored_as_is(&self) -> bool {
        matches!(self, ResourceSchema::Builtin)
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
        self.decode_with(format, body, gvk, validation, true)
    }

    /// [`ResourceSchema::decode`] of a server-side apply configuration: a custom
    /// resource's defaults are left for the merged object ([`ResourceSchema::shape_stored`]).
    pub fn decode_apply_config(
        &self,
        format: Format,
        body: &[u8],
        gvk: (&str, &str, &str),
        validation: FieldValidation,
    ) -> Result<Decoded, DecodeError> {
        self.decode_with(format, body, gvk, validation, false)
    }

    fn decode_with(
        &self,
        format: Format,
        body: &[u8],
        gvk: (&str, &str, &str),
        validation: FieldValidation,
        defaults: bool,
    ) -> Result<Decoded, DecodeError> {
        match self {
            ResourceSchema::Builtin => super::decode(format, body, gvk, validation),
            ResourceSchema::Custom(custom) => custom.decode_body(format, body, validation, defaults),
        }
    }
}

/// An OpenAPI v3 schema of one object, brought by its resource, and its compiled form.
#[derive(Debug)]
pub struct CustomSchema {
    openapi_v3: Value,
    structural: Arc<StructuralSchema>,
}

/// Schemas are the same when written the same (the compiled form follows).
impl PartialEq for CustomSchema {
    fn eq(&self, other: &Self) -> bool {
        self.openapi_v3 == other.openapi_v3
    }
}

impl Eq for CustomSchema {}

impl CustomSchema {
    /// The schema as given.
    pub fn openapi_v3(&self) -> &Value {
        &self.openapi_v3
    }

    /// The schema compiled.
    pub fn structural(&self) -> &Arc<StructuralSchema> {
        &self.structural
    }

    /// Decode a JSON or YAML body as an object of this schema under `validation`.
    pub fn decode(&self, format: Format, body: &[u8], validation: FieldValidation) -> Result<Decoded, DecodeError> {
        self.decode_body(format, body, validation, true)
    }

    /// Decode a body; `defaults`: fill them in (all but apply configurations).
    fn decode_body(
        &self,
        format: Format,
        body: &[u8],
        validation: FieldValidation,
        defaults: bool,
    ) -> Result<Decoded, DecodeError> {
        let value = crate::negotiation::decode(format, body).map_err(DecodeError::Syntax)?;
        let Value::Object(mut object) = value else {
            return Err(DecodeError::NotAnObject);
        };
        let report = validation != FieldValidation::Ignore;
        let mut unknown = Vec::new();
        if let Some(metadata) = object.get("metadata").filter(|m| !m.is_null()) {
            let meta = super::object_meta::decode(metadata, "metadata", report).map_err(DecodeError::Type)?;
            unknown = meta.unknown;
            object.insert("metadata".into(), meta.value);
        }
        let shaped = if defaults {
            self.structural.shape_request(&mut object, report)
        } else {
            self.structural.shape_apply_config(&mut object, report)
        };
        let shaped = shaped.map_err(|e| DecodeError::Type(e.to_string()))?;
        unknown.extend(shaped.unknown);
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

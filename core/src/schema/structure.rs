//! The compact form of the schemas the decoder walks: per definition, its fields and
//! their types, without descriptions or extensions.
//!
//! Built on first use (a write) from `structure.json`, which the generator writes beside
//! `definitions.json`: the same definitions with only what decoding needs, minified (130
//! KB instead of 720 KB). A server that never decodes a write never builds it, and a write
//! never reads (nor pages in) the descriptions the OpenAPI documents serve. A test checks
//! that both files give the same structure.

use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

/// Index of a definition in [`Schemas::types`].
pub(crate) type TypeId = u32;

/// What a value must look like.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    String,
    /// `format: byte`: a base64 string (Go `[]byte`).
    Bytes,
    Int32,
    Int64,
    Float,
    Bool,
    Ref(TypeId),
    Array(Box<Ty>),
    /// An object with any keys (`additionalProperties`).
    Map(Box<Ty>),
    /// Anything, kept as it is.
    Any,
}

/// How a definition decodes: a struct, or one of the types with their own JSON form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Fields sorted by name.
    Struct(Box<[(Box<str>, Ty)]>),
    /// `intstr.IntOrString`: a string or an int32.
    IntOrString,
    /// `resource.Quantity`: a string (or number) in quantity syntax.
    Quantity,
    /// `v1.Time`: an RFC 3339 string.
    Time,
    /// `v1.MicroTime`: an RFC 3339 string with microseconds.
    MicroTime,
    /// `RawExtension`, `FieldsV1`, apiextensions' `JSON` and `JSONSchemaPropsOr*`: any JSON.
    Any,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TypeDef {
    /// The definition name: `io.k8s.api.apps.v1.DeploymentSpec`.
    pub name: Box<str>,
    pub shape: Shape,
}

impl TypeDef {
    /// The Go type's name without its package, as Go's decoder names structs:
    /// `DeploymentSpec`.
    pub fn go_name(&self) -> &str {
        self.name.rsplit('.').next().unwrap_or(&self.name)
    }

    /// The Go type as `reflect.Type.String()` prints it: `v1.DeploymentSpec`.
    pub fn go_type(&self) -> String {
        let mut parts = self.name.rsplit('.');
        let name = parts.next().unwrap_or("");
        match parts.next() {
            Some(package) => format!("{package}.{name}"),
            None => name.to_owned(),
        }
    }
}

/// Every definition, and the kinds by group, version and kind.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Schemas {
    pub types: Vec<TypeDef>,
    by_gvk: HashMap<(Box<str>, Box<str>, Box<str>), TypeId>,
}

impl Schemas {
    /// The schemas, built on first use.
    pub fn get() -> &'static Schemas {
        static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
        SCHEMAS.get_or_init(|| Schemas::build(super::STRUCTURE_JSON).expect("structure.json is valid"))
    }

    pub fn ty(&self, id: TypeId) -> &TypeDef {
        &self.types[id as usize]
    }

    /// The definition of `kind` in `group`/`version` (`""` for the core group).
    pub fn kind(&self, group: &str, version: &str, kind: &str) -> Option<TypeId> {
        self.by_gvk.get(&(group.into(), version.into(), kind.into())).copied()
    }

    /// Build the compact form from an OpenAPI v2 `definitions` object.
    pub fn build(definitions_json: &str) -> Result<Schemas, String> {
        let raw: BTreeMap<String, RawDef> = serde_json::from_str(definitions_json).map_err(|e| e.to_string())?;
        let by_name: HashMap<Box<str>, TypeId> = raw
            .keys()
            .enumerate()
            .map(|(i, name)| (name.as_str().into(), i as TypeId))
            .collect();
        let mut by_gvk = HashMap::new();
        let mut types = Vec::with_capacity(raw.len());
        for (i, (name, def)) in raw.into_iter().enumerate() {
            for g in &def.gvk {
                by_gvk.insert((g.group.as_str().into(), g.version.as_str().into(), g.kind.as_str().into()), i as TypeId);
            }
            let shape = match name.as_str() {
                "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => Shape::IntOrString,
                "io.k8s.apimachinery.pkg.api.resource.Quantity" => Shape::Quantity,
                "io.k8s.apimachinery.pkg.apis.meta.v1.Time" => Shape::Time,
                "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => Shape::MicroTime,
                "io.k8s.apimachinery.pkg.runtime.RawExtension"
                | "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"
                | "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
                | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"
                | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray"
                | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool"
                | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray" => Shape::Any,
                _ => {
                    let mut fields = Vec::with_capacity(def.properties.len());
                    for (field, prop) in def.properties {
                        let ty = prop.ty(&by_name).map_err(|e| format!("{name}.{field}: {e}"))?;
                        fields.push((field.into_boxed_str(), ty));
                    }
                    // BTreeMap order: sorted, as lookups expect.
                    Shape::Struct(fields.into_boxed_slice())
                }
            };
            types.push(TypeDef {
                name: name.into_boxed_str(),
                shape,
            });
        }
        Ok(Schemas { types, by_gvk })
    }
}

#[derive(Deserialize)]
struct RawDef {
    #[serde(default)]
    properties: BTreeMap<String, RawProp>,
    #[serde(rename = "x-kubernetes-group-version-kind", default)]
    gvk: Vec<RawGvk>,
}

#[derive(Deserialize)]
struct RawGvk {
    group: String,
    version: String,
    kind: String,
}

#[derive(Deserialize)]
struct RawProp {
    #[serde(rename = "$ref")]
    reference: Option<String>,
    #[serde(rename = "type")]
    ty: Option<String>,
    format: Option<String>,
    items: Option<Box<RawProp>>,
    #[serde(rename = "additionalProperties")]
    additional: Option<Box<RawProp>>,
}

impl RawProp {
    fn ty(&self, by_name: &HashMap<Box<str>, TypeId>) -> Result<Ty, String> {
        if let Some(r) = &self.reference {
            let name = r.strip_prefix("#/definitions/").ok_or_else(|| format!("bad ref {r}"))?;
            return by_name.get(name).map(|id| Ty::Ref(*id)).ok_or_else(|| format!("no definition {name}"));
        }
        Ok(match (self.ty.as_deref(), self.format.as_deref()) {
            (Some("string"), Some("byte")) => Ty::Bytes,
            (Some("string"), _) => Ty::String,
            (Some("integer"), Some("int32")) => Ty::Int32,
            (Some("integer"), _) => Ty::Int64,
            (Some("number"), _) => Ty::Float,
            (Some("boolean"), _) => Ty::Bool,
            (Some("array"), _) => match &self.items {
                Some(items) => Ty::Array(Box::new(items.ty(by_name)?)),
                None => Ty::Array(Box::new(Ty::Any)),
            },
            (Some("object"), _) => match &self.additional {
                Some(values) => Ty::Map(Box::new(values.ty(by_name)?)),
                None => Ty::Any,
            },
            _ => Ty::Any,
        })
    }
}

//! The compact form of the schemas the decoder walks: per definition, its fields and
//! their types, without descriptions or extensions.
//!
//! Built on first use (a write) from `structure.txt`, which the generator writes beside
//! `definitions.json`: one line per definition with only what decoding needs (45 KB
//! instead of 720 KB), read by hand with names borrowed from the static text. A server
//! that never decodes a write never builds it, and a write never reads (nor pages in) the
//! descriptions the OpenAPI documents serve. A test checks that `definitions.json` gives
//! the same structure.

#[cfg(test)]
use serde::Deserialize;
#[cfg(test)]
use std::collections::BTreeMap;
use std::collections::HashMap;
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
    Struct(Box<[(&'static str, Ty)]>),
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
    pub name: &'static str,
    pub shape: Shape,
}

impl TypeDef {
    /// The Go type's name without its package, as Go's decoder names structs:
    /// `DeploymentSpec`.
    pub fn go_name(&self) -> &str {
        self.name.rsplit('.').next().unwrap_or(self.name)
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
    by_gvk: HashMap<(&'static str, &'static str, &'static str), TypeId>,
}

impl Schemas {
    /// The schemas, built on first use.
    pub fn get() -> &'static Schemas {
        static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
        SCHEMAS.get_or_init(|| Schemas::parse(super::STRUCTURE).expect("structure.txt is valid"))
    }

    pub fn ty(&self, id: TypeId) -> &TypeDef {
        &self.types[id as usize]
    }

    /// The definition called `name` (`io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`).
    pub fn named(&self, name: &str) -> Option<TypeId> {
        self.types.iter().position(|t| t.name == name).map(|i| i as TypeId)
    }

    /// The definition of `kind` in `group`/`version` (`""` for the core group).
    pub fn kind(&self, group: &str, version: &str, kind: &str) -> Option<TypeId> {
        self.by_gvk.get(&(group, version, kind)).copied()
    }

    /// Read `structure.txt`: `<name> TAB <group>/<version>/<kind>,... TAB <field>=<type> ...`
    /// per line, a type being `s`, `y` (bytes), `i`, `l`, `f`, `b`, `*`, `@N` (line N),
    /// `[T` (array) or `{T` (map).
    pub fn parse(text: &'static str) -> Result<Schemas, String> {
        let lines: Vec<&'static str> = text.lines().collect();
        let mut types = Vec::with_capacity(lines.len());
        let mut by_gvk = HashMap::new();
        for (i, line) in lines.iter().enumerate() {
            let mut cols = line.split('\t');
            let (Some(name), Some(gvks), Some(fields)) = (cols.next(), cols.next(), cols.next())
            else {
                return Err(format!("line {i}: three columns expected"));
            };
            for gvk in gvks.split(',').filter(|g| !g.is_empty()) {
                let mut parts = gvk.split('/');
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(g), Some(v), Some(k)) => by_gvk.insert((g, v, k), i as TypeId),
                    _ => return Err(format!("line {i}: bad kind {gvk}")),
                };
            }
            let shape = match special_shape(name) {
                Some(shape) => shape,
                None => {
                    let mut list = Vec::new();
                    for field in fields.split(' ').filter(|f| !f.is_empty()) {
                        let (field, ty) = field
                            .split_once('=')
                            .ok_or_else(|| format!("line {i}: bad field {field}"))?;
                        let (ty, rest) = parse_ty(ty, lines.len())
                            .ok_or_else(|| format!("line {i}: bad type of {field}"))?;
                        if !rest.is_empty() {
                            return Err(format!("line {i}: bad type of {field}"));
                        }
                        list.push((field, ty));
                    }
                    if !list.windows(2).all(|w| w[0].0 < w[1].0) {
                        return Err(format!("line {i}: fields not sorted"));
                    }
                    Shape::Struct(list.into_boxed_slice())
                }
            };
            types.push(TypeDef { name, shape });
        }
        Ok(Schemas { types, by_gvk })
    }

    /// Build the same from an OpenAPI v2 `definitions` object (the drift test's
    /// reference). Names are borrowed from the text (no escapes in them).
    #[cfg(test)]
    pub fn build(definitions_json: &'static str) -> Result<Schemas, String> {
        let raw: BTreeMap<&'static str, RawDef<'static>> =
            serde_json::from_str(definitions_json).map_err(|e| e.to_string())?;
        let by_name: HashMap<&str, TypeId> = raw
            .keys()
            .enumerate()
            .map(|(i, name)| (*name, i as TypeId))
            .collect();
        let mut by_gvk = HashMap::new();
        let mut types = Vec::with_capacity(raw.len());
        for (i, (name, def)) in raw.into_iter().enumerate() {
            for g in &def.gvk {
                by_gvk.insert((g.group, g.version, g.kind), i as TypeId);
            }
            let shape = match special_shape(name) {
                Some(shape) => shape,
                None => {
                    let mut fields = Vec::with_capacity(def.properties.len());
                    for (field, prop) in def.properties {
                        let ty = prop
                            .ty(&by_name)
                            .map_err(|e| format!("{name}.{field}: {e}"))?;
                        fields.push((field, ty));
                    }
                    // BTreeMap order: sorted, as lookups expect.
                    Shape::Struct(fields.into_boxed_slice())
                }
            };
            types.push(TypeDef { name, shape });
        }
        Ok(Schemas { types, by_gvk })
    }
}

/// The types with their own JSON form, by definition name.
fn special_shape(name: &str) -> Option<Shape> {
    Some(match name {
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
        | "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray" => {
            Shape::Any
        }
        _ => return None,
    })
}

/// One type of `structure.txt` at the start of `s`, and what follows it.
fn parse_ty(s: &str, types: usize) -> Option<(Ty, &str)> {
    let (first, rest) = s.split_at_checked(1)?;
    Some(match first {
        "s" => (Ty::String, rest),
        "y" => (Ty::Bytes, rest),
        "i" => (Ty::Int32, rest),
        "l" => (Ty::Int64, rest),
        "f" => (Ty::Float, rest),
        "b" => (Ty::Bool, rest),
        "*" => (Ty::Any, rest),
        "[" => {
            let (t, rest) = parse_ty(rest, types)?;
            (Ty::Array(Box::new(t)), rest)
        }
        "{" => {
            let (t, rest) = parse_ty(rest, types)?;
            (Ty::Map(Box::new(t)), rest)
        }
        "@" => {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let id: usize = rest[..digits].parse().ok()?;
            if id >= types {
                return None;
            }
            (Ty::Ref(id as TypeId), &rest[digits..])
        }
        _ => return None,
    })
}

#[cfg(test)]
#[derive(Deserialize)]
struct RawDef<'a> {
    #[serde(borrow, default)]
    properties: BTreeMap<&'a str, RawProp<'a>>,
    #[serde(borrow, rename = "x-kubernetes-group-version-kind", default)]
    gvk: Vec<RawGvk<'a>>,
}

#[cfg(test)]
#[derive(Deserialize)]
struct RawGvk<'a> {
    group: &'a str,
    version: &'a str,
    kind: &'a str,
}

#[cfg(test)]
#[derive(Deserialize)]
struct RawProp<'a> {
    #[serde(rename = "$ref")]
    reference: Option<&'a str>,
    #[serde(rename = "type")]
    ty: Option<&'a str>,
    format: Option<&'a str>,
    #[serde(borrow)]
    items: Option<Box<RawProp<'a>>>,
    #[serde(borrow, rename = "additionalProperties")]
    additional: Option<Box<RawProp<'a>>>,
}

#[cfg(test)]
impl RawProp<'_> {
    fn ty(&self, by_name: &HashMap<&str, TypeId>) -> Result<Ty, String> {
        if let Some(r) = self.reference {
            let name = r
                .strip_prefix("#/definitions/")
                .ok_or_else(|| format!("bad ref {r}"))?;
            return by_name
                .get(name)
                .map(|id| Ty::Ref(*id))
                .ok_or_else(|| format!("no definition {name}"));
        }
        Ok(match (self.ty, self.format) {
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

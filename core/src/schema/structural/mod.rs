//! Structural schemas, as kube-apiserver's apiextensions server reads a CRD's OpenAPI
//! v3 schema (`pkg/apiserver/schema`): the schema split into its structure (types,
//! properties, items, additional properties, the `x-kubernetes-*` extensions) and the
//! value validations on top (formats, bounds, `enum`, and the `allOf`/`anyOf`/`oneOf`/
//! `not` junctors, which may only restate the structure, never extend it).
//!
//! A CRD's schema must be structural ([`rules::validate`]) for the CRD to be accepted;
//! an old CRD stored before that rule may not be, and its status says so with the
//! `NonStructuralSchema` condition ([`violations`]). Pruning ([`prune`]) and the
//! checks of embedded `metadata` ([`meta`]) follow the structure only.

pub(crate) mod field_path;
pub(crate) mod meta;
pub(crate) mod props;
pub(crate) mod prune;
pub(crate) mod rules;

use crate::validation::{FieldError, FieldPath};
use props::Props;
use serde_json::Value;
use std::collections::BTreeMap;

/// A structural schema node.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Structural {
    pub generic: Generic,
    pub extensions: Extensions,
    pub items: Option<Box<Structural>>,
    /// The properties (none when the schema lists none).
    pub properties: BTreeMap<String, Structural>,
    pub additional_properties: Option<AdditionalProperties>,
    pub value_validation: ValueValidation,
    /// The `x-kubernetes-validations` rules, as given (`None` when absent).
    pub x_validations: Option<Vec<Value>>,
}

/// `additionalProperties`: a schema, or `true`/`false`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AdditionalProperties {
    pub allows: bool,
    pub schema: Option<Box<Structural>>,
}

/// The fields every node may carry: its type and its description.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Generic {
    pub ty: String,
    pub description: String,
    pub title: String,
    pub nullable: bool,
    pub default: Option<Value>,
}

/// The Kubernetes vendor extensions that shape a node.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Extensions {
    pub preserve_unknown_fields: bool,
    pub embedded_resource: bool,
    pub int_or_string: bool,
    pub list_map_keys: Option<Vec<String>>,
    pub list_type: Option<String>,
    pub map_type: Option<String>,
}

/// The checks of a value beyond its structure.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ValueValidation {
    pub format: String,
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub max_length: Option<i64>,
    pub min_length: Option<i64>,
    pub pattern: String,
    pub max_items: Option<i64>,
    pub min_items: Option<i64>,
    pub unique_items: bool,
    pub multiple_of: Option<f64>,
    pub enumeration: Vec<Value>,
    pub max_properties: Option<i64>,
    pub min_properties: Option<i64>,
    pub required: Option<Vec<String>>,
    pub all_of: Vec<Nested>,
    pub one_of: Vec<Nested>,
    pub any_of: Vec<Nested>,
    pub not: Option<Box<Nested>>,
}

/// A node under a junctor (`allOf`, `anyOf`, `oneOf`, `not`): value validations only.
/// What would add structure there is kept apart, to be refused.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Nested {
    pub value_validation: ValueValidation,
    pub x_validations: Option<Vec<Value>>,
    pub forbidden_generics: Generic,
    pub forbidden_extensions: Extensions,
    pub items: Option<Box<Nested>>,
    pub properties: Option<BTreeMap<String, Nested>>,
    pub additional_properties: Option<Box<Nested>>,
}

/// Why a schema cannot be read as a structural one at all (upstream's words).
pub(crate) type NotStructural = String;

impl Structural {
    /// Read an OpenAPI v3 schema (upstream's `NewStructural`).
    pub(crate) fn from_json(schema: &Value) -> Result<Structural, NotStructural> {
        let p = Props(schema);
        unsupported_fields(p)?;
        let mut s = Structural {
            generic: generic(p),
            extensions: extensions(p)?,
            value_validation: value_validation(p)?,
            x_validations: p.get("x-kubernetes-validations").and_then(Value::as_array).cloned(),
            ..Structural::default()
        };
        if let Some(items) = p.get("items") {
            if items.is_array() {
                return Err(ITEMS_ARRAY.to_owned());
            }
            s.items = Some(Box::new(Structural::from_json(items)?));
        }
        for (name, property) in p.entries("properties") {
            s.properties.insert(name.to_owned(), Structural::from_json(property)?);
        }
        if let Some(additional) = p.get("additionalProperties") {
            s.additional_properties = Some(match additional {
                Value::Object(_) => AdditionalProperties {
                    allows: true,
                    schema: Some(Box::new(Structural::from_json(additional)?)),
                },
                other => AdditionalProperties { allows: other.as_bool().unwrap_or(false), schema: None },
            });
        }
        Ok(s)
    }

    /// The schema of a property, or of every property when `additionalProperties`
    /// gives one.
    pub(crate) fn field(&self, name: &str) -> Option<&Structural> {
        self.properties
            .get(name)
            .or_else(|| self.additional_properties.as_ref().and_then(|a| a.schema.as_deref()))
    }
}

const ITEMS_ARRAY: &str = "OpenAPIV3Schema 'items' must be a schema, but is an array";

fn unsupported_fields(p: Props<'_>) -> Result<(), NotStructural> {
    let unsupported = [
        ("id", !p.str("id").is_empty()),
        ("schema", !p.str("$schema").is_empty()),
        ("$ref", p.opt_str("$ref").is_some_and(|r| !r.is_empty())),
        ("patternProperties", !p.entries("patternProperties").is_empty()),
        ("dependencies", !p.entries("dependencies").is_empty()),
        ("additionalItems", p.get("additionalItems").is_some()),
        ("definitions", !p.entries("definitions").is_empty()),
    ];
    match unsupported.iter().find(|(_, set)| *set) {
        Some((name, _)) => Err(format!("OpenAPIV3Schema '{name}' is not supported")),
        None => Ok(()),
    }
}

fn generic(p: Props<'_>) -> Generic {
    Generic {
        ty: p.str("type").to_owned(),
        description: p.str("description").to_owned(),
        title: p.str("title").to_owned(),
        nullable: p.bool("nullable"),
        default: p.get("default").cloned(),
    }
}

fn extensions(p: Props<'_>) -> Result<Extensions, NotStructural> {
    let preserve = match p.opt_bool("x-kubernetes-preserve-unknown-fields") {
        Some(false) => {
            return Err("internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined".to_owned())
        }
        set => set.is_some(),
    };
    Ok(Extensions {
        preserve_unknown_fields: preserve,
        embedded_resource: p.bool("x-kubernetes-embedded-resource"),
        int_or_string: p.bool("x-kubernetes-int-or-string"),
        list_map_keys: p
            .get("x-kubernetes-list-map-keys")
            .map(|_| p.strings("x-kubernetes-list-map-keys").into_iter().map(str::to_owned).collect()),
        list_type: p.opt_str("x-kubernetes-list-type").map(str::to_owned),
        map_type: p.opt_str("x-kubernetes-map-type").map(str::to_owned),
    })
}

fn value_validation(p: Props<'_>) -> Result<ValueValidation, NotStructural> {
    let float = |k: &str| p.get(k).and_then(Value::as_f64);
    let int = |k: &str| p.get(k).and_then(Value::as_i64);
    let nested_list = |k: &str| -> Result<Vec<Nested>, NotStructural> { p.list(k).iter().map(nested).collect() };
    Ok(ValueValidation {
        format: p.str("format").to_owned(),
        maximum: float("maximum"),
        exclusive_maximum: p.bool("exclusiveMaximum"),
        minimum: float("minimum"),
        exclusive_minimum: p.bool("exclusiveMinimum"),
        max_length: int("maxLength"),
        min_length: int("minLength"),
        pattern: p.str("pattern").to_owned(),
        max_items: int("maxItems"),
        min_items: int("minItems"),
        unique_items: p.bool("uniqueItems"),
        multiple_of: float("multipleOf"),
        enumeration: p.list("enum").to_vec(),
        max_properties: int("maxProperties"),
        min_properties: int("minProperties"),
        required: p.get("required").map(|_| p.strings("required").into_iter().map(str::to_owned).collect()),
        all_of: nested_list("allOf")?,
        one_of: nested_list("oneOf")?,
        any_of: nested_list("anyOf")?,
        not: p.get("not").map(nested).transpose()?.map(Box::new),
    })
}

/// A node under a junctor (upstream's `newNestedValueValidation`).
fn nested(schema: &Value) -> Result<Nested, NotStructural> {
    let p = Props(schema);
    unsupported_fields(p)?;
    let mut n = Nested {
        value_validation: value_validation(p)?,
        x_validations: p.get("x-kubernetes-validations").and_then(Value::as_array).cloned(),
        forbidden_generics: generic(p),
        forbidden_extensions: extensions(p)?,
        ..Nested::default()
    };
    if let Some(items) = p.get("items") {
        if items.is_array() {
            return Err(ITEMS_ARRAY.to_owned());
        }
        n.items = Some(Box::new(nested(items)?));
    }
    if p.get("properties").is_some() {
        let mut properties = BTreeMap::new();
        for (name, property) in p.entries("properties") {
            properties.insert(name.to_owned(), nested(property)?);
        }
        n.properties = Some(properties);
    }
    n.additional_properties = match p.get("additionalProperties") {
        Some(schema @ Value::Object(_)) => Some(Box::new(nested(schema)?)),
        Some(Value::Bool(true)) => Some(Box::default()),
        _ => None,
    };
    Ok(n)
}

/// Why `schema` is not structural: empty when it is (paths from the schema root).
pub(crate) fn violations(schema: &Value) -> Vec<FieldError> {
    violations_at(&FieldPath::default(), schema).unwrap_or_else(|reason| vec![FieldError::invalid("", "", reason)])
}

/// Why `schema`, found at `path`, is not structural; `Err` when it cannot even be read
/// as one. Upstream's `NonStructuralSchema` condition lists these for a stored CRD.
pub(crate) fn violations_at(path: &FieldPath, schema: &Value) -> Result<Vec<FieldError>, String> {
    Structural::from_json(schema).map(|s| rules::validate(path, &s))
}

/// Whether `schema` is structural.
pub(crate) fn is_structural(schema: &Value) -> bool {
    violations(schema).is_empty()
}

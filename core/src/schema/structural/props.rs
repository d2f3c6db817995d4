//! The fields of an OpenAPI v3 schema node as a CRD carries it (apiextensions'
//! `JSONSchemaProps`), in the order and with the Go types of upstream's internal struct.
//!
//! Upstream decodes every schema node into that struct before checking it, so whether
//! a field "is set" follows Go: a string or bool field is unset when empty or false, a
//! pointer, slice or map field when absent (or `null`) — `maxLength: 0` and
//! `required: []` are set. The struct order matters where upstream walks the fields
//! (the root of a schema with a status subresource) and where it prints a node (error
//! values show Go's JSON of the struct).

use serde_json::Value;

/// The Go type of a field of `JSONSchemaProps`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `string`.
    Str,
    /// `bool`.
    Bool,
    /// `*float64`.
    Float,
    /// `*int64`.
    Int,
    /// `*string`.
    OptStr,
    /// `*bool`.
    OptBool,
    /// `*JSON`: any JSON value.
    Json,
    /// `[]JSON`.
    JsonList,
    /// `[]string`.
    Strings,
    /// `*JSONSchemaProps`.
    Schema,
    /// `[]JSONSchemaProps`.
    Schemas,
    /// `map[string]JSONSchemaProps`.
    SchemaMap,
    /// `*JSONSchemaPropsOrArray`: a schema, or a list of them.
    OrArray,
    /// `*JSONSchemaPropsOrBool`: a schema, or `true`/`false`.
    OrBool,
    /// `map[string]JSONSchemaPropsOrStringArray`.
    Dependencies,
    /// `*ExternalDocumentation`.
    Docs,
    /// `[]ValidationRule`.
    Rules,
}

/// One field: its JSON name, its Go name and its Go type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Field {
    pub json: &'static str,
    pub go: &'static str,
    pub shape: Shape,
}

const fn f(json: &'static str, go: &'static str, shape: Shape) -> Field {
    Field { json, go, shape }
}

/// Every field, in the order of upstream's internal struct.
pub(crate) const FIELDS: [Field; 44] = [
    f("id", "ID", Shape::Str),
    f("$schema", "Schema", Shape::Str),
    f("$ref", "Ref", Shape::OptStr),
    f("description", "Description", Shape::Str),
    f("type", "Type", Shape::Str),
    f("nullable", "Nullable", Shape::Bool),
    f("format", "Format", Shape::Str),
    f("title", "Title", Shape::Str),
    f("default", "Default", Shape::Json),
    f("maximum", "Maximum", Shape::Float),
    f("exclusiveMaximum", "ExclusiveMaximum", Shape::Bool),
    f("minimum", "Minimum", Shape::Float),
    f("exclusiveMinimum", "ExclusiveMinimum", Shape::Bool),
    f("maxLength", "MaxLength", Shape::Int),
    f("minLength", "MinLength", Shape::Int),
    f("pattern", "Pattern", Shape::Str),
    f("maxItems", "MaxItems", Shape::Int),
    f("minItems", "MinItems", Shape::Int),
    f("uniqueItems", "UniqueItems", Shape::Bool),
    f("multipleOf", "MultipleOf", Shape::Float),
    f("enum", "Enum", Shape::JsonList),
    f("maxProperties", "MaxProperties", Shape::Int),
    f("minProperties", "MinProperties", Shape::Int),
    f("required", "Required", Shape::Strings),
    f("items", "Items", Shape::OrArray),
    f("allOf", "AllOf", Shape::Schemas),
    f("oneOf", "OneOf", Shape::Schemas),
    f("anyOf", "AnyOf", Shape::Schemas),
    f("not", "Not", Shape::Schema),
    f("properties", "Properties", Shape::SchemaMap),
    f("additionalProperties", "AdditionalProperties", Shape::OrBool),
    f("patternProperties", "PatternProperties", Shape::SchemaMap),
    f("dependencies", "Dependencies", Shape::Dependencies),
    f("additionalItems", "AdditionalItems", Shape::OrBool),
    f("definitions", "Definitions", Shape::SchemaMap),
    f("externalDocs", "ExternalDocs", Shape::Docs),
    f("example", "Example", Shape::Json),
    f("x-kubernetes-preserve-unknown-fields", "XPreserveUnknownFields", Shape::OptBool),
    f("x-kubernetes-embedded-resource", "XEmbeddedResource", Shape::Bool),
    f("x-kubernetes-int-or-string", "XIntOrString", Shape::Bool),
    f("x-kubernetes-list-map-keys", "XListMapKeys", Shape::Strings),
    f("x-kubernetes-list-type", "XListType", Shape::OptStr),
    f("x-kubernetes-map-type", "XMapType", Shape::OptStr),
    f("x-kubernetes-validations", "XValidations", Shape::Rules),
];

/// Read access to one schema node as upstream's struct sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Props<'a>(pub &'a Value);

impl<'a> Props<'a> {
    /// A field present and not `null` (a set pointer, slice or map).
    pub fn get(self, key: &str) -> Option<&'a Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    /// A string field (`""` when unset).
    pub fn str(self, key: &str) -> &'a str {
        self.get(key).and_then(Value::as_str).unwrap_or("")
    }

    /// A bool field (`false` when unset).
    pub fn bool(self, key: &str) -> bool {
        self.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    /// A `*string` field.
    pub fn opt_str(self, key: &str) -> Option<&'a str> {
        self.get(key).and_then(Value::as_str)
    }

    /// A `*bool` field.
    pub fn opt_bool(self, key: &str) -> Option<bool> {
        self.get(key).and_then(Value::as_bool)
    }

    /// A list field (empty when unset).
    pub fn list(self, key: &str) -> &'a [Value] {
        self.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
    }

    /// A `[]string` field (empty when unset).
    pub fn strings(self, key: &str) -> Vec<&'a str> {
        self.list(key).iter().filter_map(Value::as_str).collect()
    }

    /// A map field's entries, in key order (empty when unset).
    pub fn entries(self, key: &str) -> Vec<(&'a str, &'a Value)> {
        let mut entries: Vec<(&str, &Value)> = self
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        entries
    }

    /// The one schema of `items` when it is a schema (not a list of them).
    pub fn items_schema(self) -> Option<Props<'a>> {
        self.get("items").filter(|v| v.is_object()).map(Props)
    }

    /// The schema of `additionalProperties` when it is one (not `true` or `false`).
    pub fn additional_schema(self) -> Option<Props<'a>> {
        self.get("additionalProperties").filter(|v| v.is_object()).map(Props)
    }

    /// Whether the field `field` is set, as Go tells a zero value from a set one.
    pub fn is_set(self, field: &Field) -> bool {
        match field.shape {
            Shape::Str => !self.str(field.json).is_empty(),
            Shape::Bool => self.bool(field.json),
            _ => self.get(field.json).is_some(),
        }
    }
}

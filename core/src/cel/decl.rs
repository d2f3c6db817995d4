//! The CEL type of each node of a structural schema, as upstream's `SchemaDeclType`
//! derives it: objects with their (escaped) properties, maps from
//! `additionalProperties`, lists, strings by format (bytes, duration, date,
//! date-time), int-or-string as `dyn`; Kubernetes' type and object metadata at the
//! root and at embedded resources. Each node carries the sizes the cost estimator
//! works from: the most elements it may hold (from `maxLength`/`maxItems`/
//! `maxProperties`, or what fits in the largest request) and the least space it takes
//! serialized.
//!
//! Nodes without a CEL type (no `type` and only `x-kubernetes-preserve-unknown-fields`)
//! are absent: their parent does not expose them to rules.

use super::escaping::escape;
use super::types::Type;
use serde_json::Value as Json;
use std::sync::Arc;

/// The largest request kube-apiserver accepts, which bounds unbounded sizes.
pub const MAX_REQUEST_SIZE_BYTES: i64 = 3 * 1024 * 1024;
const MAX_DURATION_SIZE_JSON: i64 = 32;
const MAX_DATETIME_SIZE_JSON: i64 = 32;
const MIN_DURATION_SIZE_JSON: i64 = 3;
const JSON_DATE_SIZE: i64 = 12;
const MIN_DATETIME_SIZE_JSON: i64 = 21;
const MIN_STRING_SIZE: i64 = 2;
const MIN_BOOL_SIZE: i64 = 4;
const MIN_NUMBER_SIZE: i64 = 1;

#[derive(Debug)]
pub struct DeclType {
    pub kind: DeclKind,
    pub nullable: bool,
    /// The most elements (characters, items, properties) a value may hold.
    pub max_elements: i64,
    /// The least number of bytes a value takes in JSON.
    pub min_serialized_size: i64,
    /// The name of an object type (`selfType.spec`), unique in the schema.
    pub name: String,
}

#[derive(Debug)]
pub enum DeclKind {
    Bool,
    Int,
    Double,
    String,
    Bytes,
    Duration,
    Date,
    DateTime,
    IntOrString,
    List { elem: Arc<DeclType>, kind: ListKind },
    Map { elem: Arc<DeclType> },
    Object { fields: Vec<Field> },
    /// Any JSON, typed as it is read (admission's `object`, `request`, `params`): an
    /// object reads as a map of `Dyn`, an array as a list of `Dyn`.
    Dyn,
}

/// `Dyn`, and the map and list of `Dyn` its objects and arrays read as.
pub fn dyn_decls() -> &'static (DeclType, DeclType, DeclType) {
    static DECLS: std::sync::OnceLock<(DeclType, DeclType, DeclType)> = std::sync::OnceLock::new();
    DECLS.get_or_init(|| {
        let decl = |kind| DeclType { kind, nullable: true, max_elements: MAX_REQUEST_SIZE_BYTES - 2, min_serialized_size: 1, name: String::new() };
        let any = || Arc::new(decl(DeclKind::Dyn));
        (decl(DeclKind::Dyn), decl(DeclKind::Map { elem: any() }), decl(DeclKind::List { elem: any(), kind: ListKind::Atomic }))
    })
}

/// How a list's items are told apart (`x-kubernetes-list-type`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListKind {
    Atomic,
    Set,
    Map(Vec<String>),
}

#[derive(Debug)]
pub struct Field {
    /// The property name in JSON.
    pub json_name: String,
    /// The name rules use, escaped (`foo-bar` is `foo__dash__bar`); `None` when the
    /// name cannot be escaped, and rules cannot see the field.
    pub cel_name: Option<String>,
    pub decl: Arc<DeclType>,
    pub required: bool,
}

/// The root type name (upstream uses a name that changes on every compilation, so
/// that rules cannot rely on it).
pub const ROOT_TYPE_NAME: &str = "selfType";

impl DeclType {
    /// The CEL type of values of this node.
    pub fn cel_type(&self) -> Type {
        match &self.kind {
            DeclKind::Bool => Type::Bool,
            DeclKind::Int => Type::Int,
            DeclKind::Double => Type::Double,
            DeclKind::String => Type::String,
            DeclKind::Bytes => Type::Bytes,
            DeclKind::Duration => Type::Duration,
            DeclKind::Date | DeclKind::DateTime => Type::Timestamp,
            DeclKind::IntOrString | DeclKind::Dyn => Type::Dyn,
            DeclKind::List { elem, .. } => Type::list(elem.cel_type()),
            DeclKind::Map { elem } => Type::map(Type::String, elem.cel_type()),
            DeclKind::Object { .. } => Type::Object(self.name.clone()),
        }
    }

    pub fn field(&self, cel_name: &str) -> Option<&Field> {
        match &self.kind {
            DeclKind::Object { fields } => fields.iter().find(|f| f.cel_name.as_deref() == Some(cel_name)),
            _ => None,
        }
    }

    pub fn elem(&self) -> Option<&Arc<DeclType>> {
        match &self.kind {
            DeclKind::List { elem, .. } | DeclKind::Map { elem } => Some(elem),
            _ => None,
        }
    }

    /// Every object type under (and including) this node, for the checker's lookups.
    pub fn objects<'s>(self: &'s Arc<Self>, out: &mut Vec<&'s Arc<DeclType>>) {
        match &self.kind {
            DeclKind::Object { fields } => {
                out.push(self);
                for f in fields {
                    f.decl.objects(out);
                }
            }
            DeclKind::List { elem, .. } | DeclKind::Map { elem } => elem.objects(out),
            _ => {}
        }
    }
}

/// The CEL type of a schema node named `name`; `resource_root` adds `apiVersion`,
/// `kind` and `metadata.name`/`generateName` as upstream does at a resource's root.
pub fn schema_decl_type(schema: &Json, resource_root: bool, name: &str) -> Option<Arc<DeclType>> {
    let nullable = schema.get("nullable").and_then(Json::as_bool).unwrap_or(false);
    if schema.get("x-kubernetes-int-or-string").and_then(Json::as_bool) == Some(true) {
        return Some(Arc::new(DeclType {
            kind: DeclKind::IntOrString,
            nullable,
            max_elements: MAX_REQUEST_SIZE_BYTES - 2,
            min_serialized_size: 1,
            name: String::new(),
        }));
    }
    let ty = schema.get("type").and_then(Json::as_str).unwrap_or("");
    let simple = |kind: DeclKind, min: i64, max: i64| {
        Some(Arc::new(DeclType {
            kind,
            nullable,
            max_elements: max,
            min_serialized_size: min,
            name: String::new(),
        }))
    };
    match ty {
        "array" => {
            let items = schema.get("items")?;
            let embedded = is_embedded(items);
            let elem = schema_decl_type(items, embedded, &format!("{name}.@idx"))?;
            let max = match schema.get("maxItems").and_then(Json::as_i64) {
                Some(m) => m.max(0),
                None => (MAX_REQUEST_SIZE_BYTES - 2) / (elem.min_serialized_size + 1),
            };
            let kind = match schema.get("x-kubernetes-list-type").and_then(Json::as_str) {
                Some("set") => ListKind::Set,
                Some("map") => ListKind::Map(
                    schema
                        .get("x-kubernetes-list-map-keys")
                        .and_then(Json::as_array)
                        .map(|keys| keys.iter().filter_map(Json::as_str).map(str::to_owned).collect())
                        .unwrap_or_default(),
                ),
                _ => ListKind::Atomic,
            };
            simple(DeclKind::List { elem, kind }, 2, max)
        }
        "object" => {
            if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                let embedded = is_embedded(additional);
                let elem = schema_decl_type(additional, embedded, &format!("{name}.@elem"))?;
                let max = match schema.get("maxProperties").and_then(Json::as_i64) {
                    Some(m) => m.max(0),
                    None => (MAX_REQUEST_SIZE_BYTES - 2) / (elem.min_serialized_size + 6),
                };
                return simple(DeclKind::Map { elem }, 2, max);
            }
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Json::as_array)
                .map(|r| r.iter().filter_map(Json::as_str).collect())
                .unwrap_or_default();
            let mut fields = Vec::new();
            let mut min_size = 2;
            let empty = serde_json::Map::new();
            let properties = schema.get("properties").and_then(Json::as_object).unwrap_or(&empty);
            for (prop, prop_schema) in properties {
                let cel_name = escape(prop);
                let child_name = format!("{name}.{}", cel_name.as_deref().unwrap_or(prop));
                let Some(decl) = schema_decl_type(prop_schema, is_embedded(prop_schema), &child_name) else {
                    continue;
                };
                let is_required = required.contains(&prop.as_str());
                if is_required && prop_schema.get("default").is_none() {
                    min_size += prop.len() as i64 + decl.min_serialized_size + 4;
                }
                fields.push(Field {
                    json_name: prop.clone(),
                    cel_name,
                    decl,
                    required: is_required,
                });
            }
            if resource_root {
                add_type_and_object_meta(&mut fields, name);
            }
            Some(Arc::new(DeclType {
                kind: DeclKind::Object { fields },
                nullable,
                max_elements: 0,
                min_serialized_size: min_size,
                name: name.to_owned(),
            }))
        }
        "string" => {
            let max_length = schema.get("maxLength").and_then(Json::as_i64).map(|m| m.max(0));
            match schema.get("format").and_then(Json::as_str).unwrap_or("") {
                "byte" => simple(DeclKind::Bytes, MIN_STRING_SIZE, max_length.unwrap_or(MAX_REQUEST_SIZE_BYTES - 2)),
                "duration" => simple(DeclKind::Duration, MIN_DURATION_SIZE_JSON, MAX_DURATION_SIZE_JSON),
                "date" => simple(DeclKind::Date, JSON_DATE_SIZE, JSON_DATE_SIZE),
                "date-time" => simple(DeclKind::DateTime, MIN_DATETIME_SIZE_JSON, MAX_DATETIME_SIZE_JSON),
                _ => {
                    let max = match (max_length, schema.get("enum").and_then(Json::as_array)) {
                        (Some(m), _) => m * 4,
                        (None, Some(values)) if !values.is_empty() => values
                            .iter()
                            .filter_map(Json::as_str)
                            .map(|s| s.len() as i64)
                            .max()
                            .unwrap_or(0),
                        _ => MAX_REQUEST_SIZE_BYTES - 2,
                    };
                    simple(DeclKind::String, MIN_STRING_SIZE, max)
                }
            }
        }
        "boolean" => simple(DeclKind::Bool, MIN_BOOL_SIZE, 0),
        "number" => simple(DeclKind::Double, MIN_NUMBER_SIZE, 0),
        "integer" => simple(DeclKind::Int, MIN_NUMBER_SIZE, 0),
        _ => None,
    }
}

pub fn is_embedded(schema: &Json) -> bool {
    schema.get("x-kubernetes-embedded-resource").and_then(Json::as_bool) == Some(true)
}

/// Upstream replaces `kind`, `apiVersion` and `metadata` at a resource root unless the
/// schema already declares them as strings and an object with `name` and
/// `generateName` strings.
fn add_type_and_object_meta(fields: &mut Vec<Field>, name: &str) {
    let is_kind = |f: &Field, n: &str, k: fn(&DeclKind) -> bool| f.json_name == n && k(&f.decl.kind);
    let string = |k: &DeclKind| matches!(k, DeclKind::String);
    let has_kind = fields.iter().any(|f| is_kind(f, "kind", string));
    let has_api_version = fields.iter().any(|f| is_kind(f, "apiVersion", string));
    let has_meta = fields.iter().any(|f| {
        f.json_name == "metadata"
            && f.decl.field("name").is_some_and(|n| string(&n.decl.kind))
            && f.decl.field("generateName").is_some_and(|n| string(&n.decl.kind))
    });
    if has_kind && has_api_version && has_meta {
        return;
    }
    let string_decl = || {
        Arc::new(DeclType {
            kind: DeclKind::String,
            nullable: false,
            max_elements: MAX_REQUEST_SIZE_BYTES - 2,
            min_serialized_size: MIN_STRING_SIZE,
            name: String::new(),
        })
    };
    let field = |json: &str, decl: Arc<DeclType>| Field {
        json_name: json.to_owned(),
        cel_name: Some(json.to_owned()),
        decl,
        required: false,
    };
    fields.retain(|f| !matches!(f.json_name.as_str(), "kind" | "apiVersion" | "metadata"));
    fields.push(field("kind", string_decl()));
    fields.push(field("apiVersion", string_decl()));
    let meta = DeclType {
        kind: DeclKind::Object {
            fields: vec![field("name", string_decl()), field("generateName", string_decl())],
        },
        nullable: false,
        max_elements: 0,
        min_serialized_size: 2,
        name: format!("{name}.metadata"),
    };
    fields.push(field("metadata", Arc::new(meta)));
    fields.sort_by(|a, b| a.json_name.cmp(&b.json_name));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sizes_follow_the_schema_limits() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 10},
            "tags": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 5},
            "count": {"type": "integer"}
        }, "required": ["count"]});
        let decl = schema_decl_type(&schema, false, ROOT_TYPE_NAME).unwrap();
        assert_eq!(decl.field("name").unwrap().decl.max_elements, 40);
        assert_eq!(decl.field("tags").unwrap().decl.max_elements, (MAX_REQUEST_SIZE_BYTES - 2) / 3);
        assert_eq!(decl.field("labels").unwrap().decl.max_elements, 5);
        assert_eq!(decl.min_serialized_size, 2 + "count".len() as i64 + 1 + 4);
        assert_eq!(decl.cel_type(), Type::object("selfType"));
        assert_eq!(decl.field("tags").unwrap().decl.cel_type(), Type::list(Type::String));
    }

    #[test]
    fn resource_roots_get_metadata() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object"}}});
        let decl = schema_decl_type(&schema, true, ROOT_TYPE_NAME).unwrap();
        assert!(decl.field("metadata").unwrap().decl.field("name").is_some());
        assert!(decl.field("apiVersion").is_some());
        let bare = schema_decl_type(&schema, false, ROOT_TYPE_NAME).unwrap();
        assert!(bare.field("metadata").is_none());
    }

    #[test]
    fn untyped_nodes_are_left_out() {
        let schema = json!({"type": "object", "properties": {
            "any": {"x-kubernetes-preserve-unknown-fields": true},
            "port": {"x-kubernetes-int-or-string": true}
        }});
        let decl = schema_decl_type(&schema, false, ROOT_TYPE_NAME).unwrap();
        assert!(decl.field("any").is_none());
        assert_eq!(decl.field("port").unwrap().decl.cel_type(), Type::Dyn);
    }
}

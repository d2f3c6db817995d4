//! One node of a compiled schema: what a CRD's `openAPIV3Schema` says about the values
//! at one place in an object, read once from its JSON into plain fields.
//!
//! A node is both upstream's `Structural` (types, properties, items, defaults and the
//! `x-kubernetes-*` extensions that pruning, defaulting and the list and metadata rules
//! read) and the `spec.Schema` kube-openapi validates against (the value validations,
//! `allOf`/`anyOf`/`oneOf`/`not` included). The junctors' nodes only validate.
//!
//! Keywords of the wrong JSON type are ignored (the CRD's own validation refuses them);
//! formats kube-apiserver does not validate are dropped here, as its
//! `StripUnsupportedFormatsPostProcess` drops them; patterns are compiled on first use.

use super::formats::Format;
use super::pattern::Pattern;
use serde_json::{Map, Value};

/// Deepest schema compiled: deeper nodes accept anything. JSON parsing stops at 128
/// levels already; this guards schemas built in code.
pub(crate) const MAX_SCHEMA_DEPTH: usize = 256;

/// JSON types a node accepts (`type`, or `integer` and `string` for
/// `x-kubernetes-int-or-string`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Types(u8);

impl Types {
    pub const OBJECT: Types = Types(1);
    pub const ARRAY: Types = Types(2);
    pub const STRING: Types = Types(4);
    pub const INTEGER: Types = Types(8);
    pub const NUMBER: Types = Types(16);
    pub const BOOLEAN: Types = Types(32);
    pub const NULL: Types = Types(64);
    /// A type name kube-openapi knows nothing of: no value has it.
    pub const UNKNOWN: Types = Types(128);

    pub fn contains(self, other: Types) -> bool {
        self.0 & other.0 != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    fn of(name: &str) -> Types {
        match name {
            "object" => Types::OBJECT,
            "array" => Types::ARRAY,
            "string" => Types::STRING,
            "integer" => Types::INTEGER,
            "number" => Types::NUMBER,
            "boolean" => Types::BOOLEAN,
            "null" => Types::NULL,
            _ => Types::UNKNOWN,
        }
    }
}

/// `additionalProperties`.
#[derive(Debug, Default)]
pub(crate) enum Additional {
    /// Not given.
    #[default]
    Absent,
    /// `true` or `false`, without a schema.
    Allows(bool),
    /// A schema every other property follows.
    Schema(Box<Node>),
}

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListType {
    Atomic,
    /// Items are unique.
    Set,
    /// Items are objects, unique by `x-kubernetes-list-map-keys`.
    Map(Vec<Box<str>>),
    /// Any other value (the CRD's validation refuses it): no rule.
    Other,
}

/// The value validations of a node, apart so that nodes without any stay small.
#[derive(Debug, Default)]
pub(crate) struct Checks {
    /// A format kube-apiserver validates, and its name as the schema writes it.
    pub format: Option<(Format, Box<str>)>,
    /// Allowed values (none given or empty: any).
    pub enumeration: Vec<Value>,
    pub pattern: Option<Pattern>,
    pub max_length: Option<i64>,
    pub min_length: Option<i64>,
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub multiple_of: Option<f64>,
    pub max_items: Option<i64>,
    pub min_items: Option<i64>,
    pub unique_items: bool,
    pub max_properties: Option<i64>,
    pub min_properties: Option<i64>,
    pub required: Vec<Box<str>>,
    pub all_of: Vec<Node>,
    pub any_of: Vec<Node>,
    pub one_of: Vec<Node>,
    pub not: Option<Box<Node>>,
}

/// One compiled schema node.
#[derive(Debug, Default)]
pub struct Node {
    pub(crate) types: Types,
    /// The type as validation messages name it (`integer`, `integer,string`).
    pub(crate) type_name: Option<Box<str>>,
    pub(crate) nullable: bool,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub(crate) preserve_unknown: bool,
    /// `x-kubernetes-embedded-resource: true`: an object with its own `apiVersion`,
    /// `kind` and `metadata`.
    pub(crate) embedded: bool,
    /// Declared properties, sorted by name.
    pub(crate) properties: Vec<(Box<str>, Node)>,
    pub(crate) additional: Additional,
    pub(crate) items: Option<Box<Node>>,
    /// The value an absent (or null, when not nullable) property takes; `default: null`
    /// is no default. Pruned by this node's schema when compiled.
    pub(crate) default: Option<Value>,
    pub(crate) list: Option<ListType>,
    pub(crate) checks: Option<Box<Checks>>,
    /// `x-kubernetes-validations` as written: the CEL rules of this node. The CEL
    /// evaluator compiles them (see the module documentation of `structural`).
    pub(crate) rules: Option<Value>,
    /// Whether this node or one below it is an embedded resource.
    pub(crate) embeds: bool,
    /// Whether this node or one below it is a `set` or `map` list.
    pub(crate) keyed_lists: bool,
    /// Which properties have a default (indices into `properties`).
    pub(crate) defaulted: Vec<u32>,
}

impl Node {
    /// Compile the schema `schema` (a JSON object; anything else accepts anything).
    pub fn compile(schema: &Value) -> Node {
        compile(schema, 0)
    }

    /// The schema of the declared property `name`.
    pub(crate) fn property(&self, name: &str) -> Option<&Node> {
        self.properties
            .binary_search_by(|(p, _)| (**p).cmp(name))
            .ok()
            .map(|i| &self.properties[i].1)
    }

    /// The schema of `additionalProperties`, when it gives one.
    pub(crate) fn additional_schema(&self) -> Option<&Node> {
        match &self.additional {
            Additional::Schema(node) => Some(node),
            _ => None,
        }
    }

    /// The schema of the member `name` of an object: its property, else the
    /// `additionalProperties` schema.
    pub(crate) fn member(&self, name: &str) -> Option<&Node> {
        self.property(name).or_else(|| self.additional_schema())
    }

    /// The keys of a `map` list whose type is `array` (as upstream's map lists need).
    pub(crate) fn map_keys(&self) -> Option<&[Box<str>]> {
        match &self.list {
            Some(ListType::Map(keys)) if self.types == Types::ARRAY && !keys.is_empty() => Some(keys),
            _ => None,
        }
    }

    /// The CEL rules (`x-kubernetes-validations`) of this node, as written.
    pub fn rules(&self) -> Option<&Value> {
        self.rules.as_ref()
    }

    /// The declared properties, sorted by name, and their nodes.
    pub fn properties(&self) -> impl Iterator<Item = (&str, &Node)> {
        self.properties.iter().map(|(name, node)| (&**name, node))
    }

    /// The node of every item, for an array.
    pub fn items(&self) -> Option<&Node> {
        self.items.as_deref()
    }

    /// The node of every undeclared property, when `additionalProperties` gives one.
    pub fn additional_properties(&self) -> Option<&Node> {
        self.additional_schema()
    }
}

fn compile(schema: &Value, depth: usize) -> Node {
    let Some(s) = schema.as_object().filter(|_| depth < MAX_SCHEMA_DEPTH) else {
        return Node::default();
    };
    let flag = |key: &str| s.get(key).and_then(Value::as_bool).unwrap_or(false);
    let child = |value: &Value| compile(value, depth + 1);
    let mut node = Node {
        nullable: flag("nullable"),
        preserve_unknown: flag("x-kubernetes-preserve-unknown-fields"),
        embedded: flag("x-kubernetes-embedded-resource"),
        ..Node::default()
    };
    if flag("x-kubernetes-int-or-string") {
        node.types = Types(Types::INTEGER.0 | Types::STRING.0);
        node.type_name = Some("integer,string".into());
    } else if let Some(name) = s.get("type").and_then(Value::as_str).filter(|t| !t.is_empty()) {
        node.types = Types::of(name);
        node.type_name = Some(name.into());
    }
    if let Some(Value::Object(properties)) = s.get("properties") {
        let mut compiled: Vec<(Box<str>, Node)> =
            properties.iter().map(|(name, p)| (name.as_str().into(), child(p))).collect();
        compiled.sort_by(|a, b| a.0.cmp(&b.0));
        node.defaulted = (0..compiled.len() as u32).filter(|&i| compiled[i as usize].1.default.is_some()).collect();
        node.properties = compiled;
    }
    node.additional = match s.get("additionalProperties") {
        Some(Value::Bool(allows)) => Additional::Allows(*allows),
        Some(schema @ Value::Object(_)) => Additional::Schema(Box::new(child(schema))),
        _ => Additional::Absent,
    };
    if let Some(items @ Value::Object(_)) = s.get("items") {
        node.items = Some(Box::new(child(items)));
    }
    node.list = s.get("x-kubernetes-list-type").and_then(Value::as_str).map(|t| match t {
        "atomic" => ListType::Atomic,
        "set" => ListType::Set,
        "map" => ListType::Map(strings(s.get("x-kubernetes-list-map-keys"))),
        _ => ListType::Other,
    });
    node.rules = s.get("x-kubernetes-validations").filter(|v| !v.is_null()).cloned();
    node.checks = checks(s, &child).map(Box::new);
    node.embeds = node.embedded || node.children().any(|c| c.embeds);
    node.keyed_lists = matches!(node.list, Some(ListType::Set | ListType::Map(_))) || node.children().any(|c| c.keyed_lists);
    if let Some(default) = s.get("default").filter(|d| !d.is_null()) {
        // Upstream prunes defaults once, as the CRD's version is served.
        let mut default = default.clone();
        super::shape::prune_value(&node, &mut default);
        node.default = Some(default);
    }
    node
}

impl Node {
    /// The nodes of the structural tree right below this one (not the junctors').
    fn children(&self) -> impl Iterator<Item = &Node> {
        self.properties
            .iter()
            .map(|(_, n)| n)
            .chain(self.additional_schema())
            .chain(self.items.as_deref())
    }
}

/// The value validations of `s`, if it has any.
fn checks(s: &Map<String, Value>, child: &dyn Fn(&Value) -> Node) -> Option<Checks> {
    let int = |key: &str| {
        s.get(key).and_then(|v| v.as_i64().or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)))
    };
    let float = |key: &str| s.get(key).and_then(Value::as_f64);
    let flag = |key: &str| s.get(key).and_then(Value::as_bool).unwrap_or(false);
    let nodes = |key: &str| match s.get(key) {
        Some(Value::Array(list)) => list.iter().map(child).collect(),
        _ => Vec::new(),
    };
    let checks = Checks {
        format: s.get("format").and_then(Value::as_str).and_then(|f| Format::named(f).map(|known| (known, f.into()))),
        enumeration: match s.get("enum") {
            Some(Value::Array(values)) => values.clone(),
            _ => Vec::new(),
        },
        pattern: s.get("pattern").and_then(Value::as_str).filter(|p| !p.is_empty()).map(Pattern::new),
        max_length: int("maxLength"),
        min_length: int("minLength"),
        maximum: float("maximum"),
        exclusive_maximum: flag("exclusiveMaximum"),
        minimum: float("minimum"),
        exclusive_minimum: flag("exclusiveMinimum"),
        multiple_of: float("multipleOf"),
        max_items: int("maxItems"),
        min_items: int("minItems"),
        unique_items: flag("uniqueItems"),
        max_properties: int("maxProperties"),
        min_properties: int("minProperties"),
        required: strings(s.get("required")),
        all_of: nodes("allOf"),
        any_of: nodes("anyOf"),
        one_of: nodes("oneOf"),
        not: s.get("not").filter(|n| n.is_object()).map(|n| Box::new(child(n))),
    };
    let any = checks.format.is_some()
        || !checks.enumeration.is_empty()
        || checks.pattern.is_some()
        || checks.max_length.is_some()
        || checks.min_length.is_some()
        || checks.maximum.is_some()
        || checks.minimum.is_some()
        || checks.multiple_of.is_some()
        || checks.max_items.is_some()
        || checks.min_items.is_some()
        || checks.unique_items
        || checks.max_properties.is_some()
        || checks.min_properties.is_some()
        || !checks.required.is_empty()
        || !checks.all_of.is_empty()
        || !checks.any_of.is_empty()
        || !checks.one_of.is_empty()
        || checks.not.is_some();
    any.then_some(checks)
}

fn strings(list: Option<&Value>) -> Vec<Box<str>> {
    crate::rest::object::strings(list).into_iter().map(Into::into).collect()
}

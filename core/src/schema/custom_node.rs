//! A [`SchemaNode`] over a custom resource's own OpenAPI v3 schema (a CRD version's
//! `openAPIV3Schema`), walked as the JSON it is, with the meaning kube-apiserver gives
//! it when it turns a CRD's structural schema into the type server-side apply merges
//! by (kube-openapi's schemaconv):
//!
//! - `type: object` with `properties`: a struct; with `additionalProperties` or
//!   nothing declared: a map (values of that schema, or of any shape);
//!   `x-kubernetes-map-type: atomic` makes either one value;
//! - `type: array`: a list by `x-kubernetes-list-type` (`map` by
//!   `x-kubernetes-list-map-keys`, `set`), atomic when unmarked;
//! - no type (`x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields`):
//!   whatever the value is, objects merged key by key and lists whole;
//! - fields a schema preserves without declaring them: the same;
//! - the object itself and every `x-kubernetes-embedded-resource` carry `apiVersion`,
//!   `kind` and `metadata` typed as for every object (`metadata` is ObjectMeta, so
//!   labels, finalizers and owner references merge as on built-in kinds).

use super::custom::ResourceSchema;
use super::node::{ListType, MapKeys, NodeKind, SchemaNode};
use serde_json::Value;
use std::sync::OnceLock;

/// One place in a custom schema.
#[derive(Clone, Copy, Debug)]
pub(super) struct CustomNode<'s> {
    schema: &'s Value,
    /// The object's root or an embedded resource: `apiVersion`, `kind` and
    /// `metadata` are typed as every object's.
    object: bool,
}

impl ResourceSchema {
    /// The root of this resource's objects of `kind` in `group`/`version`, to merge
    /// them by: the generated definition of a built-in kind (untyped when there is
    /// none), or the resource's own schema.
    pub fn node(&self, group: &str, version: &str, kind: &str) -> SchemaNode<'_> {
        match self {
            ResourceSchema::Builtin => {
                SchemaNode::of_kind(group, version, kind).unwrap_or_else(SchemaNode::untyped)
            }
            ResourceSchema::Custom(custom) => SchemaNode::custom_root(custom.openapi_v3()),
        }
    }
}

impl<'s> SchemaNode<'s> {
    /// The root of the objects `openapi_v3` describes (a CRD version's schema).
    pub fn custom_root(openapi_v3: &'s Value) -> SchemaNode<'s> {
        CustomNode {
            schema: openapi_v3,
            object: true,
        }
        .into()
    }
}

/// `apiVersion`, `kind` and `metadata` as every object has them: any built-in kind's
/// (a ConfigMap's here) are the same strings and ObjectMeta.
fn object_field(name: &str) -> Option<SchemaNode<'static>> {
    static FIELDS: OnceLock<Option<[SchemaNode<'static>; 3]>> = OnceLock::new();
    let fields = FIELDS.get_or_init(|| {
        let object = SchemaNode::of_kind("", "v1", "ConfigMap")?;
        Some([
            object.field("apiVersion")?,
            object.field("kind")?,
            object.field("metadata")?,
        ])
    });
    let [api_version, kind, metadata] = fields.as_ref()?;
    match name {
        "apiVersion" => Some(*api_version),
        "kind" => Some(*kind),
        "metadata" => Some(*metadata),
        _ => None,
    }
}

fn is_true(schema: &Value, extension: &str) -> bool {
    schema.get(extension) == Some(&Value::Bool(true))
}

impl<'s> CustomNode<'s> {
    fn at(schema: &'s Value) -> SchemaNode<'s> {
        CustomNode {
            schema,
            object: is_true(schema, "x-kubernetes-embedded-resource"),
        }
        .into()
    }

    fn text(&self, key: &str) -> Option<&'s str> {
        self.schema.get(key).and_then(Value::as_str)
    }

    fn declares_properties(&self) -> bool {
        self.object
            || self
                .schema
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty())
    }

    pub(super) fn kind(&self) -> NodeKind {
        match self.text("type") {
            Some("object") if self.declares_properties() => NodeKind::Struct,
            Some("object") => NodeKind::Map,
            Some("array") => NodeKind::List,
            Some("string" | "integer" | "number" | "boolean") => NodeKind::Scalar,
            // No type: the value decides (upstream's untyped scalar, list and map).
            _ => NodeKind::Untyped,
        }
    }

    /// The node of field or key `name`, and whether `properties` declares it.
    pub(super) fn member(&self, name: &str) -> (SchemaNode<'s>, bool) {
        if self.object {
            if let Some(node) = object_field(name) {
                return (node, true);
            }
        }
        if let Some(field) = self.schema.get("properties").and_then(|p| p.get(name)) {
            return (Self::at(field), true);
        }
        match self.schema.get("additionalProperties") {
            Some(values @ Value::Object(_)) => (Self::at(values), false),
            // `true`, or preserved without a schema: any shape.
            _ => (SchemaNode::untyped(), false),
        }
    }

    pub(super) fn item(&self) -> SchemaNode<'s> {
        match self.schema.get("items") {
            Some(items @ Value::Object(_)) => Self::at(items),
            _ => SchemaNode::untyped(),
        }
    }

    pub(super) fn is_atomic_map(&self) -> bool {
        self.text("x-kubernetes-map-type") == Some("atomic")
    }

    pub(super) fn list_type(&self) -> ListType<'s> {
        match self.text("x-kubernetes-list-type") {
            Some("set") => ListType::Set,
            Some("map") => {
                let keys = self
                    .schema
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                ListType::Map(MapKeys::Custom(keys))
            }
            _ => ListType::Atomic,
        }
    }

    /// The `default` of list map key `key` in this list's items.
    pub(super) fn key_default(&self, key: &str) -> Option<Value> {
        self.schema
            .get("items")?
            .get("properties")?
            .get(key)?
            .get("default")
            .cloned()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::schema::node::tests::at;
    use serde_json::json;

    /// A custom resource's schema marking lists and maps every way a CRD can.
    pub(crate) fn widget() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                          "x-kubernetes-list-map-keys": ["port", "protocol"],
                          "items": {"type": "object", "required": ["port"], "properties": {
                              "port": {"type": "integer"},
                              "protocol": {"type": "string", "default": "TCP"},
                              "name": {"type": "string"}}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                             "additionalProperties": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "port": {"x-kubernetes-int-or-string": true},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                             "x-kubernetes-preserve-unknown-fields": true}}}}})
    }

    #[test]
    fn walks_a_custom_schema_by_its_extensions() {
        let schema = widget();
        let root = SchemaNode::custom_root(&schema);
        assert_eq!(root.kind(), NodeKind::Struct);
        assert_eq!(
            root.member("spec")
                .map(|(n, declared)| (n.kind(), declared)),
            Some((NodeKind::Struct, true))
        );

        let ports = at(root, &["spec", "ports"]);
        assert_eq!(ports.kind(), NodeKind::List);
        assert_eq!(
            ports.list_type(),
            ListType::Map(MapKeys::Builtin(&["port", "protocol"]))
        );
        assert_eq!(ports.key_default("protocol"), Some(json!("TCP")));
        assert_eq!(ports.key_default("port"), None);
        assert_eq!(at(ports, &["[]", "port"]).kind(), NodeKind::Scalar);
        assert_eq!(at(root, &["spec", "tags"]).list_type(), ListType::Set);
        assert_eq!(
            at(root, &["spec", "args"]).list_type(),
            ListType::Atomic,
            "unmarked lists are atomic"
        );

        let selector = at(root, &["spec", "selector"]);
        assert_eq!(selector.kind(), NodeKind::Map);
        assert!(selector.is_atomic_map());
        let labels = at(root, &["spec", "labels"]);
        assert!(!labels.is_atomic_map());
        assert_eq!(
            labels
                .member("app")
                .map(|(n, declared)| (n.kind(), declared)),
            Some((NodeKind::Scalar, false))
        );

        assert_eq!(at(root, &["spec", "port"]).kind(), NodeKind::Untyped);
        let extra = at(root, &["spec", "extra"]);
        assert_eq!(extra.kind(), NodeKind::Map);
        assert_eq!(at(extra, &["anything", "below"]).kind(), NodeKind::Untyped);
    }

    #[test]
    fn objects_and_embedded_resources_carry_typed_metadata() {
        let schema = widget();
        let root = SchemaNode::custom_root(&schema);
        let finalizers = at(root, &["metadata", "finalizers"]);
        assert_eq!(finalizers.list_type(), ListType::Set);
        let owners = at(root, &["metadata", "ownerReferences"]);
        assert_eq!(
            owners.list_type(),
            ListType::Map(MapKeys::Builtin(&["uid"]))
        );
        assert_eq!(at(root, &["apiVersion"]).kind(), NodeKind::Scalar);

        let template = at(root, &["spec", "template"]);
        assert_eq!(template.kind(), NodeKind::Struct);
        assert_eq!(at(template, &["metadata", "labels"]).kind(), NodeKind::Map);
        assert_eq!(
            template
                .member("spec")
                .map(|(n, declared)| (n.kind(), declared)),
            Some((NodeKind::Untyped, false))
        );
        assert!(!template.always_carried(), "custom objects are plain JSON");
    }

    #[test]
    fn a_builtin_resource_schema_gives_its_kinds_root() {
        let node = ResourceSchema::Builtin.node("apps", "v1", "Deployment");
        assert_eq!(node.definition(), Some("io.k8s.api.apps.v1.Deployment"));
        assert_eq!(
            ResourceSchema::Builtin
                .node("example.com", "v1", "Widget")
                .kind(),
            NodeKind::Untyped
        );
        let custom = ResourceSchema::custom(widget());
        assert_eq!(
            custom.node("example.com", "v1", "Widget").definition(),
            None
        );
        assert_eq!(
            custom.node("example.com", "v1", "Widget").kind(),
            NodeKind::Struct
        );
    }
}

//! A view of one place in a kind's schema, for the engines that merge objects with it:
//! strategic merge patch and server-side apply. They walk the object and the schema
//! together and ask, at each value, whether it is a struct, a map, a list (and how its
//! items are matched), or a scalar.
//!
//! Two kinds of schema are viewed: the generated definitions of the built-in kinds
//! (`'static`, looked up in a compact table), and the OpenAPI v3 schema a custom
//! resource brings (borrowed from its resource for as long as the request holds it,
//! walked as it is: [`super::custom_node`]).

use super::custom_node::CustomNode;
use super::list_extensions::{self, ListExtension};
use super::structure::{Schemas, Shape, Ty, TypeId};
use serde_json::Value;
use std::sync::OnceLock;

/// The extensions of every definition and field, by type and field index: looked up
/// once, so walking an object costs no string searches.
struct Extensions {
    /// `x-kubernetes-map-type: atomic` on the definition.
    atomic_type: Vec<bool>,
    /// Per struct definition, per field (in the shape's order): list extensions, and
    /// `x-kubernetes-map-type: atomic` on the field.
    fields: Vec<Vec<(Option<&'static ListExtension>, bool)>>,
}

fn extensions() -> &'static Extensions {
    static EXTENSIONS: OnceLock<Extensions> = OnceLock::new();
    EXTENSIONS.get_or_init(|| {
        let types = &Schemas::get().types;
        let atomic_type = types
            .iter()
            .map(|t| list_extensions::map_type(t.name, "") == Some("atomic"))
            .collect();
        let fields = types
            .iter()
            .map(|t| match &t.shape {
                Shape::Struct(fields) => fields
                    .iter()
                    .map(|(f, _)| {
                        let list = list_extensions::list_extension(t.name, f);
                        (list, list_extensions::map_type(t.name, f) == Some("atomic"))
                    })
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
        Extensions { atomic_type, fields }
    })
}

/// One place in a schema: a built-in kind's, or a custom resource's own (`'s` is how
/// long that one is borrowed).
#[derive(Clone, Copy, Debug)]
pub struct SchemaNode<'s>(Repr<'s>);

#[derive(Clone, Copy, Debug)]
enum Repr<'s> {
    Builtin(Builtin),
    Custom(CustomNode<'s>),
}

/// A place in the generated definitions: the type of the value there, and the list
/// and map extensions of the field that holds it.
#[derive(Clone, Copy, Debug)]
struct Builtin {
    ty: &'static Ty,
    /// The definition (`Ref`) that `ty` names, resolved.
    shape: Option<&'static Shape>,
    id: Option<TypeId>,
    definition: Option<&'static str>,
    /// The list extensions of the field this value is (lists only).
    list: Option<&'static ListExtension>,
    /// `x-kubernetes-map-type: atomic` on the field or on its definition.
    atomic_map: bool,
}

/// How the items of a list are told apart when lists are merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListType<'s> {
    /// Replaced whole.
    Atomic,
    /// Scalars, each at most once.
    Set,
    /// Objects identified by the values of these keys.
    Map(MapKeys<'s>),
}

/// The key fields of a list of type `map`, as the schema holds them.
#[derive(Clone, Copy, Debug)]
pub enum MapKeys<'s> {
    /// From the built-in definitions' table.
    Builtin(&'static [&'static str]),
    /// A custom schema's `x-kubernetes-list-map-keys` (its strings; a CRD's are
    /// validated to be nothing else).
    Custom(&'s [Value]),
}

impl<'s> MapKeys<'s> {
    pub fn iter(self) -> impl Iterator<Item = &'s str> {
        let (builtin, custom): (&[&str], &[Value]) = match self {
            MapKeys::Builtin(keys) => (keys, &[]),
            MapKeys::Custom(keys) => (&[], keys),
        };
        builtin
            .iter()
            .copied()
            .chain(custom.iter().filter_map(Value::as_str))
    }

    pub fn len(self) -> usize {
        match self {
            MapKeys::Builtin(keys) => keys.len(),
            MapKeys::Custom(keys) => keys.len(),
        }
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }
}

/// The same keys, wherever they come from.
impl PartialEq for MapKeys<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for MapKeys<'_> {}

/// What kind of value sits at a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// Named fields (a definition).
    Struct,
    /// Any keys, each value of one type.
    Map,
    List,
    /// A string, number, bool, or a type with its own scalar form (quantity, time,
    /// int-or-string).
    Scalar,
    /// Anything (`RawExtension`, untyped JSON): merged as plain JSON.
    Untyped,
}

static ANY: Ty = Ty::Any;

impl SchemaNode<'static> {
    /// The root of `kind` in `group`/`version` (`""` for the core group).
    pub fn of_kind(group: &str, version: &str, kind: &str) -> Option<SchemaNode<'static>> {
        let id = Schemas::get().kind(group, version, kind)?;
        Some(Builtin::resolved(&ANY, Some(id), None, false).into())
    }

    /// A node for a value of unknown shape (`RawExtension`, what a custom schema
    /// preserves without declaring): maps merged key by key, lists whole.
    pub fn untyped() -> SchemaNode<'static> {
        Builtin::new(&ANY, None, false).into()
    }
}

impl From<Builtin> for SchemaNode<'_> {
    fn from(node: Builtin) -> Self {
        SchemaNode(Repr::Builtin(node))
    }
}

impl<'s> From<CustomNode<'s>> for SchemaNode<'s> {
    fn from(node: CustomNode<'s>) -> Self {
        SchemaNode(Repr::Custom(node))
    }
}

impl Builtin {
    fn new(ty: &'static Ty, list: Option<&'static ListExtension>, atomic_map: bool) -> Builtin {
        let id = match ty {
            Ty::Ref(id) => Some(*id),
            _ => None,
        };
        Self::resolved(ty, id, list, atomic_map)
    }

    /// A node of type `ty`, or of the definition `id` (which wins over `ty`).
    fn resolved(
        ty: &'static Ty,
        id: Option<TypeId>,
        list: Option<&'static ListExtension>,
        atomic_map: bool,
    ) -> Builtin {
        let (shape, definition) = match id {
            Some(id) => {
                let def = Schemas::get().ty(id);
                (Some(&def.shape), Some(def.name))
            }
            None => (None, None),
        };
        let atomic_map = atomic_map || id.is_some_and(|id| extensions().atomic_type[id as usize]);
        Builtin {
            ty,
            shape,
            id,
            definition,
            list,
            atomic_map,
        }
    }

    fn kind(&self) -> NodeKind {
        match (self.ty, self.shape) {
            (_, Some(Shape::Struct(_))) => NodeKind::Struct,
            (_, Some(Shape::Any)) | (Ty::Any, _) => NodeKind::Untyped,
            (_, Some(_)) => NodeKind::Scalar,
            (Ty::Array(_), _) => NodeKind::List,
            (Ty::Map(_), _) => NodeKind::Map,
            _ => NodeKind::Scalar,
        }
    }

    fn member(&self, name: &str) -> Option<(Builtin, bool)> {
        match (self.ty, self.shape) {
            (_, Some(Shape::Struct(fields))) => {
                let i = fields.binary_search_by(|(f, _)| (*f).cmp(name)).ok()?;
                let (_, ty) = &fields[i];
                let (list, atomic) = self
                    .id
                    .map(|id| extensions().fields[id as usize][i])
                    .unwrap_or((None, false));
                Some((Self::new(ty, list, atomic), true))
            }
            (Ty::Map(values), None) => Some((Self::new(values, None, false), false)),
            _ if self.kind() == NodeKind::Untyped => Some((Self::new(&ANY, None, false), false)),
            _ => None,
        }
    }

    fn item(&self) -> Builtin {
        match self.ty {
            Ty::Array(item) => Self::new(item, None, false),
            _ => Self::new(&ANY, None, false),
        }
    }

    fn list_type(&self) -> ListType<'static> {
        let Some(ext) = self.list else {
            return ListType::Atomic;
        };
        match ext.list_type {
            Some("set") => ListType::Set,
            Some("map") => ListType::Map(MapKeys::Builtin(ext.list_map_keys)),
            Some(_) => ListType::Atomic,
            // Marked for patching only: merge keys make it a map for apply too.
            None => match &ext.patch_merge_key {
                Some(key) => ListType::Map(MapKeys::Builtin(std::slice::from_ref(key))),
                None if ext.patch_strategy.is_some_and(|s| s.contains("merge")) => ListType::Set,
                None => ListType::Atomic,
            },
        }
    }

    fn strategy_has(&self, strategy: &str) -> bool {
        self.list
            .and_then(|ext| ext.patch_strategy)
            .is_some_and(|s| s.split(',').any(|s| s == strategy))
    }
}

impl<'s> SchemaNode<'s> {
    pub fn kind(&self) -> NodeKind {
        match &self.0 {
            Repr::Builtin(node) => node.kind(),
            Repr::Custom(node) => node.kind(),
        }
    }

    /// The definition's name, for a built-in struct: `io.k8s.api.core.v1.PodSpec`.
    pub fn definition(&self) -> Option<&'static str> {
        match &self.0 {
            Repr::Builtin(node) => node.definition,
            Repr::Custom(_) => None,
        }
    }

    /// The node of a struct's field or a map's value; `None` for a field the struct
    /// does not have. Untyped values have untyped children.
    pub fn field(&self, name: &str) -> Option<SchemaNode<'s>> {
        match &self.0 {
            Repr::Builtin(node) => node.member(name).map(|(n, _)| n.into()),
            Repr::Custom(node) => Some(node.member(name).0),
        }
    }

    /// [`SchemaNode::field`], and whether the schema declares `name` as a field of its
    /// own (not a key of a map, nor a field only preserved): upstream's field sets
    /// name such a field only through what lies below it.
    pub fn member(&self, name: &str) -> Option<(SchemaNode<'s>, bool)> {
        match &self.0 {
            Repr::Builtin(node) => node.member(name).map(|(n, declared)| (n.into(), declared)),
            Repr::Custom(node) => Some(node.member(name)),
        }
    }

    /// The node of a list's items.
    pub fn item(&self) -> SchemaNode<'s> {
        match &self.0 {
            Repr::Builtin(node) => node.item().into(),
            Repr::Custom(node) => node.item(),
        }
    }

    /// `x-kubernetes-map-type: atomic`: the struct or map is replaced whole by apply.
    pub fn is_atomic_map(&self) -> bool {
        match &self.0 {
            Repr::Builtin(node) => node.atomic_map,
            Repr::Custom(node) => node.is_atomic_map(),
        }
    }

    /// How apply merges this list (`x-kubernetes-list-type`; atomic when unmarked, as
    /// upstream treats unmarked lists).
    pub fn list_type(&self) -> ListType<'s> {
        match &self.0 {
            Repr::Builtin(node) => node.list_type(),
            Repr::Custom(node) => node.list_type(),
        }
    }

    /// The value list map key `key` takes in an item of this list that leaves it out:
    /// the default the items' schema gives it (upstream fills these in before it
    /// names an item). Built-in kinds: `protocol`, whose default is `TCP`.
    pub fn key_default(&self, key: &str) -> Option<Value> {
        match &self.0 {
            Repr::Builtin(_) => (key == "protocol").then(|| Value::String("TCP".into())),
            Repr::Custom(node) => node.key_default(key),
        }
    }

    /// A struct of a built-in kind: upstream's Go objects always carry it (empty when
    /// nothing in it is set), so it is never added or removed itself, only its
    /// fields. A custom resource's objects are plain JSON: none.
    pub fn always_carried(&self) -> bool {
        match &self.0 {
            Repr::Builtin(node) => node.kind() == NodeKind::Struct,
            Repr::Custom(_) => false,
        }
    }

    /// `x-kubernetes-patch-strategy` contains `merge`: strategic merge patch merges
    /// this list (by `patch_merge_key`, or as scalars) instead of replacing it.
    pub fn merges(&self) -> bool {
        self.builtin_strategy_has("merge")
    }

    /// `x-kubernetes-patch-strategy` contains `retainKeys`.
    pub fn retains_keys(&self) -> bool {
        self.builtin_strategy_has("retainKeys")
    }

    /// `x-kubernetes-patch-strategy` is `replace`: strategic merge patch replaces this
    /// object whole (`PodDisruptionBudgetSpec.selector`).
    pub fn replaces(&self) -> bool {
        self.builtin_strategy_has("replace")
    }

    /// `x-kubernetes-patch-merge-key`.
    pub fn merge_key(&self) -> Option<&'static str> {
        match &self.0 {
            Repr::Builtin(node) => node.list.and_then(|ext| ext.patch_merge_key),
            Repr::Custom(_) => None,
        }
    }

    /// Patch strategies are the built-in kinds' alone: strategic merge patch does not
    /// take custom resources.
    fn builtin_strategy_has(&self, strategy: &str) -> bool {
        match &self.0 {
            Repr::Builtin(node) => node.strategy_has(strategy),
            Repr::Custom(_) => false,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The node at `path` below `node` (`[]`: a list's items).
    pub(in crate::schema) fn at<'s>(mut node: SchemaNode<'s>, path: &[&str]) -> SchemaNode<'s> {
        for step in path {
            node = if *step == "[]" {
                node.item()
            } else {
                node.field(step).unwrap_or_else(|| panic!("no field {step}"))
            };
        }
        node
    }

    #[test]
    fn walks_a_deployment() {
        let deploy = SchemaNode::of_kind("apps", "v1", "Deployment").unwrap();
        assert_eq!(deploy.kind(), NodeKind::Struct);
        assert!(deploy.field("nope").is_none());
        let containers = at(deploy, &["spec", "template", "spec", "containers"]);
        assert_eq!(containers.kind(), NodeKind::List);
        assert!(containers.merges());
        assert_eq!(containers.merge_key(), Some("name"));
        assert_eq!(containers.list_type(), ListType::Map(MapKeys::Builtin(&["name"])));
        let ports = at(containers, &["[]", "ports"]);
        assert_eq!(ports.merge_key(), Some("containerPort"));
        assert_eq!(ports.list_type(), ListType::Map(MapKeys::Builtin(&["containerPort", "protocol"])));
        let args = at(containers, &["[]", "args"]);
        assert_eq!(args.list_type(), ListType::Atomic);
        assert!(!args.merges());
        let strategy = at(deploy, &["spec", "strategy"]);
        assert!(strategy.retains_keys() && !strategy.merges());
        let labels = at(deploy, &["metadata", "labels"]);
        assert_eq!(labels.kind(), NodeKind::Map);
        assert_eq!(labels.field("app").unwrap().kind(), NodeKind::Scalar);
        let finalizers = at(deploy, &["metadata", "finalizers"]);
        assert!(finalizers.merges());
        assert_eq!(finalizers.list_type(), ListType::Set);
        assert!(at(deploy, &["spec", "selector"]).is_atomic_map());
        assert!(!at(deploy, &["spec", "template"]).is_atomic_map());
        let replicas = at(deploy, &["spec", "replicas"]);
        assert_eq!(replicas.kind(), NodeKind::Scalar);
        let quantity = at(containers, &["[]", "resources", "limits", "cpu"]);
        assert_eq!(quantity.kind(), NodeKind::Scalar);
    }

    #[test]
    fn untyped_values_have_untyped_children() {
        let raw = SchemaNode::untyped();
        assert_eq!(raw.kind(), NodeKind::Untyped);
        assert_eq!(raw.field("x").unwrap().kind(), NodeKind::Untyped);
        assert_eq!(raw.item().list_type(), ListType::Atomic);
    }
}

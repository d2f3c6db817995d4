//! A view of one place in a kind's schema, for the engines that merge objects with it:
//! strategic merge patch and server-side apply. They walk the object and the schema
//! together and ask, at each value, whether it is a struct, a map, a list (and how its
//! items are matched), or a scalar.

use super::list_extensions::{self, ListExtension};
use super::structure::{Schemas, Shape, Ty, TypeId};
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

/// One place in a schema: the type of the value there, and the list and map
/// extensions of the field that holds it.
#[derive(Clone, Copy, Debug)]
pub struct SchemaNode {
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
pub enum ListType {
    /// Replaced whole.
    Atomic,
    /// Scalars, each at most once.
    Set,
    /// Objects identified by the values of these keys.
    Map(&'static [&'static str]),
}

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

impl SchemaNode {
    /// The root of `kind` in `group`/`version` (`""` for the core group).
    pub fn of_kind(group: &str, version: &str, kind: &str) -> Option<SchemaNode> {
        let id = Schemas::get().kind(group, version, kind)?;
        Some(Self::resolved(&ANY, Some(id), None, false))
    }

    /// A node for a value of unknown shape (custom resources, `RawExtension`).
    pub fn untyped() -> SchemaNode {
        Self::new(&ANY, None, false)
    }

    fn new(ty: &'static Ty, list: Option<&'static ListExtension>, atomic_map: bool) -> SchemaNode {
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
    ) -> SchemaNode {
        let (shape, definition) = match id {
            Some(id) => {
                let def = Schemas::get().ty(id);
                (Some(&def.shape), Some(def.name))
            }
            None => (None, None),
        };
        let atomic_map = atomic_map || id.is_some_and(|id| extensions().atomic_type[id as usize]);
        SchemaNode {
            ty,
            shape,
            id,
            definition,
            list,
            atomic_map,
        }
    }

    pub fn kind(&self) -> NodeKind {
        match (self.ty, self.shape) {
            (_, Some(Shape::Struct(_))) => NodeKind::Struct,
            (_, Some(Shape::Any)) | (Ty::Any, _) => NodeKind::Untyped,
            (_, Some(_)) => NodeKind::Scalar,
            (Ty::Array(_), _) => NodeKind::List,
            (Ty::Map(_), _) => NodeKind::Map,
            _ => NodeKind::Scalar,
        }
    }

    /// The definition's name, for a struct: `io.k8s.api.core.v1.PodSpec`.
    pub fn definition(&self) -> Option<&'static str> {
        self.definition
    }

    /// The node of a struct's field or a map's value; `None` for a field the struct
    /// does not have. Untyped values have untyped children.
    pub fn field(&self, name: &str) -> Option<SchemaNode> {
        match (self.ty, self.shape) {
            (_, Some(Shape::Struct(fields))) => {
                let i = fields.binary_search_by(|(f, _)| (*f).cmp(name)).ok()?;
                let (_, ty) = &fields[i];
                let (list, atomic) = self
                    .id
                    .map(|id| extensions().fields[id as usize][i])
                    .unwrap_or((None, false));
                Some(Self::new(ty, list, atomic))
            }
            (Ty::Map(values), None) => Some(Self::new(values, None, false)),
            _ if self.kind() == NodeKind::Untyped => Some(Self::untyped()),
            _ => None,
        }
    }

    /// The node of a list's items.
    pub fn item(&self) -> SchemaNode {
        match self.ty {
            Ty::Array(item) => Self::new(item, None, false),
            _ => Self::untyped(),
        }
    }

    /// `x-kubernetes-map-type: atomic`: the struct or map is replaced whole by apply.
    pub fn is_atomic_map(&self) -> bool {
        self.atomic_map
    }

    /// How apply merges this list (`x-kubernetes-list-type`; atomic when unmarked, as
    /// upstream treats unmarked lists).
    pub fn list_type(&self) -> ListType {
        match self.list {
            Some(ext) => match ext.list_type {
                Some("set") => ListType::Set,
                Some("map") => ListType::Map(ext.list_map_keys),
                Some(_) => ListType::Atomic,
                // Marked for patching only: merge keys make it a map for apply too.
                None => match ext.patch_merge_key {
                    Some(_) => ListType::Map(std::slice::from_ref(
                        ext.patch_merge_key.as_ref().expect("matched Some"),
                    )),
                    None if ext.patch_strategy.is_some_and(|s| s.contains("merge")) => {
                        ListType::Set
                    }
                    None => ListType::Atomic,
                },
            },
            None => ListType::Atomic,
        }
    }

    /// `x-kubernetes-patch-strategy` contains `merge`: strategic merge patch merges
    /// this list (by `patch_merge_key`, or as scalars) instead of replacing it.
    pub fn merges(&self) -> bool {
        self.strategy_has("merge")
    }

    /// `x-kubernetes-patch-strategy` contains `retainKeys`.
    pub fn retains_keys(&self) -> bool {
        self.strategy_has("retainKeys")
    }

    /// `x-kubernetes-patch-strategy` is `replace`: strategic merge patch replaces this
    /// object whole (`PodDisruptionBudgetSpec.selector`).
    pub fn replaces(&self) -> bool {
        self.strategy_has("replace")
    }

    /// `x-kubernetes-patch-merge-key`.
    pub fn merge_key(&self) -> Option<&'static str> {
        self.list.and_then(|ext| ext.patch_merge_key)
    }

    fn strategy_has(&self, strategy: &str) -> bool {
        self.list
            .and_then(|ext| ext.patch_strategy)
            .is_some_and(|s| s.split(',').any(|s| s == strategy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(mut node: SchemaNode, path: &[&str]) -> SchemaNode {
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
        assert_eq!(containers.list_type(), ListType::Map(&["name"]));
        let ports = at(containers, &["[]", "ports"]);
        assert_eq!(ports.merge_key(), Some("containerPort"));
        assert_eq!(ports.list_type(), ListType::Map(&["containerPort", "protocol"]));
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

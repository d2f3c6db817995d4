//! Nodes (core/v1): selectable by `spec.unschedulable`, and not by
//! `metadata.namespace` (upstream's node strategy leaves it out).

use super::Strategy;
use crate::rest::object::Object;
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME};

/// The resource of nodes, which tokens may be bound to.
pub const RESOURCE: &str = "nodes";

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[NAME, ("spec.unschedulable", "spec.unschedulable")],
};

pub struct Nodes;

impl Strategy for Nodes {
    fn name(&self) -> &'static str {
        RESOURCE
    }

    /// A new node keeps the status it is created with (a kubelet registers itself with
    /// one), as upstream's node strategy does.
    fn prepare_for_create(&self, _new: &mut Object, _has_status: bool) {}

    /// A node that reports capacity but no allocatable has all of it allocatable.
    fn default(&self, obj: &mut Object) {
        if let Some(status) = super::defaults::object(obj, "status") {
            if matches!(status.get("allocatable"), None | Some(serde_json::Value::Null)) {
                if let Some(capacity) = status.get("capacity").filter(|c| c.is_object()).cloned() {
                    status.insert("allocatable".into(), capacity);
                }
            }
        }
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }
}

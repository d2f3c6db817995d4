//! Nodes (core/v1): selectable by `spec.unschedulable`, and not by
//! `metadata.namespace` (upstream's node strategy leaves it out).

use super::Strategy;
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

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }
}

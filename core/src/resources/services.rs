//! Services (core/v1): a DELETE answers with the deleted object; selectable by
//! cluster IP (since v1.30) and type (since v1.31).

use super::Strategy;
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME, NAMESPACE};

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[
        NAMESPACE,
        NAME,
        ("spec.clusterIP", "spec.clusterIP"),
        ("spec.type", "spec.type"),
    ],
};

pub struct Services;

impl Strategy for Services {
    fn name(&self) -> &'static str {
        "services"
    }

    fn delete_returns_object(&self) -> bool {
        true
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }
}

//! Jobs (batch/v1): spec changes count in `metadata.generation`; selectable by
//! `status.successful`, with batch/v1's own wording for other fields.

use super::Strategy;
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME, NAMESPACE};

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupportedForJob,
    fields: &[NAME, NAMESPACE, ("status.successful", "status.successful")],
};

pub struct Jobs;

impl Strategy for Jobs {
    fn name(&self) -> &'static str {
        "jobs"
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }
}

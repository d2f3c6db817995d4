//! Secrets (core/v1): Type and Data columns; selectable by type.

use super::columns::{count_at, str_at, Column};
use super::Strategy;
use crate::selection::table::{Rejection, SelectableFields, NAME, NAMESPACE};

pub struct Secrets;

impl Strategy for Secrets {
    fn name(&self) -> &'static str {
        "secrets"
    }

    fn columns(&self) -> &'static [Column] {
        COLUMNS
    }

    fn selectable_fields(&self) -> &'static SelectableFields {
        &SELECTABLE_FIELDS
    }
}

const COLUMNS: &[Column] = &[
    Column {
        name: "Type",
        kind: "string",
        description: "The type of the secret",
        cell: |o| str_at(o, &["type"]),
    },
    Column {
        name: "Data",
        kind: "string",
        description: "Number of data entries",
        cell: |o| count_at(o, &["data"]),
    },
];

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[("type", "type"), NAMESPACE, NAME],
};

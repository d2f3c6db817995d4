//! ConfigMaps (core/v1): a Data column.

use super::columns::{Columns, count_at, Column};
use super::Strategy;
use serde_json::json;

pub struct ConfigMaps;

impl Strategy for ConfigMaps {
    fn name(&self) -> &'static str {
        "configmaps"
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }
}

const COLUMNS: &[Column] = &[Column {
    name: "Data",
    kind: "string",
    description: "Number of data entries",
    cell: |o| {
        let n = |field| count_at(o, &[field]).as_u64().unwrap_or(0);
        json!(n("data") + n("binaryData"))
    },
}];

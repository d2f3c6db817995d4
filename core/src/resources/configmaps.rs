//! ConfigMaps (core/v1): a Data column; keys that can be file names, at most 1 MiB in
//! all, and frozen once `immutable` (upstream's `ValidateConfigMap`).

use super::columns::{Columns, count_at, Column};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::config_data::{self, MAX_DATA_BYTES};
use crate::validation::FieldError;
use serde_json::{json, Value};

pub struct ConfigMaps;

impl Strategy for ConfigMaps {
    fn name(&self) -> &'static str {
        "configmaps"
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = config_data::frozen(new, old, &["data", "binaryData"]);
        errs.extend(validate(new));
        errs
    }
}

/// Keys of `data` and `binaryData` (each key in one of them only), then the size of
/// both together, reported on the whole object (upstream's empty path, printed `[]`).
fn validate(cm: &Object) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let binary = cm.get("binaryData").and_then(Value::as_object);
    for key in cm.get("data").and_then(Value::as_object).into_iter().flat_map(|m| m.keys()) {
        let at = format!("data[{key}]");
        errs.extend(config_data::config_key(key).into_iter().map(|msg| FieldError::invalid(&at, key, msg)));
        if binary.is_some_and(|b| b.contains_key(key)) {
            errs.push(FieldError::invalid(&at, key, "duplicate of key present in binaryData"));
        }
    }
    errs.extend(config_data::keys(cm, "binaryData"));
    if config_data::size(cm, "data", false) + config_data::size(cm, "binaryData", true) > MAX_DATA_BYTES {
        errs.push(FieldError::too_long("[]", MAX_DATA_BYTES));
    }
    errs
}

const COLUMNS: &[Column] = &[
    Column { name: "Data", kind: "string", description: "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.", format: "", priority: 0, cell: |o| {
        let n = |field| count_at(o, &[field]).as_u64().unwrap_or(0);
        json!(n("data") + n("binaryData"))
    } },
];

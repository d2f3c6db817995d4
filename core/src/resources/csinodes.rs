//! CSINodes (storage.k8s.io/v1): the CSI drivers registered on a node. Each driver is
//! named as a CSI driver is, once, with a node id and at most 100 topology keys, none
//! twice; its volume count is not negative (upstream's `ValidateCSINode*`).

use super::{Column, Columns, Strategy};
use crate::rest::object::Object;
use crate::validation::value::{int, list, text};
use crate::validation::{names, FieldError};
use serde_json::{json, Value};

pub struct CsiNodes;

const NODE_ID_MAX: usize = 192;
const TOPOLOGY_KEYS_MAX: usize = 100;
const DRIVER_NAME_MAX: usize = 63;

static COLUMNS: &[Column] = &[Column {
    name: "Drivers",
    kind: "integer",
    description: "Drivers indicates the number of CSI drivers registered on the node",
    format: "", priority: 0, cell: |o| super::columns::count_at(o, &["spec", "drivers"]),
}];

impl Strategy for CsiNodes {
    fn name(&self) -> &'static str {
        "csinodes"
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }
}

/// A CSI driver's name (upstream's `ValidateCSIDriverName`): a DNS subdomain, checked
/// lower-cased, of at most 63 characters.
pub fn driver_name(field: &str, name: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(field, "")];
    }
    let mut errs = Vec::new();
    if name.len() > DRIVER_NAME_MAX {
        errs.push(FieldError::shown(field, crate::validation::ErrorKind::TooLong, None, &format!("may not be more than {DRIVER_NAME_MAX} characters")));
    }
    errs.extend(names::dns1123_subdomain(&name.to_lowercase()).into_iter().map(|m| FieldError::invalid(field, name, m)));
    errs
}

fn validate(node: &Object) -> Vec<FieldError> {
    let spec = node.get("spec").cloned().unwrap_or(json!({}));
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, driver) in list(&spec, "drivers").iter().enumerate() {
        let at = format!("spec.drivers[{i}]");
        let name = text(driver, "name");
        errs.extend(driver_name(&format!("{at}.name"), name));
        let node_id = text(driver, "nodeID");
        if node_id.is_empty() {
            errs.push(FieldError::required(&format!("{at}.nodeID"), ""));
        } else if node_id.len() > NODE_ID_MAX {
            errs.push(FieldError::invalid(&format!("{at}.nodeID"), node_id, format!("must be {NODE_ID_MAX} characters or less")));
        }
        errs.extend(topology_keys(driver, &at));
        if let Some(count) = driver.get("allocatable").and_then(|a| int(a, "count")).filter(|c| *c < 0) {
            errs.push(FieldError::invalid_unquoted(&format!("{at}.allocatable.count"), &count.to_string(), "must be greater than or equal to 0"));
        }
        if seen.contains(&name) {
            errs.push(FieldError::duplicate(&format!("{at}.name"), name));
        }
        seen.push(name);
    }
    errs
}

fn topology_keys(driver: &Value, at: &str) -> Vec<FieldError> {
    let keys = list(driver, "topologyKeys");
    let mut errs = Vec::new();
    if keys.len() > TOPOLOGY_KEYS_MAX {
        errs.push(FieldError::too_many(&format!("{at}.topologyKeys"), keys.len(), TOPOLOGY_KEYS_MAX));
    }
    let mut seen: Vec<&str> = Vec::new();
    for (j, key) in keys.iter().enumerate() {
        let key = key.as_str().unwrap_or("");
        let field = format!("{at}.topologyKeys[{j}]");
        if key.is_empty() {
            errs.push(FieldError::required(&field, ""));
        }
        if seen.contains(&key) {
            errs.push(FieldError::duplicate(&field, key));
        }
        seen.push(key);
        errs.extend(names::qualified_name(key).into_iter().map(|m| FieldError::invalid(&field, key, m)));
    }
    errs
}

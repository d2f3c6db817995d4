//! StorageClasses (storage.k8s.io/v1): a DELETE answers with the deleted object.
//! Defaults: volumes are deleted with their claims and bound at once.
//!
//! A class names its provisioner, its parameters have keys, its policies are known ones,
//! its allowed topologies are well formed; none of provisioner, parameters and
//! policies changes (upstream's `ValidateStorageClass*`).

use super::columns::{self as cols, Column};
use super::defaults::or_insert;
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::{names, FieldError};
use serde_json::{json, Value};

pub struct StorageClasses;

const RECLAIM_POLICIES: [&str; 2] = ["Delete", "Retain"];
const BINDING_MODES: [&str; 2] = ["Immediate", "WaitForFirstConsumer"];
const MAX_PARAMETERS: usize = 512;
const MAX_PARAMETERS_BYTES: usize = 256 * 1024;

impl Strategy for StorageClasses {
    fn name(&self) -> &'static str {
        "storageclasses"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    fn default(&self, obj: &mut Object) {
        or_insert(obj, "reclaimPolicy", || json!("Delete"));
        or_insert(obj, "volumeBindingMode", || json!("Immediate"));
    }

    fn delete_returns_object(&self) -> bool {
        true
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = validate(new);
        let forbidden = |field: &str| FieldError::forbidden(field, format!("updates to {field} are forbidden."));
        let present = |o: &Object, f: &str| o.get(f).filter(|v| !v.is_null()).cloned();
        if present(new, "parameters") != present(old, "parameters") {
            errs.push(forbidden("parameters"));
        }
        if text(new, "provisioner") != text(old, "provisioner") {
            errs.push(forbidden("provisioner"));
        }
        if reclaim_policy(new) != reclaim_policy(old) {
            errs.push(forbidden("reclaimPolicy"));
        }
        if binding_mode(new) != binding_mode(old) {
            errs.push(FieldError::invalid("volumeBindingMode", binding_mode(new), "field is immutable"));
        }
        errs
    }
}

fn text<'a>(o: &'a Object, field: &str) -> &'a str {
    o.get(field).and_then(Value::as_str).unwrap_or("")
}

/// The policies, defaulted as upstream's decoding defaults them.
fn reclaim_policy(sc: &Object) -> &str {
    sc.get("reclaimPolicy").and_then(Value::as_str).unwrap_or(RECLAIM_POLICIES[0])
}

fn binding_mode(sc: &Object) -> &str {
    sc.get("volumeBindingMode").and_then(Value::as_str).unwrap_or(BINDING_MODES[0])
}

fn validate(sc: &Object) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match text(sc, "provisioner") {
        "" => errs.push(FieldError::required("provisioner", "")),
        // Upstream checks (and shows) it lower-cased.
        p => {
            let lower = p.to_lowercase();
            errs.extend(names::qualified_name(&lower).into_iter().map(|m| FieldError::invalid("provisioner", &lower, m)));
        }
    }
    errs.extend(parameters(sc.get("parameters").and_then(Value::as_object)));
    if !RECLAIM_POLICIES.contains(&reclaim_policy(sc)) && !reclaim_policy(sc).is_empty() {
        errs.push(FieldError::not_supported("reclaimPolicy", reclaim_policy(sc), &RECLAIM_POLICIES));
    }
    if !BINDING_MODES.contains(&binding_mode(sc)) {
        errs.push(FieldError::not_supported("volumeBindingMode", binding_mode(sc), &BINDING_MODES));
    }
    let terms = sc.get("allowedTopologies").and_then(Value::as_array);
    for (i, term) in terms.into_iter().flatten().enumerate() {
        errs.extend(topology_term(term, &format!("allowedTopologies[{i}]")));
    }
    errs
}

fn parameters(params: Option<&serde_json::Map<String, Value>>) -> Vec<FieldError> {
    let Some(params) = params else { return Vec::new() };
    let mut errs = Vec::new();
    if params.len() > MAX_PARAMETERS {
        errs.push(FieldError::too_many("parameters", params.len(), MAX_PARAMETERS));
    }
    let mut size = 0;
    for (k, v) in params {
        if k.is_empty() {
            errs.push(FieldError::invalid("parameters", k, "field can not be empty."));
        }
        size += k.len() + v.as_str().unwrap_or("").len();
    }
    if size > MAX_PARAMETERS_BYTES {
        errs.push(FieldError::too_long("parameters", MAX_PARAMETERS_BYTES));
    }
    errs
}

/// A topology selector term: each expression has values, none twice, and a label key;
/// no key twice.
fn topology_term(term: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut keys: Vec<&str> = Vec::new();
    let exprs = term.get("matchLabelExpressions").and_then(Value::as_array);
    for (i, expr) in exprs.into_iter().flatten().enumerate() {
        let at = format!("{path}.matchLabelExpressions[{i}]");
        let values: Vec<&str> = expr.get("values").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        if values.is_empty() {
            errs.push(FieldError::required(&format!("{at}.values"), ""));
        }
        for (j, v) in values.iter().enumerate() {
            if values[..j].contains(v) {
                errs.push(FieldError::duplicate(&format!("{at}.values[{j}]"), v));
            }
        }
        let key = expr.get("key").and_then(Value::as_str).unwrap_or("");
        errs.extend(names::label_key(key).into_iter().map(|m| FieldError::invalid(&format!("{at}.key"), key, m)));
        if keys.contains(&key) {
            errs.push(FieldError::duplicate(&format!("{at}.key"), key));
        }
        keys.push(key);
    }
    errs
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Provisioner", kind: "string", description: "provisioner indicates the type of the provisioner.", format: "", priority: 0, cell: |o| cols::str_at(o, &["provisioner"]) },
    Column { name: "ReclaimPolicy", kind: "string", description: "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.", format: "", priority: 0, cell: |o| json!(cols::at(o, &["reclaimPolicy"]).and_then(Value::as_str).unwrap_or("Delete")) },
    Column { name: "VolumeBindingMode", kind: "string", description: "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.", format: "", priority: 0, cell: |o| json!(cols::at(o, &["volumeBindingMode"]).and_then(Value::as_str).unwrap_or("Immediate")) },
    Column { name: "AllowVolumeExpansion", kind: "string", description: "allowVolumeExpansion shows whether the storage class allow volume expand.", format: "", priority: 0, cell: |o| json!(cols::at(o, &["allowVolumeExpansion"]).and_then(Value::as_bool).unwrap_or(false)) },
];

//! PriorityClasses (scheduling.k8s.io/v1). Defaults: pods of the class preempt lower
//! priorities. User-defined values stay at or below
//! 1000000000, the `system-` names are the two system classes, and neither the value
//! nor the preemption policy changes (upstream's `ValidatePriorityClass*`).

use super::columns::{self as cols, Column};
use super::defaults::or_insert;
use super::Strategy;
use crate::rest::object::{meta_str, Object};
use crate::validation::FieldError;
use serde_json::{json, Value};

pub struct PriorityClasses;

/// The highest value a class not of the system's may have.
const HIGHEST_USER_DEFINABLE: i64 = 1_000_000_000;
const SYSTEM_PREFIX: &str = "system-";
/// The system's classes: name and value (neither is a global default).
const SYSTEM_CLASSES: [(&str, i64); 2] = [("system-node-critical", 2_000_001_000), ("system-cluster-critical", 2_000_000_000)];
/// What each system class is for, as upstream describes it.
const SYSTEM_DESCRIPTIONS: [&str; 2] = [
    "Used for system critical pods that must not be moved from their current node.",
    "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
];

/// The system classes, as upstream's scheduling bootstrap hook writes them at start.
pub fn system_classes() -> Vec<serde_json::Value> {
    SYSTEM_CLASSES
        .iter()
        .zip(SYSTEM_DESCRIPTIONS)
        .map(|((name, value), description)| {
            serde_json::json!({
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
                "preemptionPolicy": "PreemptLowerPriority",
                "description": description,
            })
        })
        .collect()
}

const POLICIES: [&str; 2] = ["PreemptLowerPriority", "Never"];

impl Strategy for PriorityClasses {
    fn name(&self) -> &'static str {
        "priorityclasses"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Laid { columns: COLUMNS, age_at: Some(2) }
    }

    /// Upstream's strategy starts the generation at 1 and counts spec changes.
    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        or_insert(obj, "preemptionPolicy", || json!("PreemptLowerPriority"));
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if value(new) != value(old) {
            errs.push(FieldError::forbidden("value", "may not be changed in an update."));
        }
        if policy(new) != policy(old) {
            errs.push(FieldError::invalid("preemptionPolicy", policy(new), "field is immutable"));
        }
        errs
    }
}

fn value(pc: &Object) -> i64 {
    pc.get("value").and_then(Value::as_i64).unwrap_or(0)
}

/// The preemption policy, defaulted as upstream defaults it.
fn policy(pc: &Object) -> &str {
    pc.get("preemptionPolicy").and_then(Value::as_str).unwrap_or(POLICIES[0])
}

fn validate(pc: &Object) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = meta_str(pc, "name");
    if name.starts_with(SYSTEM_PREFIX) {
        if let Err(why) = known_system_class(name, value(pc), pc.get("globalDefault").and_then(Value::as_bool).unwrap_or(false)) {
            errs.push(FieldError::forbidden(
                "metadata.name",
                format!("priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {why}"),
            ));
        }
    } else if value(pc) > HIGHEST_USER_DEFINABLE {
        errs.push(FieldError::forbidden(
            "value",
            format!("maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE}"),
        ));
    }
    if let Some(p) = pc.get("preemptionPolicy").and_then(Value::as_str) {
        if !POLICIES.contains(&p) {
            errs.push(FieldError::not_supported("preemptionPolicy", p, &POLICIES));
        }
    }
    errs
}

/// Whether a `system-` class is one of the system's, as the system defines it.
fn known_system_class(name: &str, value: i64, global_default: bool) -> Result<(), String> {
    let Some((_, want)) = SYSTEM_CLASSES.iter().find(|(n, _)| *n == name) else {
        return Err(format!("{name} is not a known system priority class"));
    };
    if *want != value {
        return Err(format!("value of {name} PriorityClass must be {want}"));
    }
    if global_default {
        return Err(format!("globalDefault of {name} PriorityClass must be false"));
    }
    Ok(())
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Value", kind: "integer", description: "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.", format: "", priority: 0, cell: |o| json!(cols::int_at(o, &["value"])) },
    Column { name: "Global-Default", kind: "boolean", description: "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.", format: "", priority: 0, cell: |o| json!(cols::at(o, &["globalDefault"]).and_then(Value::as_bool).unwrap_or(false)) },
    Column { name: "PreemptionPolicy", kind: "string", description: "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.", format: "", priority: 0, cell: |o| cols::unset_or(o, &["preemptionPolicy"]) },
];

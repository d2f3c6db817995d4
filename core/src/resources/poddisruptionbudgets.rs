//! PodDisruptionBudgets (policy/v1): spec changes count in `metadata.generation`. A
//! pod's eviction reads and spends them (rest/eviction.rs), and finds them as named
//! here. Their spec is checked as upstream's `ValidatePodDisruptionBudgetSpec` checks it.

use super::columns::{self as cols, Column};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::{go_json, label_selector, FieldError};
use serde_json::Value;

/// The group, version and resource of the budgets an eviction consults.
pub const GROUP: &str = "policy";
pub const VERSION: &str = "v1";
pub const RESOURCE: &str = "poddisruptionbudgets";

pub struct PodDisruptionBudgets;

impl Strategy for PodDisruptionBudgets {
    fn name(&self) -> &'static str {
        RESOURCE
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }
}

const EVICTION_POLICIES: [&str; 2] = ["AlwaysAllow", "IfHealthyBudget"];

/// One of minAvailable and maxUnavailable, each a count or a percentage up to 100%; a
/// selector; a known unhealthy pod eviction policy.
fn validate(pdb: &Object) -> Vec<FieldError> {
    let null = Value::Null;
    let spec = pdb.get("spec").unwrap_or(&null);
    let field = |f: &str| spec.get(f).filter(|v| !v.is_null());
    let mut errs = Vec::new();
    if field("minAvailable").is_some() && field("maxUnavailable").is_some() {
        errs.push(FieldError::invalid_unquoted("spec", &spec_shown(spec), "minAvailable and maxUnavailable cannot be both set"));
    }
    for name in ["minAvailable", "maxUnavailable"] {
        if let Some(value) = field(name) {
            errs.extend(int_or_percent(&format!("spec.{name}"), value));
        }
    }
    if let Some(selector) = field("selector") {
        errs.extend(label_selector::validate("spec.selector", selector, false));
    }
    if let Some(policy) = field("unhealthyPodEvictionPolicy").and_then(Value::as_str) {
        if !EVICTION_POLICIES.contains(&policy) {
            errs.push(FieldError::not_supported("spec.unhealthyPodEvictionPolicy", policy, &EVICTION_POLICIES));
        }
    }
    errs
}

/// A count never negative, or a percentage (`[0-9]+%`) no more than 100%.
fn int_or_percent(path: &str, value: &Value) -> Vec<FieldError> {
    match value {
        Value::String(s) => {
            let digits = s.strip_suffix('%').filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            match digits {
                None => vec![FieldError::invalid(path, s, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")],
                Some(d) if d.parse::<u64>().map_or(true, |n| n > 100) => vec![FieldError::invalid(path, s, "must not be greater than 100%")],
                Some(_) => Vec::new(),
            }
        }
        Value::Number(n) if n.as_i64().is_some_and(|n| n < 0) => {
            vec![FieldError::invalid_unquoted(path, &n.to_string(), "must be greater than or equal to 0")]
        }
        _ => Vec::new(),
    }
}

/// The spec as upstream prints its internal type (Go field names, in its order).
fn spec_shown(spec: &Value) -> String {
    let shown = |f: &str| spec.get(f).map(go_json).unwrap_or_else(|| "null".to_owned());
    format!(
        "{{\"MinAvailable\":{},\"Selector\":{},\"MaxUnavailable\":{},\"UnhealthyPodEvictionPolicy\":{}}}",
        shown("minAvailable"),
        shown("selector"),
        shown("maxUnavailable"),
        shown("unhealthyPodEvictionPolicy")
    )
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Min Available", kind: "string", description: "The minimum number of pods that must be available.", format: "", priority: 0, cell: |o| cols::int_or_string_or_na(o, &["spec", "minAvailable"]) },
    Column { name: "Max Unavailable", kind: "string", description: "The maximum number of pods that may be unavailable.", format: "", priority: 0, cell: |o| cols::int_or_string_or_na(o, &["spec", "maxUnavailable"]) },
    Column { name: "Allowed Disruptions", kind: "integer", description: "Calculated number of pods that may be disrupted at this time.", format: "", priority: 0, cell: |o| serde_json::json!(cols::int_at(o, &["status", "disruptionsAllowed"])) },
];

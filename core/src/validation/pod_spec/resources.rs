//! A container's `resources`: resource names, amounts, and requests against limits
//! (upstream's `ValidateContainerResourceRequirements`).

use crate::validation::names::qualified_name;
use crate::validation::quantity::Quantity;
use crate::validation::{FieldError, FieldPath};
use serde_json::{Map, Value};

/// Names a container may ask for without a domain.
const CONTAINER_RESOURCES: &[&str] = &["cpu", "memory", "ephemeral-storage"];

/// Names without a domain that upstream knows at all (containers' and quotas').
const STANDARD_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// Standard names counted in whole units.
const INTEGER_RESOURCES: &[&str] = &[
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

fn is_hugepages(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// Kubernetes' own names: no domain, or one under kubernetes.io.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// A device plugin's or operator's resource (`example.com/gpu`).
fn is_extended(name: &str) -> bool {
    !is_native(name) && !name.starts_with("requests.") && qualified_name(&format!("requests.{name}")).is_empty()
}

/// Whether requests may be below limits (not so for hugepages and extended resources).
fn overcommit_allowed(name: &str) -> bool {
    is_native(name) && !is_hugepages(name)
}

fn name_errors(name: &str, path: &FieldPath) -> Vec<FieldError> {
    let invalid = |msg: String| FieldError::invalid(path.as_str(), name, msg);
    let mut errs: Vec<FieldError> = qualified_name(name).into_iter().map(invalid).collect();
    if !errs.is_empty() {
        return errs;
    }
    if !name.contains('/') {
        let quota_hugepages = is_hugepages(name) || name.starts_with("requests.hugepages-");
        if !STANDARD_RESOURCES.contains(&name) && !quota_hugepages {
            errs.push(invalid("must be a standard resource type or fully qualified".into()));
        }
        if !CONTAINER_RESOURCES.contains(&name) && !is_hugepages(name) {
            errs.push(invalid("must be a standard resource for containers".into()));
        }
    } else if !is_native(name) && !is_extended(name) {
        errs.push(invalid("doesn't follow extended resource name standard".into()));
    }
    errs
}

fn amount_errors(name: &str, amount: &Quantity, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if amount.is_negative() {
        errs.push(FieldError::invalid(path.as_str(), &amount.canonical(), "must be greater than or equal to 0"));
    }
    if (INTEGER_RESOURCES.contains(&name) || is_extended(name)) && !amount.is_integer() {
        errs.push(FieldError::invalid(path.as_str(), &amount.canonical(), "must be an integer"));
    }
    errs
}

fn quantities(resources: &Value, key: &str) -> Vec<(String, Option<Quantity>)> {
    let entries = resources.get(key).and_then(Value::as_object).map(Map::iter);
    entries.into_iter().flatten().map(|(name, v)| (name.clone(), Quantity::from_json(v))).collect()
}

pub(crate) fn validate_requirements(resources: Option<&Value>, path: &FieldPath) -> Vec<FieldError> {
    let Some(resources) = resources else { return Vec::new() };
    let limits_path = path.child("limits");
    let requests_path = path.child("requests");
    let limits = quantities(resources, "limits");
    let requests = quantities(resources, "requests");
    let mut errs = Vec::new();
    let (mut cpu_or_memory, mut hugepages) = (false, false);
    for (name, amount) in &limits {
        let at = limits_path.key(name);
        errs.extend(name_errors(name, &at));
        if let Some(amount) = amount {
            errs.extend(amount_errors(name, amount, &at));
        }
        hugepages |= is_hugepages(name);
        cpu_or_memory |= name == "cpu" || name == "memory";
    }
    for (name, amount) in &requests {
        let at = requests_path.key(name);
        errs.extend(name_errors(name, &at));
        if let Some(amount) = amount {
            errs.extend(amount_errors(name, amount, &at));
        }
        match limits.iter().find(|(n, _)| n == name) {
            Some((_, Some(limit))) => {
                if let Some(amount) = amount {
                    // Requests are reported on `requests`, as upstream does.
                    if amount != limit && !overcommit_allowed(name) {
                        let detail = format!("must be equal to {name} limit of {}", limit.canonical());
                        errs.push(FieldError::invalid(requests_path.as_str(), &amount.canonical(), detail));
                    } else if amount > limit {
                        let detail = format!("must be less than or equal to {name} limit of {}", limit.canonical());
                        errs.push(FieldError::invalid(requests_path.as_str(), &amount.canonical(), detail));
                    }
                }
            }
            Some(_) => {}
            None if !overcommit_allowed(name) => {
                errs.push(FieldError::required(limits_path.as_str(), "Limit must be set for non overcommitable resources"));
            }
            None => {}
        }
        hugepages |= is_hugepages(name);
        cpu_or_memory |= name == "cpu" || name == "memory";
    }
    if hugepages && !cpu_or_memory {
        errs.push(FieldError::forbidden(path.as_str(), "HugePages require cpu or memory"));
    }
    errs
}

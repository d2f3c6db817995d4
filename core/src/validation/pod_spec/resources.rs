//! A container's `resources`: resource names, amounts, and requests against limits
//! (upstream's `ValidateContainerResourceRequirements`).

use crate::validation::quantity::Quantity;
use crate::validation::resource_names::{container_resource_name, is_hugepages, overcommit_allowed, quantity_value};
use crate::validation::{FieldError, FieldPath};
use serde_json::{Map, Value};

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
        errs.extend(container_resource_name(name, &at));
        if let Some(amount) = amount {
            errs.extend(quantity_value(name, amount, &at));
        }
        hugepages |= is_hugepages(name);
        cpu_or_memory |= name == "cpu" || name == "memory";
    }
    for (name, amount) in &requests {
        let at = requests_path.key(name);
        errs.extend(container_resource_name(name, &at));
        if let Some(amount) = amount {
            errs.extend(quantity_value(name, amount, &at));
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

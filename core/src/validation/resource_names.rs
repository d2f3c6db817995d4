//! Names of resources (`cpu`, `requests.memory`, `example.com/gpu`) and their amounts,
//! as upstream reads them wherever they are keys: a container's requests and limits,
//! a LimitRange's bounds, a ResourceQuota's hard limits.

use super::names::qualified_name;
use super::quantity::Quantity;
use super::{FieldError, FieldPath};

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

/// Names without a domain a quota may count (no bare `storage`).
const QUOTA_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
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

pub fn is_hugepages(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// A quota's hugepages: per size, requested.
fn is_quota_hugepages(name: &str) -> bool {
    is_hugepages(name) || name.starts_with("requests.hugepages-")
}

/// Kubernetes' own names: no domain, or one under kubernetes.io.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// A device plugin's or operator's resource (`example.com/gpu`).
pub fn is_extended(name: &str) -> bool {
    !is_native(name) && !name.starts_with("requests.") && qualified_name(&format!("requests.{name}")).is_empty()
}

/// Whether requests may be below limits (not so for hugepages and extended resources).
pub fn overcommit_allowed(name: &str) -> bool {
    is_native(name) && !is_hugepages(name)
}

/// Upstream's `validateResourceName`: a qualified name, and a known one unless it has
/// a domain.
pub fn resource_name(name: &str, path: &FieldPath) -> Vec<FieldError> {
    let invalid = |msg: String| FieldError::invalid(path.as_str(), name, msg);
    let errs: Vec<FieldError> = qualified_name(name).into_iter().map(invalid).collect();
    if !errs.is_empty() {
        return errs;
    }
    if !name.contains('/') && !STANDARD_RESOURCES.contains(&name) && !is_quota_hugepages(name) {
        return vec![invalid("must be a standard resource type or fully qualified".into())];
    }
    Vec::new()
}

/// A name a container may ask for: besides a resource name, one of a container's own
/// or a well-formed extended resource.
pub fn container_resource_name(name: &str, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = resource_name(name, path);
    let invalid = |msg: &str| FieldError::invalid(path.as_str(), name, msg);
    if !name.contains('/') {
        if !CONTAINER_RESOURCES.contains(&name) && !is_hugepages(name) {
            errs.push(invalid("must be a standard resource for containers"));
        }
    } else if !is_native(name) && !is_extended(name) {
        errs.push(invalid("doesn't follow extended resource name standard"));
    }
    errs
}

/// Whether a quota counts `name` among Kubernetes' own resources.
pub fn is_quota_resource(name: &str) -> bool {
    QUOTA_RESOURCES.contains(&name) || is_quota_hugepages(name)
}

/// A name a quota may count.
pub fn quota_resource_name(name: &str, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = resource_name(name, path);
    if !name.contains('/') && !is_quota_resource(name) {
        errs.push(FieldError::invalid(path.as_str(), name, "must be a standard resource for quota"));
    }
    errs
}

/// Upstream's `ValidateResourceQuantityValue`: not negative, and whole for the
/// resources counted in units.
pub fn quantity_value(name: &str, amount: &Quantity, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if amount.is_negative() {
        errs.push(FieldError::invalid(path.as_str(), &amount.canonical(), "must be greater than or equal to 0"));
    }
    if (INTEGER_RESOURCES.contains(&name) || is_extended(name)) && !amount.is_integer() {
        errs.push(FieldError::invalid(path.as_str(), &amount.canonical(), "must be an integer"));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.into_iter().map(|e| e.detail).collect()
    }

    #[test]
    fn names_by_where_they_are_used() {
        let at = FieldPath::new("x");
        assert!(container_resource_name("cpu", &at).is_empty());
        assert!(container_resource_name("example.com/gpu", &at).is_empty());
        assert_eq!(messages(container_resource_name("pods", &at)), ["must be a standard resource for containers"]);
        assert!(quota_resource_name("requests.example.com/foo", &at).is_empty());
        assert_eq!(messages(quota_resource_name("storage", &at)), ["must be a standard resource for quota"]);
        assert_eq!(
            messages(quota_resource_name("bogus", &at)),
            ["must be a standard resource type or fully qualified", "must be a standard resource for quota"]
        );
    }
}

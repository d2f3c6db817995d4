//! Pod Security Standards as k8s.io/pod-security-admission v1.33 evaluates them:
//! namespace labels read into a policy of levels and versions, the baseline and
//! restricted checks at each version, and the decision and messages of the
//! PodSecurity admission plugin, pure functions over JSON, and the plugin in the
//! admission chain ([`PodSecurity`]).

mod checks;
mod decision;
mod level;
mod namespace;
mod pod;
mod plugin;
mod policy;
mod registry;

#[cfg(test)]
mod tests;

pub use checks::Violation;
pub use decision::{admit, forbidden_detail, forbidden_reasons, has_pod_spec, pod_spec_of, significant_pod_update, Decision, Request};
pub use level::{Level, LevelVersion, Version};
pub use namespace::{admit_namespace, existing_pod_warnings, NamespaceDecision, MAX_PODS_TO_CHECK};
pub use pod::Pod;
pub(crate) use plugin::PodSecurity;
pub use policy::{Configuration, Exemptions, Policy};
pub use registry::{checks_for, NEWEST_CHECK_VERSION};

/// Every violation of a pod (its metadata and spec as JSON) at a level and version,
/// in the order upstream reports them. Privileged allows everything.
pub fn evaluate(level_version: LevelVersion, metadata: &serde_json::Value, spec: &serde_json::Value) -> Vec<Violation> {
    registry::evaluate(level_version, &Pod::new(metadata, spec))
}

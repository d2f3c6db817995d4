//! The PodSecurity decision on a namespace write: its labels must parse; an exempt
//! namespace asking for a policy is told it will be ignored; tightening the enforce
//! level warns about the existing pods that would now be refused.

use super::decision::forbidden_reasons;
use super::level::{Level, LevelVersion};
use super::pod::Pod;
use super::policy::{
    Configuration, Policy, AUDIT_LEVEL_LABEL, AUDIT_VERSION_LABEL, ENFORCE_LEVEL_LABEL, ENFORCE_VERSION_LABEL,
    WARN_LEVEL_LABEL, WARN_VERSION_LABEL,
};
use super::registry;
use crate::admission::Operation;
use crate::status::ApiError;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashSet};

/// At most this many existing pods are checked when a namespace tightens its policy.
pub const MAX_PODS_TO_CHECK: usize = 3000;

/// What to do with a namespace write.
#[derive(Clone, Debug)]
pub enum NamespaceDecision {
    Refused(ApiError),
    Allowed { warnings: Vec<String> },
    /// Allowed, with warnings about the namespace's existing pods at this enforce
    /// level ([`existing_pod_warnings`]); listing them is the caller's.
    CheckExistingPods(LevelVersion),
}

/// The decision on a create or update of namespace `name`. `attributes_namespace`
/// is the namespace admission is told about (the one exemptions match).
pub fn admit_namespace(
    config: &Configuration,
    operation: Operation,
    subresource: &str,
    attributes_namespace: &str,
    name: &str,
    labels: &Map<String, Value>,
    old_labels: Option<&Map<String, Value>>,
) -> NamespaceDecision {
    let allowed = || NamespaceDecision::Allowed { warnings: Vec::new() };
    if !subresource.is_empty() {
        return allowed();
    }
    let (policy, errors) = Policy::from_labels(labels, config.defaults);
    let exempt_warning = || match exempt_namespace_warning(config, name, &policy, labels) {
        Some(warning) => NamespaceDecision::Allowed { warnings: vec![warning] },
        None => allowed(),
    };
    let exempt = config.exemptions.namespace(attributes_namespace);
    match operation {
        Operation::Create => {
            if !errors.is_empty() {
                return NamespaceDecision::Refused(ApiError::invalid("", "Namespace", name, errors));
            }
            if exempt {
                return exempt_warning();
            }
            allowed()
        }
        Operation::Update => {
            let (old_policy, old_errors) = Policy::from_labels(old_labels.unwrap_or(&Map::new()), config.defaults);
            // Labels already wrong in the same way do not block other changes.
            if !errors.is_empty() && (old_errors.is_empty() || old_errors != errors) {
                return NamespaceDecision::Refused(ApiError::invalid("", "Namespace", name, errors));
            }
            let (new, old) = (policy.enforce, old_policy.enforce);
            if new == old || new.level == Level::Privileged || (new.version == old.version && new.level <= old.level) {
                return allowed();
            }
            if exempt {
                return exempt_warning();
            }
            NamespaceDecision::CheckExistingPods(new)
        }
        _ => allowed(),
    }
}

/// Upstream's `Equivalent`: privileged at any version is privileged.
fn equivalent(a: &LevelVersion, b: &LevelVersion) -> bool {
    (a.level == Level::Privileged && b.level == Level::Privileged) || a == b
}

/// For an exempt namespace labelled with a policy other than the defaults: the
/// modes it sets (not privileged), which will be ignored.
fn exempt_namespace_warning(
    config: &Configuration,
    name: &str,
    policy: &Policy,
    labels: &Map<String, Value>,
) -> Option<String> {
    let defaults = &config.defaults;
    let same_as_defaults = equivalent(&policy.enforce, &defaults.enforce)
        && equivalent(&policy.audit, &defaults.audit)
        && equivalent(&policy.warn, &defaults.warn);
    if policy.fully_privileged() || same_as_defaults {
        return None;
    }
    let modes = [
        ("enforce", policy.enforce, ENFORCE_LEVEL_LABEL, ENFORCE_VERSION_LABEL),
        ("audit", policy.audit, AUDIT_LEVEL_LABEL, AUDIT_VERSION_LABEL),
        ("warn", policy.warn, WARN_LEVEL_LABEL, WARN_VERSION_LABEL),
    ];
    let set: Vec<String> = modes
        .iter()
        .filter(|(_, lv, level, version)| {
            lv.level != Level::Privileged && (labels.contains_key(*level) || labels.contains_key(*version))
        })
        .map(|(mode, lv, _, _)| format!("{mode}={lv}"))
        .collect();
    Some(format!(
        "namespace \"{name}\" is exempt from Pod Security, and the policy ({}) will be ignored",
        set.join(", ")
    ))
}

/// The warnings for a namespace whose enforce level tightened to `enforce`, over its
/// pods (JSON, as listed). Pods of exempt runtime classes are skipped; one pod per
/// controller is checked before the rest of its replicas; at most `max_pods` are
/// checked. Pods failing the same checks share one warning, named by the first pod
/// name in byte order and how many others.
pub fn existing_pod_warnings(
    config: &Configuration,
    namespace: &str,
    enforce: LevelVersion,
    pods: &[Value],
    max_pods: usize,
) -> Vec<String> {
    let mut first = Vec::new();
    let mut replicas = Vec::new();
    let mut controllers = HashSet::new();
    for pod in pods {
        let spec = pod.get("spec").unwrap_or(&Value::Null);
        if config.exemptions.runtime_class(spec.get("runtimeClassName").and_then(Value::as_str)) {
            continue;
        }
        match controller_uid(pod) {
            Some(uid) if !controllers.insert(uid) => replicas.push(pod),
            _ => first.push(pod),
        }
    }
    first.extend(replicas);
    let total = first.len();
    let checked = total.min(max_pods);
    // Per distinct list of reasons: the smallest pod name and the count, in first-seen order.
    let mut by_reasons: Vec<String> = Vec::new();
    let mut counts: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for pod in &first[..checked] {
        let spec = pod.get("spec").unwrap_or(&Value::Null);
        let metadata = pod.get("metadata").unwrap_or(&Value::Null);
        let pod_view = Pod { relax_for_user_namespaces: config.relax_for_user_namespaces, ..Pod::new(metadata, spec) };
        let violations = registry::evaluate(enforce, &pod_view);
        if violations.is_empty() {
            continue;
        }
        let reasons = forbidden_reasons(&violations);
        let name = metadata.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
        match counts.get_mut(&reasons) {
            Some((smallest, count)) => {
                if name < *smallest {
                    *smallest = name;
                }
                *count += 1;
            }
            None => {
                by_reasons.push(reasons.clone());
                counts.insert(reasons, (name, 1));
            }
        }
    }
    let mut warnings = Vec::new();
    if checked < total {
        warnings.push(format!(
            "new PodSecurity enforce level only checked against the first {checked} of {total} existing pods"
        ));
    }
    if !by_reasons.is_empty() {
        warnings.push(format!(
            "existing pods in namespace \"{namespace}\" violate the new PodSecurity enforce level \"{enforce}\""
        ));
    }
    let mut pod_warnings: Vec<String> = by_reasons
        .into_iter()
        .map(|reasons| {
            let (name, count) = &counts[&reasons];
            match count {
                1 => format!("{name}: {reasons}"),
                2 => format!("{name} (and 1 other pod): {reasons}"),
                n => format!("{name} (and {} other pods): {reasons}", n - 1),
            }
        })
        .collect();
    pod_warnings.sort();
    warnings.extend(pod_warnings);
    warnings
}

/// The uid of the owner reference marked `controller: true`, if any.
fn controller_uid(pod: &Value) -> Option<&str> {
    pod.pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .map(|r| r.get("uid").and_then(Value::as_str).unwrap_or(""))
}

//! Linux capabilities: baseline allows adding only the container runtime's default
//! set; restricted requires dropping ALL and adding at most NET_BIND_SERVICE.

use super::{containers_phrase, join_quote, Violation};
use crate::admission::pod_security::pod::{sub_object, Pod};
use serde_json::Value;
use std::collections::BTreeSet;

const DEFAULT_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn names<'a>(capabilities: &'a serde_json::Map<String, Value>, key: &str) -> impl Iterator<Item = &'a str> {
    capabilities
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .map(|c| c.as_str().unwrap_or(""))
}

/// Baseline, v1.0+.
pub(crate) fn capabilities_baseline(pod: &Pod<'_>) -> Option<Violation> {
    let mut added = BTreeSet::new();
    let mut bad = Vec::new();
    for container in pod.containers() {
        let Some(capabilities) = sub_object(container.security_context(), "capabilities") else { continue };
        let mut valid = true;
        for name in names(capabilities, "add") {
            if !DEFAULT_CAPABILITIES.contains(&name) {
                valid = false;
                added.insert(name);
            }
        }
        if !valid {
            bad.push(container.name());
        }
    }
    if bad.is_empty() {
        return None;
    }
    let added: Vec<&str> = added.into_iter().collect();
    Violation::new(
        "non-default capabilities",
        format!("{} must not include {} in securityContext.capabilities.add", containers_phrase(&bad), join_quote(&added)),
    )
}

/// Restricted, v1.22+ (replaces the baseline check).
pub(crate) fn capabilities_restricted_1_22(pod: &Pod<'_>) -> Option<Violation> {
    let mut missing_drop_all = Vec::new();
    let mut adding = Vec::new();
    let mut forbidden = BTreeSet::new();
    for container in pod.containers() {
        let Some(capabilities) = sub_object(container.security_context(), "capabilities") else {
            missing_drop_all.push(container.name());
            continue;
        };
        if !names(capabilities, "drop").any(|c| c == "ALL") {
            missing_drop_all.push(container.name());
        }
        let mut added_forbidden = false;
        for name in names(capabilities, "add") {
            if name != "NET_BIND_SERVICE" {
                added_forbidden = true;
                forbidden.insert(name);
            }
        }
        if added_forbidden {
            adding.push(container.name());
        }
    }
    let mut details = Vec::new();
    if !missing_drop_all.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_phrase(&missing_drop_all)
        ));
    }
    if !adding.is_empty() {
        let forbidden: Vec<&str> = forbidden.into_iter().collect();
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding),
            join_quote(&forbidden)
        ));
    }
    if details.is_empty() {
        return None;
    }
    Violation::new("unrestricted capabilities", details.join("; "))
}

/// Restricted, v1.25+: a Windows pod passes.
pub(crate) fn capabilities_restricted_1_25(pod: &Pod<'_>) -> Option<Violation> {
    if pod.windows() {
        return None;
    }
    capabilities_restricted_1_22(pod)
}

//! Checks on what a container may do to the node: privileged mode, privilege
//! escalation, unmasked /proc, and sysctls outside the safe set.

use super::{containers_phrase, containers_where, join_quote, Violation};
use crate::admission::pod_security::pod::{boolean, field, text, Pod};
use std::collections::BTreeSet;

/// Baseline, v1.0+: no container may be privileged.
pub(crate) fn privileged(pod: &Pod<'_>) -> Option<Violation> {
    let names = containers_where(pod, |c| boolean(field(c.security_context(), "privileged")) == Some(true));
    if names.is_empty() {
        return None;
    }
    Violation::new(
        "privileged",
        format!("{} must not set securityContext.privileged=true", containers_phrase(&names)),
    )
}

/// Restricted, v1.8+: every container must set allowPrivilegeEscalation=false.
pub(crate) fn allow_privilege_escalation_1_8(pod: &Pod<'_>) -> Option<Violation> {
    let names =
        containers_where(pod, |c| boolean(field(c.security_context(), "allowPrivilegeEscalation")) != Some(false));
    if names.is_empty() {
        return None;
    }
    Violation::new(
        "allowPrivilegeEscalation != false",
        format!("{} must set securityContext.allowPrivilegeEscalation=false", containers_phrase(&names)),
    )
}

/// Restricted, v1.25+: as v1.8, but a Windows pod (which cannot set it) passes.
pub(crate) fn allow_privilege_escalation_1_25(pod: &Pod<'_>) -> Option<Violation> {
    if pod.windows() {
        return None;
    }
    allow_privilege_escalation_1_8(pod)
}

/// Baseline, v1.0+: procMount, when set, must be `Default`.
pub(crate) fn proc_mount(pod: &Pod<'_>) -> Option<Violation> {
    if pod.relaxed_for_user_namespace() {
        return None;
    }
    let mut kinds = BTreeSet::new();
    let names = containers_where(pod, |c| {
        let Some(sc) = c.security_context() else { return false };
        if field(Some(sc), "procMount").is_none() {
            return false;
        }
        let kind = text(sc, "procMount");
        if kind == "Default" {
            return false;
        }
        kinds.insert(kind);
        true
    });
    if names.is_empty() {
        return None;
    }
    let kinds: Vec<&str> = kinds.into_iter().collect();
    Violation::new(
        "procMount",
        format!("{} must not set securityContext.procMount to {}", containers_phrase(&names), join_quote(&kinds)),
    )
}

const SAFE_SYSCTLS_1_0: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
];
const SAFE_SYSCTLS_1_27: &[&str] = &["net.ipv4.ip_local_reserved_ports"];
const SAFE_SYSCTLS_1_29: &[&str] = &[
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];
const SAFE_SYSCTLS_1_32: &[&str] = &["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"];

/// Each version's safe set adds to the one before it.
fn sysctls(pod: &Pod<'_>, safe: &[&[&str]]) -> Option<Violation> {
    let forbidden: Vec<&str> = pod
        .security_context()
        .and_then(|sc| sc.get("sysctls"))
        .and_then(|v| v.as_array())
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .map(|s| s.get("name").and_then(|n| n.as_str()).unwrap_or(""))
        .filter(|name| !safe.iter().any(|set| set.contains(name)))
        .collect();
    if forbidden.is_empty() {
        return None;
    }
    Violation::new("forbidden sysctls", forbidden.join(", "))
}

pub(crate) fn sysctls_1_0(pod: &Pod<'_>) -> Option<Violation> {
    sysctls(pod, &[SAFE_SYSCTLS_1_0])
}

pub(crate) fn sysctls_1_27(pod: &Pod<'_>) -> Option<Violation> {
    sysctls(pod, &[SAFE_SYSCTLS_1_0, SAFE_SYSCTLS_1_27])
}

pub(crate) fn sysctls_1_29(pod: &Pod<'_>) -> Option<Violation> {
    sysctls(pod, &[SAFE_SYSCTLS_1_0, SAFE_SYSCTLS_1_27, SAFE_SYSCTLS_1_29])
}

pub(crate) fn sysctls_1_32(pod: &Pod<'_>) -> Option<Violation> {
    sysctls(pod, &[SAFE_SYSCTLS_1_0, SAFE_SYSCTLS_1_27, SAFE_SYSCTLS_1_29, SAFE_SYSCTLS_1_32])
}

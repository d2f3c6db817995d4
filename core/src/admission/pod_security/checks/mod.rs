//! The checks of the baseline and restricted profiles, each as its versions define it.
//! A check returns `None` when the pod passes and a [`Violation`] naming the reason
//! and the offending fields when it does not, in upstream's words.

mod capabilities;
mod host;
mod privilege;
mod profiles;
mod users;
mod volumes;

pub(super) use capabilities::{capabilities_baseline, capabilities_restricted_1_22, capabilities_restricted_1_25};
pub(super) use host::{host_namespaces, host_path_volumes, host_ports, windows_host_process};
pub(super) use privilege::{
    allow_privilege_escalation_1_25, allow_privilege_escalation_1_8, privileged, proc_mount, sysctls_1_0,
    sysctls_1_27, sysctls_1_29, sysctls_1_32,
};
pub(super) use profiles::{
    app_armor_profile, se_linux_options_1_0, se_linux_options_1_31, seccomp_baseline_1_0, seccomp_baseline_1_19,
    seccomp_restricted_1_19, seccomp_restricted_1_25,
};
pub(super) use users::{run_as_non_root, run_as_user};
pub(super) use volumes::restricted_volumes;

use super::pod::{Container, Pod};

/// Why a pod fails a check: a short reason, and a detail naming what set it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub reason: String,
    pub detail: String,
}

impl Violation {
    pub(crate) fn new(reason: impl Into<String>, detail: impl Into<String>) -> Option<Violation> {
        Some(Violation { reason: reason.into(), detail: detail.into() })
    }
}

pub type CheckFn = fn(&Pod<'_>) -> Option<Violation>;

/// Items each in double quotes, comma separated (no escaping, as upstream writes them).
pub(crate) fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let inner: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    format!("\"{}\"", inner.join("\", \""))
}

pub(crate) fn pluralize<'a>(singular: &'a str, plural: &'a str, count: usize) -> &'a str {
    if count == 1 {
        singular
    } else {
        plural
    }
}

/// `container "a"` or `containers "a", "b"`.
pub(crate) fn containers_phrase(names: &[&str]) -> String {
    format!("{} {}", pluralize("container", "containers", names.len()), join_quote(names))
}

/// The names of the containers for which `bad` holds, in visiting order.
pub(crate) fn containers_where<'a>(pod: &Pod<'a>, mut bad: impl FnMut(&Container<'a>) -> bool) -> Vec<&'a str> {
    pod.containers().filter(|c| bad(c)).map(|c| c.name()).collect()
}

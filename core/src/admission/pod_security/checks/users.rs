//! Restricted checks on the user a container runs as: never root.

use super::{containers_phrase, containers_where, Violation};
use crate::admission::pod_security::pod::{boolean, field, integer, Pod};

/// v1.0+: runAsNonRoot must be true, on each container or (for those leaving it
/// unset) on the pod; an explicit false anywhere is named first.
pub(crate) fn run_as_non_root(pod: &Pod<'_>) -> Option<Violation> {
    if pod.relaxed_for_user_namespace() {
        return None;
    }
    let mut setters = Vec::new();
    let pod_value = boolean(field(pod.security_context(), "runAsNonRoot"));
    if pod_value == Some(false) {
        setters.push("pod".to_owned());
    }
    let pod_non_root = pod_value == Some(true);
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for container in pod.containers() {
        // A non-bool value (refused by validation) counts as set, and as not false.
        match field(container.security_context(), "runAsNonRoot") {
            Some(value) if value.as_bool() == Some(false) => explicit.push(container.name()),
            Some(_) => {}
            None if !pod_non_root => implicit.push(container.name()),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_phrase(&explicit));
    }
    if !setters.is_empty() {
        return Violation::new(
            "runAsNonRoot != true",
            format!("{} must not set securityContext.runAsNonRoot=false", setters.join(" and ")),
        );
    }
    if implicit.is_empty() {
        return None;
    }
    Violation::new(
        "runAsNonRoot != true",
        format!("pod or {} must set securityContext.runAsNonRoot=true", containers_phrase(&implicit)),
    )
}

/// v1.23+: neither the pod nor a container may set runAsUser=0.
pub(crate) fn run_as_user(pod: &Pod<'_>) -> Option<Violation> {
    if pod.relaxed_for_user_namespace() {
        return None;
    }
    let root = |sc| integer(field(sc, "runAsUser")) == Some(0);
    let mut setters = Vec::new();
    if root(pod.security_context()) {
        setters.push("pod".to_owned());
    }
    let names = containers_where(pod, |c| root(c.security_context()));
    if !names.is_empty() {
        setters.push(containers_phrase(&names));
    }
    if setters.is_empty() {
        return None;
    }
    Violation::new("runAsUser=0", format!("{} must not set runAsUser=0", setters.join(" and ")))
}

//! Baseline checks on sharing the host: namespaces, hostPath volumes, host ports and
//! Windows host processes.

use super::{containers_phrase, containers_where, join_quote, pluralize, Violation};
use crate::admission::pod_security::pod::{boolean, field, sub_object, Pod};
use std::collections::BTreeSet;

/// hostNetwork, hostPID and hostIPC must be unset or false.
pub(crate) fn host_namespaces(pod: &Pod<'_>) -> Option<Violation> {
    let shared: Vec<&str> = [("hostNetwork", "hostNetwork=true"), ("hostPID", "hostPID=true"), ("hostIPC", "hostIPC=true")]
        .into_iter()
        .filter(|(key, _)| pod.flag(key))
        .map(|(_, text)| text)
        .collect();
    if shared.is_empty() {
        return None;
    }
    Violation::new("host namespaces", shared.join(", "))
}

/// No volume may be a hostPath.
pub(crate) fn host_path_volumes(pod: &Pod<'_>) -> Option<Violation> {
    let names: Vec<&str> = pod
        .volumes()
        .iter()
        .filter(|v| v.get("hostPath").is_some_and(|h| !h.is_null()))
        .map(|v| v.get("name").and_then(|n| n.as_str()).unwrap_or(""))
        .collect();
    if names.is_empty() {
        return None;
    }
    Violation::new("hostPath volumes", format!("{} {}", pluralize("volume", "volumes", names.len()), join_quote(&names)))
}

/// No container port may name a host port (0 means none).
pub(crate) fn host_ports(pod: &Pod<'_>) -> Option<Violation> {
    // Listed as strings and sorted as strings, as upstream's string set sorts them.
    let mut ports = BTreeSet::new();
    let names = containers_where(pod, |c| {
        let mut bad = false;
        for port in c.ports() {
            let host_port = crate::admission::pod_security::pod::integer(port.get("hostPort")).unwrap_or(0);
            if host_port != 0 {
                bad = true;
                ports.insert(host_port.to_string());
            }
        }
        bad
    });
    if names.is_empty() {
        return None;
    }
    let ports: Vec<String> = ports.into_iter().collect();
    Violation::new(
        "hostPort",
        format!(
            "{} {} {} {}",
            containers_phrase(&names),
            pluralize("uses", "use", names.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            ports.join(", ")
        ),
    )
}

/// Neither the pod nor a container may ask for a Windows HostProcess.
pub(crate) fn windows_host_process(pod: &Pod<'_>) -> Option<Violation> {
    let host_process =
        |sc| boolean(field(sub_object(sc, "windowsOptions"), "hostProcess")) == Some(true);
    let names = containers_where(pod, |c| host_process(c.security_context()));
    let mut setters = Vec::new();
    if host_process(pod.security_context()) {
        setters.push("pod".to_owned());
    }
    if !names.is_empty() {
        setters.push(containers_phrase(&names));
    }
    if setters.is_empty() {
        return None;
    }
    Violation::new(
        "hostProcess",
        format!("{} must not set securityContext.windowsOptions.hostProcess=true", setters.join(" and ")),
    )
}

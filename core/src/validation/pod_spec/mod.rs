//! A pod's spec checked as upstream's `ValidatePodSpec` checks it, in its order and
//! with its field paths: for Pods, and for the template of every workload.
//!
//! Checks run on defaulted objects. A field that defaulting always fills
//! (`restartPolicy`, `dnsPolicy`, a port's `protocol`, a probe's thresholds, …) is
//! therefore only checked when present: absent, it is what defaulting will make it.

mod containers;
mod env;
mod ephemeral;
mod probes;
mod resize;
mod resources;
mod scheduling;
mod security;
mod update;
mod volumes;

pub use ephemeral::validate_ephemeral_containers_update;
pub use resize::validate_resize;
pub use scheduling::node_selector;
pub use update::validate_pod_update;
pub(crate) use resources::validate_requirements;
pub(crate) use scheduling::validate_tolerations;

use super::names::{dns1123_label, dns1123_subdomain, qualified_name};
use super::network::{port_name, port_number};
use super::value::{int, invalid_int, list, text};
use super::{FieldError, FieldPath};
use serde_json::{Map, Value};

/// Where a spec sits, which changes a few rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// A Pod's own spec.
    Pod,
    /// The spec of a pod template (PodTemplate, a workload).
    Template,
}

/// The errors of `spec` at `path`. `extra_volumes` are volumes the pods will have
/// beside the spec's own (a StatefulSet's claim templates).
pub fn validate(spec: &Value, extra_volumes: &[Value], path: &FieldPath, context: Context) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut all_volumes: Vec<Value> = list(spec, "volumes").to_vec();
    all_volumes.extend_from_slice(extra_volumes);
    let (known, volume_errs) = volumes::validate_volumes(&all_volumes, &path.child("volumes"));
    errs.extend(volume_errs);
    let grace = int(spec, "terminationGracePeriodSeconds");
    let regular = list(spec, "containers");
    errs.extend(containers::validate_containers(regular, &known, grace, &path.child("containers")));
    let init = list(spec, "initContainers");
    errs.extend(containers::validate_init_containers(init, regular, &known, grace, &path.child("initContainers")));
    let ephemeral = list(spec, "ephemeralContainers");
    errs.extend(containers::validate_ephemeral_containers(ephemeral, &[regular, init], &known, &path.child("ephemeralContainers")));
    errs.extend(host_network_ports(spec, path, context));
    errs.extend(one_of(spec, "restartPolicy", path, &["Always", "OnFailure", "Never"]));
    errs.extend(one_of(spec, "dnsPolicy", path, &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]));
    errs.extend(crate::validation::object_meta::labels(path.child("nodeSelector").as_str(), spec.get("nodeSelector")));
    errs.extend(security::validate_pod_security_context(spec.get("securityContext"), &path.child("securityContext")));
    errs.extend(scheduling::validate_affinity(spec.get("affinity"), &path.child("affinity")));
    errs.extend(dns_config(spec, &path.child("dnsConfig")));
    for (i, gate) in list(spec, "readinessGates").iter().enumerate() {
        let at = path.child("readinessGates").index(i).child("conditionType");
        let condition = text(gate, "conditionType");
        errs.extend(qualified_name(condition).into_iter().map(|m| FieldError::invalid(at.as_str(), condition, m)));
    }
    errs.extend(names_at(spec, "serviceAccountName", path, dns1123_subdomain));
    errs.extend(names_at(spec, "nodeName", path, dns1123_subdomain));
    if let Some(seconds) = int(spec, "activeDeadlineSeconds") {
        if !(1..=i64::from(i32::MAX)).contains(&seconds) {
            errs.push(invalid_int(&path.child("activeDeadlineSeconds"), seconds, "must be between 1 and 2147483647, inclusive"));
        }
    }
    errs.extend(names_at(spec, "hostname", path, dns1123_label));
    errs.extend(names_at(spec, "subdomain", path, dns1123_label));
    errs.extend(scheduling::validate_tolerations(list(spec, "tolerations"), &path.child("tolerations")));
    errs.extend(names_at(spec, "priorityClassName", path, dns1123_subdomain));
    errs.extend(one_of(spec, "preemptionPolicy", path, &["PreemptLowerPriority", "Never"]));
    errs.extend(scheduling_gates(list(spec, "schedulingGates"), &path.child("schedulingGates")));
    errs
}

/// Gates name conditions (qualified names), each once.
fn scheduling_gates(gates: &[Value], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, gate) in gates.iter().enumerate() {
        let name = text(gate, "name");
        errs.extend(qualified_name(name).into_iter().map(|m| FieldError::invalid(path.index(i).as_str(), name, m)));
        if !seen.insert(name) {
            errs.push(FieldError::duplicate(path.index(i).as_str(), name));
        }
    }
    errs
}

/// Upstream's Pod-only rules on top of the spec's (`ValidatePodCreate`).
pub fn validate_pod_create(pod: &Map<String, Value>) -> Vec<FieldError> {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let path = FieldPath::new("spec");
    let mut errs = validate(spec, &[], &path, Context::Pod);
    if !list(spec, "ephemeralContainers").is_empty() {
        errs.push(FieldError::forbidden(path.child("ephemeralContainers").as_str(), "cannot be set on create"));
    }
    if !text(spec, "nodeName").is_empty() && !list(spec, "schedulingGates").is_empty() {
        errs.push(FieldError::forbidden(path.child("nodeName").as_str(), "cannot be set until all schedulingGates have been cleared"));
    }
    errs
}

/// With `dnsPolicy: None` the pod's resolver is only what `dnsConfig` says.
fn dns_config(spec: &Value, path: &FieldPath) -> Vec<FieldError> {
    let config = spec.get("dnsConfig").filter(|c| !c.is_null());
    let nameservers = config.map_or(&[][..], |c| list(c, "nameservers"));
    if text(spec, "dnsPolicy") == "None" {
        if config.is_none() {
            return vec![FieldError::required(path.as_str(), "must provide `dnsConfig` when `dnsPolicy` is None")];
        }
        if nameservers.is_empty() {
            return vec![FieldError::required(
                path.child("nameservers").as_str(),
                "must provide at least one DNS nameserver when `dnsPolicy` is None",
            )];
        }
    }
    let mut errs = Vec::new();
    if nameservers.len() > 3 {
        let shown = crate::validation::go_json(&Value::Array(nameservers.to_vec()));
        errs.push(FieldError::invalid_unquoted(path.child("nameservers").as_str(), &shown, "must not have more than 3 nameservers"));
    }
    for (i, option) in config.map_or(&[][..], |c| list(c, "options")).iter().enumerate() {
        if text(option, "name").is_empty() {
            errs.push(FieldError::required(path.child("options").index(i).as_str(), "must not be empty"));
        }
    }
    errs
}

/// A value of a fixed set, when given (absent or empty, defaulting fills it).
fn one_of(spec: &Value, key: &str, path: &FieldPath, supported: &[&str]) -> Vec<FieldError> {
    match text(spec, key) {
        "" => Vec::new(),
        v if supported.contains(&v) => Vec::new(),
        v => vec![FieldError::not_supported(path.child(key).as_str(), v, supported)],
    }
}

fn names_at(spec: &Value, key: &str, path: &FieldPath, rule: fn(&str) -> Vec<String>) -> Vec<FieldError> {
    let value = text(spec, key);
    if value.is_empty() {
        return Vec::new();
    }
    rule(value).into_iter().map(|msg| FieldError::invalid(path.child(key).as_str(), value, msg)).collect()
}

/// Under `hostNetwork`, a host port is the container port: a Pod's must match (its
/// defaulting copied it), a template's may also be left 0 for the pods to default.
fn host_network_ports(spec: &Value, path: &FieldPath, context: Context) -> Vec<FieldError> {
    if spec.get("hostNetwork") != Some(&Value::Bool(true)) {
        return Vec::new();
    }
    let mut errs = Vec::new();
    for (i, container) in list(spec, "containers").iter().enumerate() {
        for (j, port) in list(container, "ports").iter().enumerate() {
            let container_port = int(port, "containerPort").unwrap_or(0);
            // Absent, defaulting makes a Pod's host port its container port.
            let host_port = int(port, "hostPort").unwrap_or(if context == Context::Pod { container_port } else { 0 });
            if (context == Context::Pod || host_port != 0) && host_port != container_port {
                let at = path.child("containers").index(i).child("ports").index(j).child("hostPort");
                errs.push(invalid_int(&at, host_port, "must match `containerPort` when `hostNetwork` is true"));
            }
        }
    }
    errs
}

/// A port given by number or by name (a probe's, a lifecycle handler's).
fn port_number_or_name(port: Option<&Value>, path: &FieldPath) -> Vec<FieldError> {
    match port {
        Some(Value::String(name)) => port_name(name).into_iter().map(|m| FieldError::invalid(path.as_str(), name, m)).collect(),
        Some(Value::Number(n)) => {
            let n = n.as_i64().unwrap_or(0);
            port_number(n).into_iter().map(|m| invalid_int(path, n, &m)).collect()
        }
        _ => port_number(0).into_iter().map(|m| invalid_int(path, 0, &m)).collect(),
    }
}

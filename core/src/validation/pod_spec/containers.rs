//! Containers and init containers: names, image, ports, and what each kind of
//! container may carry (upstream's `validateContainers`, `validateInitContainers`,
//! `validateContainerCommon`).

use super::volumes::Volumes;
use super::{env, probes, resources, security, volumes};
use crate::validation::network::{port_name, port_number};
use crate::validation::names::dns1123_label;
use crate::validation::value::{int, invalid_int, list, present, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;
use std::collections::HashSet;

pub(super) fn validate_containers(containers: &[Value], vols: &Volumes, grace: Option<i64>, path: &FieldPath) -> Vec<FieldError> {
    if containers.is_empty() {
        return vec![FieldError::required(path.as_str(), "")];
    }
    let mut errs = Vec::new();
    let mut names = HashSet::new();
    for (i, ctr) in containers.iter().enumerate() {
        let at = path.index(i);
        errs.extend(common(ctr, vols, &at));
        let name = text(ctr, "name");
        // Clashes with init containers are reported on the init container.
        if !names.insert(name) {
            errs.push(FieldError::duplicate(at.child("name").as_str(), name));
        }
        errs.extend(probes::validate_lifecycle(ctr.get("lifecycle"), grace, &at.child("lifecycle")));
        errs.extend(probes::validate_probe(ctr.get("livenessProbe"), grace, &at.child("livenessProbe"), probes::Kind::Liveness));
        errs.extend(probes::validate_probe(ctr.get("readinessProbe"), grace, &at.child("readinessProbe"), probes::Kind::Readiness));
        errs.extend(probes::validate_probe(ctr.get("startupProbe"), grace, &at.child("startupProbe"), probes::Kind::Startup));
        if present(ctr, "restartPolicy") {
            errs.push(FieldError::forbidden(at.child("restartPolicy").as_str(), "may not be set for non-init containers"));
        }
    }
    errs.extend(host_port_conflicts(containers.iter().enumerate(), path));
    errs
}

pub(super) fn validate_init_containers(
    containers: &[Value],
    regular: &[Value],
    vols: &Volumes,
    grace: Option<i64>,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: HashSet<&str> = regular.iter().map(|c| text(c, "name")).collect();
    for (i, ctr) in containers.iter().enumerate() {
        let at = path.index(i);
        errs.extend(common(ctr, vols, &at));
        let mut sidecar = false;
        if present(ctr, "restartPolicy") {
            match ctr.get("restartPolicy") {
                Some(Value::String(p)) if p == "Always" => sidecar = true,
                Some(other) => {
                    let shown = other.as_str().map_or_else(|| crate::validation::go_json(other), str::to_owned);
                    errs.push(FieldError::not_supported(at.child("restartPolicy").as_str(), &shown, &["Always"]));
                }
                None => {}
            }
        }
        let name = text(ctr, "name");
        if names.contains(name) {
            errs.push(FieldError::duplicate(at.child("name").as_str(), name));
        } else if !name.is_empty() {
            names.insert(name);
        }
        // Init containers run one by one: their host ports only clash within each.
        errs.extend(host_port_conflicts(std::iter::once((i, ctr)), path));
        if sidecar {
            errs.extend(probes::validate_lifecycle(ctr.get("lifecycle"), grace, &at.child("lifecycle")));
            errs.extend(probes::validate_probe(ctr.get("livenessProbe"), grace, &at.child("livenessProbe"), probes::Kind::Liveness));
            errs.extend(probes::validate_probe(ctr.get("readinessProbe"), grace, &at.child("readinessProbe"), probes::Kind::Readiness));
            errs.extend(probes::validate_probe(ctr.get("startupProbe"), grace, &at.child("startupProbe"), probes::Kind::Startup));
        } else {
            for field in ["lifecycle", "livenessProbe", "readinessProbe", "startupProbe"] {
                if present(ctr, field) {
                    errs.push(FieldError::forbidden(
                        at.child(field).as_str(),
                        "may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
        }
    }
    errs
}

/// The fields an ephemeral container may not set, in the order upstream's struct has
/// them: it serves debugging, never the pod's own work.
const NOT_FOR_EPHEMERAL: [&str; 8] = [
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
];

const NOT_FOR_EPHEMERAL_MESSAGE: &str = "cannot be set for an Ephemeral Container";

/// Ephemeral containers: the common checks, a name unique among all containers, a
/// target that is a regular or init container, none of [`NOT_FOR_EPHEMERAL`], and no
/// subpath mounts (upstream's `validateEphemeralContainers`).
pub(super) fn validate_ephemeral_containers(
    containers: &[Value],
    others: &[&[Value]],
    vols: &Volumes,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let other_names: HashSet<&str> = others.iter().flat_map(|l| l.iter()).map(|c| text(c, "name")).collect();
    let mut names = other_names.clone();
    for (i, ctr) in containers.iter().enumerate() {
        let at = path.index(i);
        errs.extend(common(ctr, vols, &at));
        let image = text(ctr, "image");
        if image.trim() != image {
            errs.push(FieldError::invalid(at.child("image").as_str(), image, "must not have leading or trailing whitespace"));
        }
        let name = text(ctr, "name");
        if !names.insert(name) {
            errs.push(FieldError::duplicate(at.child("name").as_str(), name));
        }
        let target = text(ctr, "targetContainerName");
        if !target.is_empty() && !other_names.contains(target) {
            errs.push(FieldError::not_found(at.child("targetContainerName").as_str(), target));
        }
        for field in NOT_FOR_EPHEMERAL {
            if set_for_go(ctr.get(field)) {
                errs.push(FieldError::forbidden(at.child(field).as_str(), NOT_FOR_EPHEMERAL_MESSAGE));
            }
        }
        for (j, mount) in list(ctr, "volumeMounts").iter().enumerate() {
            for field in ["subPath", "subPathExpr"] {
                if !text(mount, field).is_empty() {
                    let at = at.child("volumeMounts").index(j).child(field);
                    errs.push(FieldError::forbidden(at.as_str(), NOT_FOR_EPHEMERAL_MESSAGE));
                }
            }
        }
    }
    errs
}

/// Whether a decoded field differs from its Go zero value: given and not null, where
/// an empty object is the zero value of a struct (`resources: {}`) and an empty list
/// is not that of a slice.
fn set_for_go(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Object(fields)) => fields.values().any(|v| !v.is_null()),
        Some(_) => true,
    }
}

/// What every kind of container is checked for.
fn common(ctr: &Value, vols: &Volumes, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name_path = path.child("name");
    match text(ctr, "name") {
        "" => errs.push(FieldError::required(name_path.as_str(), "")),
        name => errs.extend(dns1123_label(name).into_iter().map(|m| FieldError::invalid(name_path.as_str(), name, m))),
    }
    if text(ctr, "image").is_empty() {
        errs.push(FieldError::required(path.child("image").as_str(), ""));
    }
    match text(ctr, "terminationMessagePolicy") {
        "" | "File" | "FallbackToLogsOnError" => {}
        other => errs.push(FieldError::not_supported(
            path.child("terminationMessagePolicy").as_str(),
            other,
            &["File", "FallbackToLogsOnError"],
        )),
    }
    errs.extend(ports(list(ctr, "ports"), &path.child("ports")));
    errs.extend(env::validate_env(list(ctr, "env"), &path.child("env")));
    errs.extend(env::validate_env_from(list(ctr, "envFrom"), &path.child("envFrom")));
    errs.extend(volumes::validate_mounts(list(ctr, "volumeMounts"), vols, &path.child("volumeMounts")));
    match text(ctr, "imagePullPolicy") {
        "" | "Always" | "IfNotPresent" | "Never" => {}
        other => errs.push(FieldError::not_supported(
            path.child("imagePullPolicy").as_str(),
            other,
            &["Always", "IfNotPresent", "Never"],
        )),
    }
    errs.extend(resources::validate_requirements(ctr.get("resources"), &path.child("resources")));
    errs.extend(security::validate_security_context(ctr.get("securityContext"), &path.child("securityContext")));
    errs
}

fn ports(ports: &[Value], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let at = path.index(i);
        let name = text(port, "name");
        if !name.is_empty() {
            let problems = port_name(name);
            if !problems.is_empty() {
                errs.extend(problems.into_iter().map(|m| FieldError::invalid(at.child("name").as_str(), name, m)));
            } else if !names.insert(name) {
                errs.push(FieldError::duplicate(at.child("name").as_str(), name));
            }
        }
        match int(port, "containerPort").unwrap_or(0) {
            0 => errs.push(FieldError::required(at.child("containerPort").as_str(), "")),
            n => errs.extend(port_number(n).into_iter().map(|m| invalid_int(&at.child("containerPort"), n, &m))),
        }
        if let Some(n) = int(port, "hostPort").filter(|n| *n != 0) {
            errs.extend(port_number(n).into_iter().map(|m| invalid_int(&at.child("hostPort"), n, &m)));
        }
        match text(port, "protocol") {
            "" | "TCP" | "UDP" | "SCTP" => {}
            other => errs.push(FieldError::not_supported(at.child("protocol").as_str(), other, &["SCTP", "TCP", "UDP"])),
        }
    }
    errs
}

/// Two ports of the given containers on one host port, protocol and host IP.
fn host_port_conflicts<'a>(containers: impl Iterator<Item = (usize, &'a Value)>, path: &FieldPath) -> Vec<FieldError> {
    let mut seen = HashSet::new();
    let mut errs = Vec::new();
    for (i, ctr) in containers {
        for (j, port) in list(ctr, "ports").iter().enumerate() {
            let Some(host_port) = int(port, "hostPort").filter(|p| *p != 0) else { continue };
            let protocol = match text(port, "protocol") {
                "" => "TCP",
                p => p,
            };
            let key = format!("{protocol}/{}/{host_port}", text(port, "hostIP"));
            if !seen.insert(key.clone()) {
                errs.push(FieldError::duplicate(path.index(i).child("ports").index(j).child("hostPort").as_str(), &key));
            }
        }
    }
    errs
}

//! What a write to `pods/resize` may do (upstream's `ValidatePodResize`, with
//! InPlacePodVerticalScaling and sidecar containers on, as in v1.33): the whole spec is
//! checked as any pod's; static and Windows pods are not resized; the QoS class may not
//! change; a node that reports no container resources cannot resize; requests and
//! limits may not be removed, nor memory limits lowered or added without a
//! `RestartContainer` policy; and only the cpu and memory of regular and sidecar
//! containers may change.

use super::ephemeral::is_mirror;
use super::update::normalized;
use super::{validate, Context};
use crate::resources::pods::{qos_class, quantity_nanos};
use crate::validation::value::{list, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::{Map, Value};

const ONLY_CPU_AND_MEMORY: &str = "only cpu and memory resources are mutable";

pub fn validate_resize(new: &Map<String, Value>, old: &Map<String, Value>) -> Vec<FieldError> {
    let null = Value::Null;
    let new_spec = new.get("spec").unwrap_or(&null);
    let old_spec = old.get("spec").unwrap_or(&null);
    let path = FieldPath::new("spec");
    let mut errs = validate(new_spec, &[], &path, Context::Pod);
    // Upstream answers each of these alone.
    if is_mirror(old) {
        return vec![FieldError::forbidden("[]", "static pods cannot be resized")];
    }
    if old_spec.get("os").map(|os| text(os, "name")) == Some("windows") {
        return vec![FieldError::forbidden("[]", "windows pods cannot be resized")];
    }
    let status_qos = old.get("status").map_or("", |s| text(s, "qosClass"));
    let old_qos = match status_qos {
        "" => old_spec.as_object().map_or("BestEffort", qos_class),
        known => known,
    };
    if new_spec.as_object().map_or("BestEffort", qos_class) != old_qos {
        errs.push(FieldError::invalid(path.as_str(), status_qos, "Pod QOS Class may not change as a result of resizing"));
    }
    if !node_supports_resize(old) {
        errs.push(FieldError::forbidden(path.as_str(), "Pod running on node without support for resize"));
    }
    let (new_init, old_init) = (list(new_spec, "initContainers"), list(old_spec, "initContainers"));
    let (new_regular, old_regular) = (list(new_spec, "containers"), list(old_spec, "containers"));
    if new_init.len() != old_init.len() || new_regular.len() != old_regular.len() {
        // Containers added or removed: nothing of them is a resize.
        errs.push(FieldError::forbidden(path.as_str(), ONLY_CPU_AND_MEMORY));
        return errs;
    }
    for (i, (after, before)) in new_init.iter().zip(old_init).enumerate() {
        if is_sidecar(before) {
            errs.extend(container_resize(after, before, &path.child("initContainers").index(i).child("resources")));
        }
    }
    for (i, (after, before)) in new_regular.iter().zip(old_regular).enumerate() {
        errs.extend(container_resize(after, before, &path.child("containers").index(i).child("resources")));
    }
    for (after, before) in new_regular.iter().zip(old_regular) {
        if !same_but_cpu_and_memory(after, before) {
            errs.push(FieldError::forbidden(path.as_str(), ONLY_CPU_AND_MEMORY));
        }
    }
    for (after, before) in new_init.iter().zip(old_init) {
        if is_sidecar(before) {
            if !same_but_cpu_and_memory(after, before) {
                errs.push(FieldError::forbidden(path.as_str(), "only cpu and memory resources for sidecar containers are mutable"));
            }
        } else if normalized(after) != normalized(before) {
            errs.push(FieldError::forbidden(path.as_str(), "resources for non-sidecar init containers are immutable"));
        }
    }
    if errs.is_empty() && !same_but_containers(new_spec, old_spec) {
        errs.push(FieldError::forbidden(path.as_str(), ONLY_CPU_AND_MEMORY));
    }
    errs
}

/// Upstream's version-skew guard: a pod with a running container whose status reports
/// no resources runs on a node that cannot resize it.
fn node_supports_resize(pod: &Map<String, Value>) -> bool {
    let statuses = pod.get("status").map_or(&[][..], |s| list(s, "containerStatuses"));
    match statuses.iter().find(|c| c.get("state").is_some_and(|s| s.get("running").is_some_and(|r| !r.is_null()))) {
        Some(running) => running.get("resources").is_some_and(|r| !r.is_null()),
        None => true,
    }
}

fn is_sidecar(container: &Value) -> bool {
    text(container, "restartPolicy") == "Always"
}

/// One container's requests and limits may not be removed, and its memory limit not
/// lowered or added unless memory's resize policy restarts the container.
fn container_resize(after: &Value, before: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let amounts = |c: &Value, kind: &str| c.get("resources").and_then(|r| r.get(kind)).and_then(Value::as_object).cloned().unwrap_or_default();
    for (kind, what) in [("requests", "requests"), ("limits", "limits")] {
        let (new, old) = (amounts(after, kind), amounts(before, kind));
        if old.keys().any(|name| !new.contains_key(name)) {
            errs.push(FieldError::forbidden(path.child(kind).as_str(), format!("resource {what} cannot be removed")));
        }
    }
    let memory_policy = list(after, "resizePolicy")
        .iter()
        .find(|p| text(p, "resourceName") == "memory")
        .map_or("", |p| text(p, "restartPolicy"));
    if matches!(memory_policy, "" | "NotRequired") {
        let limit = |c: &Value| amounts(c, "limits").get("memory").map(|q| q.as_str().map_or_else(|| q.to_string(), str::to_owned));
        let at = path.child("limits").key("memory");
        match (limit(after), limit(before)) {
            (Some(new), Some(old)) if quantity_nanos(new.trim()) < quantity_nanos(old.trim()) => {
                errs.push(FieldError::forbidden(at.as_str(), "memory limits cannot be decreased unless resizePolicy is RestartContainer"));
            }
            (Some(_), None) => {
                errs.push(FieldError::forbidden(at.as_str(), "memory limits cannot be added unless resizePolicy is RestartContainer"));
            }
            _ => {}
        }
    }
    errs
}

/// Whether `after` equals `before` once its cpu and memory requests and limits are the
/// stored ones (a list the stored container lacks is left out, as upstream drops it).
fn same_but_cpu_and_memory(after: &Value, before: &Value) -> bool {
    let mut munged = after.clone();
    let Some(container) = munged.as_object_mut() else { return false };
    let mut resources = Map::new();
    for kind in ["limits", "requests"] {
        let Some(old) = before.get("resources").and_then(|r| r.get(kind)).and_then(Value::as_object) else { continue };
        let mut list = after.get("resources").and_then(|r| r.get(kind)).and_then(Value::as_object).cloned().unwrap_or_default();
        for name in ["cpu", "memory"] {
            match old.get(name) {
                Some(q) => list.insert(name.to_owned(), q.clone()),
                None => list.remove(name),
            };
        }
        resources.insert(kind.to_owned(), Value::Object(list));
    }
    container.insert("resources".into(), Value::Object(resources));
    normalized(&munged) == normalized(before)
}

/// Whether the specs agree outside their containers and init containers.
fn same_but_containers(new: &Value, old: &Value) -> bool {
    let without = |spec: &Value| {
        let mut spec = normalized(spec);
        if let Some(map) = spec.as_object_mut() {
            map.remove("containers");
            map.remove("initContainers");
        }
        spec
    };
    without(new) == without(old)
}

//! The LimitRanger admission plugin's decisions: the defaults a namespace's LimitRanges
//! give containers that name no requests or limits, and the minimums, maximums and
//! limit-to-request ratios they impose on containers, pods and claims. Pure functions
//! over the LimitRanges of the namespace (read by the caller) and the object.
//!
//! Upstream walks each item's `min`/`max`/`maxLimitRequestRatio` map in Go's random
//! order; here names are taken in sorted order so that a refusal's text is the same
//! every time.

use super::pod_resources::{container_list, containers, pod_total, read_list, ResourceList};
use super::Operation;
use crate::status::ApiError;
use crate::validation::quantity::Quantity;
use serde_json::{Map, Value};

/// The annotation naming what the defaults filled in.
pub const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// The largest value upstream compares in thousandths without overflowing an int64.
const MAX_MILLI_VALUE: i128 = (i64::MAX / 1000) as i128;

/// Whether LimitRanger looks at this request at all: pods when created (their
/// containers cannot change afterwards) or resized, claims when created or updated.
pub fn applies_to(group: &str, resource: &str, subresource: &str, operation: Operation) -> bool {
    if !group.is_empty() {
        return false;
    }
    matches!(
        (resource, subresource, operation),
        ("pods", "resize", Operation::Update)
            | ("pods", "", Operation::Create)
            | ("persistentvolumeclaims", "", Operation::Create | Operation::Update)
    )
}

/// The whole plugin for one request: [`fill_defaults`], then [`check`].
pub fn admit(
    limit_ranges: &[Value],
    resource: &str,
    subresource: &str,
    operation: Operation,
    object: &mut Value,
    old_object: Option<&Value>,
) -> Result<(), ApiError> {
    fill_defaults(limit_ranges, resource, subresource, operation, object, old_object);
    check(limit_ranges, resource, subresource, operation, object, old_object)
}

/// Whether the plugin leaves this write alone: not its kind, or an object whose
/// stored version is being deleted.
fn skips(resource: &str, subresource: &str, operation: Operation, old_object: Option<&Value>) -> bool {
    !applies_to("", resource, subresource, operation)
        || old_object.is_some_and(|old| old.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null()))
}

/// The mutating half: a pod's containers get the defaults of every LimitRange in turn.
pub fn fill_defaults(
    limit_ranges: &[Value],
    resource: &str,
    subresource: &str,
    operation: Operation,
    object: &mut Value,
    old_object: Option<&Value>,
) {
    if skips(resource, subresource, operation, old_object) || resource != "pods" {
        return;
    }
    for range in limit_ranges {
        apply_defaults(range, object);
    }
}

/// The validating half: each LimitRange's checks; the first LimitRange refusing makes
/// the request forbidden.
pub fn check(
    limit_ranges: &[Value],
    resource: &str,
    subresource: &str,
    operation: Operation,
    object: &Value,
    old_object: Option<&Value>,
) -> Result<(), ApiError> {
    if skips(resource, subresource, operation, old_object) {
        return Ok(());
    }
    for range in limit_ranges {
        let refused = match resource {
            "pods" => validate_pod(range, object),
            _ => validate_claim(range, object),
        };
        if let Err(message) = refused {
            return Err(ApiError::forbidden("", resource, &name_for_errors(object), &message));
        }
    }
    Ok(())
}

/// The name admission errors give an object: its name, its `generateName` before one
/// is generated, or `Unknown`.
pub fn name_for_errors(object: &Value) -> String {
    let field = |f: &str| object.pointer(&format!("/metadata/{f}")).and_then(Value::as_str).filter(|s| !s.is_empty());
    field("name").or_else(|| field("generateName")).unwrap_or("Unknown").to_owned()
}

/// The items of a LimitRange's spec.
fn items(range: &Value) -> &[Value] {
    match range.pointer("/spec/limits") {
        Some(Value::Array(items)) => items,
        _ => &[],
    }
}

fn item_type(item: &Value) -> &str {
    item.get("type").and_then(Value::as_str).unwrap_or("")
}

/// The default requests and limits of a LimitRange's `Container` items, a later item
/// winning over an earlier one.
fn container_defaults(range: &Value) -> (ResourceList, ResourceList) {
    let (mut requests, mut limits) = (ResourceList::new(), ResourceList::new());
    for item in items(range).iter().filter(|i| item_type(i) == "Container") {
        requests.extend(read_list(item.get("defaultRequest")));
        limits.extend(read_list(item.get("default")));
    }
    (requests, limits)
}

/// Fills in, for every container and init container, the default requests and limits
/// it does not name, and records what was filled in in the pod's annotation (which
/// replaces any earlier one when something was set).
pub fn apply_defaults(range: &Value, pod: &mut Value) {
    let (requests, limits) = container_defaults(range);
    if requests.is_empty() && limits.is_empty() {
        return;
    }
    let mut notes = Vec::new();
    for (key, label) in [("containers", "container"), ("initContainers", "init container")] {
        let Some(Value::Array(list)) = pod.pointer_mut(&format!("/spec/{key}")) else {
            continue;
        };
        for container in list.iter_mut() {
            let name = container.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
            let set_requests = fill(container, "requests", &requests);
            let set_limits = fill(container, "limits", &limits);
            if !set_requests.is_empty() {
                notes.push(format!("{} request for {label} {name}", set_requests.join(", ")));
            }
            if !set_limits.is_empty() {
                notes.push(format!("{} limit for {label} {name}", set_limits.join(", ")));
            }
        }
    }
    if notes.is_empty() {
        return;
    }
    let Value::Object(pod) = pod else { return };
    let metadata = pod.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    let annotations = metadata.as_object_mut().expect("made an object above").entry("annotations").or_insert(Value::Null);
    if !annotations.is_object() {
        *annotations = Value::Object(Map::new());
    }
    annotations
        .as_object_mut()
        .expect("made an object above")
        .insert(ANNOTATION.to_owned(), Value::String(format!("LimitRanger plugin set: {}", notes.join("; "))));
}

/// Sets in `container.resources.<which>` each default it lacks; the names set, sorted.
fn fill(container: &mut Value, which: &str, defaults: &ResourceList) -> Vec<String> {
    let Value::Object(container) = container else {
        return Vec::new();
    };
    let missing: Vec<&String> = defaults
        .keys()
        .filter(|k| container.get("resources").and_then(|r| r.get(which)).and_then(|l| l.get(k.as_str())).is_none())
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    let resources = container.entry("resources").or_insert_with(|| Value::Object(Map::new()));
    if !resources.is_object() {
        *resources = Value::Object(Map::new());
    }
    let list = resources.as_object_mut().expect("made an object above").entry(which).or_insert(Value::Null);
    if !list.is_object() {
        *list = Value::Object(Map::new());
    }
    let list = list.as_object_mut().expect("made an object above");
    for name in &missing {
        list.insert((*name).clone(), Value::String(defaults[name.as_str()].canonical()));
    }
    missing.into_iter().cloned().collect()
}

/// A LimitRange's checks of a pod: each `Container` item over every container and init
/// container, each `Pod` item over what the pod as a whole requests and is limited to.
/// The refusal lists every failed check, as upstream's aggregate error prints them.
pub fn validate_pod(range: &Value, pod: &Value) -> Result<(), String> {
    let mut errors = Vec::new();
    for item in items(range) {
        match item_type(item) {
            "Container" => {
                for c in containers(pod, "containers").iter().chain(containers(pod, "initContainers")) {
                    check_item(item, "Container", &container_list(c, "requests"), &container_list(c, "limits"), &mut errors);
                }
            }
            "Pod" => {
                let requests = pod_total(pod, "requests", false);
                let limits = pod_total(pod, "limits", false);
                check_item(item, "Pod", &requests, &limits, &mut errors);
            }
            _ => {}
        }
    }
    aggregate(errors)
}

/// A LimitRange's checks of a claim: `PersistentVolumeClaim` items' min and max over
/// what it requests (a claim's limits are not the user's to set, so are not read).
pub fn validate_claim(range: &Value, claim: &Value) -> Result<(), String> {
    let mut errors = Vec::new();
    let requests = read_list(claim.pointer("/spec/resources/requests"));
    for item in items(range).iter().filter(|i| item_type(i) == "PersistentVolumeClaim") {
        for (name, enforced) in read_list(item.get("min")) {
            errors.extend(min_constraint("PersistentVolumeClaim", &name, &enforced, &requests, &ResourceList::new()));
        }
        for (name, enforced) in read_list(item.get("max")) {
            let kind = "PersistentVolumeClaim";
            let e = enforced.canonical();
            match requests.get(&name) {
                None => errors.push(format!("maximum {name} usage per {kind} is {e}.  No request is specified")),
                Some(req) => {
                    let v = comparable(&[req, &enforced]);
                    if v[0] > v[1] {
                        errors.push(format!("maximum {name} usage per {kind} is {e}, but request is {}", req.canonical()));
                    }
                }
            }
        }
    }
    aggregate(errors)
}

fn check_item(item: &Value, kind: &str, requests: &ResourceList, limits: &ResourceList, errors: &mut Vec<String>) {
    for (name, enforced) in read_list(item.get("min")) {
        errors.extend(min_constraint(kind, &name, &enforced, requests, limits));
    }
    for (name, enforced) in read_list(item.get("max")) {
        errors.extend(max_constraint(kind, &name, &enforced, requests, limits));
    }
    for (name, enforced) in read_list(item.get("maxLimitRequestRatio")) {
        errors.extend(ratio_constraint(kind, &name, &enforced, requests, limits));
    }
}

/// Upstream's aggregate: one message alone, several in brackets, repeats dropped.
fn aggregate(errors: Vec<String>) -> Result<(), String> {
    let mut seen = Vec::new();
    for e in errors {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    match seen.len() {
        0 => Ok(()),
        1 => Err(seen.remove(0)),
        _ => Err(format!("[{}]", seen.join(", "))),
    }
}

/// The values upstream compares: in thousandths when all of them fit an int64 that
/// way, in whole units (rounded up) otherwise.
fn comparable(quantities: &[&Quantity]) -> Vec<i128> {
    if quantities.iter().all(|q| q.units() <= MAX_MILLI_VALUE) {
        quantities.iter().map(|q| q.milli()).collect()
    } else {
        quantities.iter().map(|q| q.units()).collect()
    }
}

fn min_constraint(kind: &str, name: &str, enforced: &Quantity, requests: &ResourceList, limits: &ResourceList) -> Option<String> {
    let e = enforced.canonical();
    let Some(req) = requests.get(name) else {
        return Some(format!("minimum {name} usage per {kind} is {e}.  No request is specified"));
    };
    let lim = limits.get(name);
    let v = comparable(&[req, lim.unwrap_or(&Quantity::ZERO), enforced]);
    if v[0] < v[2] {
        return Some(format!("minimum {name} usage per {kind} is {e}, but request is {}", req.canonical()));
    }
    match lim {
        Some(lim) if v[1] < v[2] => Some(format!("minimum {name} usage per {kind} is {e}, but limit is {}", lim.canonical())),
        _ => None,
    }
}

fn max_constraint(kind: &str, name: &str, enforced: &Quantity, requests: &ResourceList, limits: &ResourceList) -> Option<String> {
    let e = enforced.canonical();
    let Some(lim) = limits.get(name) else {
        return Some(format!("maximum {name} usage per {kind} is {e}.  No limit is specified"));
    };
    let req = requests.get(name);
    let v = comparable(&[req.unwrap_or(&Quantity::ZERO), lim, enforced]);
    if v[1] > v[2] {
        return Some(format!("maximum {name} usage per {kind} is {e}, but limit is {}", lim.canonical()));
    }
    match req {
        Some(req) if v[0] > v[2] => Some(format!("maximum {name} usage per {kind} is {e}, but request is {}", req.canonical())),
        _ => None,
    }
}

fn ratio_constraint(kind: &str, name: &str, enforced: &Quantity, requests: &ResourceList, limits: &ResourceList) -> Option<String> {
    let e = enforced.canonical();
    let req = requests.get(name);
    let lim = limits.get(name);
    let v = comparable(&[req.unwrap_or(&Quantity::ZERO), lim.unwrap_or(&Quantity::ZERO), enforced]);
    if req.is_none() || v[0] == 0 {
        return Some(format!("{name} max limit to request ratio per {kind} is {e}, but no request is specified or request is 0"));
    }
    if lim.is_none() || v[1] == 0 {
        return Some(format!("{name} max limit to request ratio per {kind} is {e}, but no limit is specified or limit is 0"));
    }
    let shown = v[1] as f64 / v[0] as f64;
    let (observed, allowed) = if enforced.units() <= MAX_MILLI_VALUE {
        (shown * 1000.0, enforced.milli() as f64)
    } else {
        (shown, enforced.units() as f64)
    };
    (observed > allowed).then(|| format!("{name} max limit to request ratio per {kind} is {e}, but provided ratio is {shown:.6}"))
}

/// The plugin in the chain: the namespace's LimitRanges read, then both halves.
#[derive(Debug)]
pub(super) struct LimitRanger;

impl LimitRanger {
    fn ranges(chain: &super::AdmissionChain, request: &super::Request, fetched: &super::Fetched) -> Vec<Value> {
        let prefix = chain.prefix("", "limitranges", request.namespace.as_deref());
        fetched.objects(&prefix).iter().map(|r| Value::Object((*r.object).clone())).collect()
    }
}

impl super::Plugin for LimitRanger {
    fn handles(&self, request: &super::Request) -> bool {
        applies_to(&request.group, &request.resource, &request.subresource, request.operation)
    }

    fn mutates(&self) -> bool {
        true
    }

    fn validates(&self) -> bool {
        true
    }

    fn reads(&self, chain: &super::Context, request: &super::Request, _object: &crate::rest::object::Object) -> Vec<super::Read> {
        vec![super::Read::Objects { prefix: chain.prefix("", "limitranges", request.namespace.as_deref()) }]
    }

    fn mutate(
        &self,
        chain: &super::Context,
        request: &super::Request,
        object: &mut crate::rest::object::Object,
        fetched: &super::Fetched,
        _notes: &mut super::Notes,
    ) -> Result<(), ApiError> {
        let ranges = Self::ranges(chain, request, fetched);
        if ranges.is_empty() {
            return Ok(());
        }
        let old = request.old_object.clone().map(Value::Object);
        let mut value = Value::Object(std::mem::take(object));
        fill_defaults(&ranges, &request.resource, &request.subresource, request.operation, &mut value, old.as_ref());
        if let Value::Object(map) = value {
            *object = map;
        }
        Ok(())
    }

    fn validate(
        &self,
        chain: &super::Context,
        request: &super::Request,
        object: &crate::rest::object::Object,
        fetched: &super::Fetched,
        _notes: &mut super::Notes,
    ) -> Result<Vec<super::Write>, ApiError> {
        let ranges = Self::ranges(chain, request, fetched);
        if ranges.is_empty() {
            return Ok(Vec::new());
        }
        let old = request.old_object.clone().map(Value::Object);
        let value = Value::Object(object.clone());
        check(&ranges, &request.resource, &request.subresource, request.operation, &value, old.as_ref())?;
        Ok(Vec::new())
    }
}

#[cfg(test)]
#[path = "limit_ranger_tests.rs"]
mod tests;

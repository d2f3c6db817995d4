//! Pods (core/v1), as kube-apiserver's pod strategy has them: a new pod's status starts
//! over as Pending with the pod's QoS class, and a pod with scheduling gates is marked
//! unschedulable until they are removed; spec changes count in `metadata.generation`;
//! a DELETE answers with the pod; Ready, Status and Restarts columns; the selectable
//! fields of upstream's pod conversion; the `binding` and `eviction` subresources
//! (rest/binding.rs, rest/eviction.rs), whose changes to a pod's conditions are made
//! here; `ephemeralcontainers` and `resize`, which change one part of the spec; and
//! `log`, `exec`, `attach`, `portforward` and `proxy`, which reach the pod's node or IP
//! (rest/pod_log.rs, rest/connect.rs, rest/proxy.rs).

use super::columns::{at, or_none, Column, Columns};
use super::{ConnectKind, Handler, ProxyTarget, SpecPart, Strategy};
use crate::rest::finalizers::{self, Deletion, OnDelete};
use crate::rest::object::{meta_mut, meta_str, Object};
use std::time::{Duration, UNIX_EPOCH};
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME, NAMESPACE};
use crate::validation::{pod_spec, FieldError};
use serde_json::{json, Map, Value};

/// The group and resource of pods, which binding a pod reads and writes.
pub const GROUP: &str = "";
pub const RESOURCE: &str = "pods";

pub struct Pods;

impl Strategy for Pods {
    fn name(&self) -> &'static str {
        RESOURCE
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        super::pod_spec::default_pod(obj);
    }

    fn prepare_for_create(&self, new: &mut Object, _has_status: bool) {
        reset_status(new);
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        pod_spec::validate_pod_create(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        pod_spec::validate_pod_update(new, old)
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }

    fn delete_returns_object(&self) -> bool {
        true
    }

    /// Graceful deletion, as upstream's pod strategy and `BeforeDelete` have it: a pod
    /// on a node gets its grace period (`gracePeriodSeconds`, else the spec's
    /// `terminationGracePeriodSeconds`, 30 by default) and stays until a kubelet (or a
    /// forced delete) ends it; a pod never scheduled, or finished, goes at once. A
    /// later DELETE may only shorten the period.
    fn on_delete(&self, obj: &Object, deletion: &Deletion<'_>) -> OnDelete {
        let now = deletion.now_text();
        let mut marked = obj.clone();
        deletion.propagation.apply(&mut marked, self.default_gc_policy());
        // A negative period is taken as 1 s, as upstream takes it.
        let asked = deletion.grace_period_seconds.map(|p| if p < 0 { 1 } else { p });
        let running = obj.get("metadata").and_then(|m| m.get("deletionGracePeriodSeconds")).and_then(Value::as_i64);
        if finalizers::deleting(obj) {
            let Some(current) = running.filter(|p| *p > 0) else {
                return finalizers::wait_for_finalizers(marked, &now);
            };
            let Some(shorter) = asked.filter(|p| *p < current) else {
                return OnDelete::Wait(marked);
            };
            // The deadline moves by the difference.
            let deadline = meta_str(obj, "deletionTimestamp");
            let moved = crate::time::parse_rfc3339(deadline)
                .map(|secs| UNIX_EPOCH + Duration::from_secs(secs) - Duration::from_secs((current - shorter) as u64))
                .unwrap_or(deletion.now);
            return graceful(marked, shorter, crate::time::rfc3339(moved), false);
        }
        let spec = |k: &str| obj.get("spec").and_then(|s| s.get(k));
        let mut period = asked.unwrap_or_else(|| spec("terminationGracePeriodSeconds").and_then(Value::as_i64).unwrap_or(30));
        let phase = obj.get("status").and_then(|s| s.get("phase")).and_then(Value::as_str);
        if spec("nodeName").and_then(Value::as_str).unwrap_or("").is_empty() || matches!(phase, Some("Failed" | "Succeeded")) {
            period = 0;
        }
        let deadline = crate::time::rfc3339(deletion.now + Duration::from_secs(period.max(0) as u64));
        graceful(marked, period, deadline, true)
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        match name {
            "status" => Some(Handler::Status),
            "binding" => Some(Handler::Binding),
            "eviction" => Some(Handler::Eviction),
            "ephemeralcontainers" => Some(Handler::Part(SpecPart::EphemeralContainers)),
            "resize" => Some(Handler::Part(SpecPart::Resize)),
            "log" => Some(Handler::PodLog),
            "exec" => Some(Handler::Connect(ConnectKind::Exec)),
            "attach" => Some(Handler::Connect(ConnectKind::Attach)),
            "portforward" => Some(Handler::Connect(ConnectKind::PortForward)),
            "proxy" => Some(Handler::Proxy(ProxyTarget::Pod)),
            _ => None,
        }
    }

    /// Only the part stays of what was written, as upstream's ephemeral containers and
    /// resize strategies drop every other change; the metadata stays the stored one.
    fn prepare_for_part_update(&self, part: SpecPart, new: &Object, mut old: Object) -> Object {
        let null = Value::Null;
        let new_spec = new.get("spec").unwrap_or(&null);
        let Some(spec) = old.get_mut("spec").and_then(Value::as_object_mut) else {
            return old;
        };
        match part {
            SpecPart::EphemeralContainers => copy_field(new_spec, spec, "ephemeralContainers"),
            SpecPart::Resize => {
                for list in ["containers", "initContainers"] {
                    resize_containers(new_spec, spec, list);
                }
            }
        }
        old
    }

    fn validate_part_update(&self, part: SpecPart, new: &Object, old: &Object) -> Vec<FieldError> {
        match part {
            SpecPart::EphemeralContainers => pod_spec::validate_ephemeral_containers_update(new, old),
            SpecPart::Resize => pod_spec::validate_resize(new, old),
        }
    }
}

/// `key` of `from` set in `to` (removed when `from` has none).
fn copy_field(from: &Value, to: &mut Map<String, Value>, key: &str) {
    match from.get(key) {
        Some(v) => to.insert(key.to_owned(), v.clone()),
        None => to.remove(key),
    };
}

/// The stored containers of `list` with the written resources and resize policies;
/// containers added, removed, renamed or moved make the written list stay whole, for
/// the checks to refuse.
fn resize_containers(new_spec: &Value, spec: &mut Map<String, Value>, list: &str) {
    let written = new_spec.get(list).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let stored = spec.get(list).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let name = |c: &Value| c.get("name").cloned();
    let same = written.len() == stored.len() && written.iter().zip(stored).all(|(w, s)| name(w) == name(s));
    if !same {
        copy_field(new_spec, spec, list);
        return;
    }
    let Some(Value::Array(stored)) = spec.get_mut(list) else { return };
    for (container, written) in stored.iter_mut().zip(written) {
        if let Some(container) = container.as_object_mut() {
            copy_field(written, container, "resources");
            copy_field(written, container, "resizePolicy");
        }
    }
}

/// `pod` marked as being deleted with a grace period of `period` seconds, ending at
/// `deadline` (`first`: the first mark, which counts a generation); with no period left
/// it goes at once unless finalizers hold it.
fn graceful(mut pod: Object, period: i64, deadline: String, first: bool) -> OnDelete {
    let meta = meta_mut(&mut pod);
    meta.insert("deletionTimestamp".into(), json!(deadline));
    meta.insert("deletionGracePeriodSeconds".into(), json!(period));
    if first {
        if let Some(generation) = meta.get("generation").and_then(Value::as_i64).filter(|g| *g > 0) {
            meta.insert("generation".into(), json!(generation + 1));
        }
    }
    if period == 0 && finalizers::of(&pod).is_empty() {
        OnDelete::Now(pod)
    } else {
        OnDelete::Wait(pod)
    }
}

/// pkg/apis/core/v1/conversion.go; pkg/registry/core/pod/strategy.go.
static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[
        NAME,
        NAMESPACE,
        ("spec.nodeName", "spec.nodeName"),
        ("spec.restartPolicy", "spec.restartPolicy"),
        ("spec.schedulerName", "spec.schedulerName"),
        ("spec.serviceAccountName", "spec.serviceAccountName"),
        ("spec.hostNetwork", "spec.hostNetwork"),
        ("status.phase", "status.phase"),
        ("status.podIP", "status.podIP"),
        ("status.podIPs", "status.podIPs"),
        ("status.nominatedNodeName", "status.nominatedNodeName"),
        // For old v1 clients.
        ("spec.host", "spec.nodeName"),
    ],
};

const COLUMNS: &[Column] = &[
    Column { name: "Ready", kind: "string", description: "The aggregate readiness state of this pod for accepting traffic.", format: "", priority: 0, cell: ready_cell },
    Column { name: "Status", kind: "string", description: "The aggregate status of the containers in this pod.", format: "", priority: 0, cell: status_cell },
    Column { name: "Restarts", kind: "string", description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.", format: "", priority: 0, cell: restarts_cell },
    Column { name: "IP", kind: "string", description: "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.", format: "", priority: 1, cell: |o| or_none(at(o, &["status", "podIPs"]).and_then(|ips| ips.get(0)).and_then(|ip| ip.get("ip")).and_then(Value::as_str).unwrap_or("").to_owned()) },
    Column { name: "Node", kind: "string", description: "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename", format: "", priority: 1, cell: |o| or_none(at(o, &["spec", "nodeName"]).and_then(Value::as_str).unwrap_or("").to_owned()) },
    Column { name: "Nominated Node", kind: "string", description: "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.", format: "", priority: 1, cell: |o| or_none(at(o, &["status", "nominatedNodeName"]).and_then(Value::as_str).unwrap_or("").to_owned()) },
    Column { name: "Readiness Gates", kind: "string", description: "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates", format: "", priority: 1, cell: readiness_gates },
];

fn ready_cell(pod: &Object) -> Value {
    let p = printed(pod);
    json!(format!("{}/{}", p.ready, p.total))
}

fn status_cell(pod: &Object) -> Value {
    json!(printed(pod).reason)
}

/// RESTARTS: the count, with how long ago the last container to restart ended
/// (`3 (6m43s ago)`) when one did.
fn restarts_cell(pod: &Object) -> Value {
    let p = printed(pod);
    match p.last_restart {
        Some(at) if p.restarts != 0 => super::columns::since_in(&at, &format!("{} ({{}} ago)", p.restarts)),
        _ => json!(p.restarts.to_string()),
    }
}

/// What upstream's `printPod` computes of a pod for its READY, STATUS and RESTARTS.
struct Printed {
    ready: usize,
    total: usize,
    reason: String,
    restarts: i64,
    /// The latest `finishedAt` of a last termination counted, as written.
    last_restart: Option<String>,
}

fn printed(pod: &Object) -> Printed {
    let list = |path: &[&str]| at(pod, path).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let text = |v: &Value, path: &[&str]| -> String {
        path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_str).unwrap_or("").to_owned()
    };
    let int = |v: &Value, path: &[&str]| path.iter().try_fold(v, |v, k| v.get(k)).and_then(Value::as_i64).unwrap_or(0);
    let present = |v: &Value, path: &[&str]| path.iter().try_fold(v, |v, k| v.get(k)).is_some_and(|v| !v.is_null());
    let conditions = list(&["status", "conditions"]);
    let condition_true = |t: &str| {
        conditions.iter().any(|c| text(c, &["type"]) == t && text(c, &["status"]) == "True")
    };
    let phase = at(pod, &["status", "phase"]).and_then(Value::as_str).unwrap_or("");
    let status_reason = at(pod, &["status", "reason"]).and_then(Value::as_str).unwrap_or("");
    let mut reason = if status_reason.is_empty() { phase.to_owned() } else { status_reason.to_owned() };
    if conditions.iter().any(|c| text(c, &["type"]) == "PodScheduled" && text(c, &["reason"]) == "SchedulingGated") {
        reason = "SchedulingGated".to_owned();
    }
    let init_specs = list(&["spec", "initContainers"]);
    let restartable = |name: &str| {
        init_specs.iter().any(|c| text(c, &["name"]) == name && text(c, &["restartPolicy"]) == "Always")
    };
    let mut total = list(&["spec", "containers"]).len();
    total += init_specs.iter().filter(|c| text(c, &["restartPolicy"]) == "Always").count();
    let mut ready = 0;
    let mut restarts = 0;
    let mut sidecar_restarts = 0;
    // Times as (seconds, nanoseconds, text); a later one replaces an earlier.
    type Time = Option<((i64, u32), String)>;
    let later = |latest: &mut Time, c: &Value| {
        let finished = text(c, &["lastState", "terminated", "finishedAt"]);
        if !present(c, &["lastState", "terminated"]) {
            return;
        }
        let at = crate::time::parse_go_rfc3339(&finished).unwrap_or((-62_135_596_800, 0));
        if latest.as_ref().is_none_or(|(l, _)| *l < at) {
            *latest = Some((at, finished));
        }
    };
    let mut last: Time = None;
    let mut sidecar_last: Time = None;
    let mut initializing = false;
    for (i, c) in list(&["status", "initContainerStatuses"]).iter().enumerate() {
        restarts += int(c, &["restartCount"]);
        later(&mut last, c);
        let name = text(c, &["name"]);
        if restartable(&name) {
            sidecar_restarts += int(c, &["restartCount"]);
            later(&mut sidecar_last, c);
        }
        let terminated = present(c, &["state", "terminated"]);
        let waiting = text(c, &["state", "waiting", "reason"]);
        if terminated && int(c, &["state", "terminated", "exitCode"]) == 0 {
            continue;
        }
        if restartable(&name) && c.get("started") == Some(&Value::Bool(true)) {
            if c.get("ready") == Some(&Value::Bool(true)) {
                ready += 1;
            }
            continue;
        }
        reason = if terminated {
            let why = text(c, &["state", "terminated", "reason"]);
            match (why.as_str(), int(c, &["state", "terminated", "signal"])) {
                ("", 0) => format!("Init:ExitCode:{}", int(c, &["state", "terminated", "exitCode"])),
                ("", signal) => format!("Init:Signal:{signal}"),
                (why, _) => format!("Init:{why}"),
            }
        } else if !waiting.is_empty() && waiting != "PodInitializing" {
            format!("Init:{waiting}")
        } else {
            format!("Init:{i}/{}", init_specs.len())
        };
        initializing = true;
        break;
    }
    if !initializing || condition_true("Initialized") {
        restarts = sidecar_restarts;
        last = sidecar_last;
        let mut running = false;
        for c in list(&["status", "containerStatuses"]).iter().rev() {
            restarts += int(c, &["restartCount"]);
            later(&mut last, c);
            let waiting = text(c, &["state", "waiting", "reason"]);
            let terminated = present(c, &["state", "terminated"]);
            let why = text(c, &["state", "terminated", "reason"]);
            if !waiting.is_empty() {
                reason = waiting;
            } else if terminated && !why.is_empty() {
                reason = why;
            } else if terminated {
                reason = match int(c, &["state", "terminated", "signal"]) {
                    0 => format!("ExitCode:{}", int(c, &["state", "terminated", "exitCode"])),
                    signal => format!("Signal:{signal}"),
                };
            } else if c.get("ready") == Some(&Value::Bool(true)) && present(c, &["state", "running"]) {
                running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && running {
            reason = if condition_true("Ready") { "Running" } else { "NotReady" }.to_owned();
        }
    }
    if at(pod, &["metadata", "deletionTimestamp"]).is_some_and(|t| !t.is_null()) {
        if status_reason == "NodeLost" {
            reason = "Unknown".to_owned();
        } else if !matches!(phase, "Succeeded" | "Failed") {
            reason = "Terminating".to_owned();
        }
    }
    // Go's zero time counts as none.
    let last_restart = last.filter(|(at, _)| *at != (-62_135_596_800, 0)).map(|(_, text)| text);
    Printed { ready, total, reason, restarts, last_restart }
}

/// READINESS GATES: how many of the pod's readiness gates have a True condition, of
/// how many; `<none>` without gates.
fn readiness_gates(pod: &Object) -> Value {
    let gates = at(pod, &["spec", "readinessGates"]).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    if gates.is_empty() {
        return json!("<none>");
    }
    let conditions = at(pod, &["status", "conditions"]).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let met = gates
        .iter()
        .filter(|g| {
            // The first condition of the gate's type decides, as upstream reads it.
            conditions.iter().find(|c| c.get("type") == g.get("conditionType")).is_some_and(|c| c.get("status").and_then(Value::as_str) == Some("True"))
        })
        .count();
    json!(format!("{met}/{}", gates.len()))
}


/// Reset a new pod's status as upstream's PrepareForCreate does.
fn reset_status(pod: &mut Object) {
    let spec = pod.get("spec").and_then(Value::as_object);
    let mut status = Map::new();
    status.insert("phase".into(), json!("Pending"));
    status.insert(
        "qosClass".into(),
        json!(spec.map_or("BestEffort", qos_class)),
    );
    let gated = spec
        .and_then(|s| s.get("schedulingGates"))
        .and_then(Value::as_array)
        .is_some_and(|gates| !gates.is_empty());
    if gated {
        status.insert(
            "conditions".into(),
            json!([{
                "type": "PodScheduled",
                "status": "False",
                "lastProbeTime": null,
                "lastTransitionTime": null,
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
            }]),
        );
    }
    pod.insert("status".into(), Value::Object(status));
}

/// Put `condition` (a pod condition with its type and status) into `status.conditions`
/// as upstream's UpdatePodCondition does: it replaces the condition of its type whole,
/// keeping the old transition time when the status did not change, else it is
/// appended; its transition time is `now` otherwise.
pub fn update_condition(status: &mut Map<String, Value>, mut condition: Value, now: &str) {
    let conditions = status.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let conditions = conditions.as_array_mut().expect("an array");
    condition["lastTransitionTime"] = json!(now);
    let kind = condition.get("type").cloned();
    match conditions
        .iter_mut()
        .find(|c| c.get("type") == kind.as_ref())
    {
        Some(old) => {
            if old.get("status") == condition.get("status") {
                condition["lastTransitionTime"] = old
                    .get("lastTransitionTime")
                    .cloned()
                    .unwrap_or(Value::Null);
            }
            *old = condition;
        }
        None => conditions.push(condition),
    }
}

/// The resources QoS is computed on.
const QOS_RESOURCES: [&str; 2] = ["cpu", "memory"];

/// The QoS class of a pod spec, as upstream computes it on the defaulted pod (where a
/// container's requests default to its limits): BestEffort without any request or
/// limit of CPU or memory; Guaranteed when every container limits both and the requests
/// add up to the limits; Burstable otherwise.
pub(crate) fn qos_class(spec: &Map<String, Value>) -> &'static str {
    // Per resource: the sums of the requests and of the limits, in nano-units.
    let mut requests = [None::<i128>; 2];
    let mut limits = [None::<i128>; 2];
    let mut every_container_limits_both = true;
    let containers = ["initContainers", "containers"]
        .iter()
        .filter_map(|field| spec.get(*field).and_then(Value::as_array))
        .flatten();
    for container in containers {
        let resources = container.get("resources");
        let quantities = |kind: &str| {
            resources
                .and_then(|r| r.get(kind))
                .and_then(Value::as_object)
        };
        let (own_requests, own_limits) = (quantities("requests"), quantities("limits"));
        let mut limited = [false; 2];
        for (i, name) in QOS_RESOURCES.iter().enumerate() {
            let limit = own_limits
                .and_then(|l| l.get(*name))
                .and_then(positive_nanos);
            // A request left out defaults to the limit.
            let request = match own_requests.and_then(|r| r.get(*name)) {
                Some(value) => positive_nanos(value),
                None => limit,
            };
            if let Some(request) = request {
                requests[i] = Some(requests[i].unwrap_or(0).saturating_add(request));
            }
            if let Some(limit) = limit {
                limits[i] = Some(limits[i].unwrap_or(0).saturating_add(limit));
                limited[i] = true;
            }
        }
        every_container_limits_both &= limited.iter().all(|l| *l);
    }
    if requests.iter().chain(&limits).all(Option::is_none) {
        return "BestEffort";
    }
    let count = |sums: &[Option<i128>; 2]| sums.iter().flatten().count();
    let guaranteed = every_container_limits_both
        && requests
            .iter()
            .zip(&limits)
            .all(|(request, limit)| request.is_none() || request == limit)
        && count(&requests) == count(&limits);
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// A quantity greater than zero, in nano-units (rounded up); `None` for zero, negative
/// or unreadable ones, which QoS ignores.
fn positive_nanos(value: &Value) -> Option<i128> {
    let nanos = match value {
        Value::String(s) => quantity_nanos(s.trim())?,
        Value::Number(n) => quantity_nanos(&n.to_string())?,
        _ => return None,
    };
    (nanos > 0).then_some(nanos)
}

/// A Kubernetes quantity (`100m`, `1.5Gi`, `2e3`, `128974848`) in nano-units, rounded
/// up; `None` if it does not read as one.
pub(crate) fn quantity_nanos(text: &str) -> Option<i128> {
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let number_end = unsigned
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(unsigned.len());
    let (number, suffix) = unsigned.split_at(number_end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut mantissa: i128 = 0;
    for digit in whole.bytes().chain(fraction.bytes()) {
        mantissa = mantissa
            .saturating_mul(10)
            .saturating_add(i128::from(digit - b'0'));
    }
    // value = mantissa × 10^(exponent) × 2^(binary); nano-units add 9 to the exponent.
    let (exponent, binary) = crate::cel::lib::suffix_scale(suffix)?;
    let exponent = i32::try_from(exponent).ok()?;
    let exponent = exponent + 9 - i32::try_from(fraction.len()).ok()?;
    let scaled = mantissa.saturating_mul(1i128 << binary);
    let nanos = if exponent >= 0 {
        (0..exponent).fold(scaled, |v, _| v.saturating_mul(10))
    } else {
        let divisor = (0..-exponent).try_fold(1i128, |d, _| d.checked_mul(10));
        match divisor {
            Some(d) => (scaled + d - 1) / d,
            None => i128::from(scaled > 0),
        }
    };
    Some(if negative { -nanos } else { nanos })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(containers: Value) -> Map<String, Value> {
        json!({"containers": containers})
            .as_object()
            .unwrap()
            .clone()
    }

    fn with(requests: Value, limits: Value) -> Value {
        json!({"name": "c", "resources": {"requests": requests, "limits": limits}})
    }

    #[test]
    fn quantities_in_nano_units() {
        assert_eq!(quantity_nanos("100m"), Some(100_000_000));
        assert_eq!(quantity_nanos("0.1"), Some(100_000_000));
        assert_eq!(quantity_nanos("1Gi"), Some(1_073_741_824_000_000_000));
        assert_eq!(quantity_nanos("1073741824"), quantity_nanos("1Gi"));
        assert_eq!(quantity_nanos("1.5Ki"), Some(1_536_000_000_000));
        assert_eq!(quantity_nanos("2e3"), Some(2_000_000_000_000));
        assert_eq!(quantity_nanos("1n"), Some(1));
        assert_eq!(quantity_nanos("0.1n"), Some(1), "rounded up");
        assert_eq!(quantity_nanos("-1"), Some(-1_000_000_000));
        assert_eq!(quantity_nanos("1X"), None);
        assert_eq!(quantity_nanos(""), None);
    }

    #[test]
    fn qos_classes_as_upstream_computes_them() {
        assert_eq!(qos_class(&spec(json!([{"name": "c"}]))), "BestEffort");
        assert_eq!(
            qos_class(&spec(json!([with(json!({"cpu": "0"}), json!({}))]))),
            "BestEffort",
            "zero quantities do not count"
        );
        let both = json!({"cpu": "500m", "memory": "128Mi"});
        assert_eq!(
            qos_class(&spec(json!([with(both.clone(), both.clone())]))),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&spec(json!([with(json!({}), both.clone())]))),
            "Guaranteed",
            "requests default to the limits"
        );
        assert_eq!(
            qos_class(&spec(json!([with(
                json!({"cpu": "0.5", "memory": "134217728"}),
                both.clone()
            )]))),
            "Guaranteed",
            "equal quantities written differently"
        );
        assert_eq!(
            qos_class(&spec(json!([with(json!({"cpu": "250m"}), both.clone())]))),
            "Burstable"
        );
        assert_eq!(
            qos_class(&spec(json!([with(json!({}), json!({"cpu": "1"}))]))),
            "Burstable",
            "memory not limited"
        );
        assert_eq!(
            qos_class(&spec(
                json!([with(both.clone(), both.clone()), {"name": "d"}])
            )),
            "Burstable",
            "one container without limits"
        );
        assert_eq!(
            qos_class(&spec(json!([with(
                json!({"cpu": "1", "ephemeral-storage": "1Gi"}),
                json!({})
            )]))),
            "Burstable"
        );
    }

    #[test]
    fn pod_status_as_upstreams_printer_words_it() {
        let status = |pod: Value| status_cell(pod.as_object().unwrap()).as_str().unwrap().to_owned();
        // Upstream's printer shows the phase as it is: none without one.
        assert_eq!(status(json!({})), "");
        assert_eq!(status(json!({"status": {"phase": "Running"}})), "Running");
        assert_eq!(status(json!({"status": {"phase": "Failed", "reason": "Evicted"}})), "Evicted");
        let deleting = |phase: &str| {
            json!({"metadata": {"deletionTimestamp": "2026-11-22T00:00:00Z"},
                   "status": {"phase": phase}})
        };
        assert_eq!(status(deleting("Running")), "Terminating");
        assert_eq!(status(deleting("Succeeded")), "Succeeded");
    }

    #[test]
    fn a_new_pod_is_pending_and_gated_pods_are_marked() {
        let mut pod: Object = json!({
            "spec": {"containers": [{"name": "c"}], "schedulingGates": [{"name": "g"}]},
            "status": {"phase": "Running", "podIP": "10.0.0.1"},
        })
        .as_object()
        .unwrap()
        .clone();
        reset_status(&mut pod);
        assert_eq!(
            pod["status"],
            json!({"phase": "Pending", "qosClass": "BestEffort", "conditions": [{
                "type": "PodScheduled", "status": "False", "lastProbeTime": null,
                "lastTransitionTime": null, "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates"}]})
        );
    }
}

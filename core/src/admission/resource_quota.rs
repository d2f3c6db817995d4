//! The ResourceQuota admission plugin's decisions: what a write adds to a namespace's
//! usage (object counts, a pod's compute resources, a service's node ports and load
//! balancers, a claim's storage), which quotas it falls under (their resources and
//! scopes), whether each quota has room, and what the quotas' `status.used` becomes.
//! Pure functions over the quotas of the namespace (read by the caller) and the object.

use super::pod_resources::{add_into, container_list, containers, pod_total, print_list, read_list, write_list, ResourceList};
use super::Operation;
use crate::status::ApiError;
use crate::validation::quantity::Quantity;
use serde_json::Value;
use std::collections::BTreeSet;

/// The resources a quota on pods can track by their exact name.
const POD_RESOURCES: &[&str] = &[
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
];

/// The resources every container must request or be limited to once a quota tracks
/// them (a rule kept for compatibility: it predates QoS classes).
const MUST_SPECIFY: &[&str] = &["requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "cpu", "memory"];

const STORAGE_CLASS_SUFFIX: &str = ".storageclass.storage.k8s.io/";

/// What the evaluator of a group and resource knows about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Evaluator {
    Pods,
    Services,
    Claims,
    /// Any other resource: one object, under `count/<resource>[.<group>]` and, for the
    /// core resources quota has always counted, under the resource's own name too.
    Objects,
}

fn evaluator(group: &str, resource: &str) -> Evaluator {
    match (group, resource) {
        ("", "pods") => Evaluator::Pods,
        ("", "services") => Evaluator::Services,
        ("", "persistentvolumeclaims") => Evaluator::Claims,
        _ => Evaluator::Objects,
    }
}

/// The name an object count goes under (`count/deployments.apps`, `count/configmaps`).
pub fn object_count_name(group: &str, resource: &str) -> String {
    if group.is_empty() {
        format!("count/{resource}")
    } else {
        format!("count/{resource}.{group}")
    }
}

/// The older name some core resources are also counted under.
fn legacy_count_name(group: &str, resource: &str) -> Option<&'static str> {
    if !group.is_empty() {
        return None;
    }
    ["configmaps", "secrets", "replicationcontrollers", "resourcequotas"].into_iter().find(|r| *r == resource)
}

/// Whether quota is asked about this request at all: writes of the main resource
/// (pods also when resized), never events.
pub fn applies_to(group: &str, resource: &str, subresource: &str, operation: Operation) -> bool {
    if group.is_empty() && resource == "events" {
        return false;
    }
    match evaluator(group, resource) {
        Evaluator::Pods => match subresource {
            "" => operation == Operation::Create,
            "resize" => operation == Operation::Update,
            _ => false,
        },
        Evaluator::Services | Evaluator::Claims => {
            subresource.is_empty() && matches!(operation, Operation::Create | Operation::Update)
        }
        Evaluator::Objects => subresource.is_empty() && operation == Operation::Create,
    }
}

/// What the object counts for against quota, `now` (seconds since the epoch) telling
/// whether a pod being deleted is past its grace period.
pub fn usage(group: &str, resource: &str, object: &Value, now: Option<u64>) -> ResourceList {
    let one = Quantity::from_units(1);
    let mut usage = ResourceList::new();
    usage.insert(object_count_name(group, resource), one);
    match evaluator(group, resource) {
        Evaluator::Pods => {
            // A pod that has finished holds no compute resources and is not one of `pods`.
            if counts_compute(object, now) {
                let requests = pod_total(object, "requests", true);
                let limits = pod_total(object, "limits", true);
                add_into(&mut usage, &compute_usage(&requests, &limits));
            }
        }
        Evaluator::Services => {
            usage.insert("services".into(), one);
            let ports = match object.pointer("/spec/ports") {
                Some(Value::Array(ports)) => ports.as_slice(),
                _ => &[],
            };
            let (mut node_ports, mut balancers) = (0, 0);
            match object.pointer("/spec/type").and_then(Value::as_str) {
                Some("NodePort") => node_ports = ports.len(),
                Some("LoadBalancer") => {
                    balancers = 1;
                    // Without node ports allocated for it, only those asked for count.
                    node_ports = if object.pointer("/spec/allocateLoadBalancerNodePorts") == Some(&Value::Bool(false)) {
                        ports.iter().filter(|p| p.get("nodePort").and_then(Value::as_i64).is_some_and(|n| n != 0)).count()
                    } else {
                        ports.len()
                    };
                }
                _ => {}
            }
            usage.insert("services.nodeports".into(), Quantity::from_units(node_ports as i64));
            usage.insert("services.loadbalancers".into(), Quantity::from_units(balancers));
        }
        Evaluator::Claims => {
            usage.insert("persistentvolumeclaims".into(), one);
            let class = storage_class(object);
            if !class.is_empty() {
                usage.insert(format!("{class}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"), one);
            }
            if let Some(storage) = read_list(object.pointer("/spec/resources/requests")).get("storage") {
                let charged = storage.rounded_up();
                usage.insert("requests.storage".into(), charged);
                if !class.is_empty() {
                    usage.insert(format!("{class}{STORAGE_CLASS_SUFFIX}requests.storage"), charged);
                }
            }
        }
        Evaluator::Objects => {
            if let Some(legacy) = legacy_count_name(group, resource) {
                usage.insert(legacy.into(), one);
            }
        }
    }
    usage
}

/// A claim's class: the beta annotation when set, else `spec.storageClassName`.
fn storage_class(claim: &Value) -> &str {
    claim
        .pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
        .and_then(Value::as_str)
        .or_else(|| claim.pointer("/spec/storageClassName").and_then(Value::as_str))
        .unwrap_or("")
}

/// Whether a pod still counts its compute resources: not once it has succeeded or
/// failed, nor once its deletion's grace period is over (a pod stuck terminating on a
/// lost node must not keep its owner from starting new ones).
fn counts_compute(pod: &Value, now: Option<u64>) -> bool {
    if matches!(pod.pointer("/status/phase").and_then(Value::as_str), Some("Succeeded" | "Failed")) {
        return false;
    }
    let deleted = pod.pointer("/metadata/deletionTimestamp").and_then(Value::as_str).and_then(crate::time::parse_rfc3339);
    let grace = pod.pointer("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64);
    match (now, deleted, grace) {
        (Some(now), Some(deleted), Some(grace)) => i128::from(now) <= i128::from(deleted) + i128::from(grace),
        _ => true,
    }
}

/// The quota names requests and limits are counted under.
fn compute_usage(requests: &ResourceList, limits: &ResourceList) -> ResourceList {
    let mut usage = ResourceList::new();
    usage.insert("pods".into(), Quantity::from_units(1));
    for name in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(q) = requests.get(name) {
            usage.insert(name.into(), *q);
            usage.insert(format!("requests.{name}"), *q);
        }
        if let Some(q) = limits.get(name) {
            usage.insert(format!("limits.{name}"), *q);
        }
    }
    for (name, q) in requests {
        if name.starts_with("hugepages-") {
            usage.insert(name.clone(), *q);
            usage.insert(format!("requests.{name}"), *q);
        }
        if is_extended_resource(name) {
            usage.insert(format!("requests.{name}"), *q);
        }
    }
    usage
}

/// A resource outside `kubernetes.io` with a domain (`example.com/gpu`): only its
/// requests can be quota'd, as `requests.<name>`.
fn is_extended_resource(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.")
}

/// The quota's resources this evaluator tracks.
fn matching_resources(group: &str, resource: &str, names: &BTreeSet<String>) -> BTreeSet<String> {
    let count = object_count_name(group, resource);
    names
        .iter()
        .filter(|n| {
            **n == count
                || match evaluator(group, resource) {
                    Evaluator::Pods => {
                        POD_RESOURCES.contains(&n.as_str())
                            || n.starts_with("hugepages-")
                            || n.starts_with("requests.hugepages-")
                            || n.strip_prefix("requests.").is_some_and(is_extended_resource)
                    }
                    Evaluator::Services => {
                        ["services", "services.nodeports", "services.loadbalancers"].contains(&n.as_str())
                    }
                    Evaluator::Claims => {
                        ["persistentvolumeclaims", "requests.storage"].contains(&n.as_str())
                            || n.contains(STORAGE_CLASS_SUFFIX)
                                && (n.ends_with("/persistentvolumeclaims") || n.ends_with("/requests.storage"))
                    }
                    Evaluator::Objects => legacy_count_name(group, resource) == Some(n.as_str()),
                }
        })
        .cloned()
        .collect()
}

/// A quota's hard limits: the controller's copy in `status.hard`, or `spec.hard` until
/// the controller has written one.
pub fn hard(quota: &Value) -> ResourceList {
    let status = read_list(quota.pointer("/status/hard"));
    if status.is_empty() {
        read_list(quota.pointer("/spec/hard"))
    } else {
        status
    }
}

pub fn used(quota: &Value) -> ResourceList {
    read_list(quota.pointer("/status/used"))
}

/// One scope requirement: `spec.scopes` entries are `Exists` requirements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeRequirement {
    pub scope: String,
    pub operator: String,
    pub values: Vec<String>,
}

/// The quota's scopes and scope selector, as one list of requirements.
pub fn scope_requirements(quota: &Value) -> Vec<ScopeRequirement> {
    let mut out = Vec::new();
    if let Some(Value::Array(scopes)) = quota.pointer("/spec/scopes") {
        for s in scopes.iter().filter_map(Value::as_str) {
            out.push(ScopeRequirement { scope: s.into(), operator: "Exists".into(), values: Vec::new() });
        }
    }
    if let Some(Value::Array(expressions)) = quota.pointer("/spec/scopeSelector/matchExpressions") {
        for e in expressions {
            let text = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let values = match e.get("values") {
                Some(Value::Array(v)) => v.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
                _ => Vec::new(),
            };
            out.push(ScopeRequirement { scope: text("scopeName"), operator: text("operator"), values });
        }
    }
    out
}

/// Whether one scope requirement holds for the object. Only pods have scopes; every
/// other kind falls under a scoped quota never.
pub fn scope_matches(requirement: &ScopeRequirement, group: &str, resource: &str, object: &Value) -> bool {
    if evaluator(group, resource) != Evaluator::Pods {
        return false;
    }
    let deadline = object.pointer("/spec/activeDeadlineSeconds").and_then(Value::as_i64);
    match requirement.scope.as_str() {
        "Terminating" => deadline.is_some_and(|d| d >= 0),
        "NotTerminating" => deadline.is_none_or(|d| d < 0),
        "BestEffort" => is_best_effort(object),
        "NotBestEffort" => !is_best_effort(object),
        "PriorityClass" => {
            let class = object.pointer("/spec/priorityClassName").and_then(Value::as_str).filter(|c| !c.is_empty());
            let values = &requirement.values;
            match requirement.operator.as_str() {
                "In" => class.is_some_and(|c| values.iter().any(|v| v == c)),
                "NotIn" => !class.is_some_and(|c| values.iter().any(|v| v == c)),
                "Exists" => class.is_some(),
                "DoesNotExist" => class.is_none(),
                _ => false,
            }
        }
        "CrossNamespacePodAffinity" => uses_cross_namespace_affinity(object),
        _ => false,
    }
}

/// Whether a quota's scopes all hold for the object (a quota without scopes takes all).
pub fn scopes_match(quota: &Value, group: &str, resource: &str, object: &Value) -> bool {
    scope_requirements(quota).iter().all(|r| scope_matches(r, group, resource, object))
}

/// A pod is BestEffort when no container requests or limits any CPU or memory (the
/// class already recorded in its status wins).
pub fn is_best_effort(pod: &Value) -> bool {
    if let Some(class) = pod.pointer("/status/qosClass").and_then(Value::as_str).filter(|c| !c.is_empty()) {
        return class == "BestEffort";
    }
    !containers(pod, "containers").iter().chain(containers(pod, "initContainers")).any(|c| {
        ["requests", "limits"].iter().any(|which| {
            let list = container_list(c, which);
            ["cpu", "memory"].iter().any(|r| list.get(*r).is_some_and(|q| *q > Quantity::ZERO))
        })
    })
}

/// Whether a pod's affinity or anti-affinity names other namespaces or selects them.
fn uses_cross_namespace_affinity(pod: &Value) -> bool {
    let uses = |term: &Value| {
        term.get("namespaces").and_then(Value::as_array).is_some_and(|n| !n.is_empty())
            || term.get("namespaceSelector").is_some_and(|s| !s.is_null())
    };
    ["podAffinity", "podAntiAffinity"].iter().any(|kind| {
        let Some(affinity) = pod.pointer(&format!("/spec/affinity/{kind}")) else {
            return false;
        };
        let required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution").and_then(Value::as_array);
        let preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution").and_then(Value::as_array);
        required.into_iter().flatten().any(uses)
            || preferred.into_iter().flatten().filter_map(|w| w.get("podAffinityTerm")).any(uses)
    })
}

/// Whether a quota governs the object: it limits some resource the object counts
/// for, and all its scopes hold.
pub fn quota_matches(quota: &Value, group: &str, resource: &str, object: &Value) -> bool {
    let names = hard(quota).into_keys().collect();
    !matching_resources(group, resource, &names).is_empty() && scopes_match(quota, group, resource, object)
}

/// Containers that must name what a quota tracks: `must specify <resource> for: <containers>; …`.
fn constraints(tracked: &BTreeSet<String>, pod: &Value) -> Result<(), String> {
    let required: BTreeSet<&str> = tracked.iter().map(String::as_str).filter(|n| MUST_SPECIFY.contains(n)).collect();
    if required.is_empty() {
        return Ok(());
    }
    let mut missing: std::collections::BTreeMap<&str, BTreeSet<String>> = Default::default();
    for c in containers(pod, "containers").iter().chain(containers(pod, "initContainers")) {
        let has = compute_usage(&container_list(c, "requests"), &container_list(c, "limits"));
        for name in required.iter().filter(|n| !has.contains_key(**n)) {
            let container = c.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
            missing.entry(name).or_default().insert(container);
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = missing
        .iter()
        .map(|(r, names)| format!("{r} for: {}", names.iter().cloned().collect::<Vec<_>>().join(",")))
        .collect();
    Err(format!("must specify {}", parts.join("; ")))
}

/// A write to be checked against the namespace's quotas.
#[derive(Clone, Copy, Debug)]
pub struct QuotaRequest<'a> {
    pub group: &'a str,
    pub resource: &'a str,
    pub operation: Operation,
    pub object: &'a Value,
    /// The stored object, for an update.
    pub old_object: Option<&'a Value>,
    /// The time, in seconds since the epoch (without it, a pod past its deletion grace
    /// period still counts).
    pub now: Option<u64>,
}

/// A quota that must change because a write was admitted: its index among the quotas
/// given, and its new `status.used`.
#[derive(Clone, Debug, PartialEq)]
pub struct QuotaCharge {
    pub index: usize,
    pub used: ResourceList,
}

/// What the write adds: its usage, less what the stored object already used when an
/// update (never below zero), without the zeros.
pub fn delta(request: &QuotaRequest<'_>) -> ResourceList {
    let mut delta = usage(request.group, request.resource, request.object, request.now);
    if request.operation == Operation::Update {
        // An update with no stored version behind it (an update that creates) pays in full.
        if let Some(old) = request.old_object.filter(|o| {
            o.pointer("/metadata/resourceVersion").and_then(Value::as_str).is_some_and(|rv| !rv.is_empty())
        }) {
            let before = usage(request.group, request.resource, old, request.now);
            for (name, q) in delta.iter_mut() {
                if let Some(b) = before.get(name) {
                    *q = q.checked_sub(b).filter(|d| !d.is_negative()).unwrap_or(Quantity::ZERO);
                }
            }
        }
    }
    delta.retain(|_, q| !q.is_zero());
    delta
}

/// Checks a write against every quota of its namespace, in order, as upstream's
/// `checkRequest` does: a quota that governs the object and whose usage is not yet
/// known refuses it, as does a pod lacking what a quota requires it to name; then the
/// new usage of each governing quota must stay within its hard limits. The refusal is
/// the message (wrap it with [`forbidden`]); an admission gives the quotas to update.
pub fn check(quotas: &[Value], request: &QuotaRequest<'_>) -> Result<Vec<QuotaCharge>, String> {
    let (group, resource) = (request.group, request.resource);
    let mut governing = Vec::new();
    for (index, quota) in quotas.iter().enumerate() {
        if !quota_matches(quota, group, resource, request.object) {
            continue;
        }
        let hard = hard(quota);
        let tracked = matching_resources(group, resource, &hard.keys().cloned().collect());
        let name = quota.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        if evaluator(group, resource) == Evaluator::Pods {
            constraints(&tracked, request.object).map_err(|e| format!("failed quota: {name}: {e}"))?;
        }
        let used = used(quota);
        if tracked.iter().any(|r| !used.contains_key(r)) {
            let names: Vec<&str> = tracked.iter().map(String::as_str).collect();
            return Err(format!("status unknown for quota: {name}, resources: {}", names.join(",")));
        }
        governing.push((index, name, hard, used));
    }
    if governing.is_empty() {
        return Ok(Vec::new());
    }
    let delta = delta(request);
    if delta.is_empty() {
        return Ok(Vec::new());
    }
    let mut charges = Vec::new();
    for (index, name, hard, used) in governing {
        let requested: ResourceList = delta.iter().filter(|(k, _)| hard.contains_key(*k)).map(|(k, q)| (k.clone(), *q)).collect();
        if requested.is_empty() {
            // Nothing this quota limits changes, so there is nothing to write.
            continue;
        }
        let mut new_used = used.clone();
        add_into(&mut new_used, &requested);
        let exceeded: BTreeSet<&String> = requested
            .keys()
            .filter(|k| {
                // A sum too large to hold is over any limit.
                let sum = used.get(*k).map_or(Some(requested[*k]), |u| u.checked_add(&requested[*k]));
                sum.is_none_or(|s| s > hard[*k])
            })
            .collect();
        if !exceeded.is_empty() {
            let only = |list: &ResourceList| -> ResourceList {
                list.iter().filter(|(k, _)| exceeded.contains(k)).map(|(k, q)| (k.clone(), *q)).collect()
            };
            return Err(format!(
                "exceeded quota: {name}, requested: {}, used: {}, limited: {}",
                print_list(&only(&requested)),
                print_list(&only(&used)),
                print_list(&only(&hard))
            ));
        }
        charges.push(QuotaCharge { index, used: new_used });
    }
    Ok(charges)
}

/// The 403 a refusal is answered with: `<resource> "<name>" is forbidden: <message>`.
pub fn forbidden(group: &str, resource: &str, object: &Value, message: &str) -> ApiError {
    ApiError::forbidden(group, resource, &super::limit_ranger::name_for_errors(object), message)
}

/// A quota with a charge applied: its `status.used` replaced.
pub fn apply_charge(quota: &Value, charge: &QuotaCharge) -> Value {
    let mut quota = quota.clone();
    set_used(&mut quota, &charge.used);
    quota
}

/// A quota's usage once the object is deleted: what it counted for taken off every
/// hard-limited resource, never below zero.
pub fn release(quota: &Value, group: &str, resource: &str, object: &Value, now: Option<u64>) -> Value {
    let mut used = used(quota);
    let hard = hard(quota);
    for (name, q) in usage(group, resource, object, now) {
        if !hard.contains_key(&name) {
            continue;
        }
        if let Some(have) = used.get_mut(&name) {
            *have = have.checked_sub(&q).filter(|d| !d.is_negative()).unwrap_or(Quantity::ZERO);
        }
    }
    let mut quota = quota.clone();
    set_used(&mut quota, &used);
    quota
}

fn set_used(quota: &mut Value, used: &ResourceList) {
    let Value::Object(map) = quota else { return };
    let status = map.entry("status").or_insert_with(|| Value::Object(Default::default()));
    if !status.is_object() {
        *status = Value::Object(Default::default());
    }
    status.as_object_mut().expect("made an object above").insert("used".into(), write_list(used));
}

/// The group and resource whose objects a quota's resource `name` counts
/// (`count/deployments.apps`: apps deployments; `requests.cpu`: pods).
pub fn counted_resource(name: &str) -> (String, String) {
    if let Some(counted) = name.strip_prefix("count/") {
        return match counted.split_once('.') {
            Some((resource, group)) => (group.to_owned(), resource.to_owned()),
            None => (String::new(), counted.to_owned()),
        };
    }
    let core = |r: &str| (String::new(), r.to_owned());
    match name {
        "services" | "services.nodeports" | "services.loadbalancers" => core("services"),
        "persistentvolumeclaims" | "requests.storage" => core("persistentvolumeclaims"),
        _ if name.contains(STORAGE_CLASS_SUFFIX) => core("persistentvolumeclaims"),
        "configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas" => core(name),
        _ => core("pods"),
    }
}

/// What a namespace's objects use of a quota's hard-limited resources, as the
/// quota controller recalculates it: `objects_of(group, resource)` gives the
/// namespace's objects of a resource (`None` when they cannot be known yet).
pub fn recalculate(quota: &Value, objects_of: impl Fn(&str, &str) -> Option<Vec<Value>>, now: Option<u64>) -> Option<ResourceList> {
    let hard = read_list(quota.pointer("/spec/hard"));
    let mut used: ResourceList = hard.keys().map(|k| (k.clone(), Quantity::ZERO)).collect();
    let mut resources: Vec<(String, String)> = hard.keys().map(|k| counted_resource(k)).collect();
    resources.sort();
    resources.dedup();
    for (group, resource) in resources {
        for object in objects_of(&group, &resource)? {
            if !scopes_match(quota, &group, &resource, &object) || terminal_pod(&group, &resource, &object) {
                continue;
            }
            for (name, q) in usage(&group, &resource, &object, now) {
                if counted_resource(&name) != (group.clone(), resource.clone()) {
                    continue;
                }
                if let Some(have) = used.get_mut(&name) {
                    *have = have.checked_add(&q).unwrap_or(*have);
                }
            }
        }
    }
    Some(used)
}

/// A pod that has finished uses nothing.
fn terminal_pod(group: &str, resource: &str, object: &Value) -> bool {
    group.is_empty()
        && resource == "pods"
        && matches!(object.pointer("/status/phase").and_then(Value::as_str), Some("Succeeded" | "Failed"))
}

/// The plugin in the chain: the namespace's quotas read, the write checked against
/// them, and each quota it is charged to written (a compare-and-swap: when another
/// write raced, the chain reads the quotas again and checks again).
#[derive(Debug)]
pub(super) struct ResourceQuotaPlugin;

impl super::Plugin for ResourceQuotaPlugin {
    fn handles(&self, request: &super::Request) -> bool {
        request.namespace.as_deref().is_some_and(|ns| !ns.is_empty())
            && applies_to(&request.group, &request.resource, &request.subresource, request.operation)
    }

    fn validates(&self) -> bool {
        true
    }

    fn reads(&self, chain: &super::Context, request: &super::Request, _object: &crate::rest::object::Object) -> Vec<super::Read> {
        vec![super::Read::Objects { prefix: chain.prefix("", "resourcequotas", request.namespace.as_deref()) }]
    }

    fn validate(
        &self,
        chain: &super::Context,
        request: &super::Request,
        object: &crate::rest::object::Object,
        fetched: &super::Fetched,
        _notes: &mut super::Notes,
    ) -> Result<Vec<super::Write>, ApiError> {
        let stored = fetched.objects(&chain.prefix("", "resourcequotas", request.namespace.as_deref()));
        if stored.is_empty() {
            return Ok(Vec::new());
        }
        let quotas: Vec<Value> = stored.iter().map(|q| Value::Object((*q.object).clone())).collect();
        let object = Value::Object(object.clone());
        let old = request.old_object.clone().map(Value::Object);
        let quota_request = QuotaRequest {
            group: &request.group,
            resource: &request.resource,
            operation: request.operation,
            object: &object,
            old_object: old.as_ref(),
            now: Some(request.now_seconds()),
        };
        let charges = check(&quotas, &quota_request).map_err(|m| forbidden(&request.group, &request.resource, &object, &m))?;
        Ok(charges
            .iter()
            .filter_map(|charge| {
                let quota = &stored[charge.index];
                let Value::Object(value) = apply_charge(&quotas[charge.index], charge) else { return None };
                Some(super::Write { key: quota.key.clone(), value, expected_revision: quota.revision })
            })
            .collect())
    }
}

#[cfg(test)]
#[path = "resource_quota_tests.rs"]
mod tests;

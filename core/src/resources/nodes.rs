//! Nodes (core/v1): selectable by `spec.unschedulable`, and not by
//! `metadata.namespace` (upstream's node strategy leaves it out). Taints and pod
//! CIDRs are checked as upstream's `ValidateNode` checks them (status is not yet).

use super::columns::{self as cols, Column};
use super::{Handler, ProxyTarget, Strategy};
use crate::rest::object::Object;
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME};
use crate::validation::network::{Cidr, CIDR_INVALID};
use crate::validation::{go_json_string, names, ErrorKind, FieldError};
use serde_json::Value;

/// The resource of nodes, which tokens may be bound to.
pub const RESOURCE: &str = "nodes";

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[NAME, ("spec.unschedulable", "spec.unschedulable")],
};

pub struct Nodes;

impl Strategy for Nodes {
    fn name(&self) -> &'static str {
        RESOURCE
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Laid { columns: COLUMNS, age_at: Some(2) }
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        match name {
            "status" => Some(Handler::Status),
            "proxy" => Some(Handler::Proxy(ProxyTarget::Node)),
            _ => None,
        }
    }

    /// A new node keeps the status it is created with (a kubelet registers itself with
    /// one), as upstream's node strategy does.
    fn prepare_for_create(&self, _new: &mut Object, _has_status: bool) {}

    /// A node that reports capacity but no allocatable has all of it allocatable.
    fn default(&self, obj: &mut Object) {
        if let Some(status) = super::defaults::object(obj, "status") {
            if matches!(status.get("allocatable"), None | Some(serde_json::Value::Null)) {
                if let Some(capacity) = status.get("capacity").filter(|c| c.is_object()).cloned() {
                    status.insert("allocatable".into(), capacity);
                }
            }
        }
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }
}

const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

fn validate(node: &Object) -> Vec<FieldError> {
    let null = Value::Null;
    let spec = node.get("spec").unwrap_or(&null);
    let mut errs = taints(spec.get("taints").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default());
    errs.extend(pod_cidrs(&pod_cidrs_of(spec)));
    errs
}

/// Each taint has a label key, a label value and a known effect, and no two share
/// key and effect. Upstream reports them under `metadata.taints`.
fn taints(taints: &[Value]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (i, taint) in taints.iter().enumerate() {
        let at = format!("metadata.taints[{i}]");
        let text = |f: &str| taint.get(f).and_then(Value::as_str).unwrap_or("");
        let (key, value, effect) = (text("key"), text("value"), text("effect"));
        errs.extend(names::label_key(key).into_iter().map(|m| FieldError::invalid(&format!("{at}.key"), key, m)));
        let value_errs = names::label_value(value);
        if !value_errs.is_empty() {
            errs.push(FieldError::invalid(&format!("{at}.value"), value, value_errs.join(";")));
        }
        if effect.is_empty() {
            errs.push(FieldError::required(&format!("{at}.effect"), ""));
        }
        if !TAINT_EFFECTS.contains(&effect) {
            errs.push(FieldError::not_supported(&format!("{at}.effect"), effect, &TAINT_EFFECTS));
        }
        if seen.contains(&(key, effect)) {
            let time_added = taint.get("timeAdded").and_then(Value::as_str).map(go_json_string).unwrap_or_else(|| "null".to_owned());
            let shown = format!(
                "{{\"Key\":{},\"Value\":{},\"Effect\":{},\"TimeAdded\":{time_added}}}",
                go_json_string(key),
                go_json_string(value),
                go_json_string(effect)
            );
            errs.push(FieldError::shown(&at, ErrorKind::Duplicate, Some(&shown), "taints must be unique by key and effect pair"));
            continue;
        }
        seen.push((key, effect));
    }
    errs
}

/// The pod CIDRs as upstream's internal type holds them: `podCIDRs`, or the one
/// `podCIDR` when that is all there is.
fn pod_cidrs_of(spec: &Value) -> Vec<String> {
    let list = crate::rest::object::strings(spec.get("podCIDRs"));
    match spec.get("podCIDR").and_then(Value::as_str) {
        Some(one) if list.is_empty() && !one.is_empty() => vec![one.to_owned()],
        _ => list,
    }
}

/// Valid ranges, at most one per IP family, none twice.
fn pod_cidrs(cidrs: &[String]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let parsed: Vec<Option<Cidr>> = cidrs.iter().map(|c| Cidr::parse(c)).collect();
    for (i, (text, cidr)) in cidrs.iter().zip(&parsed).enumerate() {
        if cidr.is_none() {
            errs.push(FieldError::invalid(&format!("spec.podCIDRs[{i}]"), text, CIDR_INVALID));
        }
    }
    if cidrs.len() > 1 {
        let widths: Vec<u8> = parsed.iter().flatten().map(|c| c.width).collect();
        let dual = cidrs.len() == 2 && widths.len() == 2 && widths[0] != widths[1];
        if !dual {
            let shown = crate::validation::go_json(&Value::from(cidrs.to_vec()));
            errs.push(FieldError::invalid_unquoted("spec.podCIDRs", &shown, "may specify no more than one CIDR for each IP family"));
        }
    }
    for (i, text) in cidrs.iter().enumerate() {
        if cidrs[..i].contains(text) {
            errs.push(FieldError::duplicate(&format!("spec.podCIDRs[{i}]"), text));
        }
    }
    errs
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Status", kind: "string", description: "The status of the node", format: "", priority: 0, cell: node_status },
    Column { name: "Roles", kind: "string", description: "The roles of the node", format: "", priority: 0, cell: node_roles },
    Column { name: "Version", kind: "string", description: "Kubelet Version reported by the node.", format: "", priority: 0, cell: |o| cols::str_at(o, &["status", "nodeInfo", "kubeletVersion"]) },
    Column { name: "Internal-IP", kind: "string", description: "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).", format: "", priority: 1, cell: |o| node_address(o, "InternalIP") },
    Column { name: "External-IP", kind: "string", description: "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).", format: "", priority: 1, cell: |o| node_address(o, "ExternalIP") },
    Column { name: "OS-Image", kind: "string", description: "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", format: "", priority: 1, cell: |o| node_info(o, "osImage") },
    Column { name: "Kernel-Version", kind: "string", description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", format: "", priority: 1, cell: |o| node_info(o, "kernelVersion") },
    Column { name: "Container-Runtime", kind: "string", description: "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).", format: "", priority: 1, cell: |o| node_info(o, "containerRuntimeVersion") },
];

/// STATUS: Ready or NotReady by the Ready condition (Unknown without one), then
/// SchedulingDisabled for a cordoned node.
fn node_status(node: &Object) -> Value {
    let conditions = cols::at(node, &["status", "conditions"]).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    // The last condition of a type wins, as upstream's map of them keeps it.
    let ready = conditions.iter().rev().find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"));
    let mut status = vec![match ready {
        Some(c) if c.get("status").and_then(Value::as_str) == Some("True") => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if cols::at(node, &["spec", "unschedulable"]).and_then(Value::as_bool) == Some(true) {
        status.push("SchedulingDisabled");
    }
    serde_json::json!(status.join(","))
}

/// ROLES: the `node-role.kubernetes.io/<role>` labels' roles and the value of
/// `kubernetes.io/role`, sorted, `<none>` for none.
fn node_roles(node: &Object) -> Value {
    let mut roles: Vec<&str> = cols::at(node, &["metadata", "labels"])
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
            Some(role) if !role.is_empty() => Some(role),
            Some(_) => None,
            None => (k == "kubernetes.io/role").then(|| v.as_str().unwrap_or("")).filter(|v| !v.is_empty()),
        })
        .collect();
    roles.sort_unstable();
    roles.dedup();
    cols::or_none(roles.join(","))
}

/// The node's first address of `kind`, `<none>` without one.
fn node_address(node: &Object, kind: &str) -> Value {
    let addresses = cols::at(node, &["status", "addresses"]).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let found = addresses.iter().find(|a| a.get("type").and_then(Value::as_str) == Some(kind));
    serde_json::json!(found.and_then(|a| a.get("address")).and_then(Value::as_str).unwrap_or("<none>"))
}

/// A `status.nodeInfo` field, `<unknown>` when empty.
fn node_info(node: &Object, field: &str) -> Value {
    let v = cols::at(node, &["status", "nodeInfo", field]).and_then(Value::as_str).unwrap_or("");
    serde_json::json!(if v.is_empty() { "<unknown>" } else { v })
}

//! NetworkPolicies (networking.k8s.io/v1): spec changes count in `metadata.generation`.
//! Defaults: ports are TCP, and a policy naming no types restricts ingress, and egress
//! too when it has egress rules.
//!
//! The spec is checked as upstream's `ValidateNetworkPolicySpec` checks it: selectors,
//! each rule's ports and peers, the policy types.

use super::columns::{self as cols, Column};
use super::defaults::{is_empty, object, objects, tcp_ports};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::network::{self, Cidr, CIDR_INVALID};
use crate::validation::{go_json, label_selector, FieldError};
use serde_json::{json, Value};

pub struct NetworkPolicies;

impl Strategy for NetworkPolicies {
    fn name(&self) -> &'static str {
        "networkpolicies"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        for direction in ["ingress", "egress"] {
            for rule in objects(spec, direction) {
                tcp_ports(rule, "ports");
            }
        }
        if is_empty(spec, "policyTypes") {
            let types = if is_empty(spec, "egress") { json!(["Ingress"]) } else { json!(["Ingress", "Egress"]) };
            spec.insert("policyTypes".into(), types);
        }
    }
    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }
}

const PROTOCOLS: [&str; 3] = ["TCP", "UDP", "SCTP"];
const POLICY_TYPES: [&str; 2] = ["Ingress", "Egress"];

fn list<'a>(v: &'a Value, field: &str) -> impl Iterator<Item = (usize, &'a Value)> {
    v.get(field).and_then(Value::as_array).into_iter().flatten().enumerate()
}

fn validate(np: &Object) -> Vec<FieldError> {
    let null = Value::Null;
    let spec = np.get("spec").unwrap_or(&null);
    let mut errs = label_selector::validate("spec.podSelector", spec.get("podSelector").unwrap_or(&null), false);
    for (direction, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in list(spec, direction) {
            let at = format!("spec.{direction}[{i}]");
            for (j, port) in list(rule, "ports") {
                errs.extend(validate_port(port, &format!("{at}.ports[{j}]")));
            }
            for (j, peer) in list(rule, peers) {
                errs.extend(validate_peer(peer, &format!("{at}.{peers}[{j}]")));
            }
        }
    }
    let types: Vec<&Value> = spec.get("policyTypes").and_then(Value::as_array).into_iter().flatten().collect();
    if types.len() > POLICY_TYPES.len() {
        let shown = go_json(spec.get("policyTypes").unwrap_or(&null));
        errs.push(FieldError::invalid_unquoted("spec.policyTypes", &shown, "may not specify more than two policyTypes"));
        return errs;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or("");
        if !POLICY_TYPES.contains(&t) {
            errs.push(FieldError::not_supported(&format!("spec.policyTypes[{i}]"), t, &POLICY_TYPES));
        }
    }
    errs
}

fn validate_port(port: &Value, path: &str) -> Vec<FieldError> {
    let at = |child: &str| format!("{path}.{child}");
    let mut errs = Vec::new();
    if let Some(protocol) = port.get("protocol").and_then(Value::as_str) {
        if !PROTOCOLS.contains(&protocol) {
            errs.push(FieldError::not_supported(&at("protocol"), protocol, &PROTOCOLS));
        }
    }
    let end = port.get("endPort").and_then(Value::as_i64);
    let number = |n: i64, field: &str| -> Vec<FieldError> {
        network::port_number(n).into_iter().map(|m| FieldError::invalid_unquoted(&at(field), &n.to_string(), &m)).collect()
    };
    match port.get("port").filter(|p| !p.is_null()) {
        Some(Value::String(name)) => {
            if let Some(end) = end {
                errs.push(FieldError::invalid_unquoted(&at("endPort"), &end.to_string(), "may not be specified when `port` is non-numeric"));
            }
            errs.extend(network::port_name(name).into_iter().map(|m| FieldError::invalid(&at("port"), name, m)));
        }
        Some(p) => {
            let p = p.as_i64().unwrap_or(0);
            errs.extend(number(p, "port"));
            if let Some(end) = end {
                if end < p {
                    errs.push(FieldError::invalid_unquoted(&at("endPort"), &p.to_string(), "must be greater than or equal to `port`"));
                }
                errs.extend(number(end, "endPort"));
            }
        }
        None => {
            if let Some(end) = end {
                errs.push(FieldError::invalid_unquoted(&at("endPort"), &end.to_string(), "may not be specified when `port` is not specified"));
            }
        }
    }
    errs
}

/// A peer is exactly one of an ipBlock, or pod and/or namespace selectors.
fn validate_peer(peer: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut peers = 0;
    for selector in ["podSelector", "namespaceSelector"] {
        if let Some(s) = peer.get(selector).filter(|s| !s.is_null()) {
            peers += 1;
            errs.extend(label_selector::validate(&format!("{path}.{selector}"), s, false));
        }
    }
    let block = peer.get("ipBlock").filter(|b| !b.is_null());
    if let Some(block) = block {
        peers += 1;
        errs.extend(validate_ip_block(block, &format!("{path}.ipBlock")));
    }
    if peers == 0 {
        errs.push(FieldError::required(path, "must specify a peer"));
    } else if peers > 1 && block.is_some() {
        errs.push(FieldError::forbidden(path, "may not specify both ipBlock and another peer"));
    }
    errs
}

/// A range, and exceptions strictly inside it.
fn validate_ip_block(block: &Value, path: &str) -> Vec<FieldError> {
    let cidr_text = block.get("cidr").and_then(Value::as_str).unwrap_or("");
    if cidr_text.is_empty() {
        return vec![FieldError::required(&format!("{path}.cidr"), "")];
    }
    let Some(cidr) = Cidr::parse(cidr_text) else {
        return vec![FieldError::invalid(&format!("{path}.cidr"), cidr_text, CIDR_INVALID)];
    };
    let mut errs = Vec::new();
    for (i, except) in list(block, "except") {
        let at = format!("{path}.except[{i}]");
        let text = except.as_str().unwrap_or("");
        match Cidr::parse(text) {
            None => errs.push(FieldError::invalid(&at, text, CIDR_INVALID)),
            Some(inner) if !cidr.strictly_contains(&inner) => {
                errs.push(FieldError::invalid(&at, text, "must be a strict subset of `cidr`"))
            }
            Some(_) => {}
        }
    }
    errs
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Pod-Selector", kind: "string", description: "Selects the pods to which this NetworkPolicy object applies.  The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods.  In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.", format: "", priority: 0, cell: |o| cols::label_selector_at(o, &["spec", "podSelector"]) },
];

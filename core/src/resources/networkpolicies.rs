//! NetworkPolicies (networking.k8s.io/v1): spec changes count in `metadata.generation`.
//! Defaults: ports are TCP, and a policy naming no types restricts ingress, and egress
//! too when it has egress rules.

use super::defaults::{is_empty, object, objects, tcp_ports};
use super::Strategy;
use crate::rest::object::Object;
use serde_json::json;

pub struct NetworkPolicies;

impl Strategy for NetworkPolicies {
    fn name(&self) -> &'static str {
        "networkpolicies"
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
}

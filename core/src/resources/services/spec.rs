//! Reading a Service's spec as JSON, with the names upstream's service helpers use.

use serde_json::{Map, Value};

pub type Spec = Map<String, Value>;

pub fn str_of<'a>(spec: &'a Spec, field: &str) -> &'a str {
    spec.get(field).and_then(Value::as_str).unwrap_or("")
}

pub fn strings_of(spec: &Spec, field: &str) -> Vec<String> {
    match spec.get(field) {
        Some(Value::Array(items)) => items.iter().map(|v| v.as_str().unwrap_or("").to_owned()).collect(),
        _ => Vec::new(),
    }
}

pub fn kind(spec: &Spec) -> &str {
    str_of(spec, "type")
}

pub fn ports(spec: &Spec) -> &[Value] {
    spec.get("ports").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

pub fn int_of(v: Option<&Value>) -> i64 {
    v.and_then(Value::as_i64).unwrap_or(0)
}

/// `clusterIP: None`.
pub fn headless(spec: &Spec) -> bool {
    str_of(spec, "clusterIP") == "None"
}

/// Every type but ExternalName has cluster IPs.
pub fn needs_cluster_ip(spec: &Spec) -> bool {
    kind(spec) != "ExternalName"
}

/// NodePort services, and LoadBalancers that did not opt out of node ports.
pub fn needs_node_ports(spec: &Spec) -> bool {
    match kind(spec) {
        "NodePort" => true,
        "LoadBalancer" => spec.get("allocateLoadBalancerNodePorts").and_then(Value::as_bool).unwrap_or(true),
        _ => false,
    }
}

/// A LoadBalancer whose traffic stays on the node it arrives at needs a port for
/// the load balancer's health checks.
pub fn needs_health_check_port(spec: &Spec) -> bool {
    kind(spec) == "LoadBalancer" && str_of(spec, "externalTrafficPolicy") == "Local"
}

/// Reachable from outside the cluster: NodePorts, LoadBalancers, and cluster IPs
/// with external IPs.
pub fn externally_accessible(spec: &Spec) -> bool {
    match kind(spec) {
        "NodePort" | "LoadBalancer" => true,
        "ClusterIP" => spec.get("externalIPs").and_then(Value::as_array).is_some_and(|a| !a.is_empty()),
        _ => false,
    }
}

pub fn spec(obj: &super::Object) -> Option<&Spec> {
    obj.get("spec").and_then(Value::as_object)
}

pub fn spec_mut(obj: &mut super::Object) -> &mut Spec {
    let spec = obj.entry("spec").or_insert_with(|| Value::Object(Map::new()));
    if !spec.is_object() {
        *spec = Value::Object(Map::new());
    }
    spec.as_object_mut().expect("just made an object")
}

//! A Service's defaults (upstream's `SetDefaults_Service`), and what an update keeps
//! of the stored Service (its REST storage's `normalizeClusterIPs`,
//! `patchAllocatedValues` and `dropTypeDependentFields`).

use super::spec::{self, Spec};
use serde_json::{json, Value};

/// How long ClientIP affinity lasts when not said: three hours.
const CLIENT_IP_TIMEOUT_SECONDS: i64 = 10800;

pub fn apply(spec: &mut Spec) {
    if spec::kind(spec).is_empty() {
        spec.insert("type".into(), json!("ClusterIP"));
    }
    if spec::str_of(spec, "sessionAffinity").is_empty() {
        spec.insert("sessionAffinity".into(), json!("None"));
    }
    if spec::str_of(spec, "sessionAffinity") == "ClientIP" {
        let timeout = spec.pointer_like(&["sessionAffinityConfig", "clientIP", "timeoutSeconds"]);
        if timeout.is_none() {
            spec.insert(
                "sessionAffinityConfig".into(),
                json!({"clientIP": {"timeoutSeconds": CLIENT_IP_TIMEOUT_SECONDS}}),
            );
        }
    }
    if let Some(Value::Array(ports)) = spec.get_mut("ports") {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            if port.get("protocol").and_then(Value::as_str).unwrap_or("").is_empty() {
                port.insert("protocol".into(), json!("TCP"));
            }
            let unset = match port.get("targetPort") {
                None | Some(Value::Null) => true,
                Some(Value::Number(n)) => n.as_i64() == Some(0),
                Some(Value::String(s)) => s.is_empty(),
                Some(_) => false,
            };
            if unset {
                let number = port.get("port").cloned().unwrap_or(json!(0));
                port.insert("targetPort".into(), number);
            }
        }
    }
    if spec::externally_accessible(spec) && spec::str_of(spec, "externalTrafficPolicy").is_empty() {
        spec.insert("externalTrafficPolicy".into(), json!("Cluster"));
    }
    if spec::kind(spec) != "ExternalName" && spec.get("internalTrafficPolicy").is_none_or(Value::is_null) {
        spec.insert("internalTrafficPolicy".into(), json!("Cluster"));
    }
    if spec::kind(spec) == "LoadBalancer" && spec.get("allocateLoadBalancerNodePorts").is_none_or(Value::is_null) {
        spec.insert("allocateLoadBalancerNodePorts".into(), json!(true));
    }
}

/// A status's load balancer ingress points with an IP and no mode are VIPs.
pub fn apply_status(obj: &mut super::Object) {
    let is_lb = spec::spec(obj).is_some_and(|s| spec::kind(s) == "LoadBalancer");
    if !is_lb {
        return;
    }
    let ingress = obj
        .get_mut("status")
        .and_then(|s| s.get_mut("loadBalancer"))
        .and_then(|l| l.get_mut("ingress"))
        .and_then(Value::as_array_mut);
    for point in ingress.into_iter().flatten().filter_map(Value::as_object_mut) {
        let has_ip = point.get("ip").and_then(Value::as_str).is_some_and(|ip| !ip.is_empty());
        if has_ip && point.get("ipMode").is_none_or(Value::is_null) {
            point.insert("ipMode".into(), json!("VIP"));
        }
    }
}

/// On create, a client that wrote only `clusterIP` (an older one) means the same
/// `clusterIPs`.
pub fn normalize_cluster_ips_on_create(spec: &mut Spec) {
    let ip = spec::str_of(spec, "clusterIP").to_owned();
    if !ip.is_empty() && spec::strings_of(spec, "clusterIPs").is_empty() {
        spec.insert("clusterIPs".into(), json!([ip]));
    }
}

/// Make an update of `new` over the stored `old` say what the client meant: the
/// linked `clusterIP` and `clusterIPs` kept in step, values the server allocated
/// carried over where the client left them out, and what the new type no longer uses
/// dropped when the client did not change it.
pub fn prepare_update(new: &mut Spec, old: &Spec) {
    normalize_cluster_ips_on_update(new, old);
    keep_allocated(new, old);
    drop_type_dependent(new, old);
}

fn same_cluster_ips(a: &Spec, b: &Spec) -> bool {
    spec::strings_of(a, "clusterIPs") == spec::strings_of(b, "clusterIPs")
}

fn normalize_cluster_ips_on_update(new: &mut Spec, old: &Spec) {
    let old_ips = spec::strings_of(old, "clusterIPs");
    let (old_ip, new_ip) = (spec::str_of(old, "clusterIP").to_owned(), spec::str_of(new, "clusterIP").to_owned());
    // A client that knows only `clusterIP` sent no `clusterIPs`: keep them.
    if !old_ips.is_empty() && spec::strings_of(new, "clusterIPs").is_empty() && old_ip == new_ip {
        new.insert("clusterIPs".into(), json!(old_ips));
    }
    if old_ip != new_ip {
        if !old_ip.is_empty() && new_ip.is_empty() && same_cluster_ips(old, new) {
            new.remove("clusterIPs");
        }
        if same_cluster_ips(old, new) {
            new.insert("clusterIPs".into(), json!([new_ip]));
        }
    }
}

fn keep_allocated(new: &mut Spec, old: &Spec) {
    if spec::needs_cluster_ip(old) && spec::needs_cluster_ip(new) {
        if spec::str_of(new, "clusterIP").is_empty() {
            if let Some(ip) = old.get("clusterIP") {
                new.insert("clusterIP".into(), ip.clone());
            }
        }
        if spec::strings_of(new, "clusterIPs").is_empty() && !spec::strings_of(old, "clusterIPs").is_empty() {
            new.insert("clusterIPs".into(), old["clusterIPs"].clone());
        }
    }
    if spec::needs_node_ports(old) && spec::needs_node_ports(new) {
        let node_ports = |s: &Spec| -> Vec<i64> {
            spec::ports(s).iter().map(|p| spec::int_of(p.get("nodePort"))).filter(|n| *n != 0).collect()
        };
        let new_ports = node_ports(new);
        // Ports both keep may not be handed to another port of the new spec.
        let used: Vec<i64> = node_ports(old).into_iter().filter(|p| new_ports.contains(p)).collect();
        let by_name: Vec<(String, i64)> = spec::ports(old)
            .iter()
            .map(|p| (p.get("name").and_then(Value::as_str).unwrap_or("").to_owned(), spec::int_of(p.get("nodePort"))))
            .collect();
        if let Some(Value::Array(ports)) = new.get_mut("ports") {
            for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                if spec::int_of(port.get("nodePort")) != 0 {
                    continue;
                }
                let name = port.get("name").and_then(Value::as_str).unwrap_or("");
                let kept = by_name.iter().rev().find(|(n, _)| n == name).map_or(0, |(_, p)| *p);
                if kept != 0 && !used.contains(&kept) {
                    port.insert("nodePort".into(), json!(kept));
                }
            }
        }
    }
    if spec::needs_health_check_port(old)
        && spec::needs_health_check_port(new)
        && spec::int_of(new.get("healthCheckNodePort")) == 0
    {
        if let Some(port) = old.get("healthCheckNodePort") {
            new.insert("healthCheckNodePort".into(), port.clone());
        }
    }
}

fn drop_type_dependent(new: &mut Spec, old: &Spec) {
    if spec::needs_cluster_ip(old) && !spec::needs_cluster_ip(new) {
        if same_cluster_ips(old, new) {
            new.remove("clusterIP");
            new.remove("clusterIPs");
        }
        if old.get("ipFamilies") == new.get("ipFamilies") {
            new.remove("ipFamilies");
        }
        if old.get("ipFamilyPolicy") == new.get("ipFamilyPolicy") {
            new.remove("ipFamilyPolicy");
        }
        if old.get("internalTrafficPolicy") == new.get("internalTrafficPolicy") {
            new.remove("internalTrafficPolicy");
        }
    }
    if spec::needs_node_ports(old) && !spec::needs_node_ports(new) {
        let node_ports = |s: &Spec| -> Vec<i64> { spec::ports(s).iter().map(|p| spec::int_of(p.get("nodePort"))).collect() };
        if node_ports(old) == node_ports(new) {
            if let Some(Value::Array(ports)) = new.get_mut("ports") {
                for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                    port.remove("nodePort");
                }
            }
        }
    }
    if spec::needs_health_check_port(old)
        && !spec::needs_health_check_port(new)
        && old.get("healthCheckNodePort") == new.get("healthCheckNodePort")
    {
        new.remove("healthCheckNodePort");
    }
    let leaves_lb = spec::kind(old) == "LoadBalancer" && spec::kind(new) != "LoadBalancer";
    if leaves_lb {
        for field in ["allocateLoadBalancerNodePorts", "loadBalancerClass"] {
            if new.get(field).is_some() && old.get(field) == new.get(field) {
                new.remove(field);
            }
        }
    }
    if spec::externally_accessible(old)
        && !spec::externally_accessible(new)
        && old.get("externalTrafficPolicy") == new.get("externalTrafficPolicy")
    {
        new.remove("externalTrafficPolicy");
    }
}

/// A Service leaving LoadBalancer loses its load balancer's status.
pub fn drop_load_balancer_status(obj: &mut super::Object, old_kind: &str) {
    let now_lb = spec::spec(obj).is_some_and(|s| spec::kind(s) == "LoadBalancer");
    if old_kind == "LoadBalancer" && !now_lb {
        if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) {
            status.insert("loadBalancer".into(), json!({}));
        }
    }
}

/// Nested lookups on a JSON map.
trait PointerLike {
    fn pointer_like(&self, path: &[&str]) -> Option<&Value>;
}

impl PointerLike for Spec {
    fn pointer_like(&self, path: &[&str]) -> Option<&Value> {
        let (first, rest) = path.split_first()?;
        let mut at = self.get(*first)?;
        for key in rest {
            at = at.get(*key)?;
        }
        (!at.is_null()).then_some(at)
    }
}

//! A Service's own checks (upstream's `ValidateService` and `ValidateServiceUpdate`),
//! worded and ordered as upstream words and orders them.

use super::spec::{self, Spec};
use crate::service_network::cidr::{parse_ip, Family};
use crate::validation::{names, ErrorKind, FieldError};
use serde_json::Value;
use std::collections::HashSet;

const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const AFFINITIES: [&str; 2] = ["ClientIP", "None"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
const FAMILY_POLICIES: [&str; 3] = ["PreferDualStack", "RequireDualStack", "SingleStack"];
const TRAFFIC_POLICIES: [&str; 2] = ["Cluster", "Local"];
/// The kubelet's port, which a LoadBalancer may not expose.
const KUBELET_PORT: i64 = 10250;
/// The longest ClientIP affinity: a day.
const MAX_AFFINITY_SECONDS: i64 = 86400;
const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";
const BAD_IP: &str = crate::validation::network::IP_INVALID;

/// Checks of a Service as its allocator makes them before anything else: cluster IPs
/// and IP families that do not fit together. Upstream answers these alone.
pub fn cluster_ips_related(spec: &Spec) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if spec::kind(spec) == "ExternalName" {
        return errs;
    }
    let ip = spec::str_of(spec, "clusterIP");
    let ips = spec::strings_of(spec, "clusterIPs");
    let ips_value = spec.get("clusterIPs").cloned().unwrap_or(Value::Array(Vec::new()));
    if !ip.is_empty() {
        match ips.first() {
            None => errs.push(FieldError::required("spec.clusterIPs", "")),
            Some(first) if first != ip => {
                errs.push(FieldError::invalid_json("spec.clusterIPs", &ips_value, "first value must match `clusterIP`"))
            }
            Some(_) => {}
        }
    } else if !ips.is_empty() {
        errs.push(FieldError::invalid_json("spec.clusterIPs", &ips_value, "must be empty when `clusterIP` is not specified"));
    }
    let families = spec::strings_of(spec, "ipFamilies");
    let mut seen = HashSet::new();
    for (i, family) in families.iter().enumerate() {
        let field = format!("spec.ipFamilies[{i}]");
        if Family::parse(family).is_none() {
            errs.push(FieldError::not_supported(&field, family, &["IPv4", "IPv6"]));
        }
        if !seen.insert(family.clone()) {
            errs.push(FieldError::duplicate(&field, family));
        }
    }
    if let Some(policy) = spec.get("ipFamilyPolicy").and_then(Value::as_str) {
        if !FAMILY_POLICIES.contains(&policy) {
            errs.push(FieldError::not_supported("spec.ipFamilyPolicy", policy, &FAMILY_POLICIES));
        }
    }
    let mut bad_ips = false;
    for (i, ip) in ips.iter().enumerate() {
        if i == 0 && ip == "None" {
            if ips.len() > 1 {
                bad_ips = true;
                errs.push(FieldError::invalid_json("spec.clusterIPs", &ips_value, "'None' must be the first and only value"));
            }
            continue;
        }
        if parse_ip(ip).is_none() {
            bad_ips = true;
            errs.push(FieldError::invalid(&format!("spec.clusterIPs[{i}]"), ip, BAD_IP));
        }
    }
    if ips.len() > 2 {
        errs.push(FieldError::invalid_json("spec.clusterIPs", &ips_value, "may only hold up to 2 values"));
    }
    if bad_ips {
        return errs;
    }
    let parsed: Vec<_> = ips.iter().filter_map(|ip| parse_ip(ip)).collect();
    if ips.len() > 1 && (parsed.len() != 2 || Family::of(&parsed[0]) == Family::of(&parsed[1])) {
        errs.push(FieldError::invalid_json("spec.clusterIPs", &ips_value, "may specify no more than one IP for each IP family"));
    }
    if !spec::headless(spec) {
        for (i, (ip, family)) in parsed.iter().zip(&families).enumerate() {
            let expected = match (family.as_str(), Family::of(ip)) {
                ("IPv4", Family::IPv6) => "IPv4",
                ("IPv6", Family::IPv4) => "IPv6",
                _ => continue,
            };
            let detail = format!("expected an {expected} value as indicated by `ipFamilies[{i}]`");
            errs.push(FieldError::invalid(&format!("spec.clusterIPs[{i}]"), &ips[i], detail));
        }
    }
    errs
}

/// `ValidateService` after its metadata.
pub fn validate(spec: &Spec) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let kind = spec::kind(spec);
    let ports = spec::ports(spec);
    let headless = spec::headless(spec);
    if ports.is_empty() && !headless && kind != "ExternalName" {
        errs.push(FieldError::required("spec.ports", ""));
    }
    match kind {
        "LoadBalancer" => {
            if headless {
                let ip = spec::strings_of(spec, "clusterIPs");
                let first = ip.first().map_or("None", String::as_str);
                errs.push(FieldError::invalid("spec.clusterIPs[0]", first, "may not be set to 'None' for LoadBalancer services"));
            }
            for (i, port) in ports.iter().enumerate() {
                if spec::int_of(port.get("port")) == KUBELET_PORT {
                    let detail = format!("may not expose port {KUBELET_PORT} externally since it is used by kubelet");
                    errs.push(FieldError::invalid_unquoted(&format!("spec.ports[{i}]"), &KUBELET_PORT.to_string(), &detail));
                }
            }
            if headless {
                errs.push(FieldError::invalid("spec.clusterIP", "None", "may not be set to 'None' for LoadBalancer services"));
            }
        }
        "NodePort" if headless => {
            errs.push(FieldError::invalid("spec.clusterIP", "None", "may not be set to 'None' for NodePort services"));
        }
        "ExternalName" => {
            if !spec::strings_of(spec, "clusterIPs").is_empty() {
                errs.push(FieldError::forbidden("spec.clusterIPs", "may not be set for ExternalName services"));
            }
            if !spec::strings_of(spec, "ipFamilies").is_empty() {
                errs.push(FieldError::forbidden("spec.ipFamilies", "may not be set for ExternalName services"));
            }
            if spec.get("ipFamilyPolicy").is_some_and(|p| !p.is_null()) {
                errs.push(FieldError::forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"));
            }
            let name = spec::str_of(spec, "externalName");
            let cname = name.strip_suffix('.').unwrap_or(name);
            if cname.is_empty() {
                errs.push(FieldError::required("spec.externalName", ""));
            }
            for msg in names::dns1123_subdomain(cname).into_iter().filter(|_| !cname.is_empty()) {
                errs.push(FieldError::invalid("spec.externalName", cname, msg));
            }
        }
        _ => {}
    }
    let mut port_names = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        errs.extend(validate_port(port, ports.len() > 1, &mut port_names, &format!("spec.ports[{i}]")));
    }
    if let Some(Value::Object(selector)) = spec.get("selector") {
        let mut keys: Vec<&String> = selector.keys().collect();
        keys.sort();
        for key in keys {
            for msg in names::qualified_name(key) {
                errs.push(FieldError::invalid("spec.selector", key, msg));
            }
        }
    }
    let affinity = spec::str_of(spec, "sessionAffinity");
    if affinity.is_empty() {
        errs.push(FieldError::required("spec.sessionAffinity", ""));
    } else if !AFFINITIES.contains(&affinity) {
        errs.push(FieldError::not_supported("spec.sessionAffinity", affinity, &AFFINITIES));
    }
    let config = spec.get("sessionAffinityConfig").filter(|c| !c.is_null());
    match affinity {
        "ClientIP" => errs.extend(validate_client_ip_config(config)),
        "None" if config.is_some() => {
            errs.push(FieldError::forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None"))
        }
        _ => {}
    }
    errs.extend(cluster_ips_related(spec));
    for (i, ip) in spec::strings_of(spec, "externalIPs").iter().enumerate() {
        if parse_ip(ip).is_none() {
            errs.push(FieldError::invalid(&format!("spec.externalIPs[{i}]"), ip, BAD_IP));
        }
    }
    if kind.is_empty() {
        errs.push(FieldError::required("spec.type", ""));
    } else if !TYPES.contains(&kind) {
        errs.push(FieldError::not_supported("spec.type", kind, &TYPES));
    }
    if kind == "ClusterIP" {
        for (i, port) in ports.iter().enumerate() {
            if spec::int_of(port.get("nodePort")) != 0 {
                errs.push(FieldError::forbidden(&format!("spec.ports[{i}].nodePort"), "may not be used when `type` is 'ClusterIP'"));
            }
        }
    }
    errs.extend(duplicates(ports));
    if !spec::strings_of(spec, "loadBalancerSourceRanges").is_empty() && kind != "LoadBalancer" {
        errs.push(FieldError::forbidden("spec.LoadBalancerSourceRanges", "may only be used when `type` is 'LoadBalancer'"));
    }
    if spec.get("allocateLoadBalancerNodePorts").is_some_and(|v| !v.is_null()) && kind != "LoadBalancer" {
        errs.push(FieldError::forbidden("spec.allocateLoadBalancerNodePorts", "may only be used when `type` is 'LoadBalancer'"));
    }
    errs.extend(traffic_policies(spec));
    errs
}

fn validate_port(port: &Value, require_name: bool, seen: &mut HashSet<String>, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = port.get("name").and_then(Value::as_str).unwrap_or("");
    if require_name && name.is_empty() {
        errs.push(FieldError::required(&format!("{at}.name"), ""));
    } else if !name.is_empty() {
        for msg in names::dns1123_label(name) {
            errs.push(FieldError::invalid(&format!("{at}.name"), name, msg));
        }
        if !seen.insert(name.to_owned()) {
            errs.push(FieldError::duplicate(&format!("{at}.name"), name));
        }
    }
    let number = spec::int_of(port.get("port"));
    if !(1..=65535).contains(&number) {
        errs.push(FieldError::invalid_unquoted(&format!("{at}.port"), &number.to_string(), PORT_RANGE));
    }
    let protocol = port.get("protocol").and_then(Value::as_str).unwrap_or("");
    if protocol.is_empty() {
        errs.push(FieldError::required(&format!("{at}.protocol"), ""));
    } else if !PROTOCOLS.contains(&protocol) {
        errs.push(FieldError::not_supported(&format!("{at}.protocol"), protocol, &PROTOCOLS));
    }
    match port.get("targetPort") {
        Some(Value::String(name)) => {
            for msg in port_name(name) {
                errs.push(FieldError::invalid(&format!("{at}.targetPort"), name, msg));
            }
        }
        other => {
            let n = spec::int_of(other);
            if !(1..=65535).contains(&n) {
                errs.push(FieldError::invalid_unquoted(&format!("{at}.targetPort"), &n.to_string(), PORT_RANGE));
            }
        }
    }
    if let Some(protocol) = port.get("appProtocol").and_then(Value::as_str) {
        for msg in names::qualified_name(protocol) {
            errs.push(FieldError::invalid(&format!("{at}.appProtocol"), protocol, msg));
        }
    }
    errs
}

/// What is wrong with a named port (an IANA service name).
pub fn port_name(name: &str) -> Vec<&'static str> {
    let mut errs = Vec::new();
    if name.is_empty() || name.len() > 15 {
        errs.push("must be no more than 15 characters");
    }
    if !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if name.contains("--") {
        errs.push("must not contain consecutive hyphens");
    }
    if !name.bytes().any(|b| b.is_ascii_alphabetic()) {
        errs.push("must contain at least one letter (a-z)");
    }
    if name.starts_with('-') || name.ends_with('-') {
        errs.push("must not begin or end with a hyphen");
    }
    errs
}

fn validate_client_ip_config(config: Option<&Value>) -> Vec<FieldError> {
    let client_ip = config.and_then(|c| c.get("clientIP")).filter(|c| !c.is_null());
    let Some(client_ip) = client_ip else {
        return vec![FieldError::required("spec.sessionAffinityConfig.clientIP", "")];
    };
    let field = "spec.sessionAffinityConfig.clientIP.timeoutSeconds";
    match client_ip.get("timeoutSeconds").and_then(Value::as_i64) {
        None => vec![FieldError::required(field, "")],
        Some(t) if t <= 0 || t > MAX_AFFINITY_SECONDS => {
            let detail = format!("must be greater than 0 and less than {MAX_AFFINITY_SECONDS}");
            vec![FieldError::invalid_unquoted(field, &t.to_string(), &detail)]
        }
        Some(_) => Vec::new(),
    }
}

/// Two ports with one protocol may not share a node port, nor a port.
fn duplicates(ports: &[Value]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let protocol = |p: &Value| p.get("protocol").and_then(Value::as_str).unwrap_or("").to_owned();
    let mut node_ports = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let node_port = spec::int_of(port.get("nodePort"));
        if node_port != 0 && !node_ports.insert((protocol(port), node_port)) {
            let field = format!("spec.ports[{i}].nodePort");
            errs.push(FieldError::shown(&field, ErrorKind::Duplicate, Some(&node_port.to_string()), ""));
        }
    }
    let mut seen = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let (protocol, number) = (protocol(port), spec::int_of(port.get("port")));
        if !seen.insert((protocol.clone(), number)) {
            // Upstream prints the ServicePort it keyed by, with only these two set.
            let shown = format!(
                "{{\"Name\":\"\",\"Protocol\":{},\"AppProtocol\":null,\"Port\":{number},\"TargetPort\":0,\"NodePort\":0}}",
                crate::validation::go_json_string(&protocol)
            );
            errs.push(FieldError::shown(&format!("spec.ports[{i}]"), ErrorKind::Duplicate, Some(&shown), ""));
        }
    }
    errs
}

fn traffic_policies(spec: &Spec) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let external = spec::str_of(spec, "externalTrafficPolicy");
    if !spec::externally_accessible(spec) {
        if !external.is_empty() {
            errs.push(FieldError::invalid("spec.externalTrafficPolicy", external, "may only be set for externally-accessible services"));
        }
    } else if external.is_empty() {
        errs.push(FieldError::required("spec.externalTrafficPolicy", ""));
    } else if !TRAFFIC_POLICIES.contains(&external) {
        errs.push(FieldError::not_supported("spec.externalTrafficPolicy", external, &TRAFFIC_POLICIES));
    }
    let health = spec::int_of(spec.get("healthCheckNodePort"));
    if !spec::needs_health_check_port(spec) {
        if health != 0 {
            let detail = "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'";
            errs.push(FieldError::invalid_unquoted("spec.healthCheckNodePort", &health.to_string(), detail));
        }
    } else if health != 0 && !(1..=65535).contains(&health) {
        errs.push(FieldError::invalid_unquoted("spec.healthCheckNodePort", &health.to_string(), PORT_RANGE));
    }
    if let Some(internal) = spec.get("internalTrafficPolicy").and_then(Value::as_str) {
        if !TRAFFIC_POLICIES.contains(&internal) {
            errs.push(FieldError::not_supported("spec.internalTrafficPolicy", internal, &TRAFFIC_POLICIES));
        }
    }
    errs
}

/// `ValidateServiceUpdate`'s own rules: the primary cluster IP and IP family stay,
/// unless the Service leaves or becomes an ExternalName.
pub fn validate_update(new: &Spec, old: &Spec) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if spec::kind(new) == "ExternalName" || spec::kind(old) == "ExternalName" {
        return errs;
    }
    let (new_ips, old_ips) = (spec::strings_of(new, "clusterIPs"), spec::strings_of(old, "clusterIPs"));
    if new_ips != old_ips {
        if let (Some(a), Some(b)) = (new_ips.first(), old_ips.first()) {
            if a != b {
                let shown = new.get("clusterIPs").cloned().unwrap_or(Value::Null);
                errs.push(FieldError::invalid_json("spec.clusterIPs[0]", &shown, "may not change once set"));
            }
        }
    }
    let (new_families, old_families) = (spec::strings_of(new, "ipFamilies"), spec::strings_of(old, "ipFamilies"));
    if new_families != old_families {
        if let (Some(a), Some(b)) = (new_families.first(), old_families.first()) {
            if a != b {
                let shown = new.get("ipFamilies").cloned().unwrap_or(Value::Null);
                errs.push(FieldError::invalid_json("spec.ipFamilies[0]", &shown, "may not change once set"));
            }
        }
    }
    errs
}

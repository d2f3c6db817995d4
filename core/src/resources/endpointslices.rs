//! EndpointSlices (discovery.k8s.io/v1). Defaults: a port without a name is named
//! `""`, and without a protocol is TCP.
//!
//! A slice has a known address type, which never changes; at most 1000 endpoints,
//! each with 1 to 100 addresses of that type (IPs that leave the node), a DNS label
//! for a hostname, a node name and zone hints; ports with distinct names, a known
//! protocol and a qualified application protocol (upstream's `ValidateEndpointSlice*`).

use super::columns::{self as cols, Column};
use super::defaults::{objects, or_insert, tcp_ports};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::names::{dns1123_label, dns1123_subdomain, fully_qualified_domain_name, label_value, qualified_name};
use crate::validation::network::{endpoint_ip, sloppy_addr};
use crate::validation::object_meta::labels;
use crate::validation::value::{list, present, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::{json, Value};
use std::net::IpAddr;

pub struct EndpointSlices;

const ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];
const MAX_ENDPOINTS: usize = 1000;
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 20000;
const MAX_TOPOLOGY_LABELS: usize = 16;
const MAX_ZONE_HINTS: usize = 8;

impl Strategy for EndpointSlices {
    fn name(&self) -> &'static str {
        "endpointslices"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    /// Upstream's strategy starts the generation at 1 and counts spec changes.
    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        for port in objects(obj, "ports") {
            or_insert(port, "name", || json!(""));
        }
        tcp_ports(obj, "ports");
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = validate(new);
        let kind = |o: &Object| o.get("addressType").cloned().unwrap_or(json!(""));
        if kind(new) != kind(old) {
            errs.push(FieldError::immutable("addressType", &kind(new)));
        }
        errs
    }
}

fn validate(slice: &Object) -> Vec<FieldError> {
    let slice = Value::Object(slice.clone());
    let kind = text(&slice, "addressType");
    let mut errs = Vec::new();
    if kind.is_empty() {
        errs.push(FieldError::required("addressType", ""));
    } else if !ADDRESS_TYPES.contains(&kind) {
        errs.push(FieldError::not_supported("addressType", kind, &ADDRESS_TYPES));
    }
    // The recorded server reports the ports before the endpoints.
    errs.extend(ports(list(&slice, "ports"), &FieldPath::new("ports")));
    errs.extend(endpoints(list(&slice, "endpoints"), kind, &FieldPath::new("endpoints")));
    errs
}

fn endpoints(endpoints: &[Value], kind: &str, path: &FieldPath) -> Vec<FieldError> {
    if endpoints.len() > MAX_ENDPOINTS {
        return vec![FieldError::too_many(path.as_str(), endpoints.len(), MAX_ENDPOINTS)];
    }
    let mut errs = Vec::new();
    for (i, endpoint) in endpoints.iter().enumerate() {
        let at = path.index(i);
        let addresses_path = at.child("addresses");
        let addresses = list(endpoint, "addresses");
        if addresses.is_empty() {
            errs.push(FieldError::required(addresses_path.as_str(), "must contain at least 1 address"));
        } else if addresses.len() > MAX_ADDRESSES {
            errs.push(FieldError::too_many(addresses_path.as_str(), addresses.len(), MAX_ADDRESSES));
        }
        for (j, address) in addresses.iter().enumerate() {
            let address = address.as_str().unwrap_or("");
            errs.extend(address_errors(address, kind, &addresses_path, j));
        }
        if present(endpoint, "nodeName") {
            let node = text(endpoint, "nodeName");
            errs.extend(dns1123_subdomain(node).into_iter().map(|m| FieldError::invalid(at.child("nodeName").as_str(), node, m)));
        }
        let topology_path = at.child("deprecatedTopology");
        let topology = endpoint.get("deprecatedTopology");
        let count = topology.and_then(Value::as_object).map_or(0, |m| m.len());
        if count > MAX_TOPOLOGY_LABELS {
            errs.push(FieldError::too_many(topology_path.as_str(), count, MAX_TOPOLOGY_LABELS));
        }
        errs.extend(labels(topology_path.as_str(), topology));
        if present(endpoint, "hostname") {
            let host = text(endpoint, "hostname");
            errs.extend(dns1123_label(host).into_iter().map(|m| FieldError::invalid(at.child("hostname").as_str(), host, m)));
        }
        if let Some(hints) = endpoint.get("hints").filter(|h| !h.is_null()) {
            errs.extend(zone_hints(hints, &at.child("hints").child("forZones")));
        }
    }
    errs
}

/// One address of an endpoint, read as the slice's type says (an unknown type reads
/// nothing).
fn address_errors(address: &str, kind: &str, list_path: &FieldPath, j: usize) -> Vec<FieldError> {
    let at = list_path.index(j);
    let family = match kind {
        "IPv4" => IpAddr::is_ipv4,
        "IPv6" => IpAddr::is_ipv6,
        "FQDN" => {
            return match fully_qualified_domain_name(address) {
                Ok(()) => Vec::new(),
                Err(None) => vec![FieldError::required(at.as_str(), "")],
                Err(Some((shown, why))) => vec![FieldError::invalid(at.as_str(), &shown, why)],
            };
        }
        _ => return Vec::new(),
    };
    match sloppy_addr(address) {
        None => {
            let mut errs = vec![FieldError::invalid(at.as_str(), address, format!("must be a valid {kind} address"))];
            errs.extend(endpoint_ip(address).into_iter().map(|m| FieldError::invalid(at.as_str(), address, m)));
            errs
        }
        // The recorded server names the list, not the address, for this one.
        Some(ip) if !family(&ip) => {
            vec![FieldError::invalid(list_path.as_str(), address, format!("must be an {kind} address"))]
        }
        Some(_) => endpoint_ip(address).into_iter().map(|m| FieldError::invalid(at.as_str(), address, m)).collect(),
    }
}

fn zone_hints(hints: &Value, path: &FieldPath) -> Vec<FieldError> {
    let zones = list(hints, "forZones");
    if zones.len() > MAX_ZONE_HINTS {
        return vec![FieldError::too_many(path.as_str(), zones.len(), MAX_ZONE_HINTS)];
    }
    let mut errs = Vec::new();
    let mut seen = Vec::new();
    for (i, zone) in zones.iter().enumerate() {
        let at = path.index(i).child("name");
        let name = text(zone, "name");
        if seen.contains(&name) {
            errs.push(FieldError::duplicate(at.as_str(), name));
        } else {
            seen.push(name);
        }
        errs.extend(label_value(name).into_iter().map(|m| FieldError::invalid(at.as_str(), name, m)));
    }
    errs
}

fn ports(ports: &[Value], path: &FieldPath) -> Vec<FieldError> {
    if ports.len() > MAX_PORTS {
        return vec![FieldError::too_many(path.as_str(), ports.len(), MAX_PORTS)];
    }
    let mut errs = Vec::new();
    let mut names = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let at = path.index(i);
        let name = text(port, "name");
        if !name.is_empty() {
            errs.extend(dns1123_label(name).into_iter().map(|m| FieldError::invalid(at.child("name").as_str(), name, m)));
        }
        if names.contains(&name) {
            errs.push(FieldError::duplicate(at.child("name").as_str(), name));
        } else {
            names.push(name);
        }
        errs.extend(super::endpoints::protocol(port, &at));
        if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
            errs.extend(qualified_name(app).into_iter().map(|m| FieldError::invalid(at.child("appProtocol").as_str(), app, m)));
        }
    }
    errs
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "AddressType", kind: "string", description: "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.", format: "", priority: 0, cell: |o| cols::str_at(o, &["addressType"]) },
    Column { name: "Ports", kind: "string", description: "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates \"all ports\". Each slice may include a maximum of 100 ports.", format: "", priority: 0, cell: slice_ports },
    Column { name: "Endpoints", kind: "string", description: "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.", format: "", priority: 0, cell: slice_endpoints },
];

/// PORTS: each port's number (its name without one, `*` without either), the first
/// three, as upstream's `formatDiscoveryPorts`.
fn slice_ports(slice: &Object) -> Value {
    let ports = cols::at(slice, &["ports"]).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let shown = ports.iter().map(|p| match (p.get("port").and_then(Value::as_i64), p.get("name").and_then(Value::as_str)) {
        (Some(n), _) => n.to_string(),
        (None, Some(name)) => name.to_owned(),
        _ => "*".to_owned(),
    });
    cols::first_three(shown, "<unset>")
}

/// ENDPOINTS: the endpoints' addresses, the first three, as upstream's
/// `formatDiscoveryEndpoints`.
fn slice_endpoints(slice: &Object) -> Value {
    let endpoints = cols::at(slice, &["endpoints"]).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let shown = endpoints
        .iter()
        .flat_map(|e| e.get("addresses").and_then(Value::as_array).map_or(&[][..], Vec::as_slice))
        .map(|a| a.as_str().unwrap_or("").to_owned());
    cols::first_three(shown, "<unset>")
}

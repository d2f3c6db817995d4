//! Endpoints (core/v1). Defaults: a port without a protocol is TCP.
//!
//! Each subset has addresses (ready or not), each an IP that leaves the node with a
//! DNS label for a hostname and a node name; ports are named when there are several,
//! numbered, and speak a known protocol (upstream's `ValidateEndpoints`, on create and
//! update alike).

use super::columns::{self as cols, Column};
use super::defaults::{objects, tcp_ports};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::names::{dns1123_label, dns1123_subdomain, qualified_name};
use crate::validation::network::{endpoint_ip, port_number, sloppy_addr, IP_INVALID, PROTOCOLS};
use crate::validation::value::{int, list, present, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;

pub struct Endpoints;

impl Strategy for Endpoints {
    fn name(&self) -> &'static str {
        "endpoints"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    fn default(&self, obj: &mut Object) {
        for subset in objects(obj, "subsets") {
            tcp_ports(subset, "ports");
        }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }
}

fn validate(ep: &Object) -> Vec<FieldError> {
    let subsets = ep.get("subsets").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let path = FieldPath::new("subsets");
    let mut errs = Vec::new();
    for (i, subset) in subsets.iter().enumerate() {
        let at = path.index(i);
        let (ready, not_ready) = (list(subset, "addresses"), list(subset, "notReadyAddresses"));
        if ready.is_empty() && not_ready.is_empty() {
            errs.push(FieldError::required(at.as_str(), "must specify `addresses` or `notReadyAddresses`"));
        }
        for (key, addresses) in [("addresses", ready), ("notReadyAddresses", not_ready)] {
            for (j, address) in addresses.iter().enumerate() {
                errs.extend(endpoint_address(address, &at.child(key).index(j)));
            }
        }
        let ports = list(subset, "ports");
        for (j, port) in ports.iter().enumerate() {
            errs.extend(endpoint_port(port, ports.len() > 1, &at.child("ports").index(j)));
        }
    }
    errs
}

fn endpoint_address(address: &Value, path: &FieldPath) -> Vec<FieldError> {
    let ip_path = path.child("ip");
    let ip = text(address, "ip");
    let mut errs = Vec::new();
    if sloppy_addr(ip).is_none() {
        errs.push(FieldError::invalid(ip_path.as_str(), ip, IP_INVALID));
    }
    let hostname = text(address, "hostname");
    if !hostname.is_empty() {
        errs.extend(dns1123_label(hostname).into_iter().map(|m| FieldError::invalid(path.child("hostname").as_str(), hostname, m)));
    }
    if present(address, "nodeName") {
        let node = text(address, "nodeName");
        errs.extend(dns1123_subdomain(node).into_iter().map(|m| FieldError::invalid(path.child("nodeName").as_str(), node, m)));
    }
    errs.extend(endpoint_ip(ip).into_iter().map(|m| FieldError::invalid(ip_path.as_str(), ip, m)));
    errs
}

fn endpoint_port(port: &Value, require_name: bool, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = text(port, "name");
    if name.is_empty() && require_name {
        errs.push(FieldError::required(path.child("name").as_str(), ""));
    } else if !name.is_empty() {
        errs.extend(dns1123_label(name).into_iter().map(|m| FieldError::invalid(path.child("name").as_str(), name, m)));
    }
    let number = int(port, "port").unwrap_or(0);
    for m in port_number(number) {
        errs.push(FieldError::invalid_unquoted(path.child("port").as_str(), &number.to_string(), &m));
    }
    errs.extend(protocol(port, path));
    if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
        errs.extend(qualified_name(app).into_iter().map(|m| FieldError::invalid(path.child("appProtocol").as_str(), app, m)));
    }
    errs
}

/// A port's protocol: given (defaulting gives one) and known. EndpointSlice ports too.
pub(super) fn protocol(port: &Value, path: &FieldPath) -> Vec<FieldError> {
    let at = path.child("protocol");
    match port.get("protocol").and_then(Value::as_str) {
        None | Some("") => vec![FieldError::required(at.as_str(), "")],
        Some(p) if !PROTOCOLS.contains(&p) => vec![FieldError::not_supported(at.as_str(), p, &PROTOCOLS)],
        Some(_) => Vec::new(),
    }
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Endpoints", kind: "string", description: "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.", format: "", priority: 0, cell: endpoints_cell },
];

/// An Endpoints' ENDPOINTS cell as upstream's `formatEndpoints`: the first three
/// addresses (`ip:port` for each port of a subset), `+ N more...` for the rest,
/// `<none>` without subsets.
fn endpoints_cell(ep: &Object) -> Value {
    let subsets = cols::at(ep, &["subsets"]).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    if subsets.is_empty() {
        return serde_json::json!("<none>");
    }
    const MAX: usize = 3;
    let (mut list, mut more, mut count) = (Vec::new(), false, 0);
    let empty = Vec::new();
    for ss in subsets {
        let addresses = ss.get("addresses").and_then(Value::as_array).unwrap_or(&empty);
        let ip = |a: &Value| a.get("ip").and_then(Value::as_str).unwrap_or("").to_owned();
        let ports = ss.get("ports").and_then(Value::as_array).unwrap_or(&empty);
        if ports.is_empty() {
            count += addresses.len();
            for a in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(ip(a));
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            let port = port.get("port").and_then(Value::as_i64).unwrap_or(0);
            for a in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                let ip = ip(a);
                // Go's net.JoinHostPort brackets hosts with colons.
                list.push(if ip.contains(':') { format!("[{ip}]:{port}") } else { format!("{ip}:{port}") });
            }
        }
    }
    let shown = list.join(",");
    serde_json::json!(if more { format!("{shown} + {} more...", count - MAX) } else { shown })
}

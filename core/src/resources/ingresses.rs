//! Ingresses (networking.k8s.io/v1): spec changes count in `metadata.generation`. The
//! spec is checked as upstream's `ValidateIngressSpec` checks it: rules' hosts and
//! paths, backends, TLS hosts and secrets, the class name.

use super::columns::{self as cols, Column};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::{names, network, FieldError};
use serde_json::Value;

pub struct Ingresses;

impl Strategy for Ingresses {
    fn name(&self) -> &'static str {
        "ingresses"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }
}

const PATH_TYPES: [&str; 3] = ["Exact", "ImplementationSpecific", "Prefix"];
const BAD_SEQUENCES: [&str; 5] = ["//", "/./", "/../", "%2f", "%2F"];
const BAD_SUFFIXES: [&str; 2] = ["/..", "/."];
const WILDCARD_FMT: &str = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

fn items<'a>(v: &'a Value, field: &str) -> impl Iterator<Item = (usize, &'a Value)> {
    v.get(field).and_then(Value::as_array).into_iter().flatten().enumerate()
}

fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or("")
}

fn present<'a>(v: &'a Value, field: &str) -> Option<&'a Value> {
    v.get(field).filter(|v| !v.is_null())
}

fn validate(ing: &Object) -> Vec<FieldError> {
    let null = Value::Null;
    let spec = ing.get("spec").unwrap_or(&null);
    let mut errs = Vec::new();
    let rules: Vec<(usize, &Value)> = items(spec, "rules").collect();
    let default_backend = present(spec, "defaultBackend");
    if rules.is_empty() && default_backend.is_none() {
        errs.push(FieldError::invalid_unquoted("spec", "null", "either `defaultBackend` or `rules` must be specified"));
    }
    if let Some(backend) = default_backend {
        errs.extend(validate_backend(backend, "spec.defaultBackend"));
    }
    for (i, rule) in rules {
        let at = format!("spec.rules[{i}]");
        let host = text(rule, "host");
        if !host.is_empty() {
            let host_path = format!("{at}.host");
            if network::sloppy_addr(host).is_some() {
                errs.push(FieldError::invalid(&host_path, host, "must be a DNS name, not an IP address"));
            }
            errs.extend(host_errors(host).into_iter().map(|m| FieldError::invalid(&host_path, host, m)));
        }
        if let Some(http) = present(rule, "http") {
            let paths: Vec<(usize, &Value)> = items(http, "paths").collect();
            if paths.is_empty() {
                errs.push(FieldError::required(&format!("{at}.http.paths"), ""));
            }
            for (j, path) in paths {
                errs.extend(validate_path(path, &format!("{at}.http.paths[{j}]")));
            }
        }
    }
    for (i, tls) in items(spec, "tls") {
        for (j, host) in items(tls, "hosts") {
            let host = host.as_str().unwrap_or("");
            let at = format!("spec.tls[{i}].hosts[{j}]");
            errs.extend(host_errors(host).into_iter().map(|m| FieldError::invalid(&at, host, m)));
        }
        let secret = text(tls, "secretName");
        if !secret.is_empty() {
            let at = format!("spec.tls[{i}].secretName");
            errs.extend(names::dns1123_subdomain(secret).into_iter().map(|m| FieldError::invalid(&at, secret, m)));
        }
    }
    if let Some(class) = present(spec, "ingressClassName").and_then(Value::as_str) {
        errs.extend(names::dns1123_subdomain(class).into_iter().map(|m| FieldError::invalid("spec.ingressClassName", class, m)));
    }
    errs
}

/// A host: a DNS subdomain, or `*.` and one.
fn host_errors(host: &str) -> Vec<String> {
    if !host.contains('*') {
        return names::dns1123_subdomain(host);
    }
    let mut errs = Vec::new();
    if host.len() > 253 {
        errs.push("must be no more than 253 characters".to_owned());
    }
    let rest_ok = host.strip_prefix("*.").is_some_and(|rest| !rest.contains('*') && rest.len() <= 253 && names::dns1123_subdomain(rest).is_empty());
    if !rest_ok {
        errs.push(WILDCARD_FMT.to_owned());
    }
    errs
}

fn validate_path(path: &Value, at: &str) -> Vec<FieldError> {
    let field = |child: &str| format!("{at}.{child}");
    let Some(path_type) = present(path, "pathType").and_then(Value::as_str) else {
        return vec![FieldError::required(&field("pathType"), "pathType must be specified")];
    };
    let p = text(path, "path");
    let mut errs = Vec::new();
    match path_type {
        "Exact" | "Prefix" => {
            if !p.starts_with('/') {
                errs.push(FieldError::invalid(&field("path"), p, "must be an absolute path"));
            }
            for bad in BAD_SEQUENCES.iter().filter(|s| p.contains(*s)) {
                errs.push(FieldError::invalid(&field("path"), p, format!("must not contain '{bad}'")));
            }
            for bad in BAD_SUFFIXES.iter().filter(|s| p.ends_with(*s)) {
                errs.push(FieldError::invalid(&field("path"), p, format!("cannot end with '{bad}'")));
            }
        }
        "ImplementationSpecific" => {
            if !p.is_empty() && !p.starts_with('/') {
                errs.push(FieldError::invalid(&field("path"), p, "must be an absolute path"));
            }
        }
        other => errs.push(FieldError::not_supported(&field("pathType"), other, &PATH_TYPES)),
    }
    let null = Value::Null;
    errs.extend(validate_backend(path.get("backend").unwrap_or(&null), &field("backend")));
    errs
}

/// A backend is a Service (by name, and port name or number) or a resource.
fn validate_backend(backend: &Value, at: &str) -> Vec<FieldError> {
    let field = |child: &str| format!("{at}.{child}");
    let mut errs = Vec::new();
    match (present(backend, "resource"), present(backend, "service")) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(at, "", "cannot set both resource and service backends")),
        (Some(resource), None) => errs.extend(typed_reference(resource, &field("resource"))),
        (None, Some(service)) => {
            match text(service, "name") {
                "" => errs.push(FieldError::required(&field("service.name"), "")),
                name => errs.extend(names::dns1035_label(name).into_iter().map(|m| FieldError::invalid(&field("service.name"), name, m))),
            }
            let null = Value::Null;
            let port = service.get("port").unwrap_or(&null);
            let (name, number) = (text(port, "name"), port.get("number").and_then(Value::as_i64).unwrap_or(0));
            match (name.is_empty(), number == 0) {
                (false, false) => errs.push(FieldError::invalid(at, "", "cannot set both port name & port number")),
                (false, true) => {
                    errs.extend(network::port_name(name).into_iter().map(|m| FieldError::invalid(&field("service.port.name"), name, m)))
                }
                (true, false) => errs.extend(
                    network::port_number(number)
                        .into_iter()
                        .map(|m| FieldError::invalid_unquoted(&field("service.port.number"), &number.to_string(), &m)),
                ),
                (true, true) => errs.push(FieldError::required(at, "port name or number is required")),
            }
        }
        (None, None) => errs.push(FieldError::invalid(at, "", "resource or service backend is required")),
    }
    errs
}

/// A reference to an object of any kind (a backend's resource, an IngressClass's
/// parameters): its group a DNS subdomain, a kind and a name.
pub(super) fn typed_reference(reference: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(group) = present(reference, "apiGroup").and_then(Value::as_str) {
        let path = format!("{at}.apiGroup");
        errs.extend(names::dns1123_subdomain(group).into_iter().map(|m| FieldError::invalid(&path, group, m)));
    }
    for part in ["kind", "name"] {
        let path = format!("{at}.{part}");
        match text(reference, part) {
            "" => errs.push(FieldError::required(&path, format!("{part} is required"))),
            v => errs.extend(names::path_segment(v).into_iter().map(|m| FieldError::invalid(&path, v, m))),
        }
    }
    errs
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Class", kind: "string", description: "The name of the IngressClass resource that should be used for additional configuration", format: "", priority: 0, cell: |o| cols::or_none(cols::at(o, &["spec", "ingressClassName"]).and_then(Value::as_str).unwrap_or("").to_owned()) },
    Column { name: "Hosts", kind: "string", description: "Hosts that incoming requests are matched against before the ingress rule", format: "", priority: 0, cell: hosts },
    Column { name: "Address", kind: "string", description: "Address is a list containing ingress points for the load-balancer", format: "", priority: 0, cell: |o| cols::load_balancer_addresses(o) },
    Column { name: "Ports", kind: "string", description: "Ports of TLS configurations that open", format: "", priority: 0, cell: |o| serde_json::json!(if cols::at(o, &["spec", "tls"]).and_then(Value::as_array).is_some_and(|t| !t.is_empty()) { "80, 443" } else { "80" }) },
];

/// HOSTS: the rules' hosts, the first three (a rule without a host counts but is not
/// shown), `*` for none, as upstream's `formatHosts`.
fn hosts(ingress: &Object) -> Value {
    let rules = cols::at(ingress, &["spec", "rules"]).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let (mut list, mut more) = (Vec::new(), false);
    for rule in rules {
        if list.len() == 3 {
            more = true;
        }
        match rule.get("host").and_then(Value::as_str) {
            Some(host) if !more && !host.is_empty() => list.push(host),
            _ => {}
        }
    }
    serde_json::json!(match (list.is_empty(), more) {
        (true, _) => "*".to_owned(),
        (false, true) => format!("{} + {} more...", list.join(","), rules.len() - 3),
        (false, false) => list.join(","),
    })
}

//! IPAddresses (networking.k8s.io/v1): one per allocated Service address, named by the
//! address in canonical form; its `parentRef` says whose it is and never changes.
//! Services claim theirs directly in storage (`services/allocation.rs`); these rules
//! are for the objects clients write.

use super::{Column, Columns, Object, Strategy};
use crate::service_network::cidr::parse_ip;
use crate::validation::FieldError;
use serde_json::Value;

pub struct IpAddresses;

const BAD_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

fn name_of(obj: &Object) -> &str {
    obj.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("")
}

fn parent_ref(obj: &Object) -> Option<&Value> {
    obj.get("spec").and_then(|s| s.get("parentRef")).filter(|p| !p.is_null())
}

const COLUMNS: &[Column] = &[Column {
    name: "ParentRef",
    kind: "string",
    description: "ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object.",
    format: "", priority: 0, cell: |o| {
        let parent = o.get("spec").and_then(|s| s.get("parentRef"));
        let field = |f: &str| parent.and_then(|p| p.get(f)).and_then(Value::as_str).unwrap_or("");
        let mut shown = field("resource").to_owned();
        if !field("group").is_empty() {
            shown = format!("{shown}.{}", field("group"));
        }
        if !field("namespace").is_empty() {
            shown = format!("{shown}/{}", field("namespace"));
        }
        Value::String(format!("{shown}/{}", field("name")))
    },
}];

impl Strategy for IpAddresses {
    fn name(&self) -> &'static str {
        "ipaddresses"
    }

    /// Upstream's printer adds an Age cell its columns do not declare (kubectl shows
    /// no AGE for it).
    fn columns(&self) -> Columns<'_> {
        Columns::AgeUndeclared(COLUMNS)
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let name = name_of(new);
        match parse_ip(name) {
            None => errs.push(FieldError::invalid("metadata.name", name, BAD_IP)),
            Some(ip) if ip.to_string() != name => {
                errs.push(FieldError::invalid("metadata.name", name, format!("must be in canonical form (\"{ip}\")")))
            }
            Some(_) => {}
        }
        match parent_ref(new) {
            None => errs.push(FieldError::required("spec.parentRef", "")),
            Some(parent) => {
                for field in ["resource", "name"] {
                    if parent.get(field).and_then(Value::as_str).unwrap_or("").is_empty() {
                        errs.push(FieldError::required(&format!("spec.parentRef.{field}"), ""));
                    }
                }
            }
        }
        errs
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        match (parent_ref(new), parent_ref(old)) {
            (a, b) if a == b => Vec::new(),
            (a, _) => vec![FieldError::invalid_json("spec.parentRef", a.unwrap_or(&Value::Null), "field is immutable")],
        }
    }
}

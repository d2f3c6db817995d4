//! ServiceCIDRs (networking.k8s.io/v1): the ranges Service addresses come from, one
//! per family at most. The server writes `kubernetes` from
//! `--service-cluster-ip-range` at start; allocation draws from that range.

use super::{Column, Columns, Object, Strategy};
use crate::service_network::Cidr;
use crate::validation::FieldError;
use serde_json::{json, Value};

pub struct ServiceCidrs;

fn cidrs(obj: &Object) -> Vec<String> {
    crate::rest::object::strings(obj.get("spec").and_then(|s| s.get("cidrs")))
}

const COLUMNS: &[Column] = &[Column {
    name: "CIDRs",
    kind: "string",
    description: "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs. Max of two CIDRs is allowed, one of each IP family. This field is immutable.",
    format: "", priority: 0, cell: |o| Value::String(cidrs(o).join(",")),
}];

impl Strategy for ServiceCidrs {
    fn name(&self) -> &'static str {
        "servicecidrs"
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        let cidrs = cidrs(new);
        let listed = json!(cidrs);
        if cidrs.is_empty() {
            return vec![FieldError::required("spec.cidrs", "at least one CIDR required")];
        }
        if cidrs.len() > 2 {
            // Upstream shows the whole spec, as Go prints its struct.
            let spec = json!({"CIDRs": cidrs});
            return vec![FieldError::invalid_unquoted("spec.cidrs", &crate::validation::go_json(&spec), "may only hold up to 2 values")];
        }
        let mut errs = Vec::new();
        let mut parsed = Vec::new();
        for (i, text) in cidrs.iter().enumerate() {
            match Cidr::parse(text) {
                Err(_) => errs.push(FieldError::invalid(
                    &format!("spec.cidrs[{i}]"),
                    text,
                    "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                )),
                Ok(cidr) if cidr.to_string() != *text => errs.push(FieldError::invalid(
                    &format!("spec.cidrs[{i}]"),
                    text,
                    format!("must be in canonical form (\"{cidr}\")"),
                )),
                Ok(cidr) => parsed.push(cidr),
            }
        }
        if errs.is_empty() && parsed.len() == 2 && parsed[0].family() == parsed[1].family() {
            let why = "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64";
            errs.push(FieldError::invalid_json("spec.cidrs", &listed, why));
        }
        errs
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let (now, before) = (cidrs(new), cidrs(old));
        // The one change allowed: a single-stack range gains the other family's.
        let upgrade = before.len() == 1 && now.len() == 2 && now[0] == before[0];
        if now == before {
            return Vec::new();
        }
        if upgrade {
            return self.validate_create(new);
        }
        let shown = new.get("spec").and_then(|s| s.get("cidrs")).cloned().unwrap_or(Value::Null);
        vec![FieldError::invalid_json("spec.cidrs", &shown, "field is immutable")]
    }
}

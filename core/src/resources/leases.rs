//! Leases (coordination.k8s.io/v1): a positive duration, transitions never negative
//! (upstream's `ValidateLeaseSpec`).

use super::columns::{self as cols, Column};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::FieldError;
use serde_json::Value;

pub struct Leases;

impl Strategy for Leases {
    fn name(&self) -> &'static str {
        "leases"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }
}

fn validate(lease: &Object) -> Vec<FieldError> {
    let spec = |f: &str| lease.get("spec").and_then(|s| s.get(f)).and_then(Value::as_i64);
    let mut errs = Vec::new();
    if let Some(d) = spec("leaseDurationSeconds").filter(|d| *d <= 0) {
        errs.push(FieldError::invalid_unquoted("spec.leaseDurationSeconds", &d.to_string(), "must be greater than 0"));
    }
    if let Some(t) = spec("leaseTransitions").filter(|t| *t < 0) {
        errs.push(FieldError::invalid_unquoted("spec.leaseTransitions", &t.to_string(), "must be greater than or equal to 0"));
    }
    errs
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Holder", kind: "string", description: "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.", format: "", priority: 0, cell: |o| cols::str_at(o, &["spec", "holderIdentity"]) },
];

//! Audit, as kube-apiserver's `--audit-policy-file` describes it: which requests are
//! recorded at which level, and at which stages. The policy is read and checked here,
//! and each audited request's [`Record`] renders its `audit.k8s.io/v1` `Event` lines;
//! writing them out is the adapter's.

mod event;
mod policy;
#[cfg(test)]
mod tests;

pub use event::{audit_id, Arrival, AuditAnnotations, ObjectRef, Record, AUDIT_ID_HEADER};
pub use policy::{Attributes, AuditConfig, Level, Policy, Stage};

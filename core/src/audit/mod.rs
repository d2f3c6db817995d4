//! Audit, as kube-apiserver's `--audit-policy-file` describes it: which requests are
//! recorded at which level, and at which stages. The policy is read and checked here;
//! writing events is the adapter's.

mod policy;

pub use policy::{Attributes, AuditConfig, Level, Policy, Stage};

//! The conformance suite shared by every backend and the real binary.

pub mod model;
pub mod storage_suite;

pub mod chained;
pub mod etcd;
pub mod harness;
pub mod kubectl_watch;

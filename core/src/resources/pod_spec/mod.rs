//! What every kind that carries a pod spec shares: a Pod's own spec, and the pod
//! templates embedded in PodTemplates, ReplicationControllers, Deployments, ReplicaSets,
//! StatefulSets, DaemonSets, Jobs and CronJobs.

pub mod defaults;
pub mod image;
pub mod volumes;

pub use defaults::{default_pod, default_template};

//! What a kind holds in storage besides its own object — a Service's cluster IPs
//! (IPAddress objects) and node ports (the node port record) — claimed before the
//! object is written and released after it is gone, as upstream's Service REST storage
//! allocates around the generic store.
//!
//! A claim or a release is a small state machine over storage operations: the REST
//! handlers drive it ([`Claim::Storage`] until [`Claim::Done`] or [`Claim::Refused`])
//! without knowing which kind it is for.

use super::Object;
use crate::service_network::ServiceNetwork;
use crate::status::ApiError;
use crate::storage::{Completion, StorageOp};
use std::time::SystemTime;

/// Where a claim or a release stands.
pub enum Claim {
    /// Run this, then resume the state with its outcome.
    Storage(StorageOp, Box<dyn ClaimState>),
    /// Finished: the object with what was claimed filled in (for a release, the
    /// object it was given).
    Done(Object),
    /// The object may not be written: this is the answer (everything claimed on the
    /// way already given back).
    Refused(ApiError),
}

impl std::fmt::Debug for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Claim::Storage(op, state) => f.debug_tuple("Storage").field(op).field(state).finish(),
            Claim::Done(_) => f.write_str("Done"),
            Claim::Refused(e) => f.debug_tuple("Refused").field(&e.message).finish(),
        }
    }
}

/// A paused claim or release.
pub trait ClaimState: Send + std::fmt::Debug {
    fn resume(self: Box<Self>, done: Completion) -> Claim;
}

/// What a claim may know of the request and the server.
#[derive(Clone, Debug)]
pub struct ClaimContext {
    pub network: ServiceNetwork,
    /// `--etcd-prefix`: where the claimed records live.
    pub storage_prefix: String,
    pub now: SystemTime,
    /// Fresh random bytes: where a search for a free address or port starts, and the
    /// UIDs of the objects a claim writes.
    pub entropy: [u8; 48],
    /// Check and fill in, but write nothing.
    pub dry_run: bool,
}

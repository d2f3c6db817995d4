//! What admission is told about one write: upstream's `admission.Attributes`, owned,
//! because a review outlives the handler step that started it (it pauses for reads,
//! writes and webhook calls).

use super::Operation;
use crate::authn::UserInfo;
use crate::rest::object::Object;
use std::time::SystemTime;

/// One write under review.
#[derive(Clone, Debug)]
pub struct Request {
    pub operation: Operation,
    /// The resource written, as the request names it.
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    /// The kind of the object written (a subresource's own kind, `Scale`, where it has
    /// one).
    pub kind: String,
    /// Whether the resource is namespaced.
    pub namespaced: bool,
    pub namespace: Option<String>,
    /// The object's name; empty while a create leaves it to `generateName`.
    pub name: String,
    pub user: UserInfo,
    pub dry_run: bool,
    /// The stored object: set for updates and deletes.
    pub old_object: Option<Object>,
    /// The request's time (quota counts a pod past its grace period as gone).
    pub now: SystemTime,
    /// Random bytes for names plugins generate (a token volume's).
    pub entropy: [u8; 8],
}

impl Request {
    /// Whether this is `resource` (and `subresource`) of the core group.
    pub fn is_core(&self, resource: &str, subresource: &str) -> bool {
        self.group.is_empty() && self.resource == resource && self.subresource == subresource
    }

    /// Whether this is a Namespace (or its subresource): such requests carry the
    /// namespace's own name as their namespace.
    pub fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.resource == crate::resources::namespaces::RESOURCE
    }

    /// The namespace, or "" for a cluster-scoped object.
    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }

    /// Seconds since the epoch.
    pub fn now_seconds(&self) -> u64 {
        self.now.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
    }
}

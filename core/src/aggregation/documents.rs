//! What the aggregator learned from its extension servers between availability passes:
//! the resources each service-backed APIService's group version serves (from the
//! discovery GET of its last check, as kube-aggregator's discovery manager falls back
//! to a backend's legacy document), and the entry the backend's OpenAPI v3 index gives
//! that group version (as kube-aggregator's OpenAPI v3 controller downloads the index).
//! The availability pass fills it ([`super::availability`]); discovery and OpenAPI read
//! it.

use super::Backend;
use crate::discovery::ApiResourceDiscovery;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// How long a backend's OpenAPI v3 index is kept before it is read again (upstream's
/// controller reads it once a minute after a success).
pub const OPENAPI_REFRESH: Duration = Duration::from_secs(60);

/// The documents of every service-backed APIService, by its name.
#[derive(Debug, Default)]
pub(crate) struct BackendDocuments {
    /// The resources of the last discovery GET that answered 200 with a document;
    /// absent after one that did not.
    resources: Mutex<HashMap<String, Vec<ApiResourceDiscovery>>>,
    openapi: Mutex<HashMap<String, OpenApiIndexEntry>>,
}

/// What a backend's OpenAPI v3 index said of its APIService's group version.
#[derive(Debug)]
struct OpenApiIndexEntry {
    /// The Service it was read from (namespace, name, port): another one is read again.
    service: (String, String, i64),
    /// The index's entry (`{"serverRelativeURL": …}`), if it had one.
    entry: Option<Value>,
    /// When it was read.
    read: SystemTime,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn service_of(backend: &Backend) -> (String, String, i64) {
    (backend.namespace.clone(), backend.service.clone(), backend.port)
}

impl BackendDocuments {
    /// Keep (or, with `None`, forget) the resources `apiservice`'s backend serves.
    pub(crate) fn set_resources(&self, apiservice: &str, resources: Option<Vec<ApiResourceDiscovery>>) {
        let mut all = locked(&self.resources);
        match resources {
            Some(r) => {
                all.insert(apiservice.to_owned(), r);
            }
            None => {
                all.remove(apiservice);
            }
        }
    }

    /// The resources of `apiservice`'s group version, as its backend last listed them.
    pub(crate) fn resources(&self, apiservice: &str) -> Option<Vec<ApiResourceDiscovery>> {
        locked(&self.resources).get(apiservice).cloned()
    }

    /// Whether `backend`'s OpenAPI v3 index is to be read at `now`: never read, read
    /// from another Service, or read [`OPENAPI_REFRESH`] ago.
    pub(crate) fn openapi_due(&self, backend: &Backend, now: SystemTime) -> bool {
        locked(&self.openapi).get(&backend.name).is_none_or(|known| {
            known.service != service_of(backend) || now.duration_since(known.read).is_ok_and(|age| age >= OPENAPI_REFRESH)
        })
    }

    /// Keep what `backend`'s OpenAPI v3 index, read at `now`, gives its group version.
    pub(crate) fn set_openapi_entry(&self, backend: &Backend, entry: Option<Value>, read: SystemTime) {
        let known = OpenApiIndexEntry { service: service_of(backend), entry, read };
        locked(&self.openapi).insert(backend.name.clone(), known);
    }

    /// The OpenAPI v3 index entry of `apiservice`'s group version, from its backend.
    pub(crate) fn openapi_entry(&self, apiservice: &str) -> Option<Value> {
        locked(&self.openapi).get(apiservice).and_then(|known| known.entry.clone())
    }

    /// Forget every APIService but `names` (those deleted, or no longer naming a Service).
    pub(crate) fn retain(&self, names: &HashSet<&str>) {
        locked(&self.resources).retain(|name, _| names.contains(name.as_str()));
        locked(&self.openapi).retain(|name, _| names.contains(name.as_str()));
    }
}

//! What the webhook and policy plugins share: their configuration objects, read as
//! any plugin's reads are (from the watch caches); the request as matching sees it;
//! the registry's view of equivalent resources; and expressions compiled once per
//! stored revision of the object that holds them, as upstream compiles on each
//! informer event rather than per request.

use super::matching::{self, EquivalentResources, GroupVersionKind, GroupVersionResource};
use super::reads::{Fetched, Read, Stored};
use super::request::Request;
use super::{Context, Operation};
use crate::registry::Snapshot;
use crate::rest::object::Object;
use crate::storage::Revision;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub(super) const GROUP: &str = "admissionregistration.k8s.io";

/// The read of every object of the configuration resource `resource`.
pub(super) fn read_all(chain: &Context, resource: &str) -> Read {
    Read::Objects { prefix: chain.prefix(GROUP, resource, None) }
}

/// The objects of `resource` read by [`read_all`], in name order.
pub(super) fn stored<'f>(chain: &Context, fetched: &'f Fetched, resource: &str) -> &'f [Stored] {
    fetched.objects(&chain.prefix(GROUP, resource, None))
}

/// The read of the request's namespace, which selectors and `namespaceObject` see.
pub(super) fn namespace_read(chain: &Context, request: &Request) -> Option<Read> {
    request.namespace.as_deref().map(|ns| chain.namespace_read(ns))
}

/// The request's namespace, when it has one and it was read.
pub(super) fn namespace<'f>(chain: &Context, fetched: &'f Fetched, request: &Request) -> Option<&'f Object> {
    let ns = request.namespace.as_deref()?;
    chain.namespace(fetched, ns).map(|s| &*s.object)
}

/// The request as matching and CEL see it: the new object (none for a delete) and
/// the stored one.
pub(super) fn matching_request<'a>(request: &'a Request, object: &'a Object) -> matching::Request<'a> {
    let mut m = matching::Request::new(request.attributes(), (&request.group, &request.version, &request.kind));
    m.object = (request.operation != Operation::Delete).then_some(object);
    m.old_object = request.old_object.as_ref();
    m
}

/// The resources served now, for `matchPolicy: Equivalent`: resources stored under
/// the same keys are the same resource (an Event in core/v1 and events.k8s.io/v1,
/// a HorizontalPodAutoscaler in autoscaling v1 and v2, a CRD's versions). The
/// registry is asked for only when a question needs it.
pub(super) struct ServedResources<'a> {
    lookup: &'a dyn super::Lookup,
    snapshot: std::cell::OnceCell<Option<Snapshot>>,
}

impl<'a> ServedResources<'a> {
    pub fn new(lookup: &'a dyn super::Lookup) -> ServedResources<'a> {
        ServedResources { lookup, snapshot: std::cell::OnceCell::new() }
    }

    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.snapshot.get_or_init(|| self.lookup.served()).as_ref()
    }

    fn find(&self, r: &GroupVersionResource) -> Option<&crate::registry::Resource> {
        self.snapshot()?.lookup(&r.group, &r.version, &r.resource)
    }
}

impl EquivalentResources for ServedResources<'_> {
    fn equivalents(&self, resource: &GroupVersionResource, subresource: &str) -> Vec<GroupVersionResource> {
        let (Some(snapshot), Some(own)) = (self.snapshot(), self.find(resource)) else {
            return vec![resource.clone()];
        };
        snapshot
            .resources()
            .iter()
            .filter(|r| r.plural == own.plural && r.storage_group() == own.storage_group())
            .filter(|r| subresource.is_empty() || r.subresource(subresource).is_some())
            .map(|r| GroupVersionResource::new(&r.group, &r.version, &r.plural))
            .collect()
    }

    fn kind_for(&self, resource: &GroupVersionResource, subresource: &str) -> Option<GroupVersionKind> {
        let r = self.find(resource)?;
        if subresource.is_empty() {
            return Some(GroupVersionKind::new(&r.group, &r.version, &r.kind));
        }
        let s = r.subresource(subresource)?;
        let group = s.group.as_deref().unwrap_or(&r.group);
        let version = s.version.as_deref().unwrap_or(&r.version);
        Some(GroupVersionKind::new(group, version, &s.kind))
    }
}

/// A compiled form, and the revision of the object it was compiled from.
type Entry = (Revision, Arc<dyn Any + Send + Sync>);

/// Compiled forms of stored objects, each kept until the object's revision changes.
#[derive(Default)]
pub struct Compiled {
    entries: Mutex<HashMap<String, Entry>>,
    /// How many entries there are, read without the lock: every write asks whether
    /// some are stale, and almost always none are.
    held: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.entries.lock().map(|e| e.len()).unwrap_or(0);
        f.debug_struct("Compiled").field("entries", &n).finish()
    }
}

impl Compiled {
    /// What `make` compiles from `stored` (kept under `kind` and its key).
    pub(super) fn get<T: Any + Send + Sync>(&self, kind: &str, stored: &Stored, make: impl FnOnce() -> T) -> Arc<T> {
        let key = format!("{kind}{}", stored.key);
        if let Some((revision, kept)) = self.entries.lock().expect("not poisoned").get(&key) {
            if *revision == stored.revision {
                if let Ok(kept) = kept.clone().downcast::<T>() {
                    return kept;
                }
            }
        }
        let made = Arc::new(make());
        let mut entries = self.entries.lock().expect("not poisoned");
        entries.insert(key, (stored.revision, made.clone()));
        self.held.store(entries.len(), std::sync::atomic::Ordering::Relaxed);
        made
    }

    /// Forget what was compiled for objects of `kind` that are no longer stored.
    pub(super) fn forget_others(&self, kind: &str, live: &[Stored]) {
        if self.held.load(std::sync::atomic::Ordering::Relaxed) <= live.len() {
            return;
        }
        let mut entries = self.entries.lock().expect("not poisoned");
        let held = entries.keys().filter(|k| k.starts_with(kind)).count();
        if held > live.len() {
            entries.retain(|k, _| !k.starts_with(kind) || live.iter().any(|s| k[kind.len()..] == s.key));
            self.held.store(entries.len(), std::sync::atomic::Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(key: &str, revision: Revision) -> Stored {
        Stored { key: key.to_owned(), revision, object: Arc::new(Object::new()) }
    }

    #[test]
    fn compiled_forms_are_kept_per_revision_and_forgotten_with_their_objects() {
        let compiled = Compiled::default();
        let made = std::cell::Cell::new(0);
        let make = || {
            made.set(made.get() + 1);
            made.get()
        };
        let a = stored("/registry/x/a", 5);
        assert_eq!(*compiled.get("k", &a, make), 1);
        assert_eq!(*compiled.get("k", &a, make), 1, "the same revision is not compiled again");
        assert_eq!(*compiled.get("k", &stored("/registry/x/a", 6), make), 2);
        assert_eq!(*compiled.get("k", &stored("/registry/x/b", 1), make), 3);
        compiled.forget_others("k", &[stored("/registry/x/b", 1)]);
        assert_eq!(*compiled.get("k", &stored("/registry/x/b", 1), make), 3);
        assert_eq!(*compiled.get("k", &stored("/registry/x/a", 6), make), 4, "a forgotten object is compiled anew");
    }
}

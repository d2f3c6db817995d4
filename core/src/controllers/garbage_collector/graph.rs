//! The garbage collector's view of ownership, kept up to date from the watch caches'
//! events, as upstream's graph builder keeps its graph: every object that has owners
//! or waits for its dependents (the `orphan` and `foregroundDeletion` finalizers), its
//! dependents by owner, and the keys of owners whose changes concern dependents.
//!
//! Objects that neither have owners nor wait are not read at all: an event is parsed
//! only when its bytes mention `ownerReferences` or `deletionTimestamp`, or when its key
//! is known.

use crate::rest::finalizers::{FOREGROUND, ORPHAN};
use crate::rest::object::strings;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// An owner reference, as a dependent states it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OwnerRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub block_owner_deletion: bool,
    /// As written, to be written back.
    pub raw: Value,
}

/// One object the collector follows.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    pub key: String,
    /// Which of the collector's resources it is ([`super::Resources`]).
    pub resource: usize,
    pub namespace: Option<String>,
    pub name: String,
    pub uid: String,
    pub owners: Vec<OwnerRef>,
    pub deleting: bool,
    pub finalizers: Vec<String>,
    /// The revision it was read at: a delete is conditional on it, so an object that
    /// gained an owner meanwhile is not collected.
    pub revision: u64,
}

impl Node {
    /// Read `object` (stored at `key` as of `revision`), or `None` when the collector
    /// has nothing to follow in it.
    pub fn read(key: &str, resource: usize, revision: u64, object: &Value) -> Option<Node> {
        let meta = object.get("metadata")?;
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        let owners: Vec<OwnerRef> = meta
            .get("ownerReferences")
            .and_then(Value::as_array)
            .map(|refs| {
                refs.iter()
                    .map(|r| OwnerRef {
                        api_version: text(r, "apiVersion"),
                        kind: text(r, "kind"),
                        name: text(r, "name"),
                        uid: text(r, "uid"),
                        block_owner_deletion: r.get("blockOwnerDeletion") == Some(&Value::Bool(true)),
                        raw: r.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let deleting = meta.get("deletionTimestamp").is_some_and(|t| !t.is_null());
        let finalizers = strings(meta.get("finalizers"));
        let waits = deleting && finalizers.iter().any(|f| f == ORPHAN || f == FOREGROUND);
        if owners.is_empty() && !waits {
            return None;
        }
        Some(Node {
            key: key.to_owned(),
            resource,
            namespace: meta.get("namespace").and_then(Value::as_str).map(str::to_owned),
            name: text(meta, "name"),
            uid: text(meta, "uid"),
            owners,
            deleting,
            finalizers,
            revision,
        })
    }

    pub fn has(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|f| f == finalizer)
    }

}

/// Whether stored bytes may concern the collector (a cheap look before parsing).
pub(crate) fn may_concern(bytes: &[u8]) -> bool {
    let mentions = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    mentions(b"\"ownerReferences\"") || mentions(b"\"deletionTimestamp\"")
}

/// The graph.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    /// By uid.
    nodes: BTreeMap<String, Node>,
    by_key: BTreeMap<String, String>,
    /// Owner uid → the uids of the nodes that name it.
    dependents: BTreeMap<String, BTreeSet<String>>,
    /// An owner's storage key → the uids of the nodes that name it there.
    watched: BTreeMap<String, BTreeSet<String>>,
    /// Each node's owners' keys, as resolved when it was added.
    owner_keys: BTreeMap<String, Vec<String>>,
    /// Uids to look at.
    dirty: BTreeSet<String>,
}

impl Graph {
    pub fn node(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
    }

    pub fn dependents_of(&self, uid: &str) -> Vec<&Node> {
        self.dependents.get(uid).into_iter().flatten().filter_map(|d| self.nodes.get(d)).collect()
    }

    pub fn knows_key(&self, key: &str) -> bool {
        self.by_key.contains_key(key) || self.watched.contains_key(key)
    }

    /// The object at `key` changed (now `node`, or `None`: gone, or nothing to
    /// follow). `owner_keys` are where its owners are stored, as far as they resolve.
    pub fn set(&mut self, key: &str, node: Option<Node>, owner_keys: Vec<String>) {
        // Whoever names this key as its owner looks again.
        if let Some(waiting) = self.watched.get(key) {
            self.dirty.extend(waiting.iter().cloned());
        }
        if let Some(old_uid) = self.by_key.remove(key) {
            self.remove(&old_uid);
        }
        let Some(node) = node else {
            return;
        };
        let uid = node.uid.clone();
        for owner in &node.owners {
            self.dependents.entry(owner.uid.clone()).or_default().insert(uid.clone());
            // An owner waiting for its dependents looks again when one changes.
            if self.nodes.contains_key(&owner.uid) {
                self.dirty.insert(owner.uid.clone());
            }
        }
        for owner_key in &owner_keys {
            self.watched.entry(owner_key.clone()).or_default().insert(uid.clone());
        }
        // Its own dependents look again (it may now be waiting for them).
        if let Some(deps) = self.dependents.get(&uid) {
            self.dirty.extend(deps.iter().cloned());
        }
        self.owner_keys.insert(uid.clone(), owner_keys);
        self.by_key.insert(key.to_owned(), uid.clone());
        self.dirty.insert(uid.clone());
        self.nodes.insert(uid, node);
    }

    fn remove(&mut self, uid: &str) {
        let Some(node) = self.nodes.remove(uid) else {
            return;
        };
        for owner in &node.owners {
            if let Some(deps) = self.dependents.get_mut(&owner.uid) {
                deps.remove(uid);
                if deps.is_empty() {
                    self.dependents.remove(&owner.uid);
                }
            }
            if self.nodes.contains_key(&owner.uid) {
                self.dirty.insert(owner.uid.clone());
            }
        }
        for owner_key in self.owner_keys.remove(uid).unwrap_or_default() {
            if let Some(deps) = self.watched.get_mut(&owner_key) {
                deps.remove(uid);
                if deps.is_empty() {
                    self.watched.remove(&owner_key);
                }
            }
        }
        if let Some(deps) = self.dependents.get(uid) {
            self.dirty.extend(deps.iter().cloned());
        }
        self.dirty.remove(uid);
    }

    /// Forget every node of resource `resource` (its cache is read again).
    pub fn forget_resource(&mut self, resource: usize) {
        let keys: Vec<String> = self.nodes.values().filter(|n| n.resource == resource).map(|n| n.key.clone()).collect();
        for key in keys {
            self.set(&key, None, Vec::new());
        }
    }

    /// The nodes with an owner reference that `names` picks.
    pub fn naming(&self, names: impl Fn(&OwnerRef) -> bool) -> Vec<Node> {
        self.nodes.values().filter(|n| n.owners.iter().any(&names)).cloned().collect()
    }

    /// The uids to look at now, in order; the set is emptied.
    pub fn take_dirty(&mut self) -> Vec<String> {
        std::mem::take(&mut self.dirty).into_iter().filter(|u| self.nodes.contains_key(u)).collect()
    }
}

//! What the collector does about one object, as upstream's `attemptToDeleteItem`,
//! `orphanDependents` and `processDeletingDependentsItem` decide it.

use super::graph::{Graph, Node, OwnerRef};
use crate::rest::finalizers::{FOREGROUND, ORPHAN};

/// What an owner reference names now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// It exists, with that uid, and does not wait for its dependents.
    Solid,
    /// Gone, or another object of that name (another uid).
    Dangling,
    /// It exists and is being deleted with its dependents first.
    WaitingForDependents,
    /// It cannot be looked up (a kind not served, a namespaced owner of a
    /// cluster-scoped object): the object is left alone, as upstream's collector
    /// leaves an object whose references it cannot classify.
    Unresolvable,
}

/// One write the collector wants.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Delete the object, with this propagation policy for its own dependents.
    Delete { uid: String, propagation: &'static str },
    /// Keep only these owner references (the others are gone or waiting), or the same
    /// ones no longer blocking their owners' deletion.
    SetOwners { uid: String, owners: Vec<serde_json::Value> },
    /// Take this finalizer away (the dependents are handled).
    RemoveFinalizer { uid: String, finalizer: &'static str },
}

/// What to do about node `uid`; `owner` says what each owner reference names.
pub(crate) fn decide(graph: &Graph, uid: &str, owner: &dyn Fn(&Node, &OwnerRef) -> Owner) -> Vec<Action> {
    let Some(node) = graph.node(uid) else {
        return Vec::new();
    };
    if node.deleting {
        return if node.has(ORPHAN) {
            orphan_dependents(graph, node)
        } else if node.has(FOREGROUND) {
            deleting_dependents(graph, node)
        } else {
            // Already going; nothing to do for it.
            Vec::new()
        };
    }
    if node.owners.is_empty() {
        return Vec::new();
    }
    let states: Vec<Owner> = node.owners.iter().map(|r| owner(node, r)).collect();
    if states.contains(&Owner::Unresolvable) {
        return Vec::new();
    }
    let solid = states.contains(&Owner::Solid);
    let waiting = states.contains(&Owner::WaitingForDependents);
    if solid {
        // Keep the object; drop what points at owners that are gone or waiting.
        if !states.iter().any(|s| matches!(s, Owner::Dangling | Owner::WaitingForDependents)) {
            return Vec::new();
        }
        let kept = node
            .owners
            .iter()
            .zip(&states)
            .filter(|(_, s)| **s == Owner::Solid)
            .map(|(r, _)| r.raw.clone())
            .collect();
        return vec![Action::SetOwners { uid: uid.to_owned(), owners: kept }];
    }
    let dependents = graph.dependents_of(uid);
    if waiting && !dependents.is_empty() {
        // An owner waits for it, and it has dependents of its own: it goes the same way.
        // One of them waiting for its own dependents may wait for it in turn (a cycle):
        // its references stop blocking first, as upstream's collector unblocks them.
        let cycle = dependents.iter().any(|d| d.deleting && d.has(FOREGROUND));
        if cycle && node.owners.iter().any(|r| r.block_owner_deletion) {
            return vec![Action::SetOwners { uid: uid.to_owned(), owners: node.owners.iter().map(unblocked).collect() }];
        }
        return vec![Action::Delete { uid: uid.to_owned(), propagation: "Foreground" }];
    }
    let propagation = if node.has(ORPHAN) {
        "Orphan"
    } else if node.has(FOREGROUND) {
        "Foreground"
    } else {
        "Background"
    };
    vec![Action::Delete { uid: uid.to_owned(), propagation }]
}

/// Reference `r`, no longer blocking its owner's deletion.
fn unblocked(r: &OwnerRef) -> serde_json::Value {
    let mut raw = r.raw.clone();
    if r.block_owner_deletion {
        raw["blockOwnerDeletion"] = serde_json::Value::Bool(false);
    }
    raw
}

/// An owner with the `orphan` finalizer: its dependents lose their reference to it,
/// then it loses the finalizer.
fn orphan_dependents(graph: &Graph, owner: &Node) -> Vec<Action> {
    let dependents = graph.dependents_of(&owner.uid);
    if dependents.is_empty() {
        return vec![Action::RemoveFinalizer { uid: owner.uid.clone(), finalizer: ORPHAN }];
    }
    dependents
        .into_iter()
        .map(|d| Action::SetOwners {
            uid: d.uid.clone(),
            owners: d.owners.iter().filter(|r| r.uid != owner.uid).map(|r| r.raw.clone()).collect(),
        })
        .collect()
}

/// An owner with the `foregroundDeletion` finalizer: it loses the finalizer once no
/// dependent that blocks its deletion is left (its dependents are deleted as they see
/// it waiting).
fn deleting_dependents(graph: &Graph, owner: &Node) -> Vec<Action> {
    let blocking = graph
        .dependents_of(&owner.uid)
        .into_iter()
        .any(|d| d.owners.iter().any(|r| r.uid == owner.uid && r.block_owner_deletion));
    if blocking {
        return Vec::new();
    }
    vec![Action::RemoveFinalizer { uid: owner.uid.clone(), finalizer: FOREGROUND }]
}

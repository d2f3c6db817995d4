//! Finalizers, as kube-apiserver's generic store keeps them: a DELETE of an object
//! that still has finalizers only marks it deleting (`deletionTimestamp`, a grace
//! period of 0, its generation counted), and the write that takes its last finalizer
//! away deletes it. While it is being deleted no finalizer may be added.

use super::object::{meta_mut, strings, Object};
use crate::validation::FieldError;
use serde_json::{json, Value};

/// The object's `metadata.finalizers`.
pub(crate) fn of(obj: &Object) -> Vec<String> {
    strings(obj.get("metadata").and_then(|m| m.get("finalizers")))
}

/// Whether the object is being deleted (it has a `deletionTimestamp`).
pub(crate) fn deleting(obj: &Object) -> bool {
    obj.get("metadata").and_then(|m| m.get("deletionTimestamp")).is_some_and(|t| !t.is_null())
}

/// Whether a write leaves `obj` ready to go: being deleted, with no finalizer left and
/// no grace period still running (upstream's `ShouldDeleteDuringUpdate`).
pub(crate) fn finished(obj: &Object) -> bool {
    let grace = obj.get("metadata").and_then(|m| m.get("deletionGracePeriodSeconds")).and_then(Value::as_i64);
    deleting(obj) && of(obj).is_empty() && grace.unwrap_or(0) == 0
}

/// Mark `obj` as being deleted at `now`, as upstream does for a kind without graceful
/// deletion: the first mark counts a tracked generation and sets the timestamp; a
/// timestamp already set stays.
pub(crate) fn mark_deleting(obj: &mut Object, now: &str) {
    let first = !deleting(obj);
    let meta = meta_mut(obj);
    if first {
        if let Some(generation) = meta.get("generation").and_then(Value::as_i64).filter(|g| *g > 0) {
            meta.insert("generation".into(), json!(generation + 1));
        }
        meta.insert("deletionTimestamp".into(), json!(now));
    }
    meta.insert("deletionGracePeriodSeconds".into(), json!(0));
}

/// The finalizer that has the garbage collector orphan an object's dependents first.
pub(crate) const ORPHAN: &str = "orphan";
/// The finalizer that has the garbage collector delete an object's dependents first.
pub(crate) const FOREGROUND: &str = "foregroundDeletion";

/// What a kind's objects do to their dependents when deleted without saying
/// (upstream's `DefaultGarbageCollectionPolicy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GcPolicy {
    /// Dependents are deleted (in the background).
    #[default]
    DeleteDependents,
    /// Dependents are orphaned (core/v1 ReplicationControllers, for compatibility).
    OrphanDependents,
}

/// What a DELETE says of dependents: `propagationPolicy` (`Orphan`, `Background`,
/// `Foreground`, checked already) or the older `orphanDependents`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Propagation {
    pub policy: Option<String>,
    pub orphan_dependents: Option<bool>,
}

impl Propagation {
    /// Upstream's `shouldOrphanDependents` and `shouldDeleteDependents` over an object
    /// with `finalizers`: whether its dependents are orphaned, and whether they are
    /// deleted before it.
    fn decide(&self, finalizers: &[String], default: GcPolicy) -> (bool, bool) {
        if let Some(orphan) = self.orphan_dependents {
            return (orphan, false);
        }
        match self.policy.as_deref() {
            Some("Orphan") => return (true, false),
            Some("Foreground") => return (false, true),
            Some(_) => return (false, false),
            None => {}
        }
        for f in finalizers {
            match f.as_str() {
                ORPHAN => return (true, false),
                FOREGROUND => return (false, true),
                _ => {}
            }
        }
        (default == GcPolicy::OrphanDependents, false)
    }

    /// Give `obj` the garbage collector's finalizers this DELETE asks for (upstream's
    /// `deletionFinalizersForGarbageCollection`): `orphan` or `foregroundDeletion` in
    /// place of either.
    pub(crate) fn apply(&self, obj: &mut Object, default: GcPolicy) {
        let had = of(obj);
        let (orphan, foreground) = self.decide(&had, default);
        let mut wanted: Vec<String> = had.iter().filter(|f| *f != ORPHAN && *f != FOREGROUND).cloned().collect();
        if orphan {
            wanted.push(ORPHAN.into());
        }
        if foreground {
            wanted.push(FOREGROUND.into());
        }
        let same = wanted.len() == had.len() && wanted.iter().all(|f| had.contains(f));
        if !same {
            meta_mut(obj).insert("finalizers".into(), json!(wanted));
        }
    }
}

/// What a DELETE asks, besides which object.
#[derive(Clone, Copy, Debug)]
pub struct Deletion<'a> {
    pub now: std::time::SystemTime,
    /// What becomes of the object's dependents.
    pub propagation: &'a Propagation,
    /// `gracePeriodSeconds`, when given.
    pub grace_period_seconds: Option<i64>,
}

impl Deletion<'_> {
    /// `now` as metadata writes it.
    pub fn now_text(&self) -> String {
        super::object::rfc3339(self.now)
    }
}

/// What a DELETE does to an object.
#[derive(Clone, Debug, PartialEq)]
pub enum OnDelete {
    /// Delete it now, and answer with this (the object, perhaps marked on its way out).
    Now(Object),
    /// Store it as this (marked as being deleted) and answer with it.
    Wait(Object),
}

/// `obj` (as a DELETE found it, with whatever its kind added) marked as being deleted
/// at `now` when it has finalizers to wait for; else it goes at once.
pub(crate) fn wait_for_finalizers(mut obj: Object, now: &str) -> OnDelete {
    if of(&obj).is_empty() {
        return OnDelete::Now(obj);
    }
    mark_deleting(&mut obj, now);
    OnDelete::Wait(obj)
}

/// Upstream's metadata rule for an update of an object being deleted: its finalizers
/// may only be taken away.
pub(crate) fn validate_update(new: &Object, old: &Object) -> Option<FieldError> {
    if !deleting(old) {
        return None;
    }
    let had = of(old);
    let added: Vec<String> = of(new).into_iter().filter(|f| !had.contains(f)).collect();
    if added.is_empty() {
        return None;
    }
    let listed: Vec<String> = added.iter().map(|f| crate::schema::go_quote(f)).collect();
    Some(FieldError::forbidden(
        "metadata.finalizers",
        format!("no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}", listed.join(", ")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Object {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn marking_sets_the_timestamp_once_and_counts_the_generation_once() {
        let mut o = obj(json!({"metadata": {"name": "a", "generation": 2, "finalizers": ["x"]}}));
        mark_deleting(&mut o, "2026-01-01T00:00:00Z");
        mark_deleting(&mut o, "2026-01-02T00:00:00Z");
        assert_eq!(o["metadata"]["deletionTimestamp"], "2026-01-01T00:00:00Z");
        assert_eq!(o["metadata"]["deletionGracePeriodSeconds"], 0);
        assert_eq!(o["metadata"]["generation"], 3);
        assert!(deleting(&o) && !finished(&o));
        o["metadata"]["finalizers"] = json!([]);
        assert!(finished(&o));
    }

    #[test]
    fn an_object_being_deleted_takes_no_new_finalizer() {
        let old = obj(json!({"metadata": {"deletionTimestamp": "t", "finalizers": ["a"]}}));
        let new = obj(json!({"metadata": {"deletionTimestamp": "t", "finalizers": ["a", "b/c"]}}));
        let e = validate_update(&new, &old).expect("refused");
        assert_eq!(e.field, "metadata.finalizers");
        assert!(e.detail.ends_with("found new finalizers []string{\"b/c\"}"), "{}", e.detail);
        assert!(validate_update(&old, &old).is_none());
        let alive = obj(json!({"metadata": {"finalizers": ["a"]}}));
        assert!(validate_update(&new, &alive).is_none());
    }
}

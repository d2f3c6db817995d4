//! The garbage collector's decisions (`apiary_core::controllers::garbage_collector`)
//! over any objects and owner references (ConfigMaps of one namespace, owners looked up
//! among them): never panics; never deletes an object with an owner that exists (same
//! uid, not waiting for its dependents) or cannot be looked up; only ever drops owner
//! references or stops them blocking, never adds one; takes a finalizer only from an object being deleted
//! that has it.
//!
//! Input: a JSON array of objects (those without a name and a uid, or repeating one,
//! are dropped: no server holds them); anything else is skipped. Seed: an owner, a
//! dependent, a dependent of a missing owner and an owner being deleted in the
//! foreground.

#![no_main]

use apiary_core::controllers::garbage_collector::decide::Action;
use apiary_core::controllers::garbage_collector::decisions_over;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn text<'v>(v: &'v Value, pointer: &str) -> &'v str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Array(listed)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    // As a server holds them: every object has a name and a uid, no two the same.
    let mut objects: Vec<Value> = Vec::new();
    for o in listed {
        let (name, uid) = (text(&o, "/metadata/name"), text(&o, "/metadata/uid"));
        let unique = !objects.iter().any(|seen| text(seen, "/metadata/name") == name || text(seen, "/metadata/uid") == uid);
        if !name.is_empty() && !uid.is_empty() && unique {
            objects.push(o);
        }
    }
    let actions = decisions_over(&objects);
    let by_uid = |uid: &str| objects.iter().find(|o| text(o, "/metadata/uid") == uid);
    let by_name = |name: &str| objects.iter().find(|o| text(o, "/metadata/name") == name);
    for action in actions {
        match action {
            Action::Delete { uid, .. } => {
                let object = by_uid(&uid).expect("a deleted object exists");
                let refs = object.pointer("/metadata/ownerReferences").and_then(Value::as_array).cloned().unwrap_or_default();
                for r in refs {
                    let live = r.get("kind").and_then(Value::as_str) != Some("ConfigMap")
                        || r.get("apiVersion").and_then(Value::as_str) != Some("v1")
                        || by_name(text(&r, "/name")).is_some_and(|o| {
                            text(o, "/metadata/uid") == text(&r, "/uid")
                                && !(o.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null())
                                    && o.pointer("/metadata/finalizers")
                                        .and_then(Value::as_array)
                                        .is_some_and(|f| f.iter().any(|f| f == "foregroundDeletion")))
                        });
                    assert!(!live, "deleted {uid} although its owner {r} is there");
                }
            }
            Action::SetOwners { uid, owners } => {
                let object = by_uid(&uid).expect("an object whose owners change exists");
                let had = object.pointer("/metadata/ownerReferences").and_then(Value::as_array).cloned().unwrap_or_default();
                // Dropped, or kept with `blockOwnerDeletion` turned off; never added.
                let unblocked = |o: &Value| {
                    let mut blocking = o.clone();
                    blocking["blockOwnerDeletion"] = Value::Bool(true);
                    o.get("blockOwnerDeletion") == Some(&Value::Bool(false)) && had.contains(&blocking)
                };
                assert!(owners.iter().all(|o| had.contains(o) || unblocked(o)), "owners are only ever dropped or unblocked");
            }
            Action::RemoveFinalizer { uid, finalizer } => {
                let object = by_uid(&uid).expect("an object losing a finalizer exists");
                assert!(object.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null()));
                let has = object.pointer("/metadata/finalizers").and_then(Value::as_array).is_some_and(|f| f.iter().any(|f| f == finalizer));
                assert!(has, "{finalizer} is taken only from an object that has it");
            }
        }
    }
});

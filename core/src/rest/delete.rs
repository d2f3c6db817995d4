//! DELETE of one object and DELETE of a collection.
//!
//! An object without finalizers is gone when the response is written; one with
//! finalizers is only marked as being deleted ([`finalizers`]) and goes with the write
//! that takes its last finalizer. A kind may wait for more (a namespace for its
//! content: [`crate::resources::Strategy::on_delete`]).

use super::delete_options::{self, DeleteOptions};
use super::finalizers::{Deletion, OnDelete};
use super::object::{meta_str, Object};
use super::scope::Scope;
use super::admit::Admitted;
use crate::admission::{Operation, Phase};
use crate::effect::Step;
use crate::status::ApiError;
use crate::storage::{KeyValue, StorageError, StorageOp, StorageOutput};
use serde_json::{json, Value};

pub(super) fn delete(scope: Scope) -> Step {
    if !scope.subresource.is_empty() {
        let r = scope.resource();
        let e = ApiError::method_not_supported(&r.group, &format!("{}/{}", r.plural, scope.subresource), "delete");
        return scope.fail(e);
    }
    let options = match delete_options::of(&scope) {
        Ok(options) => options,
        Err(e) => return scope.fail(e),
    };
    scope.with_current(move |scope, current| delete_current(scope, current, options))
}

fn delete_current(scope: Scope, current: KeyValue, options: DeleteOptions) -> Step {
    let obj = match scope.read(&current) {
        Ok(obj) => obj,
        Err(e) => return scope.fail(ApiError::internal(e)),
    };
    let r = scope.resource();
    let uid = meta_str(&obj, "uid");
    let rv = current.mod_revision.to_string();
    let failed = match (&options.uid, &options.resource_version) {
        (Some(want), _) if want != uid => Some(format!(
            "Precondition failed: UID in precondition: {want}, UID in object meta: {uid}"
        )),
        (_, Some(want)) if *want != rv => Some(format!(
            "Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {rv}"
        )),
        _ => None,
    };
    if let Some(why) = failed {
        return scope.fail(ApiError::conflict(&r.group, &r.plural, &scope.name, &why));
    }
    // Both phases of admission see the stored object, as upstream's delete runs them.
    let request = scope.admission_request(Operation::Delete, &scope.name, Some(obj.clone()));
    scope.admit(Phase::Mutating, request, obj, Box::new(Preconditioned { current, options }))
}

/// A delete whose preconditions hold, in admission.
#[derive(Debug)]
struct Preconditioned {
    current: KeyValue,
    options: DeleteOptions,
}

impl Admitted for Preconditioned {
    fn admitted(self: Box<Self>, scope: Scope, obj: Object) -> Step {
        let request = scope.admission_request(Operation::Delete, &scope.name, Some(obj.clone()));
        let Preconditioned { current, options } = *self;
        scope.admit(Phase::Validating, request, obj, Box::new(Deleting { current, options }))
    }
}

/// A delete admitted: the object goes, or is marked as going.
#[derive(Debug)]
struct Deleting {
    current: KeyValue,
    options: DeleteOptions,
}

impl Admitted for Deleting {
    fn admitted(self: Box<Self>, scope: Scope, obj: Object) -> Step {
        let Deleting { current, options } = *self;
        delete_admitted(scope, current, obj, options)
    }
}

fn delete_admitted(scope: Scope, current: KeyValue, obj: Object, options: DeleteOptions) -> Step {
    let answer = match on_delete(&scope, &obj, &options) {
        OnDelete::Wait(marked) => return mark_deleting(scope, current, marked, options),
        OnDelete::Now(answer) => answer,
    };
    if options.dry_run {
        // Found and checked: answered as deleted, nothing removed.
        return deleted(scope, answer);
    }
    // What the object held (a Service's cluster IPs and node ports) goes back once it
    // is gone.
    let release = scope.resource.strategy.release(&scope.claim_context(), &obj, None);
    let op = StorageOp::Delete {
        key: current.key.clone(),
        expected_revision: Some(current.mod_revision),
    };
    scope.then(op, move |scope, done| match done {
        Ok(StorageOutput::Deleted { .. }) => super::claims::released(scope, release, move |scope| deleted(scope, answer)),
        Err(StorageError::Conflict { current, .. }) => delete_current(scope, current, options),
        other => scope.fail_storage(&scope.name, other),
    })
}

/// What this DELETE does to `obj`: its kind decides whether it waits for something
/// first (its finalizers, a namespace's content, a pod's grace period).
fn on_delete(scope: &Scope, obj: &Object, options: &DeleteOptions) -> OnDelete {
    let deletion = Deletion {
        now: scope.inputs.now,
        propagation: &options.propagation,
        grace_period_seconds: options.grace_period_seconds,
    };
    scope.resource().strategy.on_delete(obj, &deletion)
}

/// The object has finalizers to wait for: write it as being deleted and answer with
/// it: 200, or 202 when the older `orphanDependents: false` asked for its dependents'
/// deletion, as upstream answers.
fn mark_deleting(scope: Scope, current: KeyValue, marked: Object, options: DeleteOptions) -> Step {
    let value = scope.stored(marked.clone());
    let code = if options.propagation.orphan_dependents == Some(false) { 202 } else { 200 };
    if options.dry_run || value == current.value {
        return scope.respond(code, &Value::Object(marked));
    }
    let op = StorageOp::Update {
        key: current.key.clone(),
        value,
        expected_revision: current.mod_revision,
    };
    scope.then(op, move |scope, done| match done {
        Ok(StorageOutput::Written(kv)) => match scope.read(&kv) {
            Ok(stored) => scope.respond(code, &Value::Object(stored)),
            Err(e) => scope.fail(ApiError::internal(e)),
        },
        Err(StorageError::Conflict { current, .. }) => delete_current(scope, current, options),
        other => scope.fail_storage(&scope.name, other),
    })
}

/// Answer a finished delete.
fn deleted(scope: Scope, obj: Object) -> Step {
    let r = scope.resource();
    if r.delete_returns_object() {
        return scope.respond(200, &Value::Object(obj));
    }
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {
            "name": scope.name,
            "group": r.group,
            "kind": r.plural,
            "uid": meta_str(&obj, "uid"),
        }
    });
    let mut status = status;
    if r.group.is_empty() {
        status["details"].as_object_mut().map(|d| d.remove("group"));
    }
    scope.respond(200, &status)
}

/// Delete each listed object as a DELETE of it would (one with finalizers is only
/// marked as being deleted), then continue with `done`. An object changed since it
/// was listed is taken as it is now.
fn delete_listed(
    scope: Scope,
    (mut listed, at): (Vec<KeyValue>, usize),
    options: DeleteOptions,
    done: impl FnOnce(Scope) -> Step + Send + 'static,
) -> Step {
    let Some(kv) = listed.get(at) else {
        return done(scope);
    };
    let obj = match scope.read(kv) {
        Ok(obj) => obj,
        Err(e) => return scope.fail(ApiError::internal(e)),
    };
    let mut release = None;
    let op = match on_delete(&scope, &obj, &options) {
        OnDelete::Now(_) => {
            release = scope.resource.strategy.release(&scope.claim_context(), &obj, None);
            StorageOp::Delete { key: kv.key.clone(), expected_revision: Some(kv.mod_revision) }
        }
        // Already marked so: nothing to change.
        OnDelete::Wait(marked) if marked == obj => return delete_listed(scope, (listed, at + 1), options, done),
        OnDelete::Wait(marked) => StorageOp::Update { key: kv.key.clone(), value: scope.stored(marked), expected_revision: kv.mod_revision },
    };
    scope.then(op, move |scope, result| match result {
        Ok(StorageOutput::Deleted { .. }) => {
            super::claims::released(scope, release, move |scope| delete_listed(scope, (listed, at + 1), options, done))
        }
        Ok(_) | Err(StorageError::NotFound { .. }) => delete_listed(scope, (listed, at + 1), options, done),
        Err(StorageError::Conflict { current, .. }) => {
            listed[at] = current;
            delete_listed(scope, (listed, at), options, done)
        }
        other => scope.fail_storage("", other),
    })
}

/// DELETE of a collection: every object under the request's prefix that its label and
/// field selectors match; answers with the list of what was deleted (or, in a dry run,
/// of what would have been).
pub(super) fn delete_collection(scope: Scope) -> Step {
    let selection = match super::list::selection(&scope) {
        Ok(s) => s,
        Err(e) => return scope.fail(e),
    };
    let options = match delete_options::of(&scope) {
        Ok(options) => options,
        Err(e) => return scope.fail(e),
    };
    let prefix = scope.prefix();
    let op = StorageOp::list_latest(prefix);
    scope.then(op, move |scope, result| match result {
        Ok(StorageOutput::Listed(page)) => {
            let mut items = Vec::with_capacity(page.items.len());
            let mut listed = Vec::with_capacity(page.items.len());
            for kv in page.items {
                match scope.read(&kv) {
                    Ok(obj) if !selection.matches(&obj) => {}
                    Ok(mut obj) => {
                        if !scope.resource().strategy.typed_list_items() {
                            obj.remove("kind");
                            obj.remove("apiVersion");
                        }
                        items.push(Value::Object(obj));
                        listed.push(kv);
                    }
                    Err(e) => return scope.fail(ApiError::internal(e)),
                }
            }
            let answer = move |scope: Scope| {
                let r = scope.resource();
                let list = json!({
                    "kind": r.list_kind(),
                    "apiVersion": r.api_version(),
                    "metadata": {},
                    "items": items,
                });
                scope.respond(200, &list)
            };
            if options.dry_run {
                return answer(scope);
            }
            delete_listed(scope, (listed, 0), options, answer)
        }
        other => scope.fail_storage("", other),
    })
}

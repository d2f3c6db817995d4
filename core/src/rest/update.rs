//! UPDATE (PUT of a whole object), and PUT of the status subresource.
//!
//! Like kube-apiserver's guaranteed update: read the current object, carry over what
//! the client may not change, bump generation on spec changes, and compare-and-swap.
//! An update that names a resourceVersion conflicts when it is stale; one that does
//! not is retried on a concurrent write. PATCH (rest/patch.rs) goes the same way.

use super::guaranteed_update::{GuaranteedUpdate, Outcome};
use super::object::{meta_mut, meta_str, Object};
use super::scope::Scope;
use crate::effect::Step;
use crate::resources::{Handler, SpecPart};
use crate::status::ApiError;
use crate::storage::KeyValue;
use crate::validation::names::validate_object_meta;
use serde_json::Value;
use std::sync::Arc;

pub(super) fn update(scope: Scope) -> Step {
    if let Err(e) = super::dry_run::write_options(&scope, "UpdateOptions") {
        return scope.fail(e);
    }
    let (obj, warnings) = match scope.decode_body("UpdateOptions") {
        Ok(decoded) => decoded,
        Err(e) => return scope.fail(e),
    };
    super::response::warned(update_decoded(scope, obj), warnings)
}

fn update_decoded(scope: Scope, obj: Object) -> Step {
    let url_name = scope.name.clone();
    let body_name = meta_str(&obj, "name").to_owned();
    if body_name.is_empty() {
        let r = scope.resource();
        let errs = vec![crate::validation::FieldError::required("metadata.name", "name or generateName is required")];
        let e = ApiError::invalid(r.strategy.invalid_group(&r.group), &r.kind, "", errs);
        return scope.fail(e);
    }
    if body_name != url_name {
        return scope.fail(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({url_name})"
        )));
    }
    if let Some(ns) = &scope.namespace {
        let given = meta_str(&obj, "namespace");
        if !given.is_empty() && given != ns {
            return scope.fail(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    }
    let precondition = match meta_str(&obj, "resourceVersion") {
        "" => None,
        rv => match rv.parse::<u64>() {
            Ok(rv) => Some(rv),
            Err(_) => {
                return scope.fail(ApiError::bad_request(format!("invalid resource version: {rv}")));
            }
        },
    };
    let uid = meta_str(&obj, "uid").to_owned();
    guaranteed_update(
        scope,
        Arc::new(move |scope: &Scope, old: &Object, current: &KeyValue| {
            check_precondition(scope, precondition, current)?;
            check_uid(scope, &uid, old)?;
            replace(scope, old, obj.clone())
        }),
    )
}

/// What an update makes of the stored object (and stored value); made again from the
/// newer object whenever a concurrent write wins the race.
pub(super) type Change =
    Arc<dyn Fn(&Scope, &Object, &KeyValue) -> Result<Object, ApiError> + Send + Sync>;

/// Read the object, make the change, compare-and-swap, again on a lost race
/// ([`GuaranteedUpdate`]), and answer with the object as the request shows it. A change
/// that pins a resourceVersion fails with 409 once it is stale.
pub(super) fn guaranteed_update(scope: Scope, change: Change) -> Step {
    let dry_run = scope.dry_run();
    GuaranteedUpdate::new(move |scope: &Scope, old: &Object, current: &KeyValue| change(scope, old, current))
        .dry_run(dry_run)
        .admitted()
        .read(scope, answer)
}

/// A resourceVersion the client gave must still be the stored one.
pub(super) fn check_precondition(scope: &Scope, precondition: Option<u64>, current: &KeyValue) -> Result<(), ApiError> {
    let r = scope.resource();
    match precondition {
        Some(rv) if rv != current.mod_revision => Err(ApiError::modified(&r.group, &r.plural, &scope.name)),
        _ => Ok(()),
    }
}

/// A uid the body gives must be the stored object's: upstream makes it a precondition
/// of the storage write, and answers its storage error.
/// A Scale's uid is its own subresource's precondition (rest/scale.rs).
fn check_uid(scope: &Scope, given: &str, old: &Object) -> Result<(), ApiError> {
    let uid = meta_str(old, "uid");
    let scale = matches!(scope.subresource_handler(), Some(Handler::Scale(_) | Handler::CustomScale));
    if given.is_empty() || given == uid || scale {
        return Ok(());
    }
    let r = scope.resource();
    let why = format!(
        "StorageError: invalid object, Code: 4, Key: {}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {given}, UID in object meta: {uid}",
        scope.key(&scope.name)
    );
    Err(ApiError::conflict(&r.group, &r.plural, &scope.name, &why))
}

/// The object proposed when `new` replaces `old`, before admission: compared as typed
/// objects are, and defaulted as upstream defaults what it decodes. The guaranteed
/// update then runs mutating admission, [`after_mutation`], validating admission,
/// and records the writer's managed fields.
pub(super) fn replace(scope: &Scope, _old: &Object, mut new: Object) -> Result<Object, ApiError> {
    crate::typed_json::normalize(&mut new);
    if scope.writes_whole_object() {
        scope.resource().strategy.default(&mut new);
    }
    Ok(new)
}

/// What the kind's strategy makes of `new` once mutating admission is done: all of
/// it, or its status on `/status`.
pub(super) fn after_mutation(scope: &Scope, old: &Object, new: Object) -> Result<Object, ApiError> {
    let r = scope.resource();
    let new = match scope.subresource_handler() {
        Some(Handler::Status) => status_update(scope, old, &new)?,
        Some(Handler::Approval) => {
            let approved = r.strategy.prepare_for_approval_update(&new, old.clone());
            checked(scope, r.strategy.validate_approval_update(&approved, old), approved)?
        }
        Some(Handler::Part(part)) => part_update(scope, part, old, &new)?,
        Some(Handler::Finalize) => {
            let finalized = r.strategy.finalize_update(&new, old);
            checked(scope, r.strategy.validate_update(&finalized, old), finalized)?
        }
        Some(Handler::CustomScale) => {
            // Upstream writes a custom resource's scale through the resource's own
            // update, so its schema's validation applies.
            let new = super::scale::write_back(scope, old, &new)?;
            checked(scope, r.strategy.validate_update(&new, old), new)?
        }
        Some(Handler::Scale(_)) => super::scale::write_back(scope, old, &new)?,
        _ => {
            scope.resource().strategy.check_grants(&scope.grants(), &new, Some(old))?;
            main_update(scope, old, new)?
        }
    };
    Ok(new)
}

/// `new`, unless the kind's checks found errors: then 422 with them.
fn checked(scope: &Scope, errors: Vec<crate::validation::FieldError>, new: Object) -> Result<Object, ApiError> {
    if errors.is_empty() {
        return Ok(new);
    }
    let r = scope.resource();
    Err(ApiError::invalid(r.strategy.invalid_group(&r.group), &r.kind, &scope.name, errors))
}

pub(super) fn answer(scope: Scope, outcome: Outcome) -> Step {
    match outcome {
        Outcome::Stored(kv) | Outcome::Unchanged(kv) => match scope.read(&kv) {
            Ok(stored) => respond_viewed(scope, stored),
            Err(e) => scope.fail(ApiError::internal(e)),
        },
        Outcome::DryRun { mut changed, current } => {
            // Checked and made, not written: the answer carries the stored resourceVersion.
            let rv = Value::String(current.mod_revision.to_string());
            meta_mut(&mut changed).insert("resourceVersion".into(), rv);
            let shown = scope.as_if_stored(changed);
            respond_viewed(scope, shown)
        }
        Outcome::Refused(e) => scope.fail(e),
        Outcome::Failed(other) => scope.fail_storage(&scope.name, other),
    }
}

/// Answer 200 with the object as the request shows it (the Scale of a scale update).
fn respond_viewed(scope: Scope, obj: Object) -> Step {
    match super::scale::view(&scope, obj) {
        Ok(shown) => scope.respond(200, &Value::Object(shown)),
        Err(e) => scope.fail(e),
    }
}

/// The object a write to `/status` stores, checked by its kind.
fn status_update(scope: &Scope, old: &Object, new: &Object) -> Result<Object, ApiError> {
    let r = scope.resource();
    let kept = keep_applied_fields(scope, new, r.strategy.prepare_for_status_update(new, old.clone()));
    let errs = r.strategy.validate_status_update(&kept, old);
    checked(scope, errs, kept)
}

/// The object a write to a subresource of one part of the spec stores (a pod's
/// ephemeral containers, its resize), its generation counted, checked by its kind.
fn part_update(scope: &Scope, part: SpecPart, old: &Object, new: &Object) -> Result<Object, ApiError> {
    let r = scope.resource();
    let mut kept = keep_applied_fields(scope, new, r.strategy.prepare_for_part_update(part, new, old.clone()));
    r.strategy.count_generation(old, &mut kept);
    let errs = r.strategy.validate_part_update(part, &kept, old);
    checked(scope, errs, kept)
}

/// `kept` with the managed fields an apply recorded in `new` (other writes record
/// theirs later), as upstream's subresource strategies keep them.
fn keep_applied_fields(scope: &Scope, new: &Object, mut kept: Object) -> Object {
    if scope.is_apply() {
        if let Some(fields) = new.get("metadata").and_then(|m| m.get("managedFields")) {
            meta_mut(&mut kept).insert("managedFields".into(), fields.clone());
        }
    }
    kept
}

/// The object a PUT stores: the client's object with the server-owned metadata (and,
/// where a status subresource exists, the status) carried over from the stored one.
fn main_update(scope: &Scope, old: &Object, mut new: Object) -> Result<Object, ApiError> {
    let r = scope.resource();
    let old_meta = old.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
    let meta = meta_mut(&mut new);
    for kept in ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"] {
        match old_meta.get(kept) {
            Some(v) => meta.insert(kept.into(), v.clone()),
            None => meta.remove(kept),
        };
    }
    meta.remove("generateName");
    if let Some(g) = old_meta.get("generateName") {
        meta.insert("generateName".into(), g.clone());
    }
    match &scope.namespace {
        Some(ns) => meta.insert("namespace".into(), Value::String(ns.clone())),
        None => meta.remove("namespace"),
    };
    r.strategy.prepare_for_update(&mut new, old, r.has_status());
    r.strategy.count_generation(old, &mut new);
    let name = meta_str(&new, "name").to_owned();
    let namespace = scope.namespace.as_deref();
    let mut errs = validate_object_meta(r.name_rule, &name, "", namespace, r.namespaced);
    errs.extend(crate::validation::object_meta::validate(&new, r.strategy.meta_rules()));
    errs.extend(super::finalizers::validate_update(&new, old));
    errs.extend(r.strategy.validate_update(&new, old));
    if !errs.is_empty() {
        return Err(ApiError::invalid(r.strategy.invalid_group(&r.group), &r.kind, &name, errs));
    }
    Ok(new)
}

//! CREATE (POST to a collection): decode, default, validate, store, answer 201.

use super::object::{self, meta_mut, meta_str, Object};
use super::scope::Scope;
use super::admit::Admitted;
use crate::admission::{Operation, Phase};
use crate::effect::Step;
use crate::status::ApiError;
use crate::storage::{StorageError, StorageOp, StorageOutput};
use crate::validation::names::validate_object_meta;
use serde_json::{json, Value};

pub(super) fn create(scope: Scope) -> Step {
    let r = scope.resource();
    if let Err(e) = super::dry_run::write_options(&scope, "CreateOptions").and_then(|_| r.strategy.check_create(&r.group, &r.plural)) {
        return scope.fail(e);
    }
    let (obj, warnings) = match scope.decode_body("CreateOptions") {
        Ok(decoded) => decoded,
        Err(e) => return scope.fail(e),
    };
    super::response::warned(create_decoded(scope, obj), warnings)
}

pub(super) fn create_decoded(scope: Scope, mut obj: Object) -> Step {
    // The kind's defaults (upstream applies them as it decodes), the writer's managed
    // fields (so that they own the defaults, and nothing admission or the strategy
    // adds), mutating admission, the kind's strategy, then validating admission, as
    // upstream orders them.
    scope.resource().strategy.default(&mut obj);
    scope.record_update(None, &mut obj);
    let request = scope.admission_request(Operation::Create, meta_str(&obj, "name"), None);
    scope.admit(Phase::Mutating, request, obj, Box::new(Mutated))
}

/// Mutating admission is done: the kind's strategy, then validating admission.
#[derive(Debug)]
struct Mutated;

impl Admitted for Mutated {
    fn admitted(self: Box<Self>, scope: Scope, mut obj: Object) -> Step {
        let prepared = scope
            .resource()
            .strategy
            .check_grants(&scope.grants(), &obj, None)
            .and_then(|()| prepare(&scope, &mut obj));
        if let Err(e) = prepared {
            return scope.fail(e);
        }
        let request = scope.admission_request(Operation::Create, meta_str(&obj, "name"), None);
        scope.admit(Phase::Validating, request, obj, Box::new(Validated))
    }
}

/// Admitted: store it.
#[derive(Debug)]
struct Validated;

impl Admitted for Validated {
    fn admitted(self: Box<Self>, scope: Scope, obj: Object) -> Step {
        store(scope, obj)
    }
}

/// Stamp what the server owns on a new object and validate its metadata.
fn prepare(scope: &Scope, obj: &mut Object) -> Result<(), ApiError> {
    let r = scope.resource();
    let entropy = scope.inputs.entropy;
    let now = object::rfc3339(scope.inputs.now);
    let namespaced = r.namespaced;
    place_in_namespace(scope, obj)?;

    let meta = meta_mut(obj);
    let generate_name = meta.get("generateName").and_then(Value::as_str).unwrap_or("").to_owned();
    let name = meta.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
    if name.is_empty() && !generate_name.is_empty() {
        let generated = object::generated_name(&generate_name, &entropy[16..]);
        meta.insert("name".into(), Value::String(generated));
    }
    meta.insert("uid".into(), Value::String(object::uuid_v4(entropy[..16].try_into().expect("16 bytes"))));
    meta.insert("creationTimestamp".into(), Value::String(now));
    for cleared in ["resourceVersion", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"] {
        meta.remove(cleared);
    }
    if r.strategy.tracks_generation() {
        meta.insert("generation".into(), json!(1));
    } else {
        meta.remove("generation");
    }
    r.strategy.prepare_for_create(obj, r.has_status());
    r.strategy.stamp_requester(obj, &scope.user);

    let name = meta_str(obj, "name").to_owned();
    let mut errs = validate_object_meta(
        r.name_rule,
        &name,
        &generate_name,
        obj.get("metadata").and_then(|m| m.get("namespace")).and_then(Value::as_str),
        namespaced,
    );
    errs.extend(crate::validation::object_meta::validate(obj, r.strategy.meta_rules()));
    errs.extend(r.strategy.validate_create(obj));
    if !errs.is_empty() {
        return Err(ApiError::invalid(r.strategy.invalid_group(&r.group), &r.kind, &name, errs));
    }
    Ok(())
}

/// A new object takes the request's namespace (a different one is refused); an object
/// of a cluster-scoped resource has none.
pub(super) fn place_in_namespace(scope: &Scope, obj: &mut Object) -> Result<(), ApiError> {
    let meta = meta_mut(obj);
    match (scope.resource().namespaced, scope.namespace.clone()) {
        (true, Some(ns)) => match meta.get("namespace").and_then(Value::as_str) {
            None | Some("") => {
                meta.insert("namespace".into(), Value::String(ns));
            }
            Some(given) if given == ns => {}
            Some(_) => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ))
            }
        },
        _ => {
            meta.remove("namespace");
        }
    }
    Ok(())
}

/// Claim what the object needs besides itself (a Service's cluster IPs and node
/// ports), then store it.
fn store(scope: Scope, obj: Object) -> Step {
    let ctx = scope.claim_context();
    let claim = scope.resource.strategy.claim(&ctx, obj, None);
    super::claims::drive(scope, claim, |scope, claimed| match claimed {
        Err(e) => scope.fail(e),
        Ok(obj) if scope.dry_run() => {
            let name = meta_str(&obj, "name").to_owned();
            dry_run_store(scope, obj, name)
        }
        Ok(obj) => complete(scope, obj, store_completed),
    })
}

/// The kind's completion of a new object from another one (a token Secret's
/// ServiceAccount), then `next`. The other object is taken from the watch cache when it
/// holds it, and read from storage otherwise: it may be too new for the cache.
fn complete(scope: Scope, mut obj: Object, next: fn(Scope, Object) -> Step) -> Step {
    let strategy = scope.resource.strategy.clone();
    let Some((group, resource, name)) = strategy.create_reads(&obj) else {
        return next(scope, obj);
    };
    let tokens = scope.shared.config.authenticators.service_accounts.clone();
    let prefix = &scope.shared.config.storage_prefix;
    let key = crate::storage::object_key(prefix, group, resource, scope.namespace.as_deref(), &name);
    if let Some(Some(kv)) = scope.cached(&key) {
        let read = object::from_storage(&kv).ok();
        strategy.complete_for_create(&mut obj, read.as_ref(), tokens.as_deref());
        return next(scope, obj);
    }
    scope.then(StorageOp::Get { key }, move |scope, done| match done {
        Ok(StorageOutput::Got { kv, .. }) => {
            let read = kv.and_then(|kv| object::from_storage(&kv).ok());
            strategy.complete_for_create(&mut obj, read.as_ref(), tokens.as_deref());
            next(scope, obj)
        }
        other => scope.fail_storage(&name, other),
    })
}

fn store_completed(scope: Scope, obj: Object) -> Step {
    let name = meta_str(&obj, "name").to_owned();
    // What was claimed for the object goes back if it cannot be written.
    let release = scope.resource.strategy.release(&scope.claim_context(), &obj, None);
    let op = StorageOp::Create {
        key: scope.key(&name),
        value: scope.stored(obj),
    };
    scope.then(op, move |scope, done| match done {
        Ok(StorageOutput::Written(kv)) => scope.respond_written(201, &kv),
        // Another writer made it first: an apply applies to theirs instead.
        Err(StorageError::AlreadyExists { .. }) if scope.is_apply() => {
            super::claims::released(scope, release, super::apply::lost_create)
        }
        other => super::claims::released(scope, release, move |scope| scope.fail_storage(&name, other)),
    })
}

/// A dry-run create: the name must still be free; the answer is the object as it would
/// have been stored, without a resourceVersion (nothing was written).
fn dry_run_store(scope: Scope, obj: Object, name: String) -> Step {
    let key = scope.key(&name);
    scope.then(StorageOp::Get { key }, move |scope, done| match done {
        Ok(StorageOutput::Got { kv: None, .. }) => {
            let shown = scope.as_if_stored(obj);
            scope.respond(201, &Value::Object(shown))
        }
        Ok(StorageOutput::Got { kv: Some(_), .. }) => {
            let r = scope.resource();
            let e = ApiError::already_exists(&r.group, &r.plural, &name);
            scope.fail(e)
        }
        other => scope.fail_storage(&name, other),
    })
}

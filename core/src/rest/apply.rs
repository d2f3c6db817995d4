//! PATCH with `application/apply-patch+yaml`: server-side apply. The applied
//! configuration is merged into the stored object by the rules of its schema, owned by
//! the applying manager, checked for conflicts with other managers' fields, and stored
//! as a guaranteed update — or created, when the object does not exist yet (201).
//! A create that loses to another writer's create, or an update whose object another
//! writer deletes, starts over from the read, as upstream's guaranteed update does for
//! a write that may create: an apply never answers AlreadyExists or NotFound.

use super::guaranteed_update::{GuaranteedUpdate, Outcome};
use super::object::{meta_mut, meta_str, Object};
use super::update::{check_precondition, replace};
use super::scope::Scope;
use crate::negotiation::{self, Format};
use crate::effect::Step;
use crate::status::ApiError;
use crate::storage::{KeyValue, StorageError, StorageOp, StorageOutput};
use crate::validation::FieldError;
use serde_json::Value;
use std::sync::Arc;

/// The media type of an apply patch.
pub(super) const APPLY_YAML: &str = "application/apply-patch+yaml";

impl Scope {
    /// Whether this request is a server-side apply (whose managed fields the apply
    /// itself records).
    pub fn is_apply(&self) -> bool {
        self.content_type
            .as_deref()
            .and_then(|ct| ct.split(';').next())
            .is_some_and(|m| m.trim().eq_ignore_ascii_case(APPLY_YAML))
    }
}

pub(super) fn apply(scope: Scope) -> Step {
    if let Err(e) = super::dry_run::write_options(&scope, "PatchOptions") {
        return scope.fail(e);
    }
    if scope.query.get("fieldManager").unwrap_or("").is_empty() {
        let required = FieldError::required("fieldManager", "is required for apply patch");
        return scope.fail(ApiError::invalid(
            "meta.k8s.io",
            "PatchOptions",
            "",
            vec![required],
        ));
    }
    let config = match read_config(&scope) {
        Ok(config) => config,
        Err(e) => return scope.fail(e),
    };
    let (config, warnings) = config;
    let step = apply_config(scope, Arc::new(Value::Object(config)));
    super::response::warned(step, warnings)
}

/// Read the object, then apply `config` to it, or create it from `config` when there is
/// none. Like upstream's loop, this one has no bound: every turn needs another writer's
/// create or delete in between.
fn apply_config(scope: Scope, config: Arc<Value>) -> Step {
    let key = scope.key(&scope.name);
    scope.then(StorageOp::Get { key }, move |scope, done| match done {
        Ok(StorageOutput::Got { kv: Some(current), .. }) => update_applied(scope, config, current),
        // A subresource (status, scale) never creates its object, as upstream's
        // subresource stores never allow create on update.
        Ok(StorageOutput::Got { kv: None, .. }) if !scope.subresource.is_empty() => {
            let r = scope.resource();
            let e = ApiError::not_found(&r.group, &r.plural, &scope.name);
            scope.fail(e)
        }
        Ok(StorageOutput::Got { kv: None, .. }) => create_applied(scope, &config),
        other => scope.fail_storage(&scope.name.clone(), other),
    })
}

/// The object this apply was creating was made by another writer first: apply to it.
pub(super) fn lost_create(scope: Scope) -> Step {
    match read_config(&scope) {
        Ok((config, _)) => apply_config(scope, Arc::new(Value::Object(config))),
        Err(e) => scope.fail(e),
    }
}

/// The applied configuration, decoded against the kind's schema (fieldValidation
/// applies), with the warnings decoding gave.
fn read_config(scope: &Scope) -> Result<(Object, Vec<String>), ApiError> {
    // Clients mostly send JSON, which is YAML too: read it as JSON when it is.
    let format = match serde_json::from_slice::<serde::de::IgnoredAny>(&scope.body) {
        Ok(_) => Format::Json,
        Err(_) => Format::Yaml,
    };
    let plain = match negotiation::decode(format, &scope.body) {
        Ok(Value::Object(plain)) => plain,
        Ok(_) => {
            return Err(ApiError::bad_request(
                "error decoding YAML: the body is not an object",
            ))
        }
        Err(e) => return Err(ApiError::bad_request(format!("error decoding YAML: {e}"))),
    };
    // Checked on the plain body: decoding would refuse another kind in its own words.
    scope.field_manager().check_type(&Value::Object(plain))?;
    let (mut config, warnings) = scope.decode_apply_config(format, &scope.body)?;
    match meta_str(&config, "name") {
        "" => {
            meta_mut(&mut config).insert("name".into(), Value::String(scope.name.clone()));
        }
        given if given != scope.name => {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({given}) does not match the name on the URL ({})",
                scope.name
            )))
        }
        _ => {}
    }
    Ok((config, warnings))
}

fn force(scope: &Scope) -> bool {
    matches!(
        scope.query.get("force"),
        Some("true" | "1" | "t" | "T" | "TRUE" | "True")
    )
}

/// Apply to the stored object (read as `current`), again on every lost race; from the
/// start if another writer deletes it.
fn update_applied(scope: Scope, config: Arc<Value>, current: KeyValue) -> Step {
    let precondition = config
        .get("metadata")
        .and_then(|m| m.get("resourceVersion"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let wanted = config.clone();
    let dry_run = scope.dry_run();
    GuaranteedUpdate::new(move |scope: &Scope, old: &Object, current: &KeyValue| {
        if let Some(rv) = &precondition {
            let rv = rv.parse::<u64>().map_err(|_| {
                ApiError::bad_request(format!("invalid resource version: {rv}"))
            })?;
            check_precondition(scope, Some(rv), current)?;
        }
        let now = super::object::rfc3339(scope.inputs.now);
        let live = Value::Object(old.clone());
        let mut applied = scope.field_manager().apply(
            Some(&live),
            &wanted,
            &scope.manager(),
            force(scope),
            &now,
        )?;
        scope.resource().schema.shape_stored(&mut applied);
        replace(scope, old, applied)
    })
    .dry_run(dry_run)
    .admitted()
    .run(scope, current, move |scope, outcome| match outcome {
        Outcome::Failed(Err(StorageError::NotFound { .. })) => apply_config(scope, config),
        outcome => super::update::answer(scope, outcome),
    })
}

/// Apply to nothing: the object is created.
fn create_applied(scope: Scope, config: &Value) -> Step {
    let now = super::object::rfc3339(scope.inputs.now);
    match scope
        .field_manager()
        .apply(None, config, &scope.manager(), force(&scope), &now)
    {
        Ok(mut obj) => {
            // Defaults come after the merge, so the applier owns none of them.
            scope.resource().schema.shape_stored(&mut obj);
            super::create::create_decoded(scope, obj)
        }
        Err(e) => scope.fail(e),
    }
}

//! A DELETE's options, read once, as upstream reads a `DeleteOptions`: from the body
//! when there is one, else from the query (`dryRun`, `gracePeriodSeconds`,
//! `propagationPolicy`, `orphanDependents`), and validated as upstream's
//! `ValidateDeleteOptions` does (422 for `DeleteOptions.meta.k8s.io`).

use super::finalizers::Propagation;
use super::scope::Scope;
use crate::status::ApiError;
use crate::validation::FieldError;
use serde_json::{Map, Value};

/// A DELETE's options.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct DeleteOptions {
    pub dry_run: bool,
    /// `preconditions.uid` and `preconditions.resourceVersion`.
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    /// `gracePeriodSeconds`.
    pub grace_period_seconds: Option<i64>,
    /// `propagationPolicy` and the older `orphanDependents`.
    pub propagation: Propagation,
}

/// The options of this DELETE (of one object or of a collection).
pub(super) fn of(scope: &Scope) -> Result<DeleteOptions, ApiError> {
    let body = if scope.body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        let format = crate::negotiation::negotiate_input(scope.content_type.as_deref())?;
        let options = crate::negotiation::decode(format, &scope.body)
            .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?;
        match options {
            Value::Object(map) => Some(map),
            _ => return Err(ApiError::bad_request("invalid DeleteOptions: not an object")),
        }
    };
    match &body {
        Some(body) => from_body(body),
        None => from_query(scope),
    }
}

fn from_body(body: &Map<String, Value>) -> Result<DeleteOptions, ApiError> {
    let bad = |field: &str, what: &str| ApiError::bad_request(format!("invalid DeleteOptions: {field} must be {what}"));
    let dry_run: Vec<String> = match body.get("dryRun") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .ok_or_else(|| bad("dryRun", "a list of strings"))?,
        Some(_) => return Err(bad("dryRun", "a list of strings")),
    };
    let text = |field: &str| -> Result<Option<String>, ApiError> {
        match body.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad(field, "a string")),
        }
    };
    let pre = body.get("preconditions").and_then(Value::as_object);
    let pre_text = |field: &str| pre.and_then(|p| p.get(field)).and_then(Value::as_str).map(str::to_owned);
    let grace_period_seconds = match body.get("gracePeriodSeconds") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_i64().ok_or_else(|| bad("gracePeriodSeconds", "an integer"))?),
    };
    let orphan_dependents = match body.get("orphanDependents") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err(bad("orphanDependents", "a boolean")),
    };
    let values: Vec<&str> = dry_run.iter().map(String::as_str).collect();
    validated(DeleteOptions {
        dry_run: dry_run_of(&values)?,
        uid: pre_text("uid"),
        resource_version: pre_text("resourceVersion"),
        grace_period_seconds,
        propagation: Propagation { policy: text("propagationPolicy")?, orphan_dependents },
    })
}

fn from_query(scope: &Scope) -> Result<DeleteOptions, ApiError> {
    let values: Vec<&str> = scope.query.all("dryRun").collect();
    let parsed = |field: &str, kind: &str| -> Result<Option<String>, ApiError> {
        Ok(scope.query.get(field).map(str::to_owned)).and_then(|v| match (&v, kind) {
            (Some(s), "int") if s.parse::<i64>().is_err() => {
                Err(ApiError::bad_request(format!("invalid value {s:?} for {field}: not an integer")))
            }
            (Some(s), "bool") if s.parse::<bool>().is_err() => {
                Err(ApiError::bad_request(format!("invalid value {s:?} for {field}: not a boolean")))
            }
            _ => Ok(v),
        })
    };
    validated(DeleteOptions {
        dry_run: dry_run_of(&values)?,
        uid: None,
        resource_version: None,
        grace_period_seconds: parsed("gracePeriodSeconds", "int")?.and_then(|s| s.parse().ok()),
        propagation: Propagation {
            policy: parsed("propagationPolicy", "string")?,
            orphan_dependents: parsed("orphanDependents", "bool")?.and_then(|s| s.parse().ok()),
        },
    })
}

fn dry_run_of(values: &[&str]) -> Result<bool, ApiError> {
    super::dry_run::check(values).map_err(|e| ApiError::invalid("meta.k8s.io", "DeleteOptions", "", vec![e]))
}

/// Upstream's `ValidateDeleteOptions`.
fn validated(options: DeleteOptions) -> Result<DeleteOptions, ApiError> {
    let mut errors = Vec::new();
    let policy = options.propagation.policy.as_deref();
    if options.propagation.orphan_dependents.is_some() && policy.is_some() {
        errors.push(FieldError::invalid(
            "propagationPolicy",
            policy.unwrap_or_default(),
            "orphanDependents and deletionPropagation cannot be both set",
        ));
    }
    if let Some(policy) = policy.filter(|p| !["Foreground", "Background", "Orphan"].contains(p)) {
        errors.push(FieldError::not_supported("propagationPolicy", policy, &["Foreground", "Background", "Orphan", "nil"]));
    }
    if errors.is_empty() {
        Ok(options)
    } else {
        Err(ApiError::invalid("meta.k8s.io", "DeleteOptions", "", errors))
    }
}

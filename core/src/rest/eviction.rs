//! The `eviction` subresource of pods: `POST .../pods/{name}/eviction` with a policy/v1
//! (or policy/v1beta1) `Eviction`, a delete that respects the pod's
//! PodDisruptionBudget, as kube-apiserver's EvictionREST does it.
//!
//! The order of decisions follows upstream:
//!
//! 1. The Eviction must name the pod of the URL; its `deleteOptions` (preconditions,
//!    dryRun, which must agree with the query's) are what the pod is deleted with.
//! 2. A pod that is Succeeded, Failed, Pending or already being deleted is deleted at
//!    once: no budget is consulted. Unless it is terminal (or being deleted) it is
//!    deleted only at the resourceVersion it was read at, and a lost race reads it again.
//! 3. Otherwise the namespace's PodDisruptionBudgets whose selector matches the pod are
//!    found. None: the pod is deleted. More than one: a `Failure` Status with code 500
//!    (sent, as upstream sends it, in a 201 response). One: an unready pod whose budget
//!    lets unhealthy pods go (healthy enough, or `AlwaysAllow`) is deleted without
//!    touching the budget, at the resourceVersion it was read at (a lost race is 429);
//!    any other pod needs `status.disruptionsAllowed` above zero on a status observed
//!    for the budget's generation (429 TooManyRequests with a `DisruptionBudget` cause
//!    otherwise), and the budget's status is then updated, compare-and-swap and retried
//!    on a lost race, to one fewer disruption allowed with the pod recorded in
//!    `status.disruptedPods`.
//! 4. The pod is marked with a `DisruptionTarget` condition and then deleted the way
//!    Apiary deletes a pod: at once.
//!
//! Success is a `Status` with code 201. A dry run checks all of it and stores nothing.

use super::finalizers::{Deletion, OnDelete, Propagation};
use super::guaranteed_update::{GuaranteedUpdate, Outcome};
use super::object::{self, meta_str, Object};
use super::scope::Scope;
use crate::negotiation;
use crate::query::Query;
use crate::registry::Resource;
use crate::request_info::RequestInfo;
use crate::schema::{self, FieldValidation};
use crate::selection::LabelSelector;
use crate::effect::Step;
use crate::resources::{poddisruptionbudgets as budgets, pods};
use crate::status::{ApiError, Cause, Details};
use crate::storage::{self, KeyValue, StorageError, StorageOp, StorageOutput};
use bytes::Bytes;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// How often a step that lost a race to a concurrent write is tried again (upstream's
/// EvictionsRetry has 20 steps).
const MAX_ATTEMPTS: u32 = 20;

/// More pods recorded in a budget's `disruptedPods` than this and it refuses evictions:
/// the disruption controller is not keeping up.
const MAX_DISRUPTED_PODS: usize = 2000;

/// The User-Agent of kube-apiserver's loopback client, whose status update of a budget
/// is recorded in its managed fields.
const LOOPBACK_USER_AGENT: &str = "kube-apiserver";

const MULTIPLE_BUDGETS: &str =
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";
const WOULD_VIOLATE: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// Dispatch a request for `pods/{name}/eviction`: only create is served.
pub(super) fn handle(info: &RequestInfo, scope: Scope) -> Step {
    match info.verb.as_str() {
        "create" => evict(scope),
        verb => {
            let e = ApiError::method_not_supported("", "pods/eviction", verb);
            scope.fail(e)
        }
    }
}

/// The DeleteOptions the pod is deleted with.
#[derive(Clone, Debug, Default)]
struct Options {
    uid: Option<String>,
    resource_version: Option<String>,
    dry_run: bool,
    /// `deleteOptions.gracePeriodSeconds`.
    grace_period_seconds: Option<i64>,
}

fn evict(scope: Scope) -> Step {
    if let Err(e) = super::dry_run::write_options(&scope, "CreateOptions") {
        return scope.fail(e);
    }
    let (eviction, warnings) = match decode(&scope) {
        Ok(decoded) => decoded,
        Err(e) => return scope.fail(e),
    };
    super::response::warned(evict_decoded(scope, eviction), warnings)
}

/// Decode the body as an Eviction of policy/v1 or policy/v1beta1 (the two have the
/// same fields).
fn decode(scope: &Scope) -> Result<(Object, Vec<String>), ApiError> {
    let format = negotiation::negotiate_input(scope.content_type.as_deref())?;
    let beta = match negotiation::decode(format, &scope.body) {
        Ok(Value::Object(plain)) => {
            plain.get("apiVersion").and_then(Value::as_str) == Some("policy/v1beta1")
                && matches!(
                    plain.get("kind").and_then(Value::as_str),
                    None | Some("" | "Eviction")
                )
        }
        _ => false,
    };
    if !beta {
        return scope.decode_as(format, &scope.body, "CreateOptions");
    }
    let validation = FieldValidation::from_query(scope.query.get("fieldValidation"))
        .map_err(|e| ApiError::invalid("meta.k8s.io", "CreateOptions", "", vec![e]))?;
    match schema::decode(
        format,
        &scope.body,
        ("policy", "v1", "Eviction"),
        validation,
    ) {
        Ok(decoded) => Ok((decoded.object, decoded.warnings)),
        Err(e) => Err(ApiError::bad_request(format!(
            "Eviction in version \"v1beta1\" cannot be handled as a Eviction: {}",
            e.reason()
        ))),
    }
}

fn evict_decoded(scope: Scope, eviction: Object) -> Step {
    let namespace = meta_str(&eviction, "namespace");
    if !namespace.is_empty() && Some(namespace) != scope.namespace.as_deref() {
        return scope.fail(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    if meta_str(&eviction, "name") != scope.name {
        return scope.fail(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    match options(&scope, &eviction) {
        Ok(options) => read_pod(scope, options, 0),
        Err(e) => scope.fail(e),
    }
}

/// The Eviction's DeleteOptions, with the dryRun of the query carried into them; the
/// two must agree when both are given.
fn options(scope: &Scope, eviction: &Object) -> Result<Options, ApiError> {
    let query: Vec<String> = scope.query.all("dryRun").map(str::to_owned).collect();
    let delete_options = eviction.get("deleteOptions").and_then(Value::as_object);
    let dry_run = match delete_options.map(|o| object::strings(o.get("dryRun"))) {
        Some(body) if !body.is_empty() => {
            if !query.is_empty() && query != body {
                // A plain error upstream: a 500 of reason Unknown.
                return Err(ApiError {
                    code: 500,
                    reason: "Unknown",
                    message: format!(
                        "Non-matching dry-run options in request and content: [{}] and [{}]",
                        query.join(" "),
                        body.join(" ")
                    ),
                    details: None,
                });
            }
            body
        }
        _ => query,
    };
    let preconditions = delete_options.and_then(|o| o.get("preconditions"));
    let field = |f: &str| {
        preconditions
            .and_then(|p| p.get(f))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    Ok(Options {
        uid: field("uid"),
        resource_version: field("resourceVersion"),
        // Upstream asks only whether any dryRun was given.
        dry_run: !dry_run.is_empty(),
        grace_period_seconds: delete_options.and_then(|o| o.get("gracePeriodSeconds")).and_then(Value::as_i64),
    })
}

/// Read the pod; delete it at once when no budget applies to it, or go on to its
/// budgets.
fn read_pod(scope: Scope, options: Options, attempt: u32) -> Step {
    scope.with_current(move |scope, current| {
        let pod = match object::from_storage(&current) {
            Ok(pod) => pod,
            Err(e) => return scope.fail(ApiError::internal(e)),
        };
        if !budgets_ignored(&pod) {
            return find_budgets(scope, options, current, pod);
        }
        let mut delete = options.clone();
        if resource_version_enforced(&pod) && options.resource_version.is_none() {
            // Not racing a pod that turns ready meanwhile.
            delete.resource_version = Some(current.mod_revision.to_string());
        }
        let retry = options.resource_version.is_none() && attempt + 1 < MAX_ATTEMPTS;
        delete_pod(scope, delete, move |scope, e| {
            if e.code == 409 && retry {
                read_pod(scope, options, attempt + 1)
            } else {
                scope.fail(e)
            }
        })
    })
}

/// Whether the pod may go without asking its budget: it is terminal, not yet running,
/// or already being deleted.
fn budgets_ignored(pod: &Object) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed" | "Pending") || being_deleted(pod)
}

/// Whether the pod is deleted only at the resourceVersion it was read at: all but
/// terminal pods and pods already being deleted.
fn resource_version_enforced(pod: &Object) -> bool {
    !(matches!(phase(pod), "Succeeded" | "Failed") || being_deleted(pod))
}

fn phase(pod: &Object) -> &str {
    pod.get("status")
        .and_then(|s| s.get("phase"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn being_deleted(pod: &Object) -> bool {
    !meta_str(pod, "deletionTimestamp").is_empty()
}

/// Whether the pod's Ready condition is True.
fn ready(pod: &Object) -> bool {
    conditions(pod.get("status")).iter().any(|c| {
        c.get("type").and_then(Value::as_str) == Some("Ready")
            && c.get("status").and_then(Value::as_str) == Some("True")
    })
}

fn conditions(status: Option<&Value>) -> &[Value] {
    status
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The poddisruptionbudgets resource, as the request's registry serves it.
fn budget_resource(scope: &Scope) -> Option<Arc<Resource>> {
    scope
        .registry
        .lookup_shared(budgets::GROUP, budgets::VERSION, budgets::RESOURCE)
        .cloned()
}

/// List the namespace's budgets and act on those that select the pod.
fn find_budgets(scope: Scope, options: Options, pod_kv: KeyValue, pod: Object) -> Step {
    let Some(pdb_resource) = budget_resource(&scope) else {
        return delete_pod(scope, options, |scope, e| scope.fail(e));
    };
    let r = &pdb_resource;
    let prefix = storage::resource_prefix(
        &scope.shared.config.storage_prefix,
        &r.group,
        &r.plural,
        scope.namespace.as_deref(),
    );
    let op = StorageOp::list_latest(prefix);
    scope.then(op, move |scope, done| {
        let page = match done {
            Ok(StorageOutput::Listed(page)) => page,
            other => return scope.fail_storage("", other),
        };
        let labels = pod
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object);
        let mut matching = Vec::new();
        for kv in page.items {
            match object::from_storage(&kv) {
                Ok(budget)
                    if selects(budget.get("spec").and_then(|s| s.get("selector")), labels) =>
                {
                    matching.push((kv, budget))
                }
                Ok(_) => {}
                Err(e) => return scope.fail(ApiError::internal(e)),
            }
        }
        if matching.len() > 1 {
            // Upstream returns this Status as the created object: the response is a
            // 201 whose body says Failure with code 500.
            let status = json!({
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": MULTIPLE_BUDGETS,
                "code": 500,
            });
            return scope.respond(201, &status);
        }
        let Some((budget_kv, budget)) = matching.pop() else {
            return delete_pod(scope, options, |scope, e| scope.fail(e));
        };
        let int = |field: &str| status_int(&budget, field);
        let always_allow = budget
            .get("spec")
            .and_then(|s| s.get("unhealthyPodEvictionPolicy"))
            .and_then(Value::as_str)
            == Some("AlwaysAllow");
        let (desired, current) = (int("desiredHealthy"), int("currentHealthy"));
        if !ready(&pod) && (always_allow || (current >= desired && desired > 0)) {
            // An unready pod does not count as healthy: it goes without a disruption
            // being spent, but only if it is still the pod that was read.
            let unpinned = options.resource_version.is_none();
            let mut delete = options;
            delete.resource_version = Some(pod_kv.mod_revision.to_string());
            let name = meta_str(&budget, "name").to_owned();
            return delete_pod(scope, delete, move |scope, e| {
                if e.code == 409 && unpinned {
                    refuse(scope, still_processing(&name))
                } else {
                    scope.fail(e)
                }
            });
        }
        let name = meta_str(&budget, "name").to_owned();
        decrement(scope, options, pdb_resource, budget_kv, name)
    })
}

/// Whether a PDB's selector selects a pod with `labels`. A missing or empty selector
/// selects nothing here, and so does one that does not parse.
fn selects(selector: Option<&Value>, labels: Option<&Map<String, Value>>) -> bool {
    match selector.and_then(LabelSelector::from_object) {
        Some(selector) if !selector.is_empty() => selector.matches_labels(labels),
        _ => false,
    }
}

/// Spend one of the budget's disruptions on the pod, then delete it; a budget that
/// allows none refuses the eviction.
fn decrement(
    scope: Scope,
    options: Options,
    pdb_resource: Arc<Resource>,
    budget_kv: KeyValue,
    budget_name: String,
) -> Step {
    let name = budget_name.clone();
    GuaranteedUpdate::new(move |scope: &Scope, budget: &Object, _: &KeyValue| {
        allows_disruption(budget)?;
        let now = object::rfc3339(scope.inputs.now);
        let mut updated = spend(budget.clone(), &scope.name, &now);
        budget_scope(scope, &pdb_resource, &name).record_update(Some(budget), &mut updated);
        Ok(updated)
    })
    .retries(MAX_ATTEMPTS - 1)
    .dry_run(options.dry_run)
    .run(scope, budget_kv, move |scope, outcome| match outcome {
        Outcome::Stored(_) | Outcome::Unchanged(_) | Outcome::DryRun { .. } => {
            delete_pod(scope, options, |scope, e| scope.fail(e))
        }
        Outcome::Refused(e) => refuse(scope, e),
        Outcome::Failed(Err(StorageError::Conflict { .. })) => {
            scope.fail(ApiError::modified(budgets::GROUP, budgets::RESOURCE, &budget_name))
        }
        Outcome::Failed(Err(StorageError::NotFound { .. })) => {
            scope.fail(ApiError::not_found(budgets::GROUP, budgets::RESOURCE, &budget_name))
        }
        Outcome::Failed(other) => scope.fail_storage(&budget_name, other),
    })
}

/// An integer of the budget's status (0 when absent).
fn status_int(budget: &Object, field: &str) -> i64 {
    budget
        .get("status")
        .and_then(|s| s.get(field))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// Whether the budget, as its status last observed it, has a disruption to spend.
fn allows_disruption(budget: &Object) -> Result<(), ApiError> {
    let name = meta_str(budget, "name");
    let int = |field: &str| status_int(budget, field);
    let generation = budget
        .get("metadata")
        .and_then(|m| m.get("generation"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if int("observedGeneration") < generation {
        return Err(still_processing(name));
    }
    let allowed = int("disruptionsAllowed");
    let forbidden = |why: &str| ApiError::forbidden("policy", "poddisruptionbudget", name, why);
    if allowed < 0 {
        return Err(forbidden("pdb disruptions allowed is negative"));
    }
    let disrupted = budget
        .get("status")
        .and_then(|s| s.get("disruptedPods"))
        .and_then(Value::as_object)
        .map_or(0, Map::len);
    if disrupted > MAX_DISRUPTED_PODS {
        return Err(forbidden(
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        let why = format!(
            "The disruption budget {name} needs {} healthy pods and has {} currently",
            int("desiredHealthy"),
            int("currentHealthy")
        );
        return Err(too_many_requests(why, 0));
    }
    Ok(())
}

/// The 429 of a budget whose status does not yet reflect its spec, or of an unready
/// pod that changed while it was being evicted.
fn still_processing(name: &str) -> ApiError {
    let why = format!("The disruption budget {name} is still being processed by the server.");
    too_many_requests(why, 10)
}

/// 429 TooManyRequests with a `DisruptionBudget` cause.
fn too_many_requests(cause: String, retry_after_seconds: u32) -> ApiError {
    ApiError {
        code: 429,
        reason: "TooManyRequests",
        message: WOULD_VIOLATE.to_owned(),
        details: Some(Box::new(Details {
            causes: vec![Cause {
                kind: "DisruptionBudget".to_owned(),
                message: cause,
                field: String::new(),
            }],
            retry_after_seconds: (retry_after_seconds > 0).then_some(retry_after_seconds),
            ..Details::default()
        })),
    }
}

/// Answer with `error`, and a Retry-After header when it suggests a delay.
fn refuse(scope: Scope, error: ApiError) -> Step {
    let delay = error.details.as_ref().and_then(|d| d.retry_after_seconds);
    let mut response = super::response::error_response(&error, scope.output);
    if let Some(seconds) = delay {
        if let Ok(value) = http::HeaderValue::from_str(&seconds.to_string()) {
            response
                .headers_mut()
                .insert(http::header::RETRY_AFTER, value);
        }
    }
    Step::Respond(response)
}

/// The budget with one disruption spent on `pod` at `now`: one fewer allowed (its
/// DisruptionAllowed condition False when none are left), the pod in `disruptedPods`.
fn spend(mut budget: Object, pod: &str, now: &str) -> Object {
    let status = budget.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    let status = status.as_object_mut().expect("an object");
    let allowed = status
        .get("disruptionsAllowed")
        .and_then(Value::as_i64)
        .unwrap_or(0)
        - 1;
    status.insert("disruptionsAllowed".into(), json!(allowed));
    if allowed == 0 {
        let observed = status
            .get("observedGeneration")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        set_condition(status, observed, now);
    }
    let disrupted = status.entry("disruptedPods").or_insert_with(|| json!({}));
    if !disrupted.is_object() {
        *disrupted = json!({});
    }
    if let Some(disrupted) = disrupted.as_object_mut() {
        disrupted.insert(pod.to_owned(), Value::String(now.to_owned()));
    }
    budget
}

/// Set the budget's DisruptionAllowed condition to False (InsufficientPods), as a
/// status condition is set: its transition time moves only when its status changes.
fn set_condition(status: &mut Map<String, Value>, observed_generation: i64, now: &str) {
    let list = status.entry("conditions").or_insert_with(|| json!([]));
    if !list.is_array() {
        *list = json!([]);
    }
    let list = list.as_array_mut().expect("an array");
    let position = list
        .iter()
        .position(|c| c.get("type").and_then(Value::as_str) == Some("DisruptionAllowed"));
    let Some(existing) = position.and_then(|i| list[i].as_object_mut()) else {
        let mut condition = json!({
            "type": "DisruptionAllowed",
            "status": "False",
            "lastTransitionTime": now,
            "reason": "InsufficientPods",
            "message": "",
        });
        if observed_generation != 0 {
            condition["observedGeneration"] = json!(observed_generation);
        }
        list.push(condition);
        return;
    };
    if existing.get("status").and_then(Value::as_str) != Some("False") {
        existing.insert("status".into(), json!("False"));
        existing.insert("lastTransitionTime".into(), json!(now));
    }
    existing.insert("reason".into(), json!("InsufficientPods"));
    existing.insert("message".into(), json!(""));
    if observed_generation != 0 {
        existing.insert("observedGeneration".into(), json!(observed_generation));
    } else {
        existing.remove("observedGeneration");
    }
}

/// A request scope for the budget's status, as kube-apiserver's loopback client
/// updates it: for recording the write in its managed fields.
fn budget_scope(scope: &Scope, pdb_resource: &Arc<Resource>, name: &str) -> Scope {
    Scope {
        shared: scope.shared.clone(),
        registry: scope.registry.clone(),
        resource: pdb_resource.clone(),
        namespace: scope.namespace.clone(),
        name: name.to_owned(),
        subresource: "status".to_owned(),
        query: Query::default(),
        output: scope.output,
        inputs: scope.inputs.clone(),
        content_type: None,
        user_agent: Some(LOOPBACK_USER_AGENT.to_owned()),
        body: Bytes::new(),
        user: crate::authn::UserInfo::system(),
        notes: scope.notes.clone(),
    }
}

/// Delete the pod under `options` and answer 201 Success; a failure goes to
/// `on_error`, which decides whether to try again.
fn delete_pod(
    scope: Scope,
    options: Options,
    on_error: impl FnOnce(Scope, ApiError) -> Step + Send + 'static,
) -> Step {
    scope.with_current(move |scope, current| {
        if options.dry_run {
            // Checked as the delete would check it; nothing written.
            return match delete_preconditions(&scope, &options, &current) {
                Ok(()) => evicted(scope),
                Err(e) => on_error(scope, e),
            };
        }
        mark(scope, options, current, on_error)
    })
}

/// Add the pod's DisruptionTarget condition (checking the preconditions against the
/// latest pod), then delete it.
fn mark(
    scope: Scope,
    mut options: Options,
    current: KeyValue,
    on_error: impl FnOnce(Scope, ApiError) -> Step + Send + 'static,
) -> Step {
    let preconditions = options.clone();
    GuaranteedUpdate::new(move |scope: &Scope, pod: &Object, current: &KeyValue| {
        mark_preconditions(&preconditions, pod, current)
            .map_err(|why| ApiError::conflict("", "Pod", &scope.name, &why))?;
        let mut marked = pod.clone();
        mark_disruption_target(&mut marked, &object::rfc3339(scope.inputs.now));
        Ok(marked)
    })
    .retries(MAX_ATTEMPTS - 1)
    .run(scope, current, move |scope, outcome| match outcome {
        Outcome::Stored(kv) => {
            if options.resource_version.is_some() {
                // The pod's own write: the precondition moves with it.
                options.resource_version = Some(kv.mod_revision.to_string());
            }
            delete_current(scope, options, kv, on_error, 0)
        }
        Outcome::Unchanged(kv) | Outcome::DryRun { current: kv, .. } => {
            delete_current(scope, options, kv, on_error, 0)
        }
        // A pod that cannot be read is a 500, which no caller tries again.
        Outcome::Refused(e) => on_error(scope, e),
        Outcome::Failed(Err(e)) => {
            let e = scope.storage_error(&scope.name, e);
            on_error(scope, e)
        }
        Outcome::Failed(Ok(other)) => scope.fail(ApiError::internal(format!(
            "unexpected storage answer {other:?}"
        ))),
    })
}

/// Why the pod fails the eviction's preconditions, in the words of the update that
/// marks it (they differ from the delete's).
fn mark_preconditions(options: &Options, pod: &Object, current: &KeyValue) -> Result<(), String> {
    let (uid, rv) = (meta_str(pod, "uid"), current.mod_revision.to_string());
    match (&options.uid, &options.resource_version) {
        (Some(want), _) if !want.is_empty() && want != uid => Err(format!(
            "the UID in the precondition ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
        )),
        (_, Some(want)) if !want.is_empty() && *want != rv => Err(format!(
            "the ResourceVersion in the precondition ({want}) does not match the ResourceVersion in record ({rv}). The object might have been modified"
        )),
        _ => Ok(()),
    }
}

/// Set the pod's `DisruptionTarget` condition (True, EvictionByEvictionAPI).
fn mark_disruption_target(pod: &mut Object, now: &str) {
    let status = pod.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    let condition = json!({
        "type": "DisruptionTarget",
        "status": "True",
        "lastProbeTime": null,
        "reason": "EvictionByEvictionAPI",
        "message": "Eviction API: evicting",
    });
    let status = status.as_object_mut().expect("an object");
    pods::update_condition(status, condition, now);
}

/// The preconditions a delete checks against the stored pod, worded as the store
/// words them.
fn delete_preconditions(
    scope: &Scope,
    options: &Options,
    current: &KeyValue,
) -> Result<(), ApiError> {
    let pod = object::from_storage(current).map_err(ApiError::internal)?;
    let (uid, rv) = (meta_str(&pod, "uid"), current.mod_revision.to_string());
    let failed = match (&options.uid, &options.resource_version) {
        (Some(want), _) if want != uid => Some(format!(
            "Precondition failed: UID in precondition: {want}, UID in object meta: {uid}"
        )),
        (_, Some(want)) if *want != rv => Some(format!(
            "Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {rv}"
        )),
        _ => None,
    };
    match failed {
        Some(why) => Err(ApiError::conflict(pods::GROUP, pods::RESOURCE, &scope.name, &why)),
        None => Ok(()),
    }
}

/// Delete the pod as stored in `current`, once its preconditions hold, as a DELETE
/// of it would: gracefully when it is on a node.
fn delete_current(
    scope: Scope,
    options: Options,
    current: KeyValue,
    on_error: impl FnOnce(Scope, ApiError) -> Step + Send + 'static,
    attempt: u32,
) -> Step {
    if let Err(e) = delete_preconditions(&scope, &options, &current) {
        return on_error(scope, e);
    }
    let pod = match object::from_storage(&current) {
        Ok(pod) => pod,
        Err(e) => return on_error(scope, ApiError::internal(e)),
    };
    let propagation = Propagation::default();
    let deletion = Deletion { now: scope.inputs.now, propagation: &propagation, grace_period_seconds: options.grace_period_seconds };
    let op = match scope.resource().strategy.on_delete(&pod, &deletion) {
        OnDelete::Now(_) => StorageOp::Delete { key: current.key.clone(), expected_revision: Some(current.mod_revision) },
        OnDelete::Wait(marked) if marked == pod => return evicted(scope),
        OnDelete::Wait(marked) => {
            StorageOp::Update { key: current.key.clone(), value: scope.stored(marked), expected_revision: current.mod_revision }
        }
    };
    scope.then(op, move |scope, done| match done {
        Ok(StorageOutput::Deleted { .. } | StorageOutput::Written(_)) => evicted(scope),
        Err(StorageError::Conflict { current, .. }) if attempt + 1 < MAX_ATTEMPTS => {
            delete_current(scope, options, current, on_error, attempt + 1)
        }
        Err(e) => {
            let e = scope.storage_error(&scope.name, e);
            on_error(scope, e)
        }
        Ok(other) => scope.fail(ApiError::internal(format!(
            "unexpected storage answer {other:?}"
        ))),
    })
}

/// The answer to an eviction that went through.
fn evicted(scope: Scope) -> Step {
    scope.respond(201, &super::response::created_status())
}

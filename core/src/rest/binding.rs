//! Binding a pod to a node: `POST pods/{name}/binding`, and the older form
//! `POST namespaces/{ns}/bindings`, each taking a v1 `Binding`, as kube-apiserver's
//! BindingREST (and LegacyBindingREST for the collection) serve them.
//!
//! A Binding is never stored. It names a pod (`metadata.name`) and a node
//! (`target.name`); the pod gets the node through a guaranteed update of the pod alone:
//! read, check, change, compare-and-swap, and again on a lost race. The change fails with
//! 409 Conflict on `pods/binding` when the pod is being deleted, already has a node, or
//! still has scheduling gates. Otherwise `spec.nodeName` is set, the Binding's
//! annotations are merged into the pod's and the pod's `PodScheduled` condition becomes
//! True. The answer is a bare success Status with code 201; a dry run checks all of it
//! and writes nothing.
//!
//! The Binding's `metadata.resourceVersion`, and on the subresource its `metadata.uid`
//! (upstream keeps a subresource create's system fields and wipes the collection
//! form's), are preconditions on the pod, failing with 409 Conflict on `pods`.
//!
//! One deliberate difference: kube-apiserver v1.33 answers a bad `target` with a bare
//! 500 (its validation errors are not wrapped in a Status); here they are 422 Invalid
//! on kind Binding with the same field paths and wording, as upstream's fix makes them.

use super::guaranteed_update::{GuaranteedUpdate, Outcome};
use super::object::{self, meta_mut, meta_str, Object};
use super::scope::Scope;
use crate::negotiation::{Output, Shape};
use crate::request_info::RequestInfo;
use crate::effect::Step;
use crate::resources::pods;
use crate::status::ApiError;
use crate::storage::{self, KeyValue, StorageError, StorageOp, StorageOutput};
use crate::validation::{names, quoted, ErrorKind, FieldError};
use serde_json::{json, Map, Value};

/// Serve a binding request: only `create` is served.
pub(super) fn handle(info: &RequestInfo, scope: Scope) -> Step {
    let legacy = scope.subresource.is_empty();
    let served = info.verb == "create" && (legacy == scope.name.is_empty());
    if !served {
        let r = scope.resource();
        let resource = match legacy {
            true => r.plural.clone(),
            false => format!("{}/{}", r.plural, scope.subresource),
        };
        return scope.fail(ApiError::method_not_supported(&r.group, &resource, &info.verb));
    }
    if scope.namespace.is_none() {
        return scope.fail(ApiError::no_such_path());
    }
    if let Err(e) = super::dry_run::write_options(&scope, "CreateOptions") {
        return scope.fail(e);
    }
    let (binding, warnings) = match scope.decode_body("CreateOptions") {
        Ok(decoded) => decoded,
        Err(e) => return scope.fail(e),
    };
    super::response::warned(create(scope, binding, legacy), warnings)
}

/// What a Binding asks of its pod.
struct Assignment {
    pod: String,
    node: String,
    annotations: Map<String, Value>,
    uid: Option<String>,
    resource_version: Option<String>,
}

fn create(scope: Scope, binding: Object, legacy: bool) -> Step {
    let ns = scope.namespace.clone().unwrap_or_default();
    let given_ns = meta_str(&binding, "namespace");
    if !given_ns.is_empty() && given_ns != ns {
        return scope.fail(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let name = meta_str(&binding, "name").to_owned();
    if !legacy && name != scope.name {
        return scope.fail(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    let errors = validate(&binding);
    if !errors.is_empty() {
        return scope.fail(ApiError::invalid("", "Binding", &name, errors));
    }
    // The pod's key: its name must make one.
    if name.is_empty() {
        return scope.fail(ApiError::bad_request("Name parameter required."));
    }
    let invalid = names::path_segment(&name);
    if !invalid.is_empty() {
        return scope.fail(ApiError::bad_request(format!(
            "Name parameter invalid: {}: {}",
            quoted(&name),
            invalid.join(";")
        )));
    }
    let target = binding.get("target");
    let node = target
        .and_then(|t| t.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let annotations = binding
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let non_empty =
        |field: &str| Some(meta_str(&binding, field).to_owned()).filter(|s| !s.is_empty());
    let assignment = Assignment {
        pod: name,
        node,
        annotations,
        // The collection form wipes the body's uid, as any plain create does.
        uid: if legacy { None } else { non_empty("uid") },
        resource_version: non_empty("resourceVersion"),
    };
    let key = storage::object_key(
        &scope.shared.config.storage_prefix,
        pods::GROUP,
        pods::RESOURCE,
        Some(&ns),
        &assignment.pod,
    );
    read_pod(scope, key, assignment)
}

/// Upstream's ValidatePodBinding: the target is a Node (or names no kind) and has a name.
fn validate(binding: &Object) -> Vec<FieldError> {
    let target = binding.get("target");
    let field = |f: &str| {
        target
            .and_then(|t| t.get(f))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let mut errors = Vec::new();
    let kind = field("kind");
    if !kind.is_empty() && kind != "Node" {
        errors.push(FieldError {
            field: "target.kind".to_owned(),
            kind: ErrorKind::NotSupported,
            value: Some(kind.to_owned()),
            detail: "supported values: \"Node\", \"<empty>\"".to_owned(),
        });
    }
    if field("name").is_empty() {
        errors.push(FieldError::required("target.name", ""));
    }
    errors
}

fn read_pod(scope: Scope, key: String, assignment: Assignment) -> Step {
    scope.then(
        StorageOp::Get { key: key.clone() },
        move |scope, done| match done {
            Ok(StorageOutput::Got {
                kv: Some(current), ..
            }) => assign(scope, current, assignment),
            Ok(StorageOutput::Got { kv: None, .. }) => {
                scope.fail(ApiError::not_found(pods::GROUP, pods::RESOURCE, &assignment.pod))
            }
            other => fail_pods(scope, &assignment.pod, other),
        },
    )
}

/// Make the change on the stored pod and compare-and-swap it in.
fn assign(scope: Scope, current: KeyValue, assignment: Assignment) -> Step {
    let pod = assignment.pod.clone();
    let dry_run = scope.dry_run();
    GuaranteedUpdate::new(move |scope: &Scope, stored: &Object, current: &KeyValue| {
        bound(scope, current, stored.clone(), &assignment)
    })
    .dry_run(dry_run)
    .run(scope, current, move |scope, outcome| match outcome {
        Outcome::Stored(_) | Outcome::Unchanged(_) | Outcome::DryRun { .. } => succeeded(&scope),
        Outcome::Refused(e) => scope.fail(e),
        Outcome::Failed(other) => fail_pods(scope, &pod, other),
    })
}

/// The pod bound as `assignment` asks, or why it cannot be.
fn bound(
    scope: &Scope,
    current: &KeyValue,
    mut pod: Object,
    a: &Assignment,
) -> Result<Object, ApiError> {
    // Preconditions first, as the storage checks them before the change is made.
    let uid = meta_str(&pod, "uid").to_owned();
    let rv = current.mod_revision.to_string();
    let failed = match (&a.uid, &a.resource_version) {
        (Some(want), _) if *want != uid => Some(format!(
            "UID in precondition: {want}, UID in object meta: {uid}"
        )),
        (_, Some(want)) if *want != rv => Some(format!(
            "ResourceVersion in precondition: {want}, ResourceVersion in object meta: {rv}"
        )),
        _ => None,
    };
    if let Some(why) = failed {
        let why = format!(
            "StorageError: invalid object, Code: 4, Key: {}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: {why}",
            current.key
        );
        return Err(ApiError::conflict(pods::GROUP, pods::RESOURCE, &a.pod, &why));
    }
    let refuse = |why: String| Err(ApiError::conflict("", "pods/binding", &a.pod, &why));
    let name = meta_str(&pod, "name").to_owned();
    if pod
        .get("metadata")
        .and_then(|m| m.get("deletionTimestamp"))
        .is_some_and(|t| !t.is_null())
    {
        return refuse(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        ));
    }
    let spec = pod.get("spec");
    let assigned = spec
        .and_then(|s| s.get("nodeName"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if !assigned.is_empty() {
        return refuse(format!(
            "pod {name} is already assigned to node {}",
            quoted(assigned)
        ));
    }
    let gated = spec
        .and_then(|s| s.get("schedulingGates"))
        .and_then(Value::as_array)
        .is_some_and(|gates| !gates.is_empty());
    if gated {
        return refuse(format!("pod {name} has non-empty .spec.schedulingGates"));
    }

    section(&mut pod, "spec").insert("nodeName".into(), Value::String(a.node.clone()));
    if !a.annotations.is_empty() {
        let meta = meta_mut(&mut pod);
        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
        if !annotations.is_object() {
            *annotations = json!({});
        }
        if let Some(annotations) = annotations.as_object_mut() {
            for (k, v) in &a.annotations {
                annotations.insert(k.clone(), v.clone());
            }
        }
    }
    scheduled(
        section(&mut pod, "status"),
        &object::rfc3339(scope.inputs.now),
    );
    Ok(pod)
}

/// The object at `field` of `obj`, made one when missing or not an object.
fn section<'a>(obj: &'a mut Object, field: &str) -> &'a mut Map<String, Value> {
    let v = obj.entry(field).or_insert_with(|| json!({}));
    if !v.is_object() {
        *v = json!({});
    }
    v.as_object_mut().expect("an object")
}

/// Set the `PodScheduled` condition to True (reason, message and probe time cleared).
fn scheduled(status: &mut Map<String, Value>, now: &str) {
    let condition = json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null});
    pods::update_condition(status, condition, now);
}

/// The success Status a binding answers with, code 201.
fn succeeded(scope: &Scope) -> Step {
    let status = super::response::created_status();
    let output = Output {
        shape: Shape::Object,
        ..scope.output
    };
    Step::Respond(super::response::encoded(output, 201, &status))
}

/// A storage failure reading or writing the pod, reported against `pods`.
fn fail_pods(scope: Scope, pod: &str, outcome: crate::storage::Completion) -> Step {
    let e = match outcome {
        Err(StorageError::NotFound { .. }) => ApiError::not_found(pods::GROUP, pods::RESOURCE, pod),
        Err(StorageError::Conflict { .. }) => ApiError::modified(pods::GROUP, pods::RESOURCE, pod),
        Err(e) => scope.storage_error(pod, e),
        Ok(other) => ApiError::internal(format!("unexpected storage answer {other:?}")),
    };
    scope.fail(e)
}

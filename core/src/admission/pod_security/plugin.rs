//! The PodSecurity plugin in the chain: pods and pod templates checked against their
//! namespace's levels (read from its labels), namespaces' labels checked as they are
//! written, with warnings for the existing pods a tightened enforce level would refuse.

use super::{admit, admit_namespace, existing_pod_warnings, NamespaceDecision, Request as PodRequest, MAX_PODS_TO_CHECK};
use super::{has_pod_spec, policy::ENFORCE_LEVEL_LABEL, policy::ENFORCE_VERSION_LABEL};
use crate::admission::{Context, Fetched, Notes, Operation, Plugin, Read, Request, Write};
use crate::rest::object::Object;
use crate::status::ApiError;
use serde_json::{Map, Value};

#[derive(Debug)]
pub(crate) struct PodSecurity;

fn is_namespace(request: &Request) -> bool {
    request.group.is_empty() && request.resource == "namespaces"
}

fn labels(object: &Object) -> Map<String, Value> {
    object.get("metadata").and_then(|m| m.get("labels")).and_then(Value::as_object).cloned().unwrap_or_default()
}

/// Whether a namespace write changes its enforce level or version (only then are its
/// pods checked again).
fn enforce_changed(object: &Object, old: Option<&Object>) -> bool {
    let Some(old) = old else { return false };
    let (new, old) = (labels(object), labels(old));
    [ENFORCE_LEVEL_LABEL, ENFORCE_VERSION_LABEL].iter().any(|l| new.get(*l) != old.get(*l))
}

impl Plugin for PodSecurity {
    fn handles(&self, request: &Request) -> bool {
        matches!(request.operation, Operation::Create | Operation::Update)
            && (is_namespace(request) || has_pod_spec(&request.group, &request.resource))
    }

    fn validates(&self) -> bool {
        true
    }

    fn reads(&self, chain: &Context, request: &Request, object: &Object) -> Vec<Read> {
        if is_namespace(request) {
            return match enforce_changed(object, request.old_object.as_ref()) {
                true => vec![Read::Objects { prefix: chain.prefix("", "pods", Some(&request.name)) }],
                false => Vec::new(),
            };
        }
        match &request.namespace {
            Some(ns) => vec![chain.namespace_read(ns)],
            None => Vec::new(),
        }
    }

    fn validate(
        &self,
        chain: &Context,
        request: &Request,
        object: &Object,
        fetched: &Fetched,
        notes: &mut Notes,
    ) -> Result<Vec<Write>, ApiError> {
        let config = &chain.settings.pod_security;
        if is_namespace(request) {
            let old_labels = request.old_object.as_ref().map(labels);
            let name = &request.name;
            let decision = admit_namespace(config, request.operation, &request.subresource, name, name, &labels(object), old_labels.as_ref());
            match decision {
                NamespaceDecision::Refused(e) => return Err(e),
                NamespaceDecision::Allowed { warnings } => warnings.into_iter().for_each(|w| notes.warn(w)),
                NamespaceDecision::CheckExistingPods(level) => {
                    let pods: Vec<Value> = fetched
                        .objects(&chain.prefix("", "pods", Some(name)))
                        .iter()
                        .map(|p| Value::Object((*p.object).clone()))
                        .collect();
                    for w in existing_pod_warnings(config, name, level, &pods, MAX_PODS_TO_CHECK) {
                        notes.warn(w);
                    }
                }
            }
            return Ok(Vec::new());
        }
        let ns = request.namespace();
        let namespace_labels = chain.namespace(fetched, ns).map(|n| labels(&n.object)).unwrap_or_default();
        let object = Value::Object(object.clone());
        let old = request.old_object.clone().map(Value::Object);
        let decision = admit(
            config,
            &namespace_labels,
            &PodRequest {
                operation: request.operation,
                group: &request.group,
                resource: &request.resource,
                subresource: &request.subresource,
                namespace: ns,
                name: &request.name,
                username: &request.user.name,
                object: &object,
                old_object: old.as_ref(),
            },
        );
        for w in decision.warnings {
            notes.warn(w);
        }
        notes.audit_annotations.extend(decision.audit_annotations);
        match decision.refusal {
            Some(e) => Err(e),
            None => Ok(Vec::new()),
        }
    }
}

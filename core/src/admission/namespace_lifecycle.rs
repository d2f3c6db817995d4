//! NamespaceLifecycle: nothing is written into a namespace that does not exist, nothing
//! new into one being terminated, and the namespaces the server needs are never
//! deleted. Upstream runs it as a mutating plugin, so it answers before the kind's
//! validation does.

use super::limit_ranger::name_for_errors;
use super::plugin::{Notes, Plugin};
use super::reads::{Fetched, Read};
use super::request::Request;
use super::{Context, Operation};
use crate::resources::namespaces;
use crate::rest::object::Object;
use crate::status::{ApiError, Cause};
use serde_json::Value;

#[derive(Debug)]
pub(super) struct NamespaceLifecycle;

/// Resources whose answers must not tell whether a namespace exists.
const ACCESS_REVIEWS: &[(&str, &str)] = &[("authorization.k8s.io", "localsubjectaccessreviews")];

impl Plugin for NamespaceLifecycle {
    fn handles(&self, request: &Request) -> bool {
        request.operation != Operation::Connect
    }

    fn mutates(&self) -> bool {
        true
    }

    fn reads(&self, chain: &Context, request: &Request, _object: &Object) -> Vec<Read> {
        match &request.namespace {
            Some(ns) if checks_namespace(request) => vec![chain.namespace_read(ns)],
            _ => Vec::new(),
        }
    }

    fn mutate(
        &self,
        chain: &Context,
        request: &Request,
        object: &mut Object,
        fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        if request.operation == Operation::Delete && request.is_namespace() && namespaces::IMMORTAL.contains(&request.name.as_str()) {
            return Err(ApiError::forbidden("", namespaces::RESOURCE, &request.name, "this namespace may not be deleted"));
        }
        let Some(ns) = request.namespace.as_deref().filter(|_| checks_namespace(request)) else {
            return Ok(());
        };
        let Some(namespace) = chain.namespace(fetched, ns) else {
            return Err(ApiError::not_found("", namespaces::RESOURCE, ns));
        };
        let terminating = namespace.object.get("status").and_then(|s| s.get("phase")).and_then(Value::as_str) == Some("Terminating");
        if request.operation != Operation::Create || !terminating {
            return Ok(());
        }
        let why = format!("unable to create new content in namespace {ns} because it is being terminated");
        let name = name_for_errors(&Value::Object(object.clone()));
        let mut e = ApiError::forbidden(&request.group, &request.resource, &name, &why);
        if let Some(details) = e.details.as_mut() {
            details.causes.push(Cause {
                kind: "NamespaceTerminating".into(),
                message: format!("namespace {ns} is being terminated"),
                field: "metadata.namespace".into(),
            });
        }
        Err(e)
    }
}

/// Whether the request's namespace must exist (and, for a create, be active):
/// namespaced writes other than deletes and access reviews.
fn checks_namespace(request: &Request) -> bool {
    request.namespace.as_deref().is_some_and(|ns| !ns.is_empty())
        && !request.is_namespace()
        && request.operation != Operation::Delete
        && !ACCESS_REVIEWS.contains(&(request.group.as_str(), request.resource.as_str()))
}

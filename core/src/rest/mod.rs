//! The REST handlers of every resource: get, list, create, update, delete and
//! deletecollection over the storage contract, with kube-apiserver's metadata semantics.
//!
//! Each handler is written as a chain of storage steps: it returns
//! [`Step::Storage`] with a continuation that receives the outcome and decides the
//! next step, until it can [`Step::Respond`].

mod apply;
mod binding;
mod claims;
mod computed;
mod connect;
pub(crate) mod conversion;
mod create;
mod create_only;
mod delete;
mod delete_options;
mod dry_run;
mod eviction;
pub(crate) mod finalizers;
mod get;
mod admit;
mod guaranteed_update;
mod list;
mod managed;
pub mod object;
mod partial;
mod patch;
mod pod_log;
pub mod pod_log_options;
mod proxy;
mod read_at;
mod reach;
mod response;
mod scale;
mod scope;
#[doc(hidden)]
pub mod table;
mod token_request;
mod update;
mod watch;
mod watch_stream;

pub(crate) use response::{encoded, error_response};
pub(crate) use scope::Scope;

use crate::authn::UserInfo;
use crate::effect::{Inputs, Step};
use crate::negotiation;
use crate::protobuf;
use crate::query::Query;
use crate::registry::{Resource, Snapshot};
use crate::shared::Shared;
use bytes::Bytes;
use std::sync::Arc;
use crate::request_info::RequestInfo;
use crate::resources::Handler;
use crate::status::ApiError;

/// Dispatch a resource request to the handler its strategy names, or else to its
/// verb's handler.
pub(crate) fn handle(info: &RequestInfo, scope: Scope) -> Step {
    let r = scope.resource();
    let sub = scope.subresource.as_str();
    let handler = if sub.is_empty() {
        r.strategy.handler()
    } else {
        match scope.subresource_handler() {
            Some(handler) => Some(handler),
            None => return scope.fail(ApiError::no_such_path()),
        }
    };
    match handler {
        Some(Handler::Binding) => return binding::handle(info, scope),
        Some(Handler::Eviction) => return eviction::handle(info, scope),
        Some(Handler::CreateOnly) => return create_only::handle(info, scope),
        Some(Handler::Computed) => return computed::handle(info, scope),
        Some(Handler::TokenRequest) => return token_request::handle(info, scope),
        Some(Handler::PodLog) => return pod_log::handle(info, scope),
        Some(Handler::Connect(kind)) => return connect::handle(info, scope, kind),
        Some(Handler::Proxy(target)) => return proxy::handle(info, scope, target),
        Some(Handler::Scale(_) | Handler::CustomScale | Handler::Part(_)) if !matches!(info.verb.as_str(), "get" | "update" | "patch") => {
            let e = ApiError::method_not_supported(&r.group, &format!("{}/{sub}", r.plural), &info.verb);
            return scope.fail(e);
        }
        Some(Handler::Finalize) if info.verb != "update" => {
            let e = ApiError::method_not_supported(&r.group, &format!("{}/{sub}", r.plural), &info.verb);
            return scope.fail(e);
        }
        Some(Handler::Scale(_) | Handler::CustomScale | Handler::Part(_) | Handler::Status | Handler::Approval | Handler::Finalize) | None => {}
    }
    match info.verb.as_str() {
        // go-restful's answer to a method the path has no route for: writes of one
        // object on a collection's path, a create on an object's.
        "update" | "patch" if scope.name.is_empty() => scope.fail(ApiError::method_not_allowed()),
        "create" if !scope.name.is_empty() => scope.fail(ApiError::method_not_allowed()),
        "get" => get::get(scope),
        "list" => list::list(scope),
        "create" => create::create(scope),
        "update" => update::update(scope),
        "delete" => delete::delete(scope),
        "deletecollection" if sub.is_empty() => delete::delete_collection(scope),
        "watch" if sub.is_empty() => watch::watch(scope),
        "patch" => patch::patch(scope),
        verb @ "watch" => {
            let e = ApiError::method_not_supported(&r.group, &r.plural, verb);
            scope.fail(e)
        }
        _ => scope.fail(ApiError::method_not_supported(&r.group, &r.plural, &info.verb)),
    }
}

/// The media types go-restful's route for this request produces: a collection's GET
/// (list and watch) streams too.
fn produces(info: &RequestInfo) -> &'static [&'static str] {
    const WITH_STREAMS: &[&str] = &[
        "application/json",
        "application/yaml",
        crate::protobuf::MEDIA_TYPE,
        "application/json;stream=watch",
        "application/vnd.kubernetes.protobuf;stream=watch",
    ];
    if matches!(info.verb.as_str(), "list" | "watch") && info.name.is_empty() {
        WITH_STREAMS
    } else {
        negotiation::SUPPORTED
    }
}

/// Whether go-restful, which routes built-in resources before any handler runs, finds
/// a route producing something the Accept header names. Subresources that answer any
/// media type (logs, connections, proxies) have no such check.
fn routes_produce(resource: &Resource, info: &RequestInfo, accept: Option<&str>) -> bool {
    let any_type = !info.subresource.is_empty()
        && matches!(
            resource.strategy.subresource(&info.subresource),
            Some(Handler::PodLog | Handler::Connect(_) | Handler::Proxy(_))
        );
    any_type || negotiation::route_produces(accept, produces(info))
}

/// Serve a request routed to `resource`: the request's namespace and subresource
/// checked against the resource, a protobuf body read into JSON, then the verb's
/// handler.
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve(
    shared: &Arc<Shared>,
    registry: Snapshot,
    resource: Arc<Resource>,
    request: http::Request<Bytes>,
    inputs: Inputs,
    info: &RequestInfo,
    user: UserInfo,
) -> Step {
    let (parts, body) = request.into_parts();
    let query = Query::parse(parts.uri.query());
    let header =
        |name: http::header::HeaderName| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let accept = header(http::header::ACCEPT);
    let builtin = resource.has_protobuf();
    if builtin && !routes_produce(&resource, info, accept) {
        let e = ApiError::not_acceptable_by_route(produces(info));
        return Step::Respond(response::raw_json_error(&e));
    }
    let mut output = match negotiation::negotiate_output(accept, query.flag("pretty"), negotiation::Offer::RESOURCE) {
        Ok(o) => o,
        Err(e) => return Step::Respond(response::raw_json_error(&e)),
    };
    if output.format == negotiation::Format::Protobuf && output.shape == negotiation::Shape::Object && !builtin {
        // A custom resource has no protobuf form: JSON is answered instead.
        output.format = negotiation::Format::Json;
    }
    // A namespaced resource outside a namespace only lists; a cluster-scoped one has no namespace.
    let namespace = match (resource.namespaced, info.namespace.is_empty()) {
        (true, false) => Some(info.namespace.clone()),
        (true, true) if matches!(info.verb.as_str(), "list" | "watch") => None,
        (false, true) => None,
        (false, false) if resource.strategy.named_by_namespace_path() => None,
        _ => return Step::Respond(error_response(&ApiError::no_such_path(), output)),
    };
    if let Some(sub) = (!info.subresource.is_empty()).then_some(info.subresource.as_str()) {
        if resource.subresource(sub).is_none() {
            return Step::Respond(error_response(&ApiError::no_such_path(), output));
        }
    }
    // Protobuf bodies are read into the JSON they stand for; everything after this
    // point sees JSON.
    let mut content_type = header(http::header::CONTENT_TYPE).map(str::to_owned);
    let mut body = body;
    if content_type.as_deref().is_some_and(protobuf::is_protobuf) && !body.is_empty() {
        match protobuf::decode(&body) {
            Ok(value) => {
                body = Bytes::from(serde_json::to_vec(&value).expect("JSON values serialize"));
                content_type = Some("application/json".to_owned());
            }
            Err(e) => {
                let e = ApiError::bad_request(format!(
                    "the object provided is unrecognized (must be of type {}): {e}",
                    resource.kind
                ));
                return Step::Respond(error_response(&e, output));
            }
        }
    }
    let scope = Scope {
        shared: shared.clone(),
        registry,
        resource,
        namespace,
        name: info.name.clone(),
        subresource: info.subresource.clone(),
        query,
        output,
        inputs,
        content_type,
        user_agent: header(http::header::USER_AGENT).map(str::to_owned),
        body,
        user,
        notes: Arc::default(),
    };
    let notes = scope.notes.clone();
    let writes = matches!(info.verb.as_str(), "create" | "update" | "patch" | "delete" | "deletecollection");
    let step = handle(info, scope);
    if writes {
        response::noted(step, notes)
    } else {
        step
    }
}

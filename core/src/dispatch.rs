//! The stages after authentication, as upstream's handler chain runs them: a request
//! with credentials nobody accepts is refused (401), impersonation, then
//! authorization, then routing along the delegation chain — the aggregator's proxy,
//! the registry's resources, not found — to the handler that answers.

use crate::aggregation;
use crate::audit;
use crate::authn::{Authenticated, UserInfo};
use crate::authorization::{self, Decision, Verdict};
use crate::effect::{Inputs, PendingCall, Step};
use crate::impersonation;
use crate::negotiation::Output;
use crate::nonresource;
use crate::query::Query;
use crate::request_info::RequestInfo;
use crate::rest;
use crate::routing::{self, Route};
use crate::shared::Shared;
use crate::status::ApiError;
use bytes::Bytes;
use std::sync::Arc;

/// A request past authentication and impersonation: who it acts as is settled.
pub(crate) struct Identified {
    pub(crate) request: http::Request<Bytes>,
    pub(crate) inputs: Inputs,
    pub(crate) info: RequestInfo,
    pub(crate) user: UserInfo,
}

/// The stages after authentication up to priority and fairness: a request with
/// credentials nobody accepts is refused (401), then impersonation. An impersonated
/// user is written into the request's audit record, when it has one.
// The refusal is an answer on its way out, moved once: not worth a box.
#[allow(clippy::result_large_err)]
pub(crate) fn identify(
    shared: &Arc<Shared>,
    mut request: http::Request<Bytes>,
    inputs: Inputs,
    info: RequestInfo,
    authenticated: Authenticated,
    audit: Option<&mut audit::Record>,
) -> Result<Identified, Step> {
    let user = match authenticated {
        Authenticated::User(user) => user,
        // Anonymous requests go on to authorization, which allows what
        // `system:unauthenticated` may do (with RBAC: the public info paths).
        Authenticated::Anonymous => UserInfo::anonymous(),
        // The token webhook is asked by the exchange before it comes here; a request
        // handled without an exchange (`Server::handle`) is not waited for.
        Authenticated::Refused | Authenticated::Ask(_) => {
            return Err(Step::Respond(rest::error_response(&ApiError::unauthorized(), Output::JSON)))
        }
    };
    let user = match impersonation::impersonate(&user, request.headers(), |a| shared.authorize(a)) {
        Ok(None) => user,
        Ok(Some(impersonated)) => {
            impersonation::strip(request.headers_mut());
            if let Some(record) = audit {
                record.impersonated(&impersonated);
            }
            impersonated
        }
        Err(e) => return Err(Step::Respond(rest::error_response(&e, Output::JSON))),
    };
    Ok(Identified { request, inputs, info, user })
}

/// The stages after authentication, for a request whose info and user are known:
/// [`identify`], then [`authorize`] (no priority and fairness).
pub(crate) fn authenticated(
    shared: &Arc<Shared>,
    request: http::Request<Bytes>,
    inputs: Inputs,
    info: RequestInfo,
    authenticated: Authenticated,
    mut audit: Option<&mut audit::Record>,
) -> Step {
    match identify(shared, request, inputs, info, authenticated, audit.as_deref_mut()) {
        Ok(identified) => authorize(shared, identified, audit),
        Err(step) => step,
    }
}

/// Authorization, then routing and the handler.
pub(crate) fn authorize(shared: &Arc<Shared>, identified: Identified, audit: Option<&mut audit::Record>) -> Step {
    let Identified { request, inputs, info, user } = identified;
    let attributes = authorization::Attributes::of_request(&user, &info);
    let verdict = shared.authorize_request(&attributes, inputs.monotonic);
    if let Some(record) = audit {
        if let Some((decision, reason)) = shared.audit_annotation(&verdict, &attributes) {
            record.authorized(decision, reason);
        }
    }
    authorized(shared, verdict, request, inputs, info, user)
}

/// Go on as the authorizers decided: route an allowed request, refuse a denied one
/// (403), answer 500 when an authorizer failed, or ask the webhook authorizer first.
fn authorized(
    shared: &Arc<Shared>,
    verdict: Verdict,
    request: http::Request<Bytes>,
    inputs: Inputs,
    info: RequestInfo,
    user: UserInfo,
) -> Step {
    match verdict {
        Verdict::Decided(Decision::Allow, _) => route(shared, request, inputs, info, user),
        Verdict::Decided(Decision::Deny(reason), _) => {
            let e = authorization::forbidden(authorization::Attributes::of_request(&user, &info), &reason);
            Step::Respond(rest::error_response(&e, Output::JSON))
        }
        Verdict::Failed(error) => Step::Respond(internal_error(&request, &error)),
        Verdict::Ask(outbound, union, question) => {
            let shared = shared.clone();
            Step::Call(
                outbound,
                PendingCall::new(move |outcome| {
                    // The answer's time is not known here; the request's stands for it.
                    let attributes = authorization::Attributes::of_request(&user, &info);
                    let verdict = shared.resume_authorization(&attributes, union, question, outcome, inputs.monotonic);
                    authorized(&shared, verdict, request, inputs, info, user)
                }),
            )
        }
    }
}

/// Upstream's answer when an authorizer failed: plain text naming the request.
fn internal_error(request: &http::Request<Bytes>, error: &str) -> http::Response<Bytes> {
    let uri = request.uri().path_and_query().map_or("/", |p| p.as_str());
    crate::status::plain_text(http::StatusCode::INTERNAL_SERVER_ERROR, &format!("Internal Server Error: {uri:?}: {error}"))
}

/// Route an authorized request along the delegation chain: the aggregator, then the
/// built-in and custom resources, then not found; non-resource paths and discovery
/// are the server's own.
pub(crate) fn route(
    shared: &Arc<Shared>,
    request: http::Request<Bytes>,
    inputs: Inputs,
    info: RequestInfo,
    user: UserInfo,
) -> Step {
    let registry = shared.registry();
    // A group version an extension server serves, and its OpenAPI v3 document.
    let backend = aggregation::backend_of_path(shared, &info.path)
        .or_else(|| aggregation::openapi::backend_of_document(shared, &info.path));
    let resource = match routing::route(&info, backend, &registry) {
        Route::Aggregated(backend) => return aggregation::proxy(shared, &backend, &user, &info, request),
        Route::Resource(resource) => resource,
        Route::NonResource => return non_resource(shared, request, inputs, &info),
        Route::NotFound => {
            // A group version's own not-found answer, in the encoding its resources' are.
            let accept = request.headers().get(http::header::ACCEPT).and_then(|v| v.to_str().ok());
            let offer = crate::negotiation::Offer {
                transforms: false,
                protobuf: true,
            };
            let output = crate::negotiation::negotiate_output(accept, false, offer).unwrap_or(Output::JSON);
            return Step::Respond(rest::error_response(&ApiError::no_such_path(), output));
        }
    };
    rest::serve(shared, registry, resource, request, inputs, &info, user)
}

/// Health, version, discovery, OpenAPI and metrics.
fn non_resource(shared: &Shared, request: http::Request<Bytes>, inputs: Inputs, info: &RequestInfo) -> Step {
    let query = Query::parse(request.uri().query());
    let accept = request
        .headers()
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    Step::Respond(nonresource::handle(
        shared,
        request.method(),
        &info.path,
        &query,
        accept,
        request.headers(),
        inputs.now,
    ))
}

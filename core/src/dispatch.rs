//! The stages after authentication, as upstream's handler chain runs them: a request
//! with credentials nobody accepts is refused (401), impersonation, then
//! authorization, then routing along the delegation chain — the aggregator's proxy,
//! the registry's resources, not found — to the handler that answers.

use crate::aggregation;
use crate::audit;
use crate::authn::{Authenticated, UserInfo};
use crate::authorization::{self, Decision};
use crate::effect::{Inputs, Step};
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

/// The stages after authentication, for a request whose info and user are known. An
/// impersonated user is written into the request's audit record, when it has one.
pub(crate) fn authenticated(
    shared: &Arc<Shared>,
    mut request: http::Request<Bytes>,
    inputs: Inputs,
    info: RequestInfo,
    authenticated: Authenticated,
    audit: Option<&mut audit::Record>,
) -> Step {
    let user = match authenticated {
        Authenticated::User(user) => user,
        // Anonymous requests go on to authorization, which allows what
        // `system:unauthenticated` may do (with RBAC: the public info paths).
        Authenticated::Anonymous => UserInfo::anonymous(),
        Authenticated::Refused => {
            return Step::Respond(rest::error_response(&ApiError::unauthorized(), Output::JSON))
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
        Err(e) => return Step::Respond(rest::error_response(&e, Output::JSON)),
    };
    let attributes = authorization::Attributes::of_request(&user, &info);
    if let Decision::Deny(reason) = shared.authorize(attributes) {
        let e = authorization::forbidden(attributes, &reason);
        return Step::Respond(rest::error_response(&e, Output::JSON));
    }
    route(shared, request, inputs, info, user)
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
    let resource = match routing::route(&info, &shared.config.aggregated_apis, &registry) {
        Route::Aggregated(api) => return aggregation::proxy(&api, request),
        Route::Resource(resource) => resource,
        Route::NonResource => return non_resource(shared, request, inputs, &info),
        Route::NotFound => {
            return Step::Respond(rest::error_response(&ApiError::no_such_path(), Output::JSON))
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

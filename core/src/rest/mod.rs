//! The REST handlers of every resource: get, list, create, update, delete and
//! deletecollection over the storage contract, with kube-apiserver's metadata semantics.
//!
//! Each handler is written as a chain of storage steps: it returns
//! [`Step::Storage`] with a continuation that receives the outcome and decides the
//! next step, until it can [`Step::Respond`].

mod apply;
mod binding;
mod create;
mod delete;
mod dry_run;
mod eviction;
mod get;
mod guaranteed_update;
mod list;
mod managed;
pub mod object;
mod patch;
mod pods;
mod read_at;
mod response;
mod scale;
mod scope;
pub(crate) mod table;
mod update;
mod watch;
mod watch_stream;

pub(crate) use response::{encoded, error_response};
pub(crate) use scope::Scope;

use crate::effect::Step;
use crate::request_info::RequestInfo;
use crate::status::ApiError;

/// Dispatch a resource request to its verb's handler.
pub(crate) fn handle(info: &RequestInfo, scope: Scope) -> Step {
    if binding::is_binding(&scope) {
        return binding::handle(info, scope);
    }
    let r = scope.resource();
    let sub = scope.subresource.as_str();
    if sub == "eviction" && r.group.is_empty() && r.plural == "pods" {
        return eviction::handle(info, scope);
    }
    if !sub.is_empty() && sub != "status" && sub != "scale" {
        return scope.fail(ApiError::no_such_path());
    }
    if sub == "scale" && !matches!(info.verb.as_str(), "get" | "update" | "patch") {
        let e = ApiError::method_not_supported(&r.group, &format!("{}/scale", r.plural), &info.verb);
        return scope.fail(e);
    }
    match info.verb.as_str() {
        "get" => get::get(scope),
        "list" => list::list(scope),
        "create" if scope.name.is_empty() => create::create(scope),
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

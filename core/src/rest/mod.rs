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
        Some(Handler::Scale(_)) if !matches!(info.verb.as_str(), "get" | "update" | "patch") => {
            let e = ApiError::method_not_supported(&r.group, &format!("{}/{sub}", r.plural), &info.verb);
            return scope.fail(e);
        }
        Some(Handler::Scale(_) | Handler::Status) | None => {}
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

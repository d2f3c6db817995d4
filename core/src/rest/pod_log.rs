//! `GET pods/{name}/log`, as upstream's LogREST answers it: the options checked
//! (rest/pod_log_options.rs), the pod read and its container chosen, then
//! - a pod on no node: 200 with an empty `text/plain` body (upstream has nowhere to
//!   read from and streams nothing);
//! - a pod on a node: the node's kubelet is asked for `/containerLogs/…` as an outbound
//!   call (404 when the node does not exist, upstream's 500 when it reports no address,
//!   a 500 naming the request when the kubelet cannot be reached). The answer comes
//!   back whole: `follow` streams nothing until the kubelet ends it.

use super::object::{meta_str, Object};
use super::pod_log_options::PodLogOptions;
use super::reach;
use super::scope::Scope;
use crate::effect::Step;
use crate::request_info::RequestInfo;
use crate::status::ApiError;
use bytes::Bytes;

pub(super) fn handle(info: &RequestInfo, scope: Scope) -> Step {
    if info.verb != "get" {
        return scope.fail(ApiError::method_not_supported("", "pods/log", &info.verb));
    }
    let options = match PodLogOptions::parse(&scope.query) {
        Ok(o) => o,
        Err(e) => return scope.fail(e),
    };
    let errs = options.validate();
    if !errs.is_empty() {
        return scope.fail(ApiError::invalid("", "PodLogOptions", &scope.name, errs));
    }
    let namespace = scope.namespace.clone();
    let name = scope.name.clone();
    reach::read(scope, crate::resources::pods::RESOURCE, namespace.as_deref(), &name.clone(), move |scope, pod| {
        match pod {
            None => scope.fail(ApiError::not_found("", crate::resources::pods::RESOURCE, &name)),
            Some(pod) => from_pod(scope, &pod, options),
        }
    })
}

fn from_pod(scope: Scope, pod: &Object, options: PodLogOptions) -> Step {
    let container = match reach::container(pod, &options.container) {
        Ok(c) => c,
        Err(e) => return scope.fail(e),
    };
    let node = pod.get("spec").and_then(|s| s.get("nodeName")).and_then(|n| n.as_str()).unwrap_or("");
    if node.is_empty() {
        return Step::Respond(empty_log());
    }
    let path = format!("/containerLogs/{}/{}/{container}", meta_str(pod, "namespace"), meta_str(pod, "name"));
    reach::kubelet(scope, node, move |scope, kubelet| {
        let query = options.kubelet_query();
        let url = format!("{}{path}{}{query}", kubelet.base(), if query.is_empty() { "" } else { "?" });
        let request = http::Request::get(&url).body(Bytes::new());
        let Ok(request) = request else {
            return scope.fail(ApiError::internal(format!("invalid kubelet address {url:?}")));
        };
        // Upstream passes on the transport's error, naming the request.
        reach::call(scope, request, move |e| ApiError::unclassified(format!("Get {url:?}: {e}")))
    })
}

/// The log of a pod that runs nowhere yet.
fn empty_log() -> http::Response<Bytes> {
    http::Response::builder()
        .status(200)
        .header(http::header::CONTENT_TYPE, "text/plain")
        .body(Bytes::new())
        .expect("static parts")
}

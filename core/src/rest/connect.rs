//! `pods/{name}/exec`, `attach` and `portforward` (GET or POST), as upstream's connect
//! handlers answer before a stream opens: the pod read (404), the container checked
//! (exec and attach), 400 when the pod has no node, then the node's kubelet looked up
//! (404 when the node does not exist, upstream's 500 when it reports no address).
//!
//! With a kubelet address the stream would be an upgraded connection proxied to the
//! kubelet; the adapter's outbound client carries no protocol upgrades, so the answer
//! is the 500 upstream gives when it cannot dial the kubelet, saying why.

use super::object::Object;
use super::reach;
use super::scope::Scope;
use crate::effect::Step;
use crate::request_info::RequestInfo;
use crate::resources::ConnectKind;
use crate::status::ApiError;

pub(super) fn handle(info: &RequestInfo, scope: Scope, kind: ConnectKind) -> Step {
    // Upstream routes only GET and POST to a connect subresource.
    if !matches!(info.verb.as_str(), "get" | "create") {
        return scope.fail(ApiError::method_not_allowed());
    }
    let namespace = scope.namespace.clone();
    let name = scope.name.clone();
    reach::read(scope, crate::resources::pods::RESOURCE, namespace.as_deref(), &name.clone(), move |scope, pod| {
        match pod {
            None => scope.fail(ApiError::not_found("", crate::resources::pods::RESOURCE, &name)),
            Some(pod) => from_pod(scope, &pod, kind),
        }
    })
}

fn from_pod(scope: Scope, pod: &Object, kind: ConnectKind) -> Step {
    if kind != ConnectKind::PortForward {
        let asked = scope.query.get("container").unwrap_or("").to_owned();
        if let Err(e) = reach::container(pod, &asked) {
            return scope.fail(e);
        }
    }
    let node = pod.get("spec").and_then(|s| s.get("nodeName")).and_then(|n| n.as_str()).unwrap_or("");
    if node.is_empty() {
        return scope.fail(ApiError::bad_request(format!("pod {} does not have a host assigned", scope.name)));
    }
    reach::kubelet(scope, node, |scope, _kubelet| {
        scope.fail(ApiError::unclassified(
            "error dialing backend: streams to a kubelet are not supported by this server",
        ))
    })
}

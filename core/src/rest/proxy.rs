//! `pods/{name}/proxy`, `nodes/{name}/proxy` and `services/{name}/proxy` (and their
//! `…/proxy/{path}` forms), as upstream's proxy subresources find where to go — a
//! pod's IP and port, a node's kubelet (or another port of the node), a service's
//! endpoint — and pass the request there as an outbound call, relaying the answer
//! (503 `error trying to reach service: …` when nothing answers).
//!
//! Where none can be found the answers are upstream's: 400 for a name not of the
//! `[scheme:]name[:port]` form or an address not allowed, 404 for a missing pod, node
//! or Endpoints, upstream's 500 for a node with no address, 503 for a service with no
//! endpoints or no such port. Only the method, path, query, body and content type are
//! passed on; the service's endpoint is the first that has the port (upstream picks
//! one at random and checks it names a pod).

use super::object::Object;
use super::reach::{self, join_host_port, split_scheme_name_port};
use super::scope::Scope;
use crate::effect::Step;
use crate::request_info::RequestInfo;
use crate::resources::ProxyTarget;
use crate::status::ApiError;
use crate::validation::network::sloppy_addr;
use crate::validation::value::{list, text};
use serde_json::Value;

/// Where a proxied request goes: `scheme://host[:port]`, then the request's path.
#[derive(Clone, Debug)]
struct Destination {
    base: String,
    /// The part of the request path after `/proxy`.
    path: String,
    method: http::Method,
}

pub(super) fn handle(info: &RequestInfo, scope: Scope, target: ProxyTarget) -> Step {
    let Some(method) = method_of(&info.verb) else {
        return scope.fail(ApiError::method_not_allowed());
    };
    let path = sub_path(info);
    let id = scope.name.clone();
    let Some((scheme, name, port)) = split_scheme_name_port(&id) else {
        let what = match target {
            ProxyTarget::Pod => "pod",
            ProxyTarget::Node => "node",
            ProxyTarget::Service => "service",
        };
        return scope.fail(ApiError::bad_request(format!("invalid {what} request {id:?}")));
    };
    let (scheme, name, port) = (scheme.to_owned(), name.to_owned(), port.to_owned());
    let go = move |scope: Scope, base: String| send(scope, Destination { base, path, method });
    match target {
        ProxyTarget::Pod => pod(scope, scheme, name, port, go),
        ProxyTarget::Node => node(scope, scheme, name, port, go),
        ProxyTarget::Service => service(scope, scheme, name, port, id, go),
    }
}

/// The method a verb came from (upstream's proxy takes every method it routes).
fn method_of(verb: &str) -> Option<http::Method> {
    Some(match verb {
        "get" => http::Method::GET,
        "create" => http::Method::POST,
        "update" => http::Method::PUT,
        "patch" => http::Method::PATCH,
        "delete" => http::Method::DELETE,
        _ => return None,
    })
}

/// What follows `{resource}/{name}/proxy` in the request path, with its leading slash.
fn sub_path(info: &RequestInfo) -> String {
    let parts = &info.parts;
    let at = (0..parts.len().saturating_sub(2))
        .find(|&i| parts[i] == info.resource && parts[i + 1] == info.name && parts[i + 2] == info.subresource);
    let rest = at.map_or(&[][..], |i| &parts[i + 3..]);
    let mut path = format!("/{}", rest.join("/"));
    if info.path.ends_with('/') && !rest.is_empty() {
        path.push('/');
    }
    path
}

type Go = Box<dyn FnOnce(Scope, String) -> Step + Send>;

fn pod(scope: Scope, scheme: String, name: String, port: String, go: impl FnOnce(Scope, String) -> Step + Send + 'static) -> Step {
    let namespace = scope.namespace.clone();
    let go: Go = Box::new(go);
    reach::read(scope, crate::resources::pods::RESOURCE, namespace.as_deref(), &name.clone(), move |scope, pod| {
        let Some(pod) = pod else {
            return scope.fail(ApiError::not_found("", crate::resources::pods::RESOURCE, &name));
        };
        let port = if port.is_empty() { first_port(&pod) } else { port };
        let ip = pod
            .get("status")
            .map(|s| list(s, "podIPs"))
            .and_then(|ips| ips.first())
            .map_or("", |ip| text(ip, "ip"))
            .to_owned();
        if !sloppy_addr(&ip).is_some_and(|a| reach::global_unicast(&a)) {
            return scope.fail(ApiError::bad_request("address not allowed"));
        }
        go(scope, format!("{}://{}", or_http(&scheme), join_host_port(&ip, &port)))
    })
}

/// The first port a container of the pod declares, as text; empty when none does.
fn first_port(pod: &Object) -> String {
    let null = Value::Null;
    let spec = pod.get("spec").unwrap_or(&null);
    list(spec, "containers")
        .iter()
        .find_map(|c| list(c, "ports").first())
        .and_then(|p| p.get("containerPort"))
        .map_or(String::new(), Value::to_string)
}

fn node(scope: Scope, scheme: String, name: String, port: String, go: impl FnOnce(Scope, String) -> Step + Send + 'static) -> Step {
    reach::kubelet(scope, &name, move |scope, kubelet| {
        if sloppy_addr(&kubelet.host).is_some_and(|a| !reach::global_unicast(&a)) {
            return scope.fail(ApiError::bad_request("address not allowed"));
        }
        // The kubelet itself, unless another port of the node is asked for.
        if port.is_empty() || port == kubelet.port.to_string() {
            return go(scope, kubelet.base());
        }
        go(scope, format!("{}://{}", or_http(&scheme), join_host_port(&kubelet.host, &port)))
    })
}

fn service(
    scope: Scope,
    scheme: String,
    name: String,
    port: String,
    id: String,
    go: impl FnOnce(Scope, String) -> Step + Send + 'static,
) -> Step {
    let go: Go = Box::new(go);
    let namespace = scope.namespace.clone();
    let Ok(number) = port.parse::<i64>() else {
        return endpoints(scope, scheme, name, port, id, go);
    };
    // A port number names the service's port of that number.
    reach::read(scope, crate::resources::services::RESOURCE, namespace.as_deref(), &name.clone(), move |scope, svc| {
        let Some(svc) = svc else {
            return scope.fail(ApiError::not_found("", crate::resources::services::RESOURCE, &name));
        };
        let spec = svc.get("spec").cloned().unwrap_or(Value::Null);
        match list(&spec, "ports").iter().find(|p| p.get("port").and_then(Value::as_i64) == Some(number)) {
            Some(p) => endpoints(scope, scheme, name, text(p, "name").to_owned(), id, go),
            None => scope.fail(ApiError::service_unavailable(format!("no service port {number} found for service {name:?}"))),
        }
    })
}

/// The first ready address of the service's Endpoints with a port named `port`.
fn endpoints(scope: Scope, scheme: String, name: String, port: String, id: String, go: Go) -> Step {
    let namespace = scope.namespace.clone();
    reach::read(scope, "endpoints", namespace.as_deref(), &name.clone(), move |scope, eps| {
        let Some(eps) = eps else {
            return scope.fail(ApiError::not_found("", "endpoints", &name));
        };
        let subsets = eps.get("subsets").and_then(Value::as_array).cloned().unwrap_or_default();
        if subsets.is_empty() {
            return scope.fail(ApiError::service_unavailable(format!("no endpoints available for service {name:?}")));
        }
        for subset in &subsets {
            let Some(address) = list(subset, "addresses").first() else { continue };
            if let Some(p) = list(subset, "ports").iter().find(|p| text(p, "name") == port) {
                let number = p.get("port").map_or(String::new(), Value::to_string);
                let base = format!("{}://{}", or_http(&scheme), join_host_port(text(address, "ip"), &number));
                return go(scope, base);
            }
        }
        scope.fail(ApiError::service_unavailable(format!("no endpoints available for service {id:?}")))
    })
}

fn or_http(scheme: &str) -> &str {
    if scheme.is_empty() {
        "http"
    } else {
        scheme
    }
}

/// Pass the request on and relay the answer.
fn send(scope: Scope, to: Destination) -> Step {
    let query = scope.query.raw();
    let url = format!("{}{}{}{query}", to.base, to.path, if query.is_empty() { "" } else { "?" });
    let mut request = http::Request::builder().method(to.method).uri(&url);
    if let Some(ct) = &scope.content_type {
        request = request.header(http::header::CONTENT_TYPE, ct);
    }
    let Ok(request) = request.body(scope.body.clone()) else {
        return scope.fail(ApiError::bad_request(format!("invalid proxy address {url:?}")));
    };
    reach::call(scope, request, |e| ApiError::service_unavailable(format!("error trying to reach service: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_after_proxy_is_passed_on() {
        let path = |p: &str| sub_path(&crate::request_info::resolve(&http::Method::GET, p, None));
        assert_eq!(path("/api/v1/namespaces/default/pods/p/proxy"), "/");
        assert_eq!(path("/api/v1/namespaces/default/pods/proxy/proxy/a/b/"), "/a/b/");
        assert_eq!(path("/api/v1/nodes/n1:10255/proxy/metrics"), "/metrics");
    }
}

//! `pods/{name}/exec`, `attach` and `portforward` (GET or POST), as upstream's connect
//! handlers answer before a stream opens: admission first (a CONNECT of the options the
//! query names, `PodExecOptions` and the like, mutating then validating plugins and
//! webhooks), then the pod read (404), the container checked
//! (exec and attach), 400 when the pod has no node, then the node's kubelet looked up
//! (404 when the node does not exist, upstream's 500 when it reports no address).
//!
//! With a kubelet address the stream would be an upgraded connection proxied to the
//! kubelet; the adapter's outbound client carries no protocol upgrades, so the answer
//! is the 500 upstream gives when it cannot dial the kubelet, saying why.

use super::admit::Admitted;
use super::object::Object;
use super::reach;
use super::scope::Scope;
use crate::admission::{Operation, Phase};
use crate::effect::Step;
use crate::request_info::RequestInfo;
use crate::resources::ConnectKind;
use crate::status::ApiError;

pub(super) fn handle(info: &RequestInfo, scope: Scope, kind: ConnectKind) -> Step {
    // Upstream routes only GET and POST to a connect subresource.
    if !matches!(info.verb.as_str(), "get" | "create") {
        return scope.fail(ApiError::method_not_allowed());
    }
    let options = options(&scope, kind);
    let request = scope.admission_request(Operation::Connect, &scope.name, None);
    scope.admit(Phase::Mutating, request, options, Box::new(Mutated { kind }))
}

/// The connect options the query names, as upstream reads them into its kind.
fn options(scope: &Scope, kind: ConnectKind) -> Object {
    let (_, version, options_kind) = scope.body_kind();
    let mut options = Object::new();
    options.insert("kind".into(), options_kind.into());
    options.insert("apiVersion".into(), version.into());
    let q = &scope.query;
    match kind {
        ConnectKind::PortForward => {
            let ports: Vec<serde_json::Value> = q.all("ports").filter_map(|p| p.parse::<i64>().ok()).map(Into::into).collect();
            if !ports.is_empty() {
                options.insert("ports".into(), ports.into());
            }
        }
        ConnectKind::Exec | ConnectKind::Attach => {
            // As upstream converts a query value to a bool: present and not "0" or
            // "false" is true.
            let flag = |name: &str| q.get(name).is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"));
            for stream in ["stdin", "stdout", "stderr", "tty"] {
                if flag(stream) {
                    options.insert(stream.into(), true.into());
                }
            }
            if let Some(container) = q.get("container").filter(|c| !c.is_empty()) {
                options.insert("container".into(), container.into());
            }
            let command: Vec<serde_json::Value> = q.all("command").map(Into::into).collect();
            if kind == ConnectKind::Exec && !command.is_empty() {
                options.insert("command".into(), command.into());
            }
        }
    }
    options
}

/// Mutating admission is done: validating admission next.
#[derive(Debug)]
struct Mutated {
    kind: ConnectKind,
}

impl Admitted for Mutated {
    fn admitted(self: Box<Self>, scope: Scope, options: Object) -> Step {
        let request = scope.admission_request(Operation::Connect, &scope.name, None);
        scope.admit(Phase::Validating, request, options, Box::new(Validated { kind: self.kind }))
    }
}

/// Admitted: reach the pod.
#[derive(Debug)]
struct Validated {
    kind: ConnectKind,
}

impl Admitted for Validated {
    fn admitted(self: Box<Self>, scope: Scope, _options: Object) -> Step {
        let (kind, namespace, name) = (self.kind, scope.namespace.clone(), scope.name.clone());
        reach::read(scope, crate::resources::pods::RESOURCE, namespace.as_deref(), &name.clone(), move |scope, pod| {
            match pod {
                None => scope.fail(ApiError::not_found("", crate::resources::pods::RESOURCE, &name)),
                Some(pod) => from_pod(scope, &pod, kind),
            }
        })
    }
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

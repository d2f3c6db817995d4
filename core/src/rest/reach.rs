//! Reaching what a pod, node or service names, for the subresources that pass requests
//! on (`pods/log`, `exec`, `attach`, `portforward`, `*/proxy`): reading the objects
//! involved, the container a request is about, a node's kubelet address, and the
//! outbound call that carries the request there, as upstream's pod, node and service
//! `ResourceLocation`s and its kubelet connection info find them.

use super::object::Object;
use super::scope::Scope;
use crate::effect::{CallError, ClientTls, Outbound, PendingCall, Step};
use crate::status::ApiError;
use crate::storage::{self, StorageOp, StorageOutput};
use crate::validation::value::{list, text};
use bytes::Bytes;
use serde_json::Value;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

/// The kubelet port when a node reports none (`--kubelet-port`'s default).
const KUBELET_PORT: i64 = 10250;

/// The node address kinds upstream tries, in order (`--kubelet-preferred-address-types`).
const PREFERRED_ADDRESSES: [&str; 5] = ["Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP"];

/// How long a request passed on may wait for its whole answer.
pub(super) const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Read `resource`/`name` (core group) in `namespace` and go on with it, or with
/// `None` when it does not exist.
pub(super) fn read(
    scope: Scope,
    resource: &str,
    namespace: Option<&str>,
    name: &str,
    next: impl FnOnce(Scope, Option<Object>) -> Step + Send + 'static,
) -> Step {
    let key = storage::object_key(&scope.shared.config.storage_prefix, "", resource, namespace, name);
    let name = name.to_owned();
    Step::storage(StorageOp::Get { key }, move |done| match done {
        Ok(StorageOutput::Got { kv: Some(kv), .. }) => match super::object::from_storage(&kv) {
            Ok(obj) => next(scope, Some(obj)),
            Err(e) => scope.fail(ApiError::internal(e)),
        },
        Ok(StorageOutput::Got { kv: None, .. }) => next(scope, None),
        other => scope.fail_storage(&name, other),
    })
}

/// The container of `pod` a request names, or the only one when it names none (the
/// 400s of upstream's `validateContainer`).
pub(super) fn container(pod: &Object, asked: &str) -> Result<String, ApiError> {
    let null = Value::Null;
    let spec = pod.get("spec").unwrap_or(&null);
    let name = super::object::meta_str(pod, "name");
    let all: Vec<&str> = ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|l| list(spec, l))
        .map(|c| text(c, "name"))
        .collect();
    if !asked.is_empty() {
        return match all.contains(&asked) {
            true => Ok(asked.to_owned()),
            false => Err(ApiError::bad_request(format!("container {asked} is not valid for pod {name}"))),
        };
    }
    match list(spec, "containers") {
        [only] => Ok(text(only, "name").to_owned()),
        [] => Err(ApiError::bad_request(format!("a container name must be specified for pod {name}"))),
        _ => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}, choose one of: [{}]",
            all.join(" ")
        ))),
    }
}

/// Where a node's kubelet listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Kubelet {
    pub host: String,
    pub port: i64,
}

impl Kubelet {
    /// `https://host:port`.
    pub fn base(&self) -> String {
        format!("https://{}", join_host_port(&self.host, &self.port.to_string()))
    }
}

/// Read the node called `name` and go on with its kubelet's address: 404 when the node
/// does not exist, upstream's 500 when it reports no address of a preferred kind.
pub(super) fn kubelet(
    scope: Scope,
    name: &str,
    next: impl FnOnce(Scope, Kubelet) -> Step + Send + 'static,
) -> Step {
    let node_name = name.to_owned();
    read(scope, crate::resources::nodes::RESOURCE, None, name, move |scope, node| {
        let Some(node) = node else {
            return scope.fail(ApiError::not_found("", crate::resources::nodes::RESOURCE, &node_name));
        };
        match kubelet_of(&node) {
            Ok(kubelet) => next(scope, kubelet),
            Err(e) => scope.fail(e),
        }
    })
}

/// A node's kubelet address: its first address of the most preferred kind, and the
/// port it reports.
fn kubelet_of(node: &Object) -> Result<Kubelet, ApiError> {
    let null = Value::Null;
    let status = node.get("status").unwrap_or(&null);
    let addresses = list(status, "addresses");
    let host = PREFERRED_ADDRESSES
        .iter()
        .find_map(|kind| addresses.iter().find(|a| text(a, "type") == *kind))
        .map(|a| text(a, "address").to_owned());
    let Some(host) = host else {
        // Go prints the addresses as `%v` prints a slice of structs.
        let known: Vec<String> = addresses.iter().map(|a| format!("{{{} {}}}", text(a, "type"), text(a, "address"))).collect();
        return Err(ApiError::unclassified(format!(
            "no preferred addresses found; known addresses: [{}]",
            known.join(" ")
        )));
    };
    let port = status
        .get("daemonEndpoints")
        .and_then(|d| d.get("kubeletEndpoint"))
        .and_then(|k| k.get("Port"))
        .and_then(Value::as_i64)
        .filter(|p| *p > 0)
        .unwrap_or(KUBELET_PORT);
    Ok(Kubelet { host, port })
}

/// Upstream's `scheme:name:port` form of a proxied name: `(scheme, name, port)`, or
/// `None` when it is not of that form.
pub(super) fn split_scheme_name_port(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts[..] {
        [name] => ("", name, ""),
        [name, port] => ("", name, port),
        [scheme, name, port] => (scheme, name, port),
        _ => return None,
    };
    (!name.is_empty() && matches!(scheme, "" | "http" | "https")).then_some((scheme, name, port))
}

/// Whether `ip` is what Go calls a global unicast address (private ranges included).
pub(super) fn global_unicast(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => !(v4.is_unspecified() || v4.is_loopback() || v4.is_multicast() || v4.is_link_local() || v4.is_broadcast()),
        IpAddr::V6(v6) => !(v6.is_unspecified() || v6.is_loopback() || v6.is_multicast() || (v6.segments()[0] & 0xffc0) == 0xfe80),
    }
}

/// `host:port`, an IPv6 host in brackets (Go's `net.JoinHostPort`); `host` alone when
/// there is no port.
pub(super) fn join_host_port(host: &str, port: &str) -> String {
    let host = if host.contains(':') { format!("[{host}]") } else { host.to_owned() };
    if port.is_empty() {
        host
    } else {
        format!("{host}:{port}")
    }
}

/// The TLS of calls to kubelets and through the proxies: no CA is configured for them
/// (`--kubelet-certificate-authority`), and upstream then does not verify them.
pub(super) fn unverified_tls() -> Option<Arc<ClientTls>> {
    Some(Arc::new(ClientTls {
        insecure_skip_verify: true,
        ..ClientTls::default()
    }))
}

/// Send `request` and answer with what comes back (hop-by-hop headers left out), or
/// with `failed`'s error when nothing does.
pub(super) fn call(
    scope: Scope,
    request: http::Request<Bytes>,
    failed: impl FnOnce(CallError) -> ApiError + Send + 'static,
) -> Step {
    let outbound = Outbound {
        request,
        timeout: CALL_TIMEOUT,
        tls: unverified_tls(),
    };
    Step::Call(
        outbound,
        PendingCall::new(move |outcome| match outcome {
            Ok(mut response) => {
                crate::aggregation::strip_hop_by_hop(response.headers_mut());
                Step::Respond(response)
            }
            Err(e) => scope.fail(failed(e)),
        }),
    )
}

/// A value escaped as Go's `url.QueryEscape` escapes it.
pub(super) fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Object {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn containers_chosen_as_upstream_chooses_them() {
        let pod = obj(json!({"metadata": {"name": "p"}, "spec": {
            "initContainers": [{"name": "i"}], "containers": [{"name": "a"}, {"name": "b"}],
            "ephemeralContainers": [{"name": "e"}]}}));
        assert_eq!(container(&pod, "b").unwrap(), "b");
        assert_eq!(container(&pod, "e").unwrap(), "e");
        assert_eq!(container(&pod, "c").unwrap_err().message, "container c is not valid for pod p");
        assert_eq!(
            container(&pod, "").unwrap_err().message,
            "a container name must be specified for pod p, choose one of: [i a b e]"
        );
        let single = obj(json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}}));
        assert_eq!(container(&single, "").unwrap(), "a");
    }

    #[test]
    fn kubelet_addresses_by_preference() {
        let node = obj(json!({"status": {"addresses": [
            {"type": "ExternalIP", "address": "1.2.3.4"}, {"type": "InternalIP", "address": "10.0.0.1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10255}}}}));
        assert_eq!(kubelet_of(&node).unwrap(), Kubelet { host: "10.0.0.1".into(), port: 10255 });
        let e = kubelet_of(&obj(json!({"status": {}}))).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (500, "no preferred addresses found; known addresses: []"));
        let odd = obj(json!({"status": {"addresses": [{"type": "Other", "address": "x"}]}}));
        assert_eq!(kubelet_of(&odd).unwrap_err().message, "no preferred addresses found; known addresses: [{Other x}]");
    }

    #[test]
    fn proxied_names() {
        assert_eq!(split_scheme_name_port("p"), Some(("", "p", "")));
        assert_eq!(split_scheme_name_port("p:80"), Some(("", "p", "80")));
        assert_eq!(split_scheme_name_port("https:p:443"), Some(("https", "p", "443")));
        assert_eq!(split_scheme_name_port("ftp:p:21"), None);
        assert_eq!(split_scheme_name_port(":80"), None);
        assert_eq!(split_scheme_name_port("a:b:c:d"), None);
        assert_eq!(join_host_port("fd00::1", "80"), "[fd00::1]:80");
        assert_eq!(query_escape("a b:/"), "a+b%3A%2F");
    }
}

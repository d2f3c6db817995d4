//! The aggregation layer, kube-aggregator's behaviour over the APIServices in the watch
//! cache: every group version the server serves gets a local APIService
//! ([`autoregister`]); a group version whose APIService names a Service is proxied to
//! it ([`proxy`]) once a periodic check of the Service, its endpoints and its discovery
//! document has marked it `Available` ([`availability`]), which also keeps the
//! backends' discovery and OpenAPI documents ([`documents`]); discovery lists aggregated
//! groups beside the local ones, with their resources in aggregated discovery
//! ([`discovery`]), and the OpenAPI v3 index names the backends' documents ([`openapi`]).

pub(crate) mod autoregister;
pub mod availability;
pub(crate) mod discovery;
pub(crate) mod documents;
pub(crate) mod openapi;
pub(crate) mod proxy;

pub use proxy::PROXY_TIMEOUT;
pub(crate) use proxy::{proxy, strip_hop_by_hop};

use crate::shared::Shared;
use base64::Engine;
use serde_json::{json, Value};

/// The APIServices' group.
pub(crate) const GROUP: &str = "apiregistration.k8s.io";
/// Where the server writes APIServices.
pub(crate) const APISERVICES: &str = "/apis/apiregistration.k8s.io/v1/apiservices";

/// Every APIService, as the watch cache holds them; `None` while it is not filled.
pub(crate) fn apiservices(shared: &Shared) -> Option<Vec<Value>> {
    let (stored, _) = crate::controllers::cache(shared, GROUP, "apiservices")?.snapshot("", 0)?;
    Some(stored.iter().filter_map(|kv| serde_json::from_slice(&kv.value).ok()).collect())
}

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// An APIService's `Available` condition, if it has one.
fn available_condition(api: &Value) -> Option<&Value> {
    api.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| text(c, "/type") == "Available")
}

/// Whether its `Available` condition is True.
pub(crate) fn is_available(api: &Value) -> bool {
    available_condition(api).is_some_and(|c| text(c, "/status") == "True")
}

/// The extension API server behind an APIService that names a Service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backend {
    /// The APIService's name.
    pub name: String,
    pub namespace: String,
    pub service: String,
    pub port: i64,
    /// PEM roots of `caBundle`.
    pub ca_pem: Vec<u8>,
    pub insecure_skip_tls_verify: bool,
    /// Its `Available` condition is True.
    pub available: bool,
}

impl Backend {
    /// The backend of `api`; `None` for a local APIService.
    fn of(api: &Value) -> Option<Backend> {
        let service = api.pointer("/spec/service").filter(|s| s.is_object())?;
        Some(Backend {
            name: text(api, "/metadata/name").to_owned(),
            namespace: text(service, "/namespace").to_owned(),
            service: text(service, "/name").to_owned(),
            port: service.get("port").and_then(Value::as_i64).unwrap_or(443),
            ca_pem: base64::engine::general_purpose::STANDARD.decode(text(api, "/spec/caBundle")).unwrap_or_default(),
            insecure_skip_tls_verify: api.pointer("/spec/insecureSkipTLSVerify").and_then(Value::as_bool).unwrap_or(false),
            available: is_available(api),
        })
    }

    /// How to reach it over TLS, as upstream's transport for an APIService: its CA
    /// bundle, the Service's DNS name as the server name, and the proxy client
    /// certificate.
    fn tls(&self, proxy_client: Option<&crate::effect::ClientTls>) -> crate::effect::ClientTls {
        let (cert, key) = proxy_client.map_or((Vec::new(), Vec::new()), |c| (c.client_cert_pem.clone(), c.client_key_pem.clone()));
        crate::effect::ClientTls {
            ca_pem: self.ca_pem.clone(),
            client_cert_pem: cert,
            client_key_pem: key,
            server_name: Some(format!("{}.{}.svc", self.service, self.namespace)),
            insecure_skip_verify: self.insecure_skip_tls_verify,
        }
    }
}

/// The backend serving `path` (`/apis/<group>/<version>` and below), when the group
/// version's APIService names a Service.
pub(crate) fn backend_of_path(shared: &Shared, path: &str) -> Option<Backend> {
    let mut parts = path.strip_prefix("/apis/")?.split('/');
    let (group, version) = (parts.next()?, parts.next()?);
    if group.is_empty() || version.is_empty() {
        return None;
    }
    let key = crate::storage::object_key(&shared.config.storage_prefix, GROUP, "apiservices", None, &format!("{version}.{group}"));
    let kv = crate::controllers::cache(shared, GROUP, "apiservices")?.get(&key).flatten()?;
    // Most requests are for local group versions: parse only what may name a Service.
    if !may_name_a_service(&kv.value) {
        return None;
    }
    Backend::of(&serde_json::from_slice(&kv.value).ok()?)
}

/// Whether a stored APIService may name a Service: a look at its bytes, no parse.
fn may_name_a_service(stored: &[u8]) -> bool {
    stored.windows(9).any(|w| w == b"\"service\"")
}

/// Whether any APIService names a Service.
pub(crate) fn any_remote(shared: &Shared) -> bool {
    let Some((stored, _)) = crate::controllers::cache(shared, GROUP, "apiservices").and_then(|c| c.snapshot("", 0)) else {
        return false;
    };
    stored.iter().filter(|kv| may_name_a_service(&kv.value)).any(|kv| {
        serde_json::from_slice::<Value>(&kv.value).ok().is_some_and(|api| Backend::of(&api).is_some())
    })
}

/// `api` with its `Available` condition set to `condition` (its `lastTransitionTime`
/// kept when the status does not change, as upstream's `SetAPIServiceCondition`);
/// `None` when nothing changes.
fn with_available(api: &Value, status: &str, reason: &str, message: &str, now: &str) -> Option<Value> {
    let old = available_condition(api);
    if old.is_some_and(|c| text(c, "/status") == status && text(c, "/reason") == reason && text(c, "/message") == message) {
        return None;
    }
    let since = match old {
        Some(c) if text(c, "/status") == status => text(c, "/lastTransitionTime").to_owned(),
        _ => now.to_owned(),
    };
    let condition = json!({
        "type": "Available",
        "status": status,
        "lastTransitionTime": since,
        "reason": reason,
        "message": message,
    });
    let mut updated = api.clone();
    let status_object = updated.as_object_mut()?.entry("status").or_insert_with(|| json!({}));
    if !status_object.is_object() {
        *status_object = json!({});
    }
    let conditions = status_object.as_object_mut()?.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let list = conditions.as_array_mut()?;
    match list.iter_mut().find(|c| text(c, "/type") == "Available") {
        Some(c) => *c = condition,
        None => list.push(condition),
    }
    Some(updated)
}

/// The server's write of an APIService's new status (an update at the revision read,
/// as upstream's `UpdateStatus`: a conflict is tried again at the next look).
fn status_update(api: &Value) -> http::Request<bytes::Bytes> {
    http::Request::put(format!("{APISERVICES}/{}/status", text(api, "/metadata/name")))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(bytes::Bytes::from(api.to_string()))
        .expect("a well-formed aggregator request")
}

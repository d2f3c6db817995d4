//! The remote availability check, as kube-aggregator's `AvailableConditionController`:
//! a service-backed APIService is Available when its Service exists (for a ClusterIP
//! Service: with the APIService's port, and endpoints with an address for that port)
//! and a GET of its group version's discovery document on the backend answers 2xx
//! within [`DISCOVERY_TIMEOUT`]. The verdict is written to `status.conditions`.
//!
//! Sans-IO: [`pass`] hands out the status writes it can decide from the caches and the
//! discovery calls to make; each call's outcome goes to [`AwaitingDiscovery::finish`],
//! which answers the write it calls for. The adapter runs a pass every few seconds;
//! the harness whenever a test asks.
//!
//! The pass also keeps what the aggregator serves of its backends
//! ([`super::documents`]): a passing check's discovery document is the group version's
//! resources in aggregated discovery, and the backend of an Available APIService has its
//! OpenAPI v3 index read (once a minute) for the entry of that group version.

use super::documents::BackendDocuments;
use super::{status_update, text, with_available, Backend};
use crate::effect::{CallOutcome, Outbound};
use crate::rest::conversion::{endpoint_address, service_port_name, CachedEndpoints};
use crate::schema::go_quote;
use crate::shared::Shared;
use crate::webhook::client_config::Endpoints;
use bytes::Bytes;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// How long the backend has to answer its discovery GET.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);

/// One look over every service-backed APIService.
#[derive(Debug, Default)]
pub struct AvailabilityPass {
    /// Status writes decided without a call (the Service or its endpoints are missing).
    pub writes: Vec<http::Request<Bytes>>,
    /// Discovery GETs to send, each finished with its outcome.
    pub checks: Vec<DiscoveryCheck>,
}

/// A discovery GET to send to an APIService's backend, and what decides from its
/// outcome.
#[derive(Debug)]
pub struct DiscoveryCheck {
    /// The GET to send.
    pub outbound: Outbound,
    /// Give it the outcome.
    pub verdict: AwaitingDiscovery,
}

/// A discovery check waiting for the outcome of its GET.
#[derive(Debug)]
pub struct AwaitingDiscovery {
    /// The APIService as read when the check began.
    api: Value,
    /// The URL as upstream's messages name it.
    url: String,
    /// What was asked.
    asked: Asked,
    /// Where the answer's documents are kept.
    documents: Arc<BackendDocuments>,
}

/// The document a check's GET asks the backend for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    /// The group version's `APIResourceList`: the availability check itself.
    ResourceList,
    /// The OpenAPI v3 index (`/openapi/v3`): no status depends on it.
    OpenApiIndex,
}

impl AwaitingDiscovery {
    /// The status write the outcome calls for at `now`, if the condition changes.
    pub fn finish(self, outcome: CallOutcome, now: SystemTime) -> Option<http::Request<Bytes>> {
        if self.asked == Asked::OpenApiIndex {
            let backend = Backend::of(&self.api)?;
            let entry = ok_json(&outcome).and_then(|index| super::openapi::index_entry(&index, &self.api));
            self.documents.set_openapi_entry(&backend, entry, now);
            return None;
        }
        let resources = ok_json(&outcome).and_then(|list| super::discovery::legacy_to_aggregated(&list));
        self.documents.set_resources(text(&self.api, "/metadata/name"), resources);
        let url = &self.url;
        let failure = match outcome {
            Ok(response) if response.status().is_success() => None,
            Ok(response) => Some(format!("bad status from {url}: {}", response.status().as_u16())),
            Err(e) => Some(e.to_string()),
        };
        let now = crate::time::rfc3339(now);
        let updated = match failure {
            None => with_available(&self.api, "True", "Passed", "all checks passed", &now),
            Some(why) => {
                let message = format!("failing or missing response from {url}: {why}");
                with_available(&self.api, "False", "FailedDiscoveryCheck", &message, &now)
            }
        };
        updated.map(|api| status_update(&api))
    }
}

/// The JSON body of a 200 answer.
fn ok_json(outcome: &CallOutcome) -> Option<Value> {
    match outcome {
        Ok(response) if response.status() == http::StatusCode::OK => serde_json::from_slice(response.body()).ok(),
        _ => None,
    }
}

/// What one look at every service-backed APIService calls for at `now`.
pub(crate) fn pass(shared: &Shared, now: SystemTime) -> AvailabilityPass {
    let mut pass = AvailabilityPass::default();
    let Some(apis) = super::apiservices(shared) else { return pass };
    let documents = &shared.backend_documents;
    let backed: HashSet<&str> = apis.iter().filter(|a| Backend::of(a).is_some()).map(|a| text(a, "/metadata/name")).collect();
    documents.retain(&backed);
    let stamp = crate::time::rfc3339(now);
    let endpoints = CachedEndpoints { served: &shared.served, root: &shared.config.storage_prefix };
    for api in &apis {
        let Some(backend) = Backend::of(api) else { continue };
        match look(&endpoints, &backend) {
            Look::Failed(reason, message) => {
                documents.set_resources(&backend.name, None);
                pass.writes.extend(with_available(api, "False", reason, &message, &stamp).map(|a| status_update(&a)));
            }
            Look::Call(at) => {
                let path = match backend.name.as_str() {
                    "v1." => format!("/api/{}", text(api, "/spec/version")),
                    _ => format!("/apis/{}/{}", text(api, "/spec/group"), text(api, "/spec/version")),
                };
                let aggregator = crate::authn::UserInfo::named("system:kube-aggregator", vec!["system:masters".to_owned()]);
                pass.checks.extend(check(shared, api, &backend, &at, &path, &aggregator, Asked::ResourceList));
                // Upstream's OpenAPI v3 controller reads the index as `system:aggregator`,
                // through the proxy, which refuses while the APIService is unavailable.
                if backend.available && backend.name != "v1." && documents.openapi_due(&backend, now) {
                    let reader = crate::authn::UserInfo::named("system:aggregator", Vec::new());
                    pass.checks.extend(check(shared, api, &backend, &at, "/openapi/v3", &reader, Asked::OpenApiIndex));
                }
            }
        }
    }
    pass
}

/// A GET of `path` on `backend` at `at` as `user`, and what its outcome is for.
fn check(
    shared: &Shared,
    api: &Value,
    backend: &Backend,
    at: &str,
    path: &str,
    user: &crate::authn::UserInfo,
    asked: Asked,
) -> Option<DiscoveryCheck> {
    let url = format!("https://{at}{path}");
    let mut request = http::Request::get(&url).body(Bytes::new()).ok()?;
    super::proxy::set_remote_identity(request.headers_mut(), user);
    let tls = Some(Arc::new(backend.tls(shared.config.proxy_client.as_deref())));
    let outbound = Outbound { request, timeout: DISCOVERY_TIMEOUT, tls };
    let documents = shared.backend_documents.clone();
    Some(DiscoveryCheck { outbound, verdict: AwaitingDiscovery { api: api.clone(), url, asked, documents } })
}

/// What the caches say of a backend.
#[derive(Debug)]
enum Look {
    /// Unavailable: the reason and message of the condition.
    Failed(&'static str, String),
    /// Reachable at `host:port`: ask its discovery document.
    Call(String),
}

/// Upstream's checks of the Service and its endpoints, in its order and words.
fn look(endpoints: &CachedEndpoints<'_>, backend: &Backend) -> Look {
    let (ns, name) = (&backend.namespace, &backend.service);
    let Ok(service) = endpoints.object("services", ns, name) else {
        return Look::Failed("ServiceNotFound", format!("service/{name} in {} is not present", go_quote(ns)));
    };
    if text(&service, "/spec/type") == "ClusterIP" || service.pointer("/spec/type").is_none() {
        let Some(port_name) = service_port_name(&service, backend.port) else {
            let message = format!("service/{name} in {} is not listening on port {}", go_quote(ns), backend.port);
            return Look::Failed("ServicePortError", message);
        };
        let Ok(found) = endpoints.object("endpoints", ns, name) else {
            return Look::Failed("EndpointsNotFound", format!("cannot find endpoints for service/{name} in {}", go_quote(ns)));
        };
        if endpoint_address(&found, port_name).is_none() {
            let message = format!("endpoints for service/{name} in {} have no addresses with port name {}", go_quote(ns), go_quote(port_name));
            return Look::Failed("MissingEndpoints", message);
        }
    }
    match endpoints.resolve(ns, name, backend.port) {
        Ok(at) => Look::Call(at),
        Err(e) => Look::Failed("FailedDiscoveryCheck", e),
    }
}

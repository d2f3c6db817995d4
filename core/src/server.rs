//! The server as a state machine: a request goes in with its [`Inputs`], and a
//! [`Step`] comes out saying what must happen next.

use crate::authn;
use crate::config::Config;
use crate::effect::{Inputs, Step};
use crate::health::HealthChecks;
use crate::shared::Shared;
use crate::negotiation::{self, Output};
use crate::nonresource;
use crate::protobuf;
use crate::query::Query;
use crate::registry::Registry;
use crate::request_info;
use crate::rest;
use crate::status::ApiError;
use crate::storage::StorageOp;
use bytes::Bytes;
use std::sync::Arc;

/// The API server. Cheap to clone; shared by every connection.
#[derive(Clone)]
pub struct Server {
    pub(crate) shared: Arc<Shared>,
}

/// Paths anyone may read without credentials.
fn is_public(path: &str) -> bool {
    path == "/version"
        || ["/healthz", "/livez", "/readyz"].iter().any(|p| {
            path == *p
                || path
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
}

impl Server {
    pub fn new(config: Config) -> Server {
        Server {
            shared: Arc::new({
                let registry = Registry::builtin();
                let watch_caches = registry
                    .resources()
                    .iter()
                    .map(|r| {
                        let prefix = crate::storage::resource_prefix(
                            &config.storage_prefix,
                            &r.group,
                            &r.plural,
                            None,
                        );
                        Arc::new(crate::watch_cache::WatchCache::new(prefix))
                    })
                    .collect();
                Shared {
                    health: HealthChecks::with_readiness(config.storage_check.as_deref()),
                    config,
                    registry,
                    watch_caches,
                    metrics: crate::metrics::Metrics::new(),
                }
            }),
        }
    }

    /// The watch caches, one per resource: the adapter feeds each from one backend watch.
    pub fn watch_caches(&self) -> &[Arc<crate::watch_cache::WatchCache>] {
        &self.shared.watch_caches
    }

    /// The watch cache of the resource stored under `resource_prefix`.
    pub fn watch_cache(
        &self,
        resource_prefix: &str,
    ) -> Option<&Arc<crate::watch_cache::WatchCache>> {
        self.shared
            .watch_caches
            .iter()
            .find(|c| c.prefix() == resource_prefix)
    }

    /// The server's health checks, for the adapter to mark as the server comes up.
    pub fn health(&self) -> &HealthChecks {
        &self.shared.health
    }

    /// The server's metrics.
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.shared.metrics
    }

    /// A client request arrives: its metric labels, counted in flight unless it is a
    /// watch. The adapter ends it with [`crate::metrics::Metrics::request_finished`], or
    /// for a watch with `watch_started` and `watch_finished`.
    pub fn request_started(&self, request: &http::Request<Bytes>) -> crate::metrics::Tracked {
        let header = |name| request.headers().get(name).and_then(|v: &http::HeaderValue| v.to_str().ok());
        let mut tracked = crate::metrics::classify(
            request.method(),
            request.uri().path(),
            request.uri().query(),
            header(http::header::CONTENT_TYPE),
        );
        if tracked.is_long_running() {
            tracked.watch_kind = tracked.labels.as_ref().and_then(|l| {
                self.shared.registry.resources().iter().find(|r| {
                    r.group == l.group && r.version == l.version && r.plural == l.resource
                }).map(|r| (r.group.clone(), r.version.clone(), r.kind.clone()))
            });
        }
        self.shared.metrics.request_started(&tracked);
        tracked
    }

    /// The adapter ran `op` against storage in `elapsed`: upstream's
    /// `etcd_request_duration_seconds{operation,type}`.
    pub fn storage_observed(&self, op: &StorageOp, elapsed: std::time::Duration) {
        if let Some((operation, key)) = crate::metrics::storage_operation(op) {
            if let Some(index) = self.shared.watch_caches.iter().position(|c| key.starts_with(c.prefix())) {
                let resource = &self.shared.registry.resources()[index];
                self.shared.metrics.storage_observed(operation, &resource.group_resource(), elapsed);
            }
        }
    }

    /// The audit record of a request about to be handled with `inputs`, under the
    /// configured policy: `None` when there is no policy or its level is None. The
    /// adapter writes the record's events as the request goes (see
    /// [`crate::audit::Record`]); `audit_id` is [`crate::audit::audit_id`]'s.
    pub fn audit(
        &self,
        request: &http::Request<Bytes>,
        inputs: &Inputs,
        audit_id: &str,
    ) -> Option<crate::audit::Record> {
        let policy = self.shared.config.audit_policy.as_deref()?;
        let user = authn::authenticate(&inputs.peer_certificates);
        let authenticated = !user.is_anonymous() || is_public(request.uri().path());
        let uri = request.uri();
        let info = request_info::resolve(request.method(), uri.path(), uri.query());
        crate::audit::Record::new(
            policy,
            crate::audit::Arrival {
                request,
                info: &info,
                user: authenticated.then_some(&user),
                remote_addr: inputs.remote_addr,
                now: inputs.now,
                audit_id: audit_id.to_owned(),
            },
        )
    }

    /// Handle one client request.
    pub fn handle(&self, request: http::Request<Bytes>, inputs: Inputs) -> Step {
        let user = authn::authenticate(&inputs.peer_certificates);
        if user.is_anonymous() && !is_public(request.uri().path()) {
            return Step::Respond(rest::error_response(
                &ApiError::unauthorized(),
                Output::JSON,
            ));
        }
        self.route(request, inputs)
    }

    /// Requests the server makes of itself after it starts (creating the default
    /// namespaces). Run each with [`Server::handle_as_system`] like any other request;
    /// a 409 AlreadyExists answer means it was done on an earlier start.
    pub fn bootstrap_requests(&self) -> Vec<http::Request<Bytes>> {
        ["default", "kube-system", "kube-public", "kube-node-lease"]
            .iter()
            .map(|ns| {
                let body = format!(
                    r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{ns}"}}}}"#
                );
                http::Request::post("/api/v1/namespaces")
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(Bytes::from(body))
                    .expect("static request")
            })
            .collect()
    }

    /// Handle a request the server makes of itself, as the privileged loopback user.
    pub fn handle_as_system(&self, request: http::Request<Bytes>, inputs: Inputs) -> Step {
        self.route(request, inputs)
    }

    /// Route an authenticated request along the delegation chain: non-resource paths and
    /// discovery, then built-in resources, then not-found.
    fn route(&self, request: http::Request<Bytes>, inputs: Inputs) -> Step {
        let (parts, body) = request.into_parts();
        let query = Query::parse(parts.uri.query());
        let info = request_info::resolve(&parts.method, parts.uri.path(), parts.uri.query());
        let header =
            |name: http::header::HeaderName| parts.headers.get(name).and_then(|v| v.to_str().ok());
        let accept = header(http::header::ACCEPT);
        if !info.is_resource_request {
            return Step::Respond(nonresource::handle(
                &self.shared,
                &parts.method,
                &info.path,
                &query,
                accept,
                &parts.headers,
                inputs.now,
            ));
        }
        let Some(index) = self.shared.registry.resources().iter().position(|r| {
            r.group == info.api_group && r.version == info.api_version && r.plural == info.resource
        }) else {
            return Step::Respond(rest::error_response(
                &ApiError::no_such_path(),
                Output::JSON,
            ));
        };
        let resource = &self.shared.registry.resources()[index];
        let output = match negotiation::negotiate_output(accept, query.flag("pretty"), true) {
            Ok(o) => o,
            Err(e) => return Step::Respond(rest::error_response(&e, Output::JSON)),
        };
        // A namespaced resource outside a namespace only lists; a cluster-scoped one has no namespace.
        let namespace = match (resource.namespaced, info.namespace.is_empty()) {
            (true, false) => Some(info.namespace.clone()),
            (true, true) if matches!(info.verb.as_str(), "list" | "watch") => None,
            (false, true) => None,
            (false, false) if resource.strategy.named_by_namespace_path() => None,
            _ => return Step::Respond(rest::error_response(&ApiError::no_such_path(), output)),
        };
        if let Some(sub) = (!info.subresource.is_empty()).then_some(info.subresource.as_str()) {
            if resource.subresource(sub).is_none() {
                return Step::Respond(rest::error_response(&ApiError::no_such_path(), output));
            }
        }
        // Protobuf bodies are read into the JSON they stand for; everything after this
        // point sees JSON.
        let mut content_type = header(http::header::CONTENT_TYPE).map(str::to_owned);
        let mut body = body;
        if content_type.as_deref().is_some_and(protobuf::is_protobuf) && !body.is_empty() {
            match protobuf::decode(&body) {
                Ok(value) => {
                    body = Bytes::from(serde_json::to_vec(&value).expect("JSON values serialize"));
                    content_type = Some("application/json".to_owned());
                }
                Err(e) => {
                    let e = ApiError::bad_request(format!(
                        "the object provided is unrecognized (must be of type {}): {e}",
                        resource.kind
                    ));
                    return Step::Respond(rest::error_response(&e, output));
                }
            }
        }
        let scope = rest::Scope {
            shared: self.shared.clone(),
            resource: index,
            namespace,
            name: info.name.clone(),
            subresource: info.subresource.clone(),
            query,
            output,
            inputs,
            content_type,
            user_agent: header(http::header::USER_AGENT).map(str::to_owned),
            body,
        };
        rest::handle(&info, scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The adapter feeds every cache from one watch of the whole key space and hands
    /// each change to the cache whose prefix its key starts with: no prefix may start
    /// another, or a change would belong to two caches.
    #[test]
    fn watch_cache_prefixes_are_disjoint() {
        let server = Server::new(Config::default());
        let prefixes: Vec<&str> = server.watch_caches().iter().map(|c| c.prefix()).collect();
        for a in &prefixes {
            assert!(a.starts_with("/registry/") && a.ends_with('/'), "{a}");
            for b in &prefixes {
                assert!(a == b || !b.starts_with(a), "{a} is a prefix of {b}");
            }
        }
    }
}

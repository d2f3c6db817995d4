//! The server as a state machine: a request goes in with its [`Inputs`], and a
//! [`Step`] comes out saying what must happen next.

use crate::admission::AdmissionChain;
use crate::authn::UserInfo;
use crate::config::Config;
use crate::dispatch;
use crate::effect::{Inputs, Step};
use crate::exchange::{Arrived, Exchange};
use crate::health::{HealthChecks, SHUTDOWN};
use crate::inflight::Limiter;
use crate::lifecycle::{self, Event, InFlight, LifecycleController, Signal};
use crate::registry::{Registry, Resource, Served, WatchCaches};
use crate::request_info;
use crate::shared::Shared;
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;

/// The API server. Cheap to clone; shared by every connection.
#[derive(Clone)]
pub struct Server {
    pub(crate) shared: Arc<Shared>,
}

impl Server {
    pub fn new(config: Config) -> Server {
        Server {
            shared: Arc::new({
                let served = Served::with_queue_limit(config.storage_prefix.clone(), Registry::builtin(), config.watch_queue_limit);
                // With priority and fairness the limiter only counts (for
                // apiserver_current_inflight_requests); the levels share the seats.
                let (limiter, flowcontrol) = match config.priority_and_fairness {
                    true => {
                        let seats = config.inflight.max_requests_inflight + config.inflight.max_mutating_requests_inflight;
                        let seats = u32::try_from(seats).unwrap_or(u32::MAX);
                        (Limiter::new(crate::inflight::Limits { max_requests_inflight: 0, max_mutating_requests_inflight: 0 }), Some(crate::flowcontrol::FlowControl::new(seats)))
                    }
                    false => (Limiter::new(config.inflight), None),
                };
                let metrics = crate::metrics::Metrics::new();
                // /metrics reports the in-flight limiter's counts, as upstream's filter does.
                metrics.follow_inflight(&limiter);
                let lifecycle = Arc::new(LifecycleController::new(
                    config.lifecycle.clone(),
                    &[lifecycle::BOOTSTRAP],
                ));
                Shared {
                    health: HealthChecks::with_readiness(config.storage_check.as_deref()),
                    lifecycle,
                    limiter,
                    flowcontrol,
                    admission: AdmissionChain::new(
                        config.admission_plugins.clone(),
                        &config.storage_prefix,
                        config.admission_settings.clone(),
                    ),
                    authorizers: crate::authorization::Authorizers::new(&config.authorizer),
                    latest: Default::default(),
                    crd_resources: Default::default(),
                    crd_cleanups: Default::default(),
                    namespaces_terminating: Default::default(),
                    garbage_collector: Default::default(),
                    controllers_seen: Default::default(),
                    metrics,
                    config,
                    served,
                    openapi: Default::default(),
                    token_cache: Default::default(),
                    backend_documents: Default::default(),
                }
            }),
        }
    }

    /// The watch caches served now, one per storage prefix, fed by the reflector from
    /// one backend watch. Resources joining or leaving change the set; this one stays
    /// as it was.
    pub fn watch_caches(&self) -> Arc<WatchCaches> {
        self.shared.served.caches()
    }

    /// The watch cache of the resource stored under `resource_prefix`.
    pub fn watch_cache(&self, resource_prefix: &str) -> Option<Arc<crate::watch_cache::WatchCache>> {
        self.shared.served.caches().get(resource_prefix).cloned()
    }

    /// The registry served now. Requests already running keep the one they began with.
    pub fn registry(&self) -> Arc<Registry> {
        self.shared.registry().registry().clone()
    }

    /// Serve `resource` from now on (a custom resource), replacing and returning the
    /// one with its group, version and plural. Its watch cache, new unless another
    /// version of it is served, starts unsynced: its reads and watches go to the
    /// backend until a reflector fills it.
    pub fn add_resource(&self, resource: Resource) -> Option<Arc<Resource>> {
        self.shared.served.add(resource)
    }

    /// Stop serving `plural` in `group`/`version` (`""` for the core group): its paths
    /// answer 404 and discovery and OpenAPI leave it out. Its watch cache goes with the
    /// last version of it. Returns the resource, if it was served.
    pub fn remove_resource(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Resource>> {
        self.shared.served.remove(group, version, plural)
    }

    /// The server's health checks, for the adapter to mark as the server comes up.
    pub fn health(&self) -> &HealthChecks {
        &self.shared.health
    }

    /// The server's metrics.
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.shared.metrics
    }

    /// The server's shared lifecycle: the adapter reports signals, hooks, the listener
    /// and time passing, and carries out the actions it queues.
    pub fn lifecycle(&self) -> &Arc<LifecycleController> {
        &self.shared.lifecycle
    }

    /// Report a lifecycle event at `now` (monotonic, since the adapter's origin).
    /// Shutdown beginning fails the `shutdown` readiness check at once.
    pub fn lifecycle_event(&self, event: Event, now: Duration) {
        self.shared.lifecycle.event(event, now);
        if self.shared.lifecycle.signaled(Signal::ShutdownInitiated) {
            self.shared.health.set(SHUTDOWN, false);
        }
    }

    /// A request's first bytes arrived on a connection at `now`: while requests are
    /// still taken, it counts in flight from now on (the drain waits for a slow upload).
    /// Hand the mark to [`Server::exchange`] with the request once it is decoded.
    pub fn request_begun(&self, now: Duration) -> Option<InFlight> {
        self.shared.lifecycle.begin(now)
    }

    /// A decoded request arrives: run it through the chain (see [`crate::exchange`]).
    pub fn exchange(
        &self,
        request: http::Request<Bytes>,
        inputs: Inputs,
        begun: Option<InFlight>,
    ) -> Arrived {
        Exchange::arrive(self.shared.clone(), request, inputs, begun)
    }

    /// Handle one client request past the arrival stages (lifecycle, limits, audit):
    /// authentication, impersonation, authorization, routing and the handler.
    pub fn handle(&self, mut request: http::Request<Bytes>, inputs: Inputs) -> Step {
        let uri = request.uri();
        let info = request_info::resolve(request.method(), uri.path(), uri.query());
        let authenticated = self.shared.authenticate(&inputs, request.headers_mut());
        dispatch::authenticated(&self.shared, request, inputs, info, authenticated, None)
    }

    /// What the server writes of itself after it starts: the default namespaces, the
    /// bootstrap RBAC policy and the `kubernetes` Service with its endpoints. Run each request it hands out with
    /// [`Server::handle_as_system`] and give it the answer.
    pub fn bootstrap(&self) -> crate::bootstrap::Bootstrap {
        crate::bootstrap::Bootstrap::for_config(&self.shared.config)
    }

    /// The `kube-system/extension-apiserver-authentication` ConfigMap alone, this
    /// server's data merged in again where it is missing: run it every minute, as
    /// upstream's controller resyncs.
    pub fn authentication_info(&self) -> crate::bootstrap::Bootstrap {
        crate::bootstrap::Bootstrap::authentication_info(&self.shared.config)
    }

    /// A mark of what the built-in controllers read: when it differs from the last one
    /// seen, [`Server::controller_writes`] may want something.
    pub fn controller_changes(&self) -> crate::controllers::Seen {
        crate::controllers::changes(&self.shared)
    }

    /// The writes the built-in controllers want at `now` (ClusterRole aggregation, the
    /// status of CustomResourceDefinitions; their resources join or leave the registry
    /// on the way). Run each with [`Server::handle_as_system`]; ask again after the
    /// caches change.
    pub fn controller_writes(&self, now: std::time::SystemTime) -> Vec<http::Request<Bytes>> {
        crate::controllers::writes(&self.shared, now)
    }

    /// One look of the aggregator's availability check at `now`: the status writes it
    /// decided from the caches, and the discovery calls whose outcomes decide the rest
    /// ([`crate::aggregation::availability::AwaitingDiscovery::finish`]) and keep the
    /// backends' documents that discovery and OpenAPI serve. Run the writes with
    /// [`Server::handle_as_system`].
    pub fn availability_checks(&self, now: std::time::SystemTime) -> crate::aggregation::availability::AvailabilityPass {
        crate::aggregation::availability::pass(&self.shared, now)
    }

    /// Handle a request the server makes of itself, as the privileged loopback user.
    pub fn handle_as_system(&self, request: http::Request<Bytes>, inputs: Inputs) -> Step {
        let uri = request.uri();
        let info = request_info::resolve(request.method(), uri.path(), uri.query());
        dispatch::route(&self.shared, request, inputs, info, UserInfo::system())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reflector feeds every cache from one watch of the whole key space and hands
    /// each change to the cache whose prefix its key starts with: no prefix may start
    /// another, or a change would belong to two caches.
    #[test]
    fn watch_cache_prefixes_are_disjoint() {
        let server = Server::new(Config::default());
        let caches = server.watch_caches();
        let prefixes: Vec<&str> = caches.iter().map(|c| c.prefix()).collect();
        for a in &prefixes {
            assert!(a.starts_with("/registry/") && a.ends_with('/'), "{a}");
            for b in &prefixes {
                assert!(a == b || !b.starts_with(a), "{a} is a prefix of {b}");
            }
        }
    }
}

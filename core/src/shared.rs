//! What every request of one server shares: configuration, the registry, health
//! checks, watch caches and metrics.

use crate::admission::AdmissionChain;
use crate::config::Config;
use crate::effect::Inputs;
use crate::inflight::Limiter;
use crate::lifecycle::LifecycleController;
use crate::metrics::Tracked;
use crate::request_info::RequestInfo;
use crate::storage::StorageOp;
use crate::health::HealthChecks;
use crate::registry::{Resource, Served, Snapshot};
use crate::watch_cache::WatchCache;
use crate::authorization::Verdict;
use std::sync::Arc;
use std::time::Duration;

/// What every request of one server shares.
pub(crate) struct Shared {
    pub(crate) config: Config,
    /// The resources served now and their watch caches (fed by the
    /// reflector); both change while the server runs.
    pub(crate) served: Served,
    /// The OpenAPI documents of the served registry, rebuilt once per change.
    pub(crate) openapi: crate::openapi::DocumentCache,
    pub(crate) health: HealthChecks,
    /// The server's metrics, served at /metrics.
    pub(crate) metrics: crate::metrics::Metrics,
    /// Start-up and termination, shared by the adapter and every request.
    pub(crate) lifecycle: Arc<LifecycleController>,
    /// `--max-requests-inflight` and `--max-mutating-requests-inflight`.
    pub(crate) limiter: Limiter,
    /// API Priority and Fairness (`--enable-priority-and-fairness`).
    pub(crate) flowcontrol: Option<crate::flowcontrol::FlowControl>,
    /// The admission plugins every write passes.
    pub(crate) admission: AdmissionChain,
    /// `--authorization-mode`'s authorizers and what they decide from.
    pub(crate) authorizers: crate::authorization::Authorizers,
    /// The latest monotonic time a request reported, in nanoseconds.
    pub(crate) latest: std::sync::atomic::AtomicU64,
    /// The resources served for CustomResourceDefinitions (group, version, plural).
    pub(crate) crd_resources: std::sync::Mutex<Vec<(String, String, String)>>,
    /// The caches of the objects of CRDs being deleted: their changes wake the
    /// controllers.
    pub(crate) crd_cleanups: std::sync::Mutex<Vec<String>>,
    /// Whether a namespace is being deleted: then every cache's changes wake the
    /// controllers.
    pub(crate) namespaces_terminating: std::sync::atomic::AtomicBool,
    /// What the controllers saw at their last look.
    pub(crate) controllers_seen: std::sync::Mutex<Option<crate::controllers::Seen>>,
    /// The garbage collector's graph and subscriptions, between its passes.
    pub(crate) garbage_collector: std::sync::Mutex<crate::controllers::garbage_collector::GarbageCollector>,
    /// Bearer tokens that authenticated in the last 10 s.
    pub(crate) token_cache: crate::authn::TokenCache,
    /// What the aggregator's availability passes learned of its extension servers'
    /// discovery and OpenAPI documents.
    pub(crate) backend_documents: Arc<crate::aggregation::documents::BackendDocuments>,
}

impl Shared {
    /// Who sent a request: the one door authentication goes through (the front
    /// proxy's headers, which it removes, the client certificate, then a bearer token against the token file and ServiceAccount
    /// tokens, whose objects are read from the watch caches).
    pub(crate) fn authenticate(&self, inputs: &Inputs, headers: &mut http::HeaderMap) -> crate::authn::Authenticated {
        let context = self.authn_context(inputs);
        let peer = crate::authn::Peer {
            certificates: &inputs.peer_certificates,
            rejected: inputs.peer_certificates_rejected,
            request_header_common_name: inputs.request_header_common_name.as_deref(),
        };
        self.config.authenticators.authenticate(&peer, headers, &context)
    }

    /// What the authenticators consult for a request arriving with `inputs`.
    pub(crate) fn authn_context(&self, inputs: &Inputs) -> crate::authn::Context<'_> {
        crate::authn::Context {
            now: inputs.now,
            monotonic: inputs.monotonic,
            live: self,
            cache: Some(&self.token_cache),
        }
    }

    /// May this user do this? The configured authorizers decide (upstream's union
    /// authorizer); handlers that check other attributes (impersonation, access
    /// reviews, escalation) ask here too.
    pub(crate) fn authorize(&self, attributes: crate::authorization::Attributes<'_>) -> crate::authorization::Decision {
        self.authorizers
            .authorize(&self.served, &self.config.storage_prefix, attributes, self.clock())
    }

    /// The request's own authorization, which may stop to ask the webhook authorizer.
    pub(crate) fn authorize_request(&self, attributes: &crate::authorization::Attributes<'_>, now: Duration) -> Verdict {
        self.saw(now);
        self.authorizers
            .begin(&self.served, &self.config.storage_prefix, attributes, now)
    }

    /// The audit annotations of a request's authorization.
    pub(crate) fn audit_annotation(
        &self,
        verdict: &Verdict,
        attributes: &crate::authorization::Attributes<'_>,
    ) -> Option<(&'static str, String)> {
        self.authorizers
            .audit_annotation(&self.served, &self.config.storage_prefix, verdict, attributes)
    }

    /// Go on with a request's authorization once the webhook answered.
    pub(crate) fn resume_authorization(
        &self,
        attributes: &crate::authorization::Attributes<'_>,
        union: crate::authorization::Union,
        question: crate::authorization::webhook::Question,
        outcome: crate::effect::CallOutcome,
        now: Duration,
    ) -> Verdict {
        self.saw(now);
        self.authorizers
            .resume(&self.served, &self.config.storage_prefix, attributes, union, question, outcome, now)
    }

    /// The latest time a request reported (monotonic): what kept webhook answers are
    /// timed by when a check has no request time of its own.
    fn clock(&self) -> Duration {
        Duration::from_nanos(self.latest.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn saw(&self, now: Duration) {
        let nanos = u64::try_from(now.as_nanos()).unwrap_or(u64::MAX);
        self.latest.fetch_max(nanos, std::sync::atomic::Ordering::Relaxed);
    }

    /// The RBAC roles and bindings as the caches hold them now.
    pub(crate) fn rbac_index(&self) -> Arc<crate::authorization::rbac::Index> {
        self.authorizers.rbac_index(&self.served, &self.config.storage_prefix)
    }

    /// What a user may do in a namespace, for SelfSubjectRulesReview.
    pub(crate) fn rules_for(&self, user: &crate::authn::UserInfo, namespace: &str) -> crate::authorization::Rules {
        self.authorizers
            .rules_for(&self.served, &self.config.storage_prefix, user, namespace)
    }

    /// The registry as served now: a request keeps the one it started with.
    pub(crate) fn registry(&self) -> Snapshot {
        self.served.snapshot()
    }

    /// The watch cache of `resource`, if it is still served.
    pub(crate) fn watch_cache_of(&self, resource: &Resource) -> Option<Arc<WatchCache>> {
        self.served.cache_of(resource)
    }

    /// Give priority and fairness the stored FlowSchemas and PriorityLevelConfigurations
    /// when they have changed since it last took them (read from their watch caches,
    /// once both have synced).
    pub(crate) fn refresh_flowcontrol(&self, now: std::time::Duration) {
        let Some(control) = &self.flowcontrol else { return };
        let registry = self.registry();
        let cache = |plural| {
            registry
                .lookup(crate::flowcontrol::GROUP, "v1", plural)
                .and_then(|r| self.watch_cache_of(r))
        };
        let (Some(schemas), Some(levels)) = (cache("flowschemas"), cache("prioritylevelconfigurations")) else {
            return;
        };
        let seen = (schemas.changes(), levels.changes());
        if control.digested() == Some(seen) {
            return;
        }
        let objects = |cache: &WatchCache| {
            cache.snapshot(cache.prefix(), 0).map(|(items, _)| {
                items
                    .iter()
                    .filter_map(|kv| serde_json::from_slice::<serde_json::Value>(&kv.value).ok())
                    .collect::<Vec<_>>()
            })
        };
        if let (Some(schemas), Some(levels)) = (objects(&schemas), objects(&levels)) {
            control.configure_from_storage(&schemas, &levels, seen, now);
        }
    }

    /// What priority and fairness's work estimate reads of a request's resource: its
    /// objects and the watches open on it, from its watch cache.
    pub(crate) fn flowcontrol_counts(&self, info: &RequestInfo) -> crate::flowcontrol::Counts {
        let registry = self.registry();
        let cache = registry
            .lookup(&info.api_group, &info.api_version, &info.resource)
            .and_then(|r| self.watch_cache_of(r));
        match cache {
            Some(cache) => crate::flowcontrol::Counts { objects: cache.object_count(), watches: cache.subscribers() },
            None => crate::flowcontrol::Counts::default(),
        }
    }

    /// Upstream's `apiserver_storage_objects`: each resource's object count, from its
    /// watch cache; -1 until the cache has synced. A resource served at several
    /// versions is stored once and counted once.
    pub(crate) fn storage_objects(&self) -> Vec<(String, i64)> {
        let registry = self.registry();
        let mut objects: Vec<(String, i64)> = Vec::new();
        for r in registry.resources() {
            if !r.has_verb("list") {
                // Never stored (bindings).
                continue;
            }
            let name = r.group_resource();
            if !objects.iter().any(|(n, _)| *n == name) {
                let count = self.watch_cache_of(r).and_then(|c| c.object_count());
                objects.push((name, count.map_or(-1, |n| n as i64)));
            }
        }
        objects
    }

    /// A request's metric labels, with the kind of a watch's objects (for
    /// `apiserver_registered_watchers`).
    pub(crate) fn track(
        &self,
        info: &RequestInfo,
        method: &http::Method,
        query: Option<&str>,
        content_type: Option<&str>,
    ) -> Tracked {
        let mut tracked = crate::metrics::track(info, method, query, content_type);
        if tracked.is_long_running() {
            tracked.watch_kind = tracked.labels.as_ref().and_then(|l| {
                self.registry()
                    .lookup(&l.group, &l.version, &l.resource)
                    .map(|r| (r.group.clone(), r.version.clone(), r.kind.clone()))
            });
        }
        tracked
    }

    /// Storage ran `op` in `elapsed`: upstream's `etcd_request_duration_seconds`.
    pub(crate) fn storage_observed(&self, op: &StorageOp, elapsed: std::time::Duration) {
        if let Some((operation, key)) = crate::metrics::storage_operation(op) {
            self.served.with_caches(|caches| {
                if let Some(resource) = caches.group_resource_of_key(key) {
                    self.metrics.storage_observed(operation, resource, elapsed);
                }
            });
        }
    }
}

/// The objects ServiceAccount tokens name, as the watch caches hold them.
impl crate::authn::LiveObjects for Shared {
    fn get(
        &self,
        plural: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<crate::rest::object::Object>, crate::authn::NotKnown> {
        let namespace = (!namespace.is_empty()).then_some(namespace);
        let key = crate::storage::object_key(&self.config.storage_prefix, "", plural, namespace, name);
        let held = self
            .served
            .with_caches(|caches| caches.of_key(&key).and_then(|cache| cache.get(&key)));
        match held {
            None => Err(crate::authn::NotKnown),
            Some(None) => Ok(None),
            Some(Some(kv)) => Ok(crate::rest::object::from_storage(&kv).ok()),
        }
    }
}

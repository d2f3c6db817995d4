//! In-flight request limits, as kube-apiserver's `WithMaxInFlightLimit` filter applies
//! them (`--max-requests-inflight`, `--max-mutating-requests-inflight`): read-only
//! (get, list) and mutating requests are counted separately, each against its own
//! limit; long-running requests (watches, and the attach, exec, proxy, log and
//! portforward subresources) are never counted; a request over the limit is answered
//! 429 with `Retry-After: 1`, unless its user is in `system:masters`, which upstream
//! always serves. Health probes (`/healthz`, `/livez`, `/readyz` and their checks) are
//! never counted or limited, as upstream's exempt `probes` flow schema treats them.
//!
//! No IO and no clocks: the adapter asks [`Limiter::admit`] when a request arrives and
//! holds the returned [`Slot`] for as long as the core works on the request; dropping
//! it (however the request ends: answered, failed, panicked, connection gone) gives the
//! place back.
//!
//! The limiter keeps what upstream's filter reports to metrics: the most requests of
//! each kind in flight since they were last read (its watermark, for
//! `apiserver_current_inflight_requests`) and every request it refused, with the
//! labels `apiserver_request_terminations_total` gives it. [`crate::metrics::Metrics`]
//! reads both once the adapter hands it the limiter.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::request_info;
use crate::status::{ApiError, Details};

/// What upstream's filter answers over the limit.
pub const TOO_MANY_REQUESTS_MESSAGE: &str = "Too many requests, please try again later.";
/// The seconds a refused client is told to wait (`Retry-After`).
pub const RETRY_AFTER_SECONDS: u32 = 1;

/// The two limits; 0 is no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `--max-requests-inflight`: read-only requests (get, list).
    pub max_requests_inflight: usize,
    /// `--max-mutating-requests-inflight`: every other verb.
    pub max_mutating_requests_inflight: usize,
}

impl Default for Limits {
    /// kube-apiserver's defaults.
    fn default() -> Limits {
        Limits {
            max_requests_inflight: 400,
            max_mutating_requests_inflight: 200,
        }
    }
}

/// Which limit a request counts against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    ReadOnly,
    Mutating,
}

impl RequestKind {
    /// The `request_kind` label upstream's metrics use.
    pub fn label(self) -> &'static str {
        match self {
            RequestKind::ReadOnly => "readOnly",
            RequestKind::Mutating => "mutating",
        }
    }
}

/// How the limiter treats a request, before counting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Never counted: long-running requests and health probes.
    Exempt,
    Counted(RequestKind),
}

/// The verbs upstream counts as read-only (`nonMutatingRequestVerbs`).
const NON_MUTATING_VERBS: [&str; 3] = ["get", "list", "watch"];
/// kube-apiserver's `BasicLongRunningRequestCheck` verbs and subresources.
const LONG_RUNNING_VERBS: [&str; 2] = ["watch", "proxy"];
const LONG_RUNNING_SUBRESOURCES: [&str; 5] = ["attach", "exec", "proxy", "log", "portforward"];

fn is_health_probe(path: &str) -> bool {
    ["/healthz", "/livez", "/readyz"].iter().any(|p| {
        path.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// Whether a request is long-running, as kube-apiserver's
/// `BasicLongRunningRequestCheck` says: watches and proxies, and the attach, exec,
/// proxy, log and portforward subresources.
pub fn is_long_running(info: &request_info::RequestInfo) -> bool {
    LONG_RUNNING_VERBS.contains(&info.verb.as_str())
        || (info.is_resource_request && LONG_RUNNING_SUBRESOURCES.contains(&info.subresource.as_str()))
}

/// Classify a request by its method, path and query, as upstream's filter does from
/// its RequestInfo.
pub fn classify(method: &http::Method, path: &str, query: Option<&str>) -> Class {
    if is_health_probe(path) {
        return Class::Exempt;
    }
    class_of(&request_info::resolve(method, path, query))
}

/// [`classify`] for a request whose [`request_info::RequestInfo`] is known.
pub fn class_of(info: &request_info::RequestInfo) -> Class {
    if is_health_probe(&info.path) {
        return Class::Exempt;
    }
    if is_long_running(info) {
        return Class::Exempt;
    }
    if NON_MUTATING_VERBS.contains(&info.verb.as_str()) {
        Class::Counted(RequestKind::ReadOnly)
    } else {
        Class::Counted(RequestKind::Mutating)
    }
}

#[derive(Debug)]
struct Counter {
    limit: usize,
    current: AtomicUsize,
    /// The most places held at once since [`Limiter::take_watermark`] last read it.
    watermark: AtomicUsize,
}

impl Counter {
    fn new(limit: usize) -> Arc<Counter> {
        Arc::new(Counter {
            limit,
            current: AtomicUsize::new(0),
            watermark: AtomicUsize::new(0),
        })
    }

    /// Take a place if one is free (always, without a limit).
    fn try_acquire(&self) -> bool {
        let taken = if self.limit == 0 {
            Ok(self.current.fetch_add(1, Ordering::AcqRel))
        } else {
            self.current
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < self.limit).then_some(n + 1)
                })
        };
        match taken {
            Ok(before) => {
                self.watermark.fetch_max(before + 1, Ordering::AcqRel);
                true
            }
            Err(_) => false,
        }
    }
}

/// The requests a limiter refused, by the labels of upstream's
/// `apiserver_request_terminations_total` (all with code 429).
pub type Refusals = BTreeMap<crate::metrics::labels::RequestLabels, u64>;

/// The in-flight limits of one server, shared by every connection.
#[derive(Clone, Debug)]
pub struct Limiter {
    read_only: Arc<Counter>,
    mutating: Arc<Counter>,
    refused: Arc<Mutex<Refusals>>,
}

/// A place held by a request in flight; given back when dropped.
#[derive(Debug)]
#[must_use = "the place is given back as soon as the slot is dropped"]
pub struct Slot {
    counter: Option<Arc<Counter>>,
}

impl Slot {
    /// A slot that holds nothing (an exempt request).
    pub fn exempt() -> Slot {
        Slot { counter: None }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(counter) = self.counter.take() {
            counter.current.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// What the limiter says about an arriving request.
#[derive(Debug)]
pub enum Admission {
    /// Go on, holding the slot until the request is finished.
    Admitted(Slot),
    /// Answer this instead (429).
    Refused(http::Response<Bytes>),
}

impl Limiter {
    pub fn new(limits: Limits) -> Limiter {
        Limiter {
            read_only: Counter::new(limits.max_requests_inflight),
            mutating: Counter::new(limits.max_mutating_requests_inflight),
            refused: Arc::default(),
        }
    }

    /// Requests of `kind` in flight now.
    pub fn in_flight(&self, kind: RequestKind) -> usize {
        self.counter(kind).current.load(Ordering::Acquire)
    }

    /// The most requests of `kind` in flight at once since the last call (or since the
    /// start), and start over from those in flight now: upstream's watermark, which its
    /// filter reports as `apiserver_current_inflight_requests`. Only requests that hold
    /// a place count: never exempt ones, refused ones, or a `system:masters` request
    /// served over the limit.
    pub fn take_watermark(&self, kind: RequestKind) -> usize {
        let counter = self.counter(kind);
        let now = counter.current.load(Ordering::Acquire);
        counter.watermark.swap(now, Ordering::AcqRel).max(now)
    }

    /// Every request refused so far, by its termination labels.
    pub fn refusals(&self) -> Refusals {
        self.refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn counter(&self, kind: RequestKind) -> &Arc<Counter> {
        match kind {
            RequestKind::ReadOnly => &self.read_only,
            RequestKind::Mutating => &self.mutating,
        }
    }

    /// Admit a request or refuse it. `privileged` says whether its user is in
    /// `system:masters`; it is asked only when the limit is reached.
    pub fn admit(
        &self,
        method: &http::Method,
        path: &str,
        query: Option<&str>,
        privileged: impl FnOnce() -> bool,
    ) -> Admission {
        self.admit_class(classify(method, path, query), method, path, query, None, privileged)
    }

    /// Admit a request of `class` or refuse it; the rest says how a refusal is counted.
    pub fn admit_class(
        &self,
        class: Class,
        method: &http::Method,
        path: &str,
        query: Option<&str>,
        content_type: Option<&str>,
        privileged: impl FnOnce() -> bool,
    ) -> Admission {
        let kind = match class {
            Class::Exempt => return Admission::Admitted(Slot::exempt()),
            Class::Counted(kind) => kind,
        };
        let counter = self.counter(kind);
        if counter.try_acquire() {
            return Admission::Admitted(Slot {
                counter: Some(counter.clone()),
            });
        }
        // Upstream: "A system:master is so powerful that they should always get an
        // answer": served, without taking a place.
        if privileged() {
            return Admission::Admitted(Slot::exempt());
        }
        let labels = crate::metrics::labels::termination_labels(method, path, query, content_type);
        *self
            .refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(labels)
            .or_insert(0) += 1;
        Admission::Refused(too_many_requests())
    }

    /// [`Limiter::admit`] with the user read from the verified peer certificates.
    pub fn admit_request<B>(
        &self,
        request: &http::Request<B>,
        peer_certificates: &[Bytes],
    ) -> Admission {
        let content_type = request
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        self.admit_class(
            classify(request.method(), request.uri().path(), request.uri().query()),
            request.method(),
            request.uri().path(),
            request.uri().query(),
            content_type,
            || {
                crate::authn::authenticate(peer_certificates)
                    .groups
                    .iter()
                    .any(|g| g == "system:masters")
            },
        )
    }
}

/// The error of a refused request: a `TooManyRequests` Status with upstream's message.
pub fn too_many_requests_error() -> ApiError {
    ApiError {
        code: 429,
        reason: "TooManyRequests",
        message: TOO_MANY_REQUESTS_MESSAGE.to_owned(),
        details: Some(Box::new(Details {
            retry_after_seconds: Some(RETRY_AFTER_SECONDS),
            ..Details::default()
        })),
    }
}

/// Marks the answer to a request the limits refused (in the response's extensions),
/// which the metrics count apart.
#[derive(Clone, Copy, Debug)]
pub struct Refused;

/// The 429 response: `Retry-After: 1` and the Status.
pub fn too_many_requests() -> http::Response<Bytes> {
    http::Response::builder()
        .extension(Refused)
        .status(http::StatusCode::TOO_MANY_REQUESTS)
        .header(http::header::RETRY_AFTER, RETRY_AFTER_SECONDS.to_string())
        .header(http::header::CONTENT_TYPE, "application/json")
        .header("X-Content-Type-Options", "nosniff")
        .body(Bytes::from(too_many_requests_error().to_json()))
        .expect("static response")
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Method;
    use serde_json::json;

    fn get(l: &Limiter, path: &str) -> Admission {
        let (path, query) = match path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path, None),
        };
        l.admit(&Method::GET, path, query, || false)
    }

    fn slot(a: Admission) -> Slot {
        match a {
            Admission::Admitted(s) => s,
            Admission::Refused(r) => panic!("refused: {r:?}"),
        }
    }

    fn refused(a: Admission) -> http::Response<Bytes> {
        match a {
            Admission::Refused(r) => r,
            Admission::Admitted(s) => panic!("admitted: {s:?}"),
        }
    }

    #[test]
    fn inflight_classifies_as_upstream() {
        let c = |m: Method, p: &str, q: Option<&str>| classify(&m, p, q);
        let ro = Class::Counted(RequestKind::ReadOnly);
        let mu = Class::Counted(RequestKind::Mutating);
        assert_eq!(c(Method::GET, "/api/v1/namespaces/a/configmaps", None), ro);
        assert_eq!(
            c(Method::GET, "/api/v1/namespaces/a/configmaps/x", None),
            ro
        );
        assert_eq!(c(Method::GET, "/apis/apps/v1/deployments", None), ro);
        assert_eq!(c(Method::POST, "/api/v1/namespaces/a/configmaps", None), mu);
        assert_eq!(
            c(Method::PUT, "/api/v1/namespaces/a/configmaps/x", None),
            mu
        );
        assert_eq!(
            c(Method::PATCH, "/api/v1/namespaces/a/configmaps/x", None),
            mu
        );
        assert_eq!(
            c(Method::DELETE, "/api/v1/namespaces/a/configmaps/x", None),
            mu
        );
        assert_eq!(
            c(Method::DELETE, "/api/v1/namespaces/a/configmaps", None),
            mu
        );
        // Long-running: never counted.
        let watch = Some("watch=true&resourceVersion=1");
        assert_eq!(
            c(Method::GET, "/api/v1/namespaces/a/configmaps", watch),
            Class::Exempt
        );
        assert_eq!(
            c(Method::GET, "/api/v1/watch/namespaces/a/configmaps", None),
            Class::Exempt
        );
        assert_eq!(
            c(Method::GET, "/api/v1/namespaces/a/pods/p/log", None),
            Class::Exempt
        );
        assert_eq!(
            c(Method::POST, "/api/v1/namespaces/a/pods/p/exec", None),
            Class::Exempt
        );
        assert_eq!(
            c(
                Method::GET,
                "/api/v1/namespaces/a/configmaps",
                Some("watch=false")
            ),
            ro
        );
        // Health probes: never counted.
        for p in [
            "/healthz",
            "/livez",
            "/readyz",
            "/readyz/etcd",
            "/healthz/ping",
            "/livez/log",
        ] {
            assert_eq!(c(Method::GET, p, Some("verbose")), Class::Exempt, "{p}");
        }
        // Other non-resource requests count by their method, as upstream's do.
        assert_eq!(c(Method::GET, "/version", None), ro);
        assert_eq!(c(Method::GET, "/openapi/v2", None), ro);
        assert_eq!(c(Method::GET, "/healthzz", None), ro);
        assert_eq!(c(Method::POST, "/version", None), mu);
    }

    #[test]
    fn inflight_counts_each_kind_against_its_limit() {
        let l = Limiter::new(Limits {
            max_requests_inflight: 2,
            max_mutating_requests_inflight: 1,
        });
        let a = slot(get(&l, "/api/v1/namespaces/a/configmaps"));
        let b = slot(get(&l, "/api/v1/namespaces/a/configmaps/x"));
        assert_eq!(l.in_flight(RequestKind::ReadOnly), 2);
        refused(get(&l, "/api/v1/configmaps"));
        // The mutating limit is separate.
        let w = slot(l.admit(
            &Method::POST,
            "/api/v1/namespaces/a/configmaps",
            None,
            || false,
        ));
        assert_eq!(l.in_flight(RequestKind::Mutating), 1);
        refused(l.admit(
            &Method::DELETE,
            "/api/v1/namespaces/a/configmaps/x",
            None,
            || false,
        ));
        // Watches and probes pass while both are full, and take no place.
        let watch = slot(get(&l, "/api/v1/configmaps?watch=1"));
        let probe = slot(get(&l, "/readyz"));
        assert_eq!(l.in_flight(RequestKind::ReadOnly), 2);
        drop((watch, probe));
        assert_eq!(l.in_flight(RequestKind::ReadOnly), 2);
        // Finishing gives the place back.
        drop(a);
        let c = slot(get(&l, "/api/v1/configmaps"));
        drop((b, c, w));
        assert_eq!(l.in_flight(RequestKind::ReadOnly), 0);
        assert_eq!(l.in_flight(RequestKind::Mutating), 0);
        drop(slot(l.admit(
            &Method::PATCH,
            "/api/v1/namespaces/a/configmaps/x",
            None,
            || false,
        )));
    }

    #[test]
    fn inflight_zero_is_no_limit() {
        let l = Limiter::new(Limits {
            max_requests_inflight: 0,
            max_mutating_requests_inflight: 0,
        });
        let held: Vec<Slot> = (0..1000).map(|_| slot(get(&l, "/api/v1/pods"))).collect();
        assert_eq!(l.in_flight(RequestKind::ReadOnly), 1000);
        drop(held);
        assert_eq!(l.in_flight(RequestKind::ReadOnly), 0);
    }

    #[test]
    fn inflight_system_masters_are_always_served() {
        let l = Limiter::new(Limits {
            max_requests_inflight: 1,
            max_mutating_requests_inflight: 1,
        });
        let _held = slot(get(&l, "/api/v1/pods"));
        let mut asked = false;
        let s = slot(l.admit(&Method::GET, "/api/v1/pods", None, || {
            asked = true;
            true
        }));
        assert!(asked);
        assert_eq!(l.in_flight(RequestKind::ReadOnly), 1, "not counted");
        drop(s);
        assert_eq!(l.in_flight(RequestKind::ReadOnly), 1);
        // The user is not looked at while there is room.
        drop(_held);
        let _s = slot(l.admit(&Method::GET, "/api/v1/pods", None, || panic!("asked")));
    }

    #[test]
    fn inflight_a_slot_is_released_by_a_panic() {
        let l = Limiter::new(Limits {
            max_requests_inflight: 1,
            max_mutating_requests_inflight: 1,
        });
        let l2 = l.clone();
        let r = std::panic::catch_unwind(move || {
            let _s = slot(get(&l2, "/api/v1/pods"));
            panic!("handler panicked");
        });
        assert!(r.is_err());
        assert_eq!(l.in_flight(RequestKind::ReadOnly), 0);
    }

    #[test]
    fn inflight_refusal_is_a_429_status() {
        let r = too_many_requests();
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()["retry-after"], "1");
        assert_eq!(r.headers()["content-type"], "application/json");
        let body: serde_json::Value = serde_json::from_slice(r.body()).unwrap();
        assert_eq!(
            body,
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                   "message":"Too many requests, please try again later.",
                   "reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429})
        );
    }

    #[test]
    fn inflight_watermark_is_the_most_places_held_since_last_read() {
        let l = Limiter::new(Limits {
            max_requests_inflight: 2,
            max_mutating_requests_inflight: 1,
        });
        assert_eq!(l.take_watermark(RequestKind::ReadOnly), 0);
        let a = slot(get(&l, "/api/v1/namespaces/a/configmaps"));
        let b = slot(get(&l, "/api/v1/namespaces/a/configmaps/x"));
        // Over the limit: a system:masters request is served without a place, another
        // is refused; a watch and a probe never take one.
        let master = slot(l.admit(&Method::GET, "/api/v1/pods", None, || true));
        refused(get(&l, "/api/v1/pods"));
        let watch = slot(get(&l, "/api/v1/pods?watch=true"));
        let probe = slot(get(&l, "/readyz"));
        drop((a, b, master, watch, probe));
        assert_eq!(l.in_flight(RequestKind::ReadOnly), 0);
        // The peak is reported after the requests ended, then starts over.
        assert_eq!(l.take_watermark(RequestKind::ReadOnly), 2);
        assert_eq!(l.take_watermark(RequestKind::ReadOnly), 0);
        assert_eq!(l.take_watermark(RequestKind::Mutating), 0);
        // Starting over counts those still in flight.
        let c = slot(get(&l, "/api/v1/pods"));
        assert_eq!(l.take_watermark(RequestKind::ReadOnly), 1);
        assert_eq!(l.take_watermark(RequestKind::ReadOnly), 1);
        // It was in flight during the interval that its end began.
        drop(c);
        assert_eq!(l.take_watermark(RequestKind::ReadOnly), 1);
        assert_eq!(l.take_watermark(RequestKind::ReadOnly), 0);
    }

    #[test]
    fn inflight_refusals_are_counted_with_termination_labels() {
        let l = Limiter::new(Limits {
            max_requests_inflight: 1,
            max_mutating_requests_inflight: 1,
        });
        let _r = slot(get(&l, "/api/v1/namespaces/a/configmaps"));
        let request = |method: Method, path: &str, content_type: &str| {
            http::Request::builder()
                .method(method)
                .uri(path)
                .header("content-type", content_type)
                .body(())
                .unwrap()
        };
        let post = request(
            Method::POST,
            "/api/v1/namespaces/a/configmaps",
            "application/json",
        );
        let _w = slot(l.admit_request(&post, &[]));
        for _ in 0..3 {
            refused(get(&l, "/api/v1/namespaces/a/configmaps"));
        }
        refused(l.admit_request(&post, &[]));
        let apply = request(
            Method::PATCH,
            "/apis/apps/v1/namespaces/a/deployments/d?fieldManager=m&dryRun=All",
            "application/apply-patch+yaml",
        );
        refused(l.admit_request(&apply, &[]));
        refused(get(&l, "/version"));
        let labels = |verb: &str, group: &str, version: &str, resource: &str, scope: &str| {
            crate::metrics::labels::RequestLabels {
                verb: verb.into(),
                dry_run: String::new(),
                group: group.into(),
                version: version.into(),
                resource: resource.into(),
                subresource: String::new(),
                scope: scope.into(),
                component: "apiserver".into(),
            }
        };
        let version = crate::metrics::labels::RequestLabels {
            subresource: "/version".into(),
            ..labels("GET", "", "", "", "")
        };
        let want: Refusals = [
            (labels("LIST", "", "v1", "configmaps", "namespace"), 3),
            (labels("POST", "", "v1", "configmaps", "resource"), 1),
            (labels("APPLY", "apps", "v1", "deployments", "resource"), 1),
            (version, 1),
        ]
        .into_iter()
        .collect();
        assert_eq!(l.refusals(), want);
    }

    #[test]
    fn inflight_many_threads_never_exceed_the_limit() {
        let l = Limiter::new(Limits {
            max_requests_inflight: 3,
            max_mutating_requests_inflight: 1,
        });
        let peak = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (l, peak) = (l.clone(), peak.clone());
                std::thread::spawn(move || {
                    for _ in 0..2000 {
                        if let Admission::Admitted(s) = get(&l, "/api/v1/pods") {
                            peak.fetch_max(l.in_flight(RequestKind::ReadOnly), Ordering::AcqRel);
                            drop(s);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(peak.load(Ordering::Acquire) <= 3);
        assert_eq!(l.in_flight(RequestKind::ReadOnly), 0);
    }
}

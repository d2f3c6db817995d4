//! Prometheus metrics, named and labelled as kube-apiserver's
//! (k8s.io/apiserver pkg/endpoints/metrics, pkg/storage/etcd3/metrics), served at
//! `/metrics` in the text exposition format 0.0.4.
//!
//! The core reads no clock: the adapter measures how long a request or a storage
//! operation took and passes the duration in.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use crate::inflight::RequestKind;

pub mod labels;
pub use labels::{classify, termination_labels, track, RequestLabels, Tracked, COMPONENT};

/// The content type of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Upstream's buckets for `apiserver_request_duration_seconds` and
/// `etcd_request_duration_seconds`.
pub const DURATION_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// A histogram with fixed buckets.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    /// Per bucket (not cumulative) counts; the last is the +Inf bucket.
    counts: Vec<u64>,
    sum: f64,
}

impl Histogram {
    fn new() -> Histogram {
        Histogram {
            counts: vec![0; DURATION_BUCKETS.len() + 1],
            sum: 0.0,
        }
    }

    fn observe(&mut self, value: f64) {
        let i = DURATION_BUCKETS
            .iter()
            .position(|b| value <= *b)
            .unwrap_or(DURATION_BUCKETS.len());
        self.counts[i] += 1;
        self.sum += value;
    }
}

#[derive(Default)]
struct State {
    requests: BTreeMap<(RequestLabels, u16), u64>,
    durations: BTreeMap<RequestLabels, Histogram>,
    /// readOnly, mutating.
    inflight: [i64; 2],
    longrunning: BTreeMap<RequestLabels, i64>,
    watchers: BTreeMap<(String, String, String), i64>,
    storage: BTreeMap<(&'static str, String), Histogram>,
    /// Requests ended in self-defense, by their termination labels and code.
    terminations: BTreeMap<(RequestLabels, u16), u64>,
    /// The in-flight limiter, once the adapter hands it over: the source of
    /// `apiserver_current_inflight_requests` and of its refusals' terminations.
    limiter: Option<crate::inflight::Limiter>,
}

/// Every metric of one server.
#[derive(Default)]
pub struct Metrics {
    state: Mutex<State>,
}

fn kind_index(kind: &str) -> usize {
    usize::from(kind == "mutating")
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Report the in-flight limiter's counts, as upstream's max-in-flight filter does:
    /// `apiserver_current_inflight_requests` becomes the most requests of each kind that
    /// held a place since the previous scrape (no exempt request, no refused one, no
    /// `system:masters` request served over the limit), and each request it refused is
    /// counted in `apiserver_request_terminations_total` with code 429.
    pub fn follow_inflight(&self, limiter: &crate::inflight::Limiter) {
        self.lock().limiter = Some(limiter.clone());
    }

    /// A request the server ended in self-defense (e.g. a timeout) answered `code`.
    pub fn request_terminated(&self, labels: RequestLabels, code: u16) {
        *self.lock().terminations.entry((labels, code)).or_insert(0) += 1;
    }

    /// A request ran past its deadline and was answered 504: counted in
    /// `apiserver_request_terminations_total` as upstream's timeout filter counts it
    /// (the adapter still ends it with [`Metrics::request_finished`]).
    pub fn request_timed_out(&self, tracked: &Tracked) {
        if let Some(labels) = &tracked.labels {
            let labels = RequestLabels {
                dry_run: String::new(),
                ..labels.clone()
            };
            self.request_terminated(labels, 504);
        }
    }

    /// A request started: counted in flight unless long-running. Once the adapter hands
    /// over its limiter ([`Metrics::follow_inflight`]), the gauge reports the limiter's
    /// counts instead.
    pub fn request_started(&self, tracked: &Tracked) {
        if let Some(kind) = tracked.request_kind {
            self.lock().inflight[kind_index(kind)] += 1;
        }
    }

    /// A request that is not long-running answered `code` after `elapsed`.
    pub fn request_finished(&self, tracked: &Tracked, code: u16, elapsed: Duration) {
        let mut state = self.lock();
        if let Some(kind) = tracked.request_kind {
            state.inflight[kind_index(kind)] -= 1;
        }
        if let Some(labels) = &tracked.labels {
            *state.requests.entry((labels.clone(), code)).or_insert(0) += 1;
            state
                .durations
                .entry(labels.clone())
                .or_insert_with(Histogram::new)
                .observe(elapsed.as_secs_f64());
        }
    }

    /// A request the in-flight limits refused was answered `code` (429): counted in
    /// `apiserver_request_total` and left out of the duration histogram, as upstream
    /// records a dropped request.
    pub fn request_refused(&self, tracked: &Tracked, code: u16) {
        let mut state = self.lock();
        if let Some(kind) = tracked.request_kind {
            state.inflight[kind_index(kind)] -= 1;
        }
        if let Some(labels) = &tracked.labels {
            *state.requests.entry((labels.clone(), code)).or_insert(0) += 1;
        }
    }

    /// A watch began streaming.
    pub fn watch_started(&self, tracked: &Tracked) {
        let mut state = self.lock();
        if let Some(labels) = &tracked.labels {
            *state
                .longrunning
                .entry(long_running_labels(labels))
                .or_insert(0) += 1;
        }
        if let Some(k) = &tracked.watch_kind {
            *state.watchers.entry(k.clone()).or_insert(0) += 1;
        }
    }

    /// A watch ended: counted in `apiserver_request_total` with `code`, and left out of
    /// the duration histogram as upstream leaves long-running requests out.
    pub fn watch_finished(&self, tracked: &Tracked, code: u16) {
        let mut state = self.lock();
        if let Some(labels) = &tracked.labels {
            *state
                .longrunning
                .entry(long_running_labels(labels))
                .or_insert(0) -= 1;
            *state.requests.entry((labels.clone(), code)).or_insert(0) += 1;
        }
        if let Some(k) = &tracked.watch_kind {
            *state.watchers.entry(k.clone()).or_insert(0) -= 1;
        }
    }

    /// A storage operation of `operation` (get, list, create, update, delete) on
    /// `group_resource` (`pods`, `deployments.apps`) took `elapsed`.
    pub fn storage_observed(
        &self,
        operation: &'static str,
        group_resource: &str,
        elapsed: Duration,
    ) {
        self.lock()
            .storage
            .entry((operation, group_resource.to_owned()))
            .or_insert_with(Histogram::new)
            .observe(elapsed.as_secs_f64());
    }

    /// The text exposition of every metric; `objects` are the stored objects per
    /// resource (`apiserver_storage_objects`), -1 where unknown.
    pub fn render(&self, objects: &[(String, i64)]) -> String {
        let state = self.lock();
        let mut out = String::new();
        header(&mut out, "apiserver_current_inflight_requests", "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.", "gauge");
        for kind in [RequestKind::Mutating, RequestKind::ReadOnly] {
            let n = match &state.limiter {
                Some(limiter) => limiter.take_watermark(kind) as i64,
                None => state.inflight[kind_index(kind.label())],
            };
            let kind = kind.label();
            sample(
                &mut out,
                "apiserver_current_inflight_requests",
                &[("request_kind", kind)],
                n as f64,
            );
        }
        header(&mut out, "apiserver_longrunning_requests", "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.", "gauge");
        for (l, n) in &state.longrunning {
            // The request labels without dry_run, as upstream labels this gauge.
            let labels: Vec<(&str, &str)> = request_labels(l)
                .into_iter()
                .filter(|(k, _)| *k != "dry_run")
                .collect();
            sample(
                &mut out,
                "apiserver_longrunning_requests",
                &labels,
                *n as f64,
            );
        }
        header(
            &mut out,
            "apiserver_registered_watchers",
            "Number of currently registered watchers for a given resources",
            "gauge",
        );
        for ((g, v, k), n) in &state.watchers {
            sample(
                &mut out,
                "apiserver_registered_watchers",
                &[("group", g), ("kind", k), ("version", v)],
                *n as f64,
            );
        }
        header(&mut out, "apiserver_request_duration_seconds", "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.", "histogram");
        for (l, h) in &state.durations {
            let labels = request_labels(l);
            histogram(&mut out, "apiserver_request_duration_seconds", &labels, h);
        }
        header(&mut out, "apiserver_request_total", "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.", "counter");
        for ((l, code), n) in &state.requests {
            let code = code.to_string();
            let mut labels = request_labels(l);
            labels.insert(0, ("code", &code));
            labels.sort_by_key(|(k, _)| *k);
            sample(&mut out, "apiserver_request_total", &labels, *n as f64);
        }
        header(
            &mut out,
            "apiserver_request_terminations_total",
            "Number of requests which apiserver terminated in self-defense.",
            "counter",
        );
        let mut terminations = state.terminations.clone();
        if let Some(limiter) = &state.limiter {
            for (labels, n) in limiter.refusals() {
                *terminations.entry((labels, 429)).or_insert(0) += n;
            }
        }
        for ((l, code), n) in &terminations {
            let code = code.to_string();
            let mut labels: Vec<(&str, &str)> = request_labels(l)
                .into_iter()
                .filter(|(k, _)| *k != "dry_run")
                .collect();
            labels.insert(0, ("code", &code));
            sample(
                &mut out,
                "apiserver_request_terminations_total",
                &labels,
                *n as f64,
            );
        }
        header(&mut out, "apiserver_storage_objects", "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.", "gauge");
        let mut objects = objects.to_vec();
        objects.sort();
        for (resource, n) in &objects {
            sample(
                &mut out,
                "apiserver_storage_objects",
                &[("resource", resource)],
                *n as f64,
            );
        }
        header(
            &mut out,
            "etcd_request_duration_seconds",
            "Etcd request latency in seconds for each operation and object type.",
            "histogram",
        );
        for ((op, ty), h) in &state.storage {
            histogram(
                &mut out,
                "etcd_request_duration_seconds",
                &[("operation", op), ("type", ty)],
                h,
            );
        }
        out
    }
}

/// The metrics upstream marks STABLE; the rest are ALPHA.
const STABLE: [&str; 4] = [
    "apiserver_current_inflight_requests",
    "apiserver_request_duration_seconds",
    "apiserver_request_total",
    "apiserver_storage_objects",
];

fn long_running_labels(l: &RequestLabels) -> RequestLabels {
    RequestLabels {
        dry_run: String::new(),
        ..l.clone()
    }
}

fn request_labels(l: &RequestLabels) -> Vec<(&'static str, &str)> {
    vec![
        ("component", &l.component),
        ("dry_run", &l.dry_run),
        ("group", &l.group),
        ("resource", &l.resource),
        ("scope", &l.scope),
        ("subresource", &l.subresource),
        ("verb", &l.verb),
        ("version", &l.version),
    ]
}

fn header(out: &mut String, name: &str, help: &str, kind: &str) {
    let stability = if STABLE.contains(&name) {
        "STABLE"
    } else {
        "ALPHA"
    };
    let help = help.replace('\\', "\\\\").replace('\n', "\\n");
    let _ = writeln!(out, "# HELP {name} [{stability}] {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// A label value escaped as the text format asks: backslash, double quote, newline.
pub fn escape_label_value(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn format_value(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else if v.is_nan() {
        "NaN".to_owned()
    } else {
        format!("{v}")
    }
}

fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: f64) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{k}=\"{}\"", escape_label_value(v));
        }
        out.push('}');
    }
    let _ = writeln!(out, " {}", format_value(value));
}

fn histogram(out: &mut String, name: &str, labels: &[(&str, &str)], h: &Histogram) {
    let bucket = format!("{name}_bucket");
    let mut cumulative = 0;
    for (i, count) in h.counts.iter().enumerate() {
        cumulative += count;
        let le = DURATION_BUCKETS
            .get(i)
            .map(|b| format_value(*b))
            .unwrap_or_else(|| "+Inf".to_owned());
        let mut with_le = labels.to_vec();
        with_le.push(("le", &le));
        sample(out, &bucket, &with_le, cumulative as f64);
    }
    sample(out, &format!("{name}_sum"), labels, h.sum);
    sample(out, &format!("{name}_count"), labels, cumulative as f64);
}

/// The storage operation name upstream's etcd3 store reports, if it reports one.
pub fn storage_operation(op: &crate::storage::StorageOp) -> Option<(&'static str, &str)> {
    use crate::storage::StorageOp;
    match op {
        StorageOp::Get { key } => Some(("get", key)),
        StorageOp::List { prefix, .. } => Some(("list", prefix)),
        StorageOp::Create { key, .. } => Some(("create", key)),
        StorageOp::Update { key, .. } => Some(("update", key)),
        StorageOp::Delete { key, .. } => Some(("delete", key)),
        StorageOp::Compact { .. } | StorageOp::CurrentRevision => None,
    }
}

pub mod flowcontrol;

#[cfg(test)]
mod tests;

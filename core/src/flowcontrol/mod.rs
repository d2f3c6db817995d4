//! API Priority and Fairness, as kube-apiserver's `WithPriorityAndFairness` filter
//! and its configuration controller run it: every request (but long-running ones
//! other than watches) is classified by the first FlowSchema that matches its user
//! and what it asks for, goes to that schema's priority level, and runs on that
//! level's seats — at once if free, else after waiting in one of the level's queues
//! (fair queuing among flows, see [`queue_set`]), or is turned away with 429 and a
//! `Retry-After`. Levels share the server's seats (`--max-requests-inflight` plus
//! `--max-mutating-requests-inflight`) in proportion to their shares, lending and
//! borrowing them every 10 s by demand ([`borrowing`]).
//!
//! The configuration is the stored FlowSchemas and PriorityLevelConfigurations
//! ([`FlowControl::configure`]); the `exempt` and `catch-all` ones are assumed when
//! missing, as upstream assumes them. No clock and no IO: every call takes the time.
//! A queued request gets a [`Waiting`] whose turn its adapter awaits; a request that
//! runs holds a [`Seat`] until it is answered (a watch, until it has started).

mod borrowing;
mod estimate;
mod matching;
pub mod objects;
mod queue_set;
mod retry_after;

pub use estimate::Counts;
pub use queue_set::{Decision, Rejection, Work};

use crate::authn::UserInfo;
use crate::request_info::RequestInfo;
use borrowing::{Claim, Demand};
use objects::{FlowSchema, Limit, PriorityLevel};
use queue_set::{Execution, QueueSet, Started, Ticket};
use retry_after::RetryAfter;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The API group of the configuration objects.
pub const GROUP: &str = "flowcontrol.apiserver.k8s.io";
/// The mandatory exempt schema and level.
pub const EXEMPT: &str = "exempt";
/// The mandatory catch-all schema and level.
pub const CATCH_ALL: &str = "catch-all";
/// The response headers that name what a request was classified as.
pub const FLOW_SCHEMA_UID_HEADER: &str = "x-kubernetes-pf-flowschema-uid";
pub const PRIORITY_LEVEL_UID_HEADER: &str = "x-kubernetes-pf-prioritylevel-uid";
/// The longest a request waits in a queue, whatever its deadline.
const MAX_WAIT: Duration = Duration::from_secs(60);
/// The share of the seats of a level the widest request may take.
const MAX_SEATS_FRACTION: f64 = 0.15;

/// What a request was classified as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    pub flow_schema: Arc<str>,
    pub flow_schema_uid: String,
    pub priority_level: Arc<str>,
    pub priority_level_uid: String,
}

impl Classification {
    /// Name the classification on an answer, as upstream does on every answer of a
    /// classified request.
    pub fn set_headers(&self, headers: &mut http::HeaderMap) {
        for (name, value) in [
            (PRIORITY_LEVEL_UID_HEADER, &self.priority_level_uid),
            (FLOW_SCHEMA_UID_HEADER, &self.flow_schema_uid),
        ] {
            if let Ok(value) = http::HeaderValue::from_str(value) {
                headers.insert(http::HeaderName::from_static(name), value);
            }
        }
    }
}

/// What the flow control says about a request.
#[derive(Debug)]
pub enum Admit {
    /// Not limited: a long-running request other than a watch.
    Bypass,
    /// Run now, holding the seat.
    Execute(Seat),
    /// Wait for a turn.
    Queued(Waiting),
    /// Turned away: 429 with this `Retry-After`.
    Rejected { retry_after: u64 },
}

/// One priority level: its configuration, its seats and queues.
#[derive(Debug)]
struct Level {
    spec: PriorityLevel,
    nominal: u32,
    /// Its nominal seats less what it lends, and plus what it may borrow.
    lower: u32,
    upper: u32,
    /// The most seats one request may take (0: the estimator's own limit).
    max_seats: u32,
    set: QueueSet,
    demand: Demand,
    retry: RetryAfter,
    /// No schema sends requests here any more; dropped once idle.
    quiescing: bool,
}

/// A wait histogram: how many, their total seconds, and how many at or below each
/// bound of [`WAIT_BUCKETS`].
pub type WaitHistogram = (u64, f64, Vec<u64>);

/// Counts kept for `/metrics`, by flow schema and priority level.
#[derive(Debug, Default, Clone)]
pub struct Counters {
    pub dispatched: BTreeMap<(Arc<str>, Arc<str>), u64>,
    pub rejected: BTreeMap<(Arc<str>, Arc<str>, &'static str), u64>,
    pub executing: BTreeMap<(Arc<str>, Arc<str>), (i64, i64)>,
    /// Seconds waited in queue, by (schema, level, executed).
    pub waited: BTreeMap<(Arc<str>, Arc<str>, bool), WaitHistogram>,
}

/// The bounds of upstream's `apiserver_flowcontrol_request_wait_duration_seconds`.
pub const WAIT_BUCKETS: [f64; 12] = [0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0];

/// A level's gauges, for `/metrics`.
#[derive(Debug, Clone)]
pub struct LevelGauges {
    pub name: Arc<str>,
    pub nominal: u32,
    pub lower: u32,
    pub upper: u32,
    pub current: u32,
    pub seats_in_use: u32,
    pub waiting_by_schema: BTreeMap<Arc<str>, usize>,
}

/// A FlowSchema's `Dangling` condition as it should be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DanglingStatus {
    pub flow_schema: String,
    pub dangling: bool,
    pub reason: &'static str,
    pub message: String,
}

#[derive(Debug)]
struct State {
    /// The seats of the whole server.
    server_seats: u32,
    schemas: Vec<(Arc<str>, FlowSchema)>,
    levels: BTreeMap<Arc<str>, Level>,
    /// When the levels' seats were last shared out.
    shared_at: Duration,
    counters: Counters,
    /// The latest time reported, for seats given back without one.
    latest: Duration,
    /// The change counts of the stored configuration last taken.
    digested: Option<(u64, u64)>,
}

/// The flow control of one server, shared by every request.
#[derive(Debug, Clone)]
pub struct FlowControl {
    state: Arc<Mutex<State>>,
}

impl FlowControl {
    /// Flow control over `server_seats` seats, with only the mandatory configuration
    /// until [`FlowControl::configure`] is given the stored one.
    pub fn new(server_seats: u32) -> FlowControl {
        let control = FlowControl {
            state: Arc::new(Mutex::new(State {
                server_seats: server_seats.max(1),
                schemas: Vec::new(),
                levels: BTreeMap::new(),
                shared_at: Duration::ZERO,
                counters: Counters::default(),
                latest: Duration::ZERO,
                digested: None,
            })),
        };
        control.configure(&[], &[], Duration::ZERO);
        control
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Take the stored FlowSchemas and PriorityLevelConfigurations (whole objects) as
    /// the configuration from now on. Requests waiting or running keep their places;
    /// a level no schema uses any more goes once it is idle.
    pub fn configure(&self, schemas: &[Value], levels: &[Value], now: Duration) {
        let mut state = self.lock();
        state.latest = state.latest.max(now);
        let (mandatory_schemas, mandatory_levels) = objects::mandatory();

        let mut specs: BTreeMap<String, PriorityLevel> = BTreeMap::new();
        for object in levels {
            match PriorityLevel::from_object(object) {
                Ok(level) => {
                    specs.insert(level.name.clone(), level);
                }
                Err(e) => tracing::warn!("priority and fairness: {}", e.0),
            }
        }
        let mut usable = Vec::new();
        for object in schemas {
            let schema = match FlowSchema::from_object(object) {
                Ok(schema) => schema,
                Err(e) => {
                    tracing::warn!("priority and fairness: {}", e.0);
                    continue;
                }
            };
            // A schema whose level does not exist is left out (it is `Dangling`).
            if specs.contains_key(&schema.priority_level) {
                usable.push(schema);
            }
        }
        usable.sort_by(|a, b| (a.matching_precedence, &a.name).cmp(&(b.matching_precedence, &b.name)));
        for mandatory in mandatory_schemas {
            if !usable.iter().any(|s| s.name == mandatory.name) {
                if mandatory.name == EXEMPT {
                    usable.insert(0, mandatory);
                } else {
                    usable.push(mandatory);
                }
            }
        }
        for mandatory in mandatory_levels {
            specs.entry(mandatory.name.clone()).or_insert(mandatory);
        }
        state.schemas = usable.into_iter().map(|s| (Arc::from(s.name.as_str()), s)).collect();

        // Levels kept: the configured ones, and old ones with requests still in them.
        let mut old = std::mem::take(&mut state.levels);
        let mut kept: BTreeMap<Arc<str>, (PriorityLevel, Option<Level>, bool)> = BTreeMap::new();
        for (name, spec) in specs {
            let name: Arc<str> = Arc::from(name.as_str());
            let existing = old.remove(&name);
            kept.insert(name, (spec, existing, false));
        }
        for (name, level) in old {
            if !level.set.is_idle() {
                kept.insert(name, (level.spec.clone(), Some(level), true));
            }
        }
        let share_sum: f64 = kept.values().map(|(spec, ..)| f64::from(spec.nominal_concurrency_shares)).sum();
        let server = state.server_seats;
        for (name, (spec, existing, quiescing)) in kept {
            let nominal = if share_sum > 0.0 {
                (f64::from(server) * f64::from(spec.nominal_concurrency_shares) / share_sum).ceil() as u32
            } else {
                0
            };
            let lendable = (f64::from(nominal) * f64::from(spec.lendable_percent) / 100.0).round() as u32;
            let borrowable = match spec.borrowing_limit_percent {
                Some(percent) => (f64::from(nominal) * f64::from(percent) / 100.0).round() as u32,
                None => server,
            };
            let max_seats = match spec.limit {
                Limit::Queue(q) => {
                    let by_share = (f64::from(nominal) * MAX_SEATS_FRACTION).ceil();
                    by_share.min(f64::from(nominal / q.hand_size)).max(1.0) as u32
                }
                _ => 0,
            };
            // A level configured again keeps its requests, demand history and
            // Retry-After; a new one starts between its bounds.
            let (set, demand, retry) = match existing {
                Some(mut level) => {
                    let current = level.set.concurrency();
                    level.set.reconfigure(spec.limit, current, now);
                    (level.set, level.demand, level.retry)
                }
                None => (QueueSet::new(spec.limit, nominal - lendable / 2, now), Demand::default(), RetryAfter::default()),
            };
            state.levels.insert(
                name,
                Level {
                    nominal,
                    lower: nominal.saturating_sub(lendable),
                    upper: nominal + borrowable,
                    max_seats,
                    set,
                    demand,
                    retry,
                    quiescing,
                    spec,
                },
            );
        }
        share_seats(&mut state, now);
    }

    /// The change counts of the stored configuration last taken.
    pub fn digested(&self) -> Option<(u64, u64)> {
        self.lock().digested
    }

    /// [`FlowControl::configure`] with the stored objects seen at change counts `seen`.
    pub fn configure_from_storage(&self, schemas: &[Value], levels: &[Value], seen: (u64, u64), now: Duration) {
        self.configure(schemas, levels, now);
        self.lock().digested = Some(seen);
    }

    /// Classify a request and take it in at `now`: run it, queue it or turn it away.
    /// `query` is its query string; `counts` what the work estimate reads.
    pub fn admit(
        &self,
        user: &UserInfo,
        info: &RequestInfo,
        query: Option<&str>,
        counts: impl FnOnce() -> Counts,
        now: Duration,
    ) -> (Option<Classification>, Admit) {
        if crate::inflight::is_long_running(info) && info.verb != "watch" {
            return (None, Admit::Bypass);
        }
        let mut state = self.lock();
        state.latest = state.latest.max(now);
        if now >= state.shared_at + borrowing::PERIOD {
            share_seats(&mut state, now);
        }
        let (schema_name, schema) = state
            .schemas
            .iter()
            .find(|(_, s)| matching::matches(s, user, info))
            .or_else(|| state.schemas.iter().find(|(name, _)| &**name == CATCH_ALL))
            .map(|(name, s)| (name.clone(), s.clone()))
            .expect("the catch-all schema is always there");
        let level_name: Arc<str> = Arc::from(schema.priority_level.as_str());
        let State { levels, counters, .. } = &mut *state;
        let Some(level) = levels.get_mut(&level_name) else {
            // A schema's level is always configured (dangling ones are left out).
            return (None, Admit::Bypass);
        };
        let classification = Classification {
            flow_schema: schema_name.clone(),
            flow_schema_uid: schema.uid.clone(),
            priority_level: level_name.clone(),
            priority_level_uid: level.spec.uid.clone(),
        };
        let hash = match level.spec.limit {
            Limit::Queue(q) if q.queues > 1 => {
                matching::flow_hash(&schema.name, &matching::flow_distinguisher(&schema, user, info))
            }
            _ => 0,
        };
        let work = estimate::estimate(info, query, level.max_seats, counts);
        let admit = match level.set.start(work, hash, &schema_name, now) {
            Started::Execute(execution) => {
                note_executing(counters, &classification, &execution, 1);
                *counters.dispatched.entry((schema_name.clone(), level_name.clone())).or_default() += 1;
                Admit::Execute(Seat { control: self.clone(), classification: classification.clone(), execution: Some(execution) })
            }
            Started::Queued(ticket) => Admit::Queued(Waiting {
                control: self.clone(),
                classification: classification.clone(),
                ticket: Some(ticket),
                arrived: now,
            }),
            Started::Rejected(why) => {
                let retry_after = reject(level, counters, &classification, why, now);
                Admit::Rejected { retry_after }
            }
        };
        (Some(classification), admit)
    }

    /// Bring every level to `now`: seats held after requests given back when due, and
    /// what can run dispatched.
    pub fn sync(&self, now: Duration) {
        let mut state = self.lock();
        state.latest = state.latest.max(now);
        for level in state.levels.values_mut() {
            level.set.sync(now);
        }
    }

    /// The gauges of every level, for `/metrics`.
    pub fn gauges(&self) -> (Vec<LevelGauges>, Counters) {
        let state = self.lock();
        let levels = state
            .levels
            .iter()
            .map(|(name, level)| {
                let mut waiting_by_schema = BTreeMap::new();
                level.set.waiting_by_schema(&mut waiting_by_schema);
                LevelGauges {
                    name: name.clone(),
                    nominal: level.nominal,
                    lower: level.lower,
                    upper: level.upper,
                    current: level.set.concurrency(),
                    seats_in_use: level.set.seats_in_use(),
                    waiting_by_schema,
                }
            })
            .collect();
        (levels, state.counters.clone())
    }

    /// The time a level with queued requests next needs to be looked at (seats held
    /// after a request come back then).
    fn next_release(&self, level: &str) -> Option<Duration> {
        self.lock().levels.get(level).and_then(|l| l.set.next_release())
    }

    fn finish(&self, classification: &Classification, execution: Execution, now: Option<Duration>) {
        let mut state = self.lock();
        let now = now.unwrap_or(state.latest);
        state.latest = state.latest.max(now);
        let State { levels, counters, .. } = &mut *state;
        note_executing(counters, classification, &execution, -1);
        if let Some(level) = levels.get_mut(&classification.priority_level) {
            level.set.finish(execution, now);
        }
        drop_if_quiet(&mut state, &classification.priority_level);
    }
}

/// Count a request starting (`delta` 1) or ending (-1) on its seats.
fn note_executing(counters: &mut Counters, c: &Classification, execution: &Execution, delta: i64) {
    let entry = counters.executing.entry((c.flow_schema.clone(), c.priority_level.clone())).or_default();
    entry.0 += delta;
    entry.1 += delta * i64::from(execution.seats());
}

fn reject(level: &mut Level, counters: &mut Counters, c: &Classification, why: Rejection, now: Duration) -> u64 {
    *counters.rejected.entry((c.flow_schema.clone(), c.priority_level.clone(), why.label())).or_default() += 1;
    level.retry.dropped(now.as_secs());
    level.retry.seconds()
}

/// A level nobody uses any more goes once it has nothing left to do.
fn drop_if_quiet(state: &mut State, name: &Arc<str>) {
    if state.levels.get(name).is_some_and(|l| l.quiescing && l.set.is_idle()) {
        state.levels.remove(name);
    }
}

/// Share the server's seats out among the levels by their demand since the last time.
fn share_seats(state: &mut State, now: Duration) {
    state.shared_at = now;
    let nominal_sum: u32 = state.levels.values().map(|l| l.nominal).sum();
    let mut remaining = i64::from(nominal_sum);
    let mut claims = Vec::new();
    let (mut lower_sum, mut floor_sum) = (0i64, 0i64);
    let mut floors = BTreeMap::new();
    for (name, level) in state.levels.iter_mut() {
        let observed = level.set.demand.reset(now);
        level.demand.update(observed);
        let watermark = level.demand.high_watermark;
        if level.spec.limit == Limit::Exempt {
            let floor = level.lower.max(watermark);
            remaining -= i64::from(floor);
            floors.insert(name.clone(), floor);
        } else {
            let floor = level.lower.max(level.nominal.min(watermark));
            claims.push((
                name.clone(),
                Claim {
                    lower: f64::from(floor),
                    upper: f64::from(level.upper),
                    target: f64::from(floor).max(level.demand.smoothed),
                },
            ));
            lower_sum += i64::from(level.lower);
            floor_sum += i64::from(floor);
            floors.insert(name.clone(), floor);
        }
    }
    let shares: BTreeMap<Arc<str>, u32> = if remaining <= lower_sum {
        claims.iter().map(|(name, _)| (name.clone(), state.levels[name].lower)).collect()
    } else if remaining <= floor_sum {
        let fraction = (remaining - lower_sum) as f64 / (floor_sum - lower_sum) as f64;
        claims
            .iter()
            .map(|(name, c)| {
                let lower = state.levels[name].lower;
                (name.clone(), lower + ((c.lower - f64::from(lower)) * fraction).round() as u32)
            })
            .collect()
    } else {
        let only: Vec<Claim> = claims.iter().map(|(_, c)| *c).collect();
        let shared = borrowing::share(f64::from(nominal_sum), &only);
        claims.iter().zip(shared).map(|((name, _), s)| (name.clone(), s.round() as u32)).collect()
    };
    for (name, level) in state.levels.iter_mut() {
        let current = match level.spec.limit {
            Limit::Exempt => floors[name],
            _ => shares.get(name).copied().unwrap_or(level.lower),
        };
        let limit = level.spec.limit;
        level.set.reconfigure(limit, current, now);
    }
}

/// The `Dangling` conditions the stored FlowSchemas should carry and do not, as
/// upstream's configuration controller keeps them: true when the schema's priority
/// level does not exist.
pub fn status_updates(schemas: &[Value], levels: &[Value]) -> Vec<DanglingStatus> {
    let names: Vec<&str> = levels.iter().filter_map(|l| l.pointer("/metadata/name").and_then(Value::as_str)).collect();
    schemas
        .iter()
        .filter_map(|object| {
            let schema = FlowSchema::from_object(object).ok()?;
            let dangling = !names.contains(&schema.priority_level.as_str());
            dangling_update(object, &schema, dangling)
        })
        .collect()
}

/// The `Dangling` condition `object` should carry, when its status says otherwise.
fn dangling_update(object: &Value, schema: &FlowSchema, dangling: bool) -> Option<DanglingStatus> {
    let (reason, message) = if dangling {
        (
            "NotFound",
            format!(
                "This FlowSchema references the PriorityLevelConfiguration object named {:?} but there is no such object",
                schema.priority_level
            ),
        )
    } else {
        (
            "Found",
            format!(
                "This FlowSchema references the PriorityLevelConfiguration object named {:?} and it exists",
                schema.priority_level
            ),
        )
    };
    let status = if dangling { "True" } else { "False" };
    let current = object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|conditions| conditions.iter().find(|c| c.get("type").and_then(Value::as_str) == Some("Dangling")));
    let same = current.is_some_and(|c| {
        c.get("status").and_then(Value::as_str) == Some(status)
            && c.get("reason").and_then(Value::as_str) == Some(reason)
            && c.get("message").and_then(Value::as_str) == Some(message.as_str())
    });
    (!same).then(|| DanglingStatus { flow_schema: schema.name.clone(), dangling, reason, message })
}

/// A request running on a level's seats; they go back when it is dropped or
/// [`Seat::release`]d.
#[derive(Debug)]
pub struct Seat {
    control: FlowControl,
    classification: Classification,
    execution: Option<Execution>,
}

impl Seat {
    /// The request is done (answered, or its watch started) at `now`.
    pub fn release(mut self, now: Duration) {
        if let Some(execution) = self.execution.take() {
            self.control.finish(&self.classification, execution, Some(now));
        }
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        if let Some(execution) = self.execution.take() {
            self.control.finish(&self.classification, execution, None);
        }
    }
}

/// A queued request's place. Dropped before its turn, it leaves the queue.
#[derive(Debug)]
pub struct Waiting {
    control: FlowControl,
    classification: Classification,
    ticket: Option<Arc<Ticket>>,
    arrived: Duration,
}

/// A handle the adapter awaits: ready once the request's turn has come (or it was
/// taken out of its queue).
#[derive(Debug, Clone)]
pub struct Turn(Arc<Ticket>);

impl std::future::Future for Turn {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        self.0.poll_decided(cx.waker()).map(|_| ())
    }
}

/// What became of a queued request once its wait ended.
#[derive(Debug)]
pub enum Waited {
    Execute(Seat),
    Rejected { retry_after: u64 },
    /// Still waiting; look again by then.
    StillWaiting,
}

impl Waiting {
    pub fn turn(&self) -> Turn {
        Turn(self.ticket.clone().expect("waiting"))
    }

    /// When to look again at the latest: the wait limit, or sooner when seats held
    /// after other requests come back.
    pub fn look_again(&self, wait_limit: Duration) -> Duration {
        let release = self.control.next_release(&self.classification.priority_level);
        release.map_or(wait_limit, |r| r.min(wait_limit))
    }

    /// The wait limit of a request arriving at `arrived` with `deadline` (none: the
    /// default request timeout): a quarter of its time, at most a minute.
    pub fn wait_limit(arrived: Duration, deadline: Option<Duration>, default_timeout: Duration) -> Duration {
        let time = deadline.map_or(default_timeout, |d| d.saturating_sub(arrived));
        arrived + (time / 4).min(MAX_WAIT)
    }

    /// Look at the request at `now`: run if its turn came, give up if `wait_limit`
    /// has passed, otherwise wait on.
    pub fn waited(&mut self, now: Duration, wait_limit: Duration) -> Waited {
        let Some(ticket) = self.ticket.clone() else {
            return Waited::Rejected { retry_after: 1 };
        };
        let control = self.control.clone();
        let mut state = control.lock();
        state.latest = state.latest.max(now);
        let State { levels, counters, .. } = &mut *state;
        let c = &self.classification;
        let Some(level) = levels.get_mut(&c.priority_level) else {
            return Waited::Rejected { retry_after: 1 };
        };
        level.set.sync(now);
        let decision = match ticket.decision() {
            Decision::Waiting if now >= wait_limit => level.set.cancel(&ticket, Rejection::TimeOut, now),
            decision => decision,
        };
        let waited = now.saturating_sub(self.arrived).as_secs_f64();
        let outcome = match decision {
            Decision::Waiting => return Waited::StillWaiting,
            Decision::Execute(execution) => {
                note_executing(counters, c, &execution, 1);
                *counters.dispatched.entry((c.flow_schema.clone(), c.priority_level.clone())).or_default() += 1;
                Waited::Execute(Seat { control: self.control.clone(), classification: c.clone(), execution: Some(execution) })
            }
            Decision::Rejected(why) => Waited::Rejected { retry_after: reject(level, counters, c, why, now) },
        };
        note_wait(counters, c, matches!(outcome, Waited::Execute(_)), waited);
        self.ticket = None;
        outcome
    }
}

fn note_wait(counters: &mut Counters, c: &Classification, executed: bool, seconds: f64) {
    let entry = counters
        .waited
        .entry((c.flow_schema.clone(), c.priority_level.clone(), executed))
        .or_insert_with(|| (0, 0.0, vec![0; WAIT_BUCKETS.len()]));
    entry.0 += 1;
    entry.1 += seconds;
    for (bucket, bound) in entry.2.iter_mut().zip(WAIT_BUCKETS) {
        if seconds <= bound {
            *bucket += 1;
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let Some(ticket) = self.ticket.take() else { return };
        let control = self.control.clone();
        let mut state = control.lock();
        let now = state.latest;
        let State { levels, counters, .. } = &mut *state;
        let c = &self.classification;
        let Some(level) = levels.get_mut(&c.priority_level) else { return };
        match level.set.cancel(&ticket, Rejection::Cancelled, now) {
            // Its turn came as it left: the seats go straight back.
            Decision::Execute(execution) => level.set.finish(execution, now),
            Decision::Rejected(why) => {
                *counters.rejected.entry((c.flow_schema.clone(), c.priority_level.clone(), why.label())).or_default() += 1;
            }
            Decision::Waiting => {}
        }
    }
}

/// The 429 of a rejected request: plain text, as upstream's filter writes it.
pub fn too_many_requests(retry_after: u64) -> http::Response<bytes::Bytes> {
    let mut answer = crate::status::plain_text(
        http::StatusCode::TOO_MANY_REQUESTS,
        crate::inflight::TOO_MANY_REQUESTS_MESSAGE,
    );
    answer.headers_mut().insert(http::header::RETRY_AFTER, retry_after.into());
    answer
}

#[cfg(test)]
mod tests;

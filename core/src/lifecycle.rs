//! The server's lifecycle as a pure state machine: start-up (listener bound, post-start
//! hooks, handlers installed) and graceful termination, with kube-apiserver's lifecycle
//! signals. The adapter feeds it events (a signal arrived, a hook finished, a request
//! started or finished, the listener closed) and the time, and carries out the actions
//! it returns; it asks it whether to serve, refuse or turn away each new request and
//! whether the server is ready.
//!
//! Termination runs as upstream's does:
//! ShutdownInitiated (readyz fails at once; livez and healthz stay up) → after
//! `--shutdown-delay-duration`, AfterShutdownDelayDuration → pre-shutdown hooks →
//! NotAcceptingNewRequest → non-long-running requests drain, for at most
//! `--request-timeout` → InFlightRequestsDrained: watches are ended → the listener
//! closes → exit 0. With `--shutdown-send-retry-after`, requests arriving once the delay
//! has passed get 429 with `Retry-After` instead of a refused connection, and the
//! listener stays open until the drain is over. A second signal exits at once with 1.
//!
//! Time is an input: a `Duration` since the process started, from a monotonic clock the
//! adapter reads. Nothing here sleeps or reads a clock.

mod controller;

pub use controller::{InFlight, LifecycleController};

use std::collections::BTreeMap;
use std::time::Duration;

/// What the lifecycle needs of the options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LifecycleConfig {
    /// `--shutdown-delay-duration` (default 0).
    pub shutdown_delay: Duration,
    /// `--request-timeout` (default 60 s): how long in-flight requests may drain.
    pub request_timeout: Duration,
    /// `--shutdown-send-retry-after`.
    pub send_retry_after: bool,
}

impl Default for LifecycleConfig {
    fn default() -> Self {
        LifecycleConfig {
            shutdown_delay: Duration::ZERO,
            request_timeout: Duration::from_secs(60),
            send_retry_after: false,
        }
    }
}

/// kube-apiserver's lifecycle signals, in the order they fire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Signal {
    MuxAndDiscoveryComplete,
    ShutdownInitiated,
    AfterShutdownDelayDuration,
    PreShutdownHooksStopped,
    NotAcceptingNewRequest,
    InFlightRequestsDrained,
    HTTPServerStoppedListening,
}

/// What happened, as the adapter reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The listener is bound: post-start hooks may run.
    ListenerBound,
    PostStartHookFinished(String),
    /// Every resource handler and discovery document is installed.
    HandlersInstalled,
    /// SIGTERM or SIGINT.
    Terminate,
    PreShutdownHooksFinished,
    /// A request was admitted ([`Lifecycle::admit`] said serve).
    RequestStarted(Kind),
    RequestFinished(Kind),
    /// The listening socket is closed.
    ListenerClosed,
    /// Only time passed.
    Tick,
}

/// Whether a request is long-running (a watch): those are not waited for when draining,
/// they are ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Short,
    LongRunning,
}

/// What the adapter must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    RunPostStartHooks,
    RunPreShutdownHooks,
    /// Close the listening socket: new connections are refused.
    StopListening,
    /// End every open watch with a clean end of stream.
    EndWatches,
    /// Exit the process with this code.
    Exit(i32),
}

/// How to treat a new request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Serve,
    /// 503: resource handlers are not all installed yet.
    NotYetInstalled,
    /// 429 with `Retry-After: 5` and `Connection: close`: shutting down.
    ShuttingDown,
    /// Close the connection without an answer (no new requests are accepted).
    Refuse,
}

/// The request as admission sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestClass {
    /// /healthz, /livez, /readyz and /metrics: always answered.
    pub exempt: bool,
    /// A request for a resource (as opposed to discovery, OpenAPI, version...).
    pub resource: bool,
}

/// The paths answered whatever the lifecycle (upstream's exemptions from Retry-After).
pub fn is_exempt_path(path: &str) -> bool {
    ["/readyz", "/livez", "/healthz", "/metrics"]
        .iter()
        .any(|p| path.starts_with(p))
}

/// The post-start hook that creates the default namespaces, as the machine names it
/// (its health check is `poststarthook/` and this).
pub const BOOTSTRAP: &str = "apiary-bootstrap-namespaces";

/// Seconds a client is told to wait before retrying on another server, as upstream's
/// `--shutdown-send-retry-after` answer says.
pub const SHUTTING_DOWN_RETRY_AFTER: u32 = 5;

/// The answer to a request the lifecycle turns away: [`Admission::ShuttingDown`] (429,
/// `Retry-After`, `Connection: close`) or [`Admission::NotYetInstalled`] (503); `None`
/// for the others. Upstream writes the 429's message as text/plain; a Status carries the
/// same message and is what clients decode for every other error.
pub fn turned_away(admission: Admission) -> Option<http::Response<bytes::Bytes>> {
    let (error, retry_after, close) = match admission {
        Admission::ShuttingDown => (
            crate::status::ApiError::too_many_requests(
                "The apiserver is shutting down, please try again later.",
                SHUTTING_DOWN_RETRY_AFTER,
            ),
            SHUTTING_DOWN_RETRY_AFTER,
            true,
        ),
        Admission::NotYetInstalled => (
            crate::status::ApiError::service_unavailable(
                "the request has been made before all known HTTP paths have been installed, \
                 please try again",
            ),
            1,
            false,
        ),
        Admission::Serve | Admission::Refuse => return None,
    };
    let mut response = http::Response::builder()
        .status(error.code)
        .header(http::header::RETRY_AFTER, retry_after.to_string())
        .header(http::header::CONTENT_TYPE, "application/json")
        .header("X-Content-Type-Options", "nosniff");
    if close {
        response = response.header(http::header::CONNECTION, "close");
    }
    Some(
        response
            .body(bytes::Bytes::from(error.to_json()))
            .expect("static response"),
    )
}

/// The answer to a request that took longer than `--request-timeout`. Upstream's timeout
/// filter writes the Status without `kind` and `apiVersion` and no content type; this
/// one is a whole `application/json` Status with the same reason, message and code.
pub fn timed_out() -> http::Response<bytes::Bytes> {
    let error =
        crate::status::ApiError::timeout("request did not complete within the allotted timeout");
    http::Response::builder()
        .status(error.code)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header("X-Content-Type-Options", "nosniff")
        .body(bytes::Bytes::from(error.to_json()))
        .expect("static response")
}

#[derive(Debug)]
pub struct Lifecycle {
    config: LifecycleConfig,
    /// When each signal fired.
    fired: BTreeMap<Signal, Duration>,
    /// Post-start hooks by name, and whether each finished.
    post_start: BTreeMap<String, bool>,
    has_pre_shutdown_hooks: bool,
    in_flight: usize,
    watches: usize,
    listening: bool,
    /// StopListening was asked for (once).
    stop_requested: bool,
    watches_ended: bool,
    exit: Option<i32>,
}

impl Lifecycle {
    /// A lifecycle with these post-start hooks (each must report finishing) and,
    /// when `pre_shutdown_hooks`, pre-shutdown hooks to run before requests stop.
    pub fn new(
        config: LifecycleConfig,
        post_start_hooks: &[&str],
        pre_shutdown_hooks: bool,
    ) -> Lifecycle {
        Lifecycle {
            config,
            fired: BTreeMap::new(),
            post_start: post_start_hooks
                .iter()
                .map(|h| ((*h).to_owned(), false))
                .collect(),
            has_pre_shutdown_hooks: pre_shutdown_hooks,
            in_flight: 0,
            watches: 0,
            listening: false,
            stop_requested: false,
            watches_ended: false,
            exit: None,
        }
    }

    pub fn signaled(&self, signal: Signal) -> bool {
        self.fired.contains_key(&signal)
    }

    /// When `signal` fired, as time since start.
    pub fn fired_at(&self, signal: Signal) -> Option<Duration> {
        self.fired.get(&signal).copied()
    }

    /// The lifecycle's part of /readyz: every post-start hook finished, every handler
    /// installed, and no shutdown begun. (Storage and watch caches are checked apart.)
    pub fn ready(&self) -> bool {
        self.post_start_done()
            && self.signaled(Signal::MuxAndDiscoveryComplete)
            && !self.signaled(Signal::ShutdownInitiated)
    }

    /// Each post-start hook and whether it finished: `/healthz/poststarthook/<name>`.
    pub fn post_start_hooks(&self) -> impl Iterator<Item = (&str, bool)> {
        self.post_start
            .iter()
            .map(|(name, done)| (name.as_str(), *done))
    }

    fn post_start_done(&self) -> bool {
        self.post_start.values().all(|done| *done)
    }

    /// Requests being served, not counting watches; and open watches.
    pub fn in_flight(&self) -> (usize, usize) {
        (self.in_flight, self.watches)
    }

    /// The code the process exits with, once it must.
    pub fn exit_code(&self) -> Option<i32> {
        self.exit
    }

    /// How to treat a request arriving now.
    pub fn admit(&self, request: RequestClass) -> Admission {
        if request.exempt {
            return Admission::Serve;
        }
        if self.config.send_retry_after && self.signaled(Signal::AfterShutdownDelayDuration) {
            return Admission::ShuttingDown;
        }
        if self.signaled(Signal::NotAcceptingNewRequest) {
            return Admission::Refuse;
        }
        if request.resource && !self.signaled(Signal::MuxAndDiscoveryComplete) {
            return Admission::NotYetInstalled;
        }
        Admission::Serve
    }

    /// The next time the machine needs a [`Event::Tick`] (a delay or a drain deadline),
    /// if it is waiting on one.
    pub fn next_deadline(&self) -> Option<Duration> {
        if let Some(initiated) = self.fired_at(Signal::ShutdownInitiated) {
            if !self.signaled(Signal::AfterShutdownDelayDuration) {
                return Some(initiated + self.config.shutdown_delay);
            }
        }
        match self.fired_at(Signal::NotAcceptingNewRequest) {
            Some(since) if self.exit.is_none() => Some(since + self.config.request_timeout),
            _ => None,
        }
    }

    /// Take `event` at time `now`; the actions to carry out, in order.
    pub fn handle(&mut self, event: Event, now: Duration) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.exit.is_some() {
            return actions;
        }
        match event {
            Event::ListenerBound => {
                self.listening = true;
                actions.push(Action::RunPostStartHooks);
            }
            Event::PostStartHookFinished(name) => {
                if let Some(done) = self.post_start.get_mut(&name) {
                    *done = true;
                }
            }
            Event::HandlersInstalled => self.fire(Signal::MuxAndDiscoveryComplete, now),
            Event::Terminate if self.signaled(Signal::ShutdownInitiated) => {
                // A second signal: no more waiting.
                self.exit = Some(1);
                actions.push(Action::Exit(1));
                return actions;
            }
            Event::Terminate => self.fire(Signal::ShutdownInitiated, now),
            Event::PreShutdownHooksFinished => {
                if self.signaled(Signal::AfterShutdownDelayDuration) {
                    self.fire(Signal::PreShutdownHooksStopped, now);
                }
            }
            Event::RequestStarted(Kind::Short) => self.in_flight += 1,
            Event::RequestStarted(Kind::LongRunning) => self.watches += 1,
            Event::RequestFinished(Kind::Short) => {
                self.in_flight = self.in_flight.saturating_sub(1)
            }
            Event::RequestFinished(Kind::LongRunning) => {
                self.watches = self.watches.saturating_sub(1)
            }
            Event::ListenerClosed => {
                self.listening = false;
                if self.signaled(Signal::ShutdownInitiated) {
                    self.fire(Signal::HTTPServerStoppedListening, now);
                }
            }
            Event::Tick => {}
        }
        self.advance(now, &mut actions);
        actions
    }

    fn fire(&mut self, signal: Signal, now: Duration) {
        self.fired.entry(signal).or_insert(now);
    }

    /// Move through every step of termination whose conditions now hold.
    fn advance(&mut self, now: Duration, actions: &mut Vec<Action>) {
        let Some(initiated) = self.fired_at(Signal::ShutdownInitiated) else {
            return;
        };
        if !self.signaled(Signal::AfterShutdownDelayDuration) {
            if now < initiated + self.config.shutdown_delay {
                return;
            }
            self.fire(Signal::AfterShutdownDelayDuration, now);
            if self.has_pre_shutdown_hooks {
                actions.push(Action::RunPreShutdownHooks);
            } else {
                self.fire(Signal::PreShutdownHooksStopped, now);
            }
        }
        if !self.signaled(Signal::PreShutdownHooksStopped) {
            return;
        }
        if !self.signaled(Signal::NotAcceptingNewRequest) {
            self.fire(Signal::NotAcceptingNewRequest, now);
            // Without Retry-After answers, new connections are refused from here on.
            if !self.config.send_retry_after {
                self.stop_listening(actions);
            }
        }
        let deadline = self.fired_at(Signal::NotAcceptingNewRequest).unwrap_or(now)
            + self.config.request_timeout;
        let out_of_time = now >= deadline;
        if !self.signaled(Signal::InFlightRequestsDrained) {
            if self.in_flight > 0 && !out_of_time {
                return;
            }
            self.fire(Signal::InFlightRequestsDrained, now);
        }
        if !self.watches_ended {
            self.watches_ended = true;
            actions.push(Action::EndWatches);
        }
        if self.watches > 0 && !out_of_time {
            return;
        }
        self.stop_listening(actions);
        if self.listening {
            return;
        }
        self.exit = Some(0);
        actions.push(Action::Exit(0));
    }

    fn stop_listening(&mut self, actions: &mut Vec<Action>) {
        // Asked once; the adapter answers with ListenerClosed.
        if self.listening && !self.stop_requested {
            self.stop_requested = true;
            actions.push(Action::StopListening);
        }
    }
}

#[cfg(test)]
mod tests;

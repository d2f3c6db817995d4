//! One request's way through the server, in kube-apiserver's order, as a state
//! machine the adapter drives: request info → lifecycle gate → audit → deadline →
//! in-flight limits → authentication → impersonation → authorization → routing along
//! the delegation chain → the REST handler (admission and storage inside it) → the
//! response, with the headers every answer gets, its metrics and audit events.
//!
//! The adapter hands over a decoded request with its [`Inputs`], then loops on
//! [`Exchange::poll`]: it runs the storage operation or outbound call asked for and
//! feeds the outcome back ([`Exchange::storage_done`], [`Exchange::call_done`]), lets
//! other requests run on [`Next::Yield`], writes the response or streams the watch, and
//! drops the exchange once the answer is written. Time enters with every outcome; the
//! request's deadline leaves through [`Exchange::deadline`], and the adapter reports
//! it passing with [`Exchange::expired`]. HTTP/1.1 and HTTP/2 adapters share it; the
//! deterministic harness drives it too.

pub(crate) mod arrival;
mod finish;

use crate::audit;
use crate::authn::Authenticated;
use crate::effect::{CallOutcome, Inputs, Outbound, Pending, PendingCall, PendingCalls, PendingRelay, Step, WatchResponse, WatchSource};
use crate::inflight::Slot;
use crate::lifecycle::InFlight;
use crate::metrics::Tracked;
use crate::request_info::RequestInfo;
use crate::shared::Shared;
use crate::storage::{Completion, StorageOp};
use bytes::Bytes;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

pub use arrival::Arrived;
pub use finish::answer_headers;

/// What the adapter must do next for a request.
pub enum Next {
    /// Run this against storage, then [`Exchange::storage_done`].
    Storage(StorageOp),
    /// Send this request out, then [`Exchange::call_done`].
    Call(Outbound),
    /// Send these requests side by side, then [`Exchange::calls_done`] with their
    /// answers in this order.
    Calls(Vec<Outbound>),
    /// Let other requests run first, then call [`Exchange::poll`] again: a request
    /// admitted past the in-flight limits yields once, so that requests on other
    /// connections reach the limits instead of queueing unread.
    Yield,
    /// Write this response; the exchange is over once it is written.
    Respond(http::Response<Bytes>),
    /// Send this request and stream its answer: once its head arrives,
    /// [`Exchange::relay_started`] gives the head to write, then write its body as it
    /// comes and call [`Exchange::stream_ended`] when it ends. If no head comes,
    /// [`Exchange::call_done`] with the failure.
    Relay(Outbound),
    /// Stream this watch: write the head, then its frames; [`Exchange::stream_ended`]
    /// when it ends.
    Watch {
        source: WatchSource,
        head: http::response::Parts,
        stream: Box<dyn WatchResponse>,
    },
    /// Close the connection without an answer: no new requests are taken.
    Close,
    /// The request waits in a priority level's queue: await `turn`, or until `until`
    /// (monotonic) at the latest, then [`Exchange::waited`] and poll again.
    Wait {
        turn: crate::flowcontrol::Turn,
        until: Duration,
    },
}

/// Where the request is. Each state holds what it needs to go on. Not boxed: the
/// exchange lives in its connection's task, and an allocation per request costs more.
#[allow(clippy::large_enum_variant)]
enum Stage {
    /// Admitted past the limits; handled after one yield.
    Admitted(Admitted),
    /// Waiting for the token webhook to say who sent it.
    Authenticating(Admitted),
    /// Waiting in a priority level's queue for a seat.
    Queued(Box<Queued>),
    /// Holding its seat; authorized and handled after one yield, so that requests on
    /// other connections reach priority and fairness rather than wait unread.
    Dispatched(Box<crate::dispatch::Identified>),
    /// Handling: the next step of the handler to take.
    Handling(Step),
    /// Waiting for a storage operation.
    AwaitingStorage(AwaitingStorage),
    /// Waiting for an outbound call.
    AwaitingCall(PendingCall),
    /// Waiting for outbound calls made side by side.
    AwaitingCalls(PendingCalls),
    /// Waiting for the head of an answer to relay.
    AwaitingRelay(PendingRelay),
    /// Streaming a watch or a relayed answer, begun with this status.
    Streaming(http::StatusCode),
    /// Answered (or closed).
    Finished,
}

impl std::fmt::Debug for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stage::Admitted(a) if a.yielded => "Admitted (yielded)",
            Stage::Admitted(_) => "Admitted",
            Stage::Authenticating(_) => "Authenticating",
            Stage::Queued(_) => "Queued",
            Stage::Dispatched(_) => "Dispatched",
            Stage::Handling(_) => "Handling",
            Stage::AwaitingStorage(_) => "AwaitingStorage",
            Stage::AwaitingCall(_) => "AwaitingCall",
            Stage::AwaitingCalls(_) => "AwaitingCalls",
            Stage::AwaitingRelay(_) => "AwaitingRelay",
            Stage::Streaming(_) => "Streaming",
            Stage::Finished => "Finished",
        })
    }
}

/// A request past the gate, the limits and the audit stage, waiting to be handled.
struct Admitted {
    request: http::Request<Bytes>,
    inputs: Inputs,
    info: RequestInfo,
    /// Who the authenticators say sent it.
    authenticated: Authenticated,
    yielded: bool,
}

/// A request waiting for its turn, identified and not yet authorized.
struct Queued {
    waiting: crate::flowcontrol::Waiting,
    /// When it gives up waiting (monotonic).
    wait_limit: Duration,
    identified: crate::dispatch::Identified,
}

/// Where priority and fairness leaves a request.
enum Flow {
    /// Go on with this step.
    Go(Step),
    /// Tell the adapter to wait.
    Wait(Next),
}

/// A storage operation in flight: when it was asked for, and its metric's description.
struct AwaitingStorage {
    pending: Pending,
    asked_at: Duration,
    observed: Option<StorageOp>,
}

/// One request's exchange.
pub struct Exchange {
    shared: Arc<Shared>,
    stage: Stage,
    /// When the request arrived, and the latest time reported (monotonic).
    arrived: Duration,
    latest: Duration,
    /// The latest wall-clock time reported: the `Date` of the answer.
    wall: SystemTime,
    /// When the request must be answered (monotonic); none for watches.
    deadline: Option<Duration>,
    tracked: Tracked,
    audit_id: http::HeaderValue,
    audit: Option<audit::Record>,
    /// Audit events not yet taken by the adapter.
    audit_lines: Vec<String>,
    /// The request's place in the in-flight limits, given back once it is answered.
    slot: Option<Slot>,
    /// The request as the lifecycle counts it, until the answer is written.
    in_flight: Option<InFlight>,
    /// What priority and fairness classified it as, named on its answer.
    classification: Option<crate::flowcontrol::Classification>,
    /// Its seat at its priority level, given back once it is answered.
    seat: Option<crate::flowcontrol::Seat>,
}

impl std::fmt::Debug for Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchange")
            .field("stage", &self.stage)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

impl Exchange {
    /// The next thing the adapter must do.
    pub fn poll(&mut self) -> Next {
        let step = match std::mem::replace(&mut self.stage, Stage::Finished) {
            Stage::Admitted(mut admitted) if !admitted.yielded => {
                admitted.yielded = true;
                self.stage = Stage::Admitted(admitted);
                return Next::Yield;
            }
            Stage::Admitted(admitted) => {
                if let (Authenticated::Ask(token), Some(webhook)) =
                    (&admitted.authenticated, &self.shared.config.authenticators.token_webhook)
                {
                    let outbound = webhook.ask(token, self.shared.config.authenticators.api_audiences());
                    self.stage = Stage::Authenticating(admitted);
                    return Next::Call(outbound);
                }
                match self.handle(admitted) {
                    Flow::Go(step) => step,
                    Flow::Wait(next) => return next,
                }
            }
            Stage::Queued(queued) => {
                // Polled while waiting: wait on.
                let next = Next::Wait { turn: queued.waiting.turn(), until: queued.waiting.look_again(queued.wait_limit) };
                self.stage = Stage::Queued(queued);
                return next;
            }
            Stage::Dispatched(identified) => {
                let shared = self.shared.clone();
                crate::dispatch::authorize(&shared, *identified, self.audit.as_mut())
            }
            Stage::Handling(step) => step,
            // Polled again before the outcome came: an adapter's mistake; the request
            // stays where it was, and its connection is closed.
            waiting @ (Stage::AwaitingStorage(_)
            | Stage::AwaitingCall(_)
            | Stage::AwaitingCalls(_)
            | Stage::AwaitingRelay(_)
            | Stage::Authenticating(_)) => {
                self.stage = waiting;
                return Next::Close;
            }
            Stage::Streaming(_) | Stage::Finished => return Next::Close,
        };
        match step {
            Step::Respond(response) => Next::Respond(self.finish(response)),
            Step::Storage(op, pending) => {
                let observed = crate::metrics::storage_operation(&op).map(|_| op.clone());
                self.stage = Stage::AwaitingStorage(AwaitingStorage {
                    pending,
                    asked_at: self.latest,
                    observed,
                });
                Next::Storage(op)
            }
            Step::Call(outbound, pending) => {
                self.stage = Stage::AwaitingCall(pending);
                Next::Call(outbound)
            }
            Step::Calls(outbound, pending) => {
                self.stage = Stage::AwaitingCalls(pending);
                Next::Calls(outbound)
            }
            Step::Relay(outbound, pending) => {
                self.stage = Stage::AwaitingRelay(pending);
                Next::Relay(outbound)
            }
            Step::Watch(source, stream) => self.start_watch(source, stream),
        }
    }

    /// The storage operation asked for is done, at `now`.
    pub fn storage_done(&mut self, done: Completion, now: Duration) {
        self.at(now);
        match std::mem::replace(&mut self.stage, Stage::Finished) {
            Stage::AwaitingStorage(waiting) => {
                if let Some(op) = &waiting.observed {
                    self.shared.storage_observed(op, now.saturating_sub(waiting.asked_at));
                }
                self.stage = Stage::Handling(waiting.pending.resume(done));
            }
            other => self.stage = other,
        }
    }

    /// The outbound call asked for is answered (or failed), at `now`.
    pub fn call_done(&mut self, outcome: CallOutcome, now: Duration) {
        self.at(now);
        match std::mem::replace(&mut self.stage, Stage::Finished) {
            Stage::AwaitingCall(pending) => self.stage = Stage::Handling(pending.resume(outcome)),
            // A relay goes on by its head (`relay_started`); here only its failure.
            Stage::AwaitingRelay(pending) => match outcome {
                Ok(_) => self.stage = Stage::AwaitingRelay(pending),
                Err(e) => self.stage = Stage::Handling(pending.failed(e)),
            },
            Stage::Authenticating(mut admitted) => {
                admitted.authenticated = self.webhook_answered(&admitted.authenticated, outcome, now);
                self.stage = Stage::Admitted(admitted);
            }
            other => self.stage = other,
        }
    }

    /// The outbound calls asked for side by side are answered, at `now`.
    pub fn calls_done(&mut self, outcomes: Vec<CallOutcome>, now: Duration) {
        self.at(now);
        match std::mem::replace(&mut self.stage, Stage::Finished) {
            Stage::AwaitingCalls(pending) => self.stage = Stage::Handling(pending.resume(outcomes)),
            other => self.stage = other,
        }
    }

    /// Who the token webhook says sent the request; the audit record learns it too.
    fn webhook_answered(&mut self, asked: &Authenticated, outcome: CallOutcome, now: Duration) -> Authenticated {
        let authenticators = &self.shared.config.authenticators;
        let (Authenticated::Ask(token), Some(webhook)) = (asked, &authenticators.token_webhook) else {
            return Authenticated::Refused;
        };
        match webhook.answered(token, authenticators.api_audiences(), outcome, now) {
            Some(found) => {
                if let Some(record) = self.audit.as_mut() {
                    record.authenticated(&found.user);
                }
                Authenticated::User(found.user)
            }
            None => Authenticated::Refused,
        }
    }

    /// When the request must be answered (time since the adapter's origin), if it has
    /// a deadline: once it passes, [`Exchange::expired`].
    pub fn deadline(&self) -> Option<Duration> {
        self.deadline
    }

    /// The deadline passed at `now`: whatever was under way is dropped (a storage write
    /// is one atomic operation: it happened in full or not at all) and the request is
    /// answered 504.
    pub fn expired(&mut self, now: Duration) -> http::Response<Bytes> {
        self.at(now);
        self.stage = Stage::Finished;
        self.shared.metrics.request_timed_out(&self.tracked);
        self.finish(crate::lifecycle::timed_out())
    }

    /// The handler panicked with `message`: the 500 upstream's panic recovery answers.
    pub fn panicked(&mut self, message: &str, now: Duration) -> http::Response<Bytes> {
        self.at(now);
        self.stage = Stage::Finished;
        if let Some(record) = self.audit.take() {
            self.audit_lines.extend(record.panic(message, self.wall));
        }
        self.finish(finish::panic_response())
    }

    /// The head of the answer to relay arrived at `now`: the head to write (`None`
    /// if no relay was asked for: close the connection). The answer is streamed from
    /// now on, as a watch is.
    pub fn relay_started(&mut self, mut head: http::response::Parts, now: Duration) -> Option<http::response::Parts> {
        self.at(now);
        let Stage::AwaitingRelay(pending) = std::mem::replace(&mut self.stage, Stage::Finished) else {
            return None;
        };
        pending.head(&mut head);
        self.start_stream(&mut head);
        Some(head)
    }

    /// The watch or relayed answer this exchange streamed has ended, at `now`.
    pub fn stream_ended(&mut self, now: Duration) {
        self.at(now);
        let Stage::Streaming(status) = std::mem::replace(&mut self.stage, Stage::Finished) else {
            return;
        };
        self.shared.metrics.watch_finished(&self.tracked, status.as_u16());
        if let Some(record) = &self.audit {
            self.audit_lines.extend(record.stream_complete(status.as_u16(), self.wall));
        }
    }

    /// The audit events written since the last call, in order: the adapter appends
    /// them to the audit log.
    pub fn take_audit_lines(&mut self) -> Vec<String> {
        std::mem::take(&mut self.audit_lines)
    }

    /// The answer has been written at `now`: the request no longer counts in flight,
    /// and its seat goes back (upstream's handler writes its answer on its seat).
    pub fn written(mut self, now: Duration) {
        if let Some(seat) = self.seat.take() {
            seat.release(now.max(self.latest));
        }
        if let Some(in_flight) = self.in_flight.as_mut() {
            in_flight.finish_at(now.max(self.latest));
        }
    }

    /// Time reported by the adapter: monotonic, and the wall clock moved along with it.
    fn at(&mut self, now: Duration) {
        if now > self.latest {
            self.wall += now - self.latest;
            self.latest = now;
        }
    }

    /// Authentication → impersonation → priority and fairness → authorization →
    /// routing → the handler.
    fn handle(&mut self, admitted: Admitted) -> Flow {
        let Admitted {
            request,
            inputs,
            info,
            authenticated,
            ..
        } = admitted;
        let shared = self.shared.clone();
        let identified = match crate::dispatch::identify(&shared, request, inputs, info, authenticated, self.audit.as_mut()) {
            Ok(identified) => identified,
            Err(step) => return Flow::Go(step),
        };
        let Some(control) = &shared.flowcontrol else {
            return Flow::Go(crate::dispatch::authorize(&shared, identified, self.audit.as_mut()));
        };
        shared.refresh_flowcontrol(self.latest);
        let counts = || shared.flowcontrol_counts(&identified.info);
        let query = identified.request.uri().query();
        let (classification, admit) = control.admit(&identified.user, &identified.info, query, counts, self.latest);
        self.classification = classification;
        match admit {
            crate::flowcontrol::Admit::Bypass => {}
            crate::flowcontrol::Admit::Execute(seat) => {
                self.seat = Some(seat);
                self.stage = Stage::Dispatched(Box::new(identified));
                return Flow::Wait(Next::Yield);
            }
            crate::flowcontrol::Admit::Queued(waiting) => {
                let timeout = shared.config.lifecycle.request_timeout;
                let wait_limit = crate::flowcontrol::Waiting::wait_limit(self.arrived, self.deadline, timeout);
                let next = Next::Wait { turn: waiting.turn(), until: waiting.look_again(wait_limit) };
                self.stage = Stage::Queued(Box::new(Queued { waiting, wait_limit, identified }));
                return Flow::Wait(next);
            }
            crate::flowcontrol::Admit::Rejected { retry_after } => {
                return Flow::Go(Step::Respond(crate::flowcontrol::too_many_requests(retry_after)));
            }
        }
        Flow::Go(crate::dispatch::authorize(&shared, identified, self.audit.as_mut()))
    }

    /// A queued request's wait ended at `now` (its turn came, or it is time to look
    /// again): it runs, gives up with 429, or waits on.
    pub fn waited(&mut self, now: Duration) {
        self.at(now);
        let Stage::Queued(mut queued) = std::mem::replace(&mut self.stage, Stage::Finished) else {
            return;
        };
        match queued.waiting.waited(now, queued.wait_limit) {
            crate::flowcontrol::Waited::StillWaiting => self.stage = Stage::Queued(queued),
            crate::flowcontrol::Waited::Execute(seat) => {
                self.seat = Some(seat);
                let Queued { identified, .. } = *queued;
                self.stage = Stage::Dispatched(Box::new(identified));
            }
            crate::flowcontrol::Waited::Rejected { retry_after } => {
                self.stage = Stage::Handling(Step::Respond(crate::flowcontrol::too_many_requests(retry_after)));
            }
        }
    }

    /// The handler became a watch: streamed from now on.
    fn start_watch(&mut self, source: WatchSource, stream: Box<dyn WatchResponse>) -> Next {
        let mut head = stream.head();
        self.start_stream(&mut head);
        Next::Watch {
            source,
            head,
            stream,
        }
    }

    /// The answer is streamed from now on with `head`: counted as long-running, its seat
    /// given back, its start audited; the head carries the request's Audit-Id, as every
    /// answer does.
    fn start_stream(&mut self, head: &mut http::response::Parts) {
        self.stage = Stage::Streaming(head.status);
        if let Some(in_flight) = self.in_flight.as_mut() {
            in_flight.long_running(self.latest);
        }
        self.slot = None;
        // A watch holds its seat until it has started, as upstream's filter holds it
        // until the watch is initialized.
        if let Some(seat) = self.seat.take() {
            seat.release(self.latest);
        }
        self.shared.metrics.watch_started(&self.tracked);
        if let Some(record) = &self.audit {
            self.audit_lines.extend(record.response_started(head.status.as_u16(), self.wall));
        }
        if !self.audit_id.is_empty() {
            head.headers.insert(finish::AUDIT_ID, self.audit_id.clone());
        }
    }
}

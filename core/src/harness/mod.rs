//! The whole server driven deterministically: HTTP/1.1 bytes in, bytes out, through the
//! core's codec and its request chain, over a synchronous store, on a fake clock with
//! seeded entropy. Nothing waits and nothing reads a real clock, so a test or a fuzz
//! target can replay any run exactly.
//!
//! A request either runs to its answer ([`Harness::send`]) or is held at its first
//! storage operation ([`Harness::start`]) so that others can run meanwhile: that is how
//! the in-flight limits and the drain of a graceful shutdown are exercised. Storage
//! operations take [`Harness::set_storage_latency`] each on the clock, so a request can
//! run past its deadline.

mod conversion;
mod identity;
mod reply;
mod storage;
mod watching;

pub use conversion::{conversion_answer, rename_spec_field};
pub use identity::client_certificate;
pub use reply::{parse_responses, single_reply, Reply};
pub use storage::{SyncStorage, SyncWatch};
pub use watching::{OpenWatch, Opened, Stepped};
use watching::Feed;

use crate::effect::{CallError, CallOutcome, Inputs, Outbound, WatchResponse};
use crate::exchange::{Arrived, Exchange, Next};
use crate::http1::{Connection, Event as Http};
use crate::lifecycle::{Action, Event};
use crate::reflector::{Input as ReflectorInput, Next as ReflectorNext, Reflector};
use crate::storage::StorageOp;
use crate::{Config, Server, WatchSource};
use bytes::Bytes;
use std::cell::{Cell, RefCell};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How many times [`Harness::reflect`] runs the controllers before it calls them stuck.
const MAX_CONTROLLER_PASSES: usize = 200;

/// The bytes of an HTTP/1.1 request with a JSON body (`""` for none) that accepts JSON;
/// `headers` are more header lines, each ending in `\r\n`.
pub fn json_request(method: &str, path: &str, headers: &str, body: &str) -> Vec<u8> {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Answers the harness gives outbound requests.
type CallHandler = Box<dyn Fn(&Outbound) -> CallOutcome>;

/// A server, its store, a clock and a client identity.
pub struct Harness<S: SyncStorage> {
    pub server: Server,
    pub store: S,
    /// Time since the server started (the monotonic clock).
    clock: Cell<Duration>,
    /// The wall-clock time at the start.
    epoch: SystemTime,
    seed: Cell<u64>,
    storage_latency: Cell<Duration>,
    identity: RefCell<Vec<Bytes>>,
    /// Clients present a certificate the client CA does not trust.
    untrusted_certificate: Cell<bool>,
    /// The common name of a certificate clients present that verifies against the
    /// requestheader CA (a front proxy), when they do.
    front_proxy: RefCell<Option<String>>,
    calls: RefCell<CallHandler>,
    /// Lifecycle actions carried out so far, in order.
    actions: RefCell<Vec<Action>>,
    /// The watch caches' reflector and its open backend watch.
    reflector: RefCell<(Reflector, Option<S::Watch>)>,
    /// Audit events written so far and not yet taken.
    audit_lines: RefCell<Vec<String>>,
}

/// A request held at a storage operation (or waiting in a priority level's queue),
/// its connection with it.
pub struct Held {
    connection: Connection,
    exchange: Exchange,
    /// None while it waits for a seat.
    op: Option<StorageOp>,
}

impl Held {
    /// Whether it waits in a queue for a seat (rather than at a storage operation).
    pub fn is_queued(&self) -> bool {
        self.op.is_none()
    }

    /// The storage operation it is held at.
    pub fn operation(&self) -> Option<&StorageOp> {
        self.op.as_ref()
    }
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held").field("op", &self.op).finish_non_exhaustive()
    }
}

/// Where driving an exchange stopped.
enum Stopped {
    Answered(http::Response<Bytes>),
    Watching(WatchSource, http::response::Parts, Box<dyn WatchResponse>),
    /// A relayed answer: its head, and its body as the other server gave it whole.
    Relayed(http::response::Parts, Bytes),
    Held(StorageOp),
    /// Waiting in a priority level's queue.
    Queued,
    Closed,
}

impl<S: SyncStorage> Harness<S> {
    /// A started server over `store`: the default namespaces created, every readiness
    /// check passing, the listener bound. Clients are `apiary-admin` in
    /// `system:masters` until [`Harness::act_as`] says otherwise.
    pub fn new(config: Config, store: S) -> Harness<S> {
        let server = Server::new(config);
        let h = Harness {
            store,
            clock: Cell::new(Duration::ZERO),
            epoch: UNIX_EPOCH + Duration::from_secs(1_795_000_000),
            seed: Cell::new(1),
            storage_latency: Cell::new(Duration::ZERO),
            identity: RefCell::new(client_certificate("apiary-admin", &["system:masters"])),
            untrusted_certificate: Cell::new(false),
            front_proxy: RefCell::new(None),
            calls: RefCell::new(Box::new(|_| {
                Err(CallError::Unreachable("the harness answers no outbound request".into()))
            })),
            actions: RefCell::new(Vec::new()),
            reflector: RefCell::new((Reflector::new(&server), None)),
            audit_lines: RefCell::new(Vec::new()),
            server,
        };
        h.lifecycle(Event::ListenerBound);
        if let Err(e) = h.run_bootstrap(h.server.bootstrap()) {
            panic!("bootstrap failed: {e}");
        }
        let health = h.server.health();
        health.set(crate::health::BOOTSTRAP_HOOK, true);
        health.set(crate::health::RBAC_HOOK, true);
        if let Some(check) = h.server.shared.config.storage_check.clone() {
            health.set(&check, true);
        }
        h.lifecycle(Event::PostStartHookFinished(crate::lifecycle::BOOTSTRAP.to_owned()));
        h
    }

    /// One pass of a bootstrap's writes as the server itself (at start, the whole
    /// bootstrap; later, a pass such as [`crate::bootstrap::Bootstrap::flowcontrol`]'s),
    /// then the caches catch up. The first failure, if any.
    pub fn run_bootstrap(&self, mut bootstrap: crate::bootstrap::Bootstrap) -> Result<(), String> {
        let mut failed = Ok(());
        while let Some(request) = bootstrap.next_request() {
            let mut step = self.server.handle_as_system(request, self.inputs());
            let response = loop {
                step = match step {
                    crate::Step::Storage(op, pending) => pending.resume(self.store.run_now(op)),
                    crate::Step::Respond(response) => break response,
                    _ => panic!("a bootstrap request is neither storage nor an answer"),
                };
            };
            if let Err(e) = bootstrap.answered(&response) {
                failed = failed.and(Err(e));
            }
        }
        self.reflect();
        failed
    }

    /// Clients from now on are `name` in `groups`; no name is anonymous.
    pub fn act_as(&self, name: Option<&str>, groups: &[&str]) {
        *self.identity.borrow_mut() = match name {
            Some(name) => client_certificate(name, groups),
            None => Vec::new(),
        };
        self.untrusted_certificate.set(false);
        *self.front_proxy.borrow_mut() = None;
    }

    /// Clients from now on present a front proxy's certificate with this common name,
    /// issued by the requestheader CA and not by the client CA: who they are comes
    /// from their `X-Remote-*` headers, if the server trusts them.
    pub fn act_as_front_proxy(&self, common_name: &str) {
        self.act_with_untrusted_certificate();
        *self.front_proxy.borrow_mut() = Some(common_name.to_owned());
    }

    /// Clients from now on present a certificate chain that does not verify against
    /// the client CA (the adapter hands over no chain, only that one was rejected).
    pub fn act_with_untrusted_certificate(&self) {
        self.identity.borrow_mut().clear();
        self.untrusted_certificate.set(true);
        *self.front_proxy.borrow_mut() = None;
    }

    /// Where the watch caches' reflector is (for a report when a run goes wrong).
    pub fn reflector_state(&self) -> String {
        format!("{:?}", self.reflector.borrow().0)
    }

    /// Draw entropy (UIDs, generated names, audit IDs) from `seed` on: several
    /// harnesses over one store (replicas) each need their own.
    pub fn reseed(&self, seed: u64) {
        self.seed.set(seed);
    }

    /// Every storage operation takes `latency` on the clock from now on.
    pub fn set_storage_latency(&self, latency: Duration) {
        self.storage_latency.set(latency);
    }

    /// Outbound requests are answered by `handler`.
    pub fn answer_calls(&self, handler: impl Fn(&Outbound) -> CallOutcome + 'static) {
        *self.calls.borrow_mut() = Box::new(handler);
    }

    /// Time since the server started.
    pub fn now(&self) -> Duration {
        self.clock.get()
    }

    /// Let `by` pass: the lifecycle is ticked at every deadline it set on the way, then
    /// the caches catch up.
    pub fn advance(&self, by: Duration) {
        self.pass_time(by);
        self.reflect();
    }

    /// Let `by` pass as [`Harness::advance`] does, without the caches catching up (a
    /// replica whose caches lag).
    pub fn pass_time(&self, by: Duration) {
        let until = self.clock.get() + by;
        while let Some(at) = self.server.lifecycle().next_deadline().filter(|at| *at <= until) {
            self.clock.set(at.max(self.clock.get()));
            self.lifecycle(Event::Tick);
            if self.server.lifecycle().next_deadline() == Some(at) {
                break;
            }
        }
        self.clock.set(until);
        self.lifecycle(Event::Tick);
    }

    /// SIGTERM.
    pub fn terminate(&self) {
        self.lifecycle(Event::Terminate);
    }

    /// The audit events (JSON lines) of the requests answered since the last call.
    pub fn take_audit_lines(&self) -> Vec<String> {
        std::mem::take(&mut *self.audit_lines.borrow_mut())
    }

    /// The lifecycle actions carried out so far, in order.
    pub fn actions(&self) -> Vec<Action> {
        self.actions.borrow().clone()
    }

    /// Report `event` and carry out what follows, as the adapter does: a listener asked
    /// to stop listening closes at once.
    fn lifecycle(&self, event: Event) {
        self.server.lifecycle_event(event, self.clock.get());
        self.carry_out_actions();
    }

    /// Carry out the lifecycle actions queued so far (requests ending queue them too).
    fn carry_out_actions(&self) {
        loop {
            let actions = self.server.lifecycle().take_actions();
            if actions.is_empty() {
                return;
            }
            for action in actions {
                self.actions.borrow_mut().push(action.clone());
                match action {
                    Action::StopListening => {
                        self.server.lifecycle_event(Event::ListenerClosed, self.clock.get())
                    }
                    Action::RunPreShutdownHooks => self
                        .server
                        .lifecycle_event(Event::PreShutdownHooksFinished, self.clock.get()),
                    _ => {}
                }
            }
        }
    }

    /// One request with `body` as JSON (sent as `content_type`), asking for JSON: its
    /// one reply.
    pub fn json_call(&self, method: &str, path: &str, content_type: &str, body: Option<&serde_json::Value>) -> Reply {
        let body = body.map(serde_json::Value::to_string).unwrap_or_default();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        parse_responses(&self.send(request.as_bytes())).expect("well-formed HTTP").remove(0)
    }

    /// Let the reflector catch up: list, open its watch and feed the watch caches every
    /// change the store holds, as far as it can without time passing; then let the
    /// built-in controllers write what they want, until they want nothing.
    pub fn reflect(&self) {
        for _ in 0..MAX_CONTROLLER_PASSES {
            self.feed_caches();
            let writes = self.server.controller_writes(self.epoch + self.clock.get());
            if writes.is_empty() {
                return;
            }
            for request in writes {
                self.run_as_system(request);
            }
        }
        panic!("the controllers still want writes after {MAX_CONTROLLER_PASSES} passes: one of them fails or never settles");
    }

    /// One look of the aggregator's availability check: its discovery calls answered
    /// by [`Harness::answer_calls`], its status writes made, the caches caught up.
    pub fn check_availability(&self) {
        let now = self.epoch + self.clock.get();
        let pass = self.server.availability_checks(now);
        let mut writes = pass.writes;
        for check in pass.checks {
            let outcome = (self.calls.borrow())(&check.outbound);
            writes.extend(check.verdict.finish(outcome, now));
        }
        for request in writes {
            self.run_as_system(request);
        }
        self.reflect();
    }

    /// Run a request of the server's own to its answer.
    fn run_as_system(&self, request: http::Request<Bytes>) {
        let mut step = self.server.handle_as_system(request, self.inputs());
        while let crate::Step::Storage(op, pending) = step {
            step = pending.resume(self.store.run_now(op));
        }
    }

    fn feed_caches(&self) {
        let mut guard = self.reflector.borrow_mut();
        let (reflector, watch) = &mut *guard;
        loop {
            let now = self.clock.get();
            let input = match reflector.next(now) {
                ReflectorNext::List(op) => ReflectorInput::Listed(self.store.run_now(op)),
                ReflectorNext::OpenWatch { prefix, after } => match self.store.watch_now(&prefix, after) {
                    Ok(opened) => {
                        *watch = Some(opened);
                        ReflectorInput::WatchOpened
                    }
                    Err(e) => ReflectorInput::WatchEnded(Some(e)),
                },
                ReflectorNext::ReadWatch => match watch.as_mut().and_then(|w| w.next_now()) {
                    Some(item) => ReflectorInput::read(Some(item)),
                    None => return,
                },
                ReflectorNext::Sleep { .. } => {
                    *watch = None;
                    return;
                }
            };
            reflector.handle(input, now);
        }
    }

    /// The inputs of a request arriving now.
    pub fn inputs(&self) -> Inputs {
        let seed = self.seed.get();
        self.seed.set(seed + 1);
        let mut entropy = [0u8; 48];
        for (i, byte) in entropy.iter_mut().enumerate() {
            // A splitmix-style scramble: distinct, repeatable bytes per request.
            let x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add((i as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9));
            *byte = (x ^ (x >> 29)).to_le_bytes()[i % 8];
        }
        Inputs {
            now: self.epoch + self.clock.get(),
            monotonic: self.clock.get(),
            entropy,
            peer_certificates: self.identity.borrow().clone(),
            peer_certificates_rejected: self.untrusted_certificate.get(),
            request_header_common_name: self.front_proxy.borrow().clone(),
            remote_addr: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 40000))),
        }
    }

    /// Send `bytes` on a new connection and read everything the server writes back
    /// until it has answered every whole request in them. Watches are answered with
    /// what the store holds now, then ended.
    pub fn send(&self, bytes: &[u8]) -> Vec<u8> {
        let mut connection = self.connection();
        let mut out = Vec::new();
        connection.feed(bytes, self.clock.get());
        self.serve(&mut connection, &mut out, None);
        out
    }

    /// Send `bytes` on a new connection, then let the client stay silent for `silence`:
    /// everything the server writes, the answers of the connection's own timers
    /// included (a body that stops arriving gets 504, a slow head or an idle
    /// connection is closed). The second value says whether the server closed it.
    pub fn send_then_wait(&self, bytes: &[u8], silence: Duration) -> (Vec<u8>, bool) {
        let mut connection = self.connection();
        let mut out = Vec::new();
        connection.feed(bytes, self.clock.get());
        self.serve(&mut connection, &mut out, None);
        let until = self.clock.get() + silence;
        loop {
            if connection.should_close() {
                return (out, true);
            }
            connection.start_waiting(self.clock.get());
            match connection.poll_timeout().filter(|at| *at <= until) {
                Some(at) => {
                    self.advance(at.saturating_sub(self.clock.get()));
                    connection.handle_timeout(self.clock.get());
                    self.serve(&mut connection, &mut out, None);
                    if matches!(connection.poll(), Http::Closed) {
                        return (out, true);
                    }
                }
                None => {
                    self.advance(until.saturating_sub(self.clock.get()));
                    return (out, false);
                }
            }
        }
    }

    /// A connection with the limits and timeouts the binary gives its connections.
    fn connection(&self) -> Connection {
        let config = &self.server.shared.config;
        Connection::new(
            crate::http1::Limits {
                max_body_bytes: config.max_request_body_bytes,
                ..crate::http1::Limits::default()
            },
            crate::http1::Timeouts {
                request_body: config.lifecycle.request_timeout,
                ..crate::http1::Timeouts::default()
            },
        )
    }

    /// Send one request on a new connection and run it until its first storage
    /// operation, then hold it there. `None` when it never got that far: its bytes
    /// were answered (or the connection closed) at once, and are in `answered`.
    pub fn start(&self, bytes: &[u8], answered: &mut Vec<u8>) -> Option<Held> {
        let (mut connection, mut exchange) = self.arrive(bytes)?;
        match self.drive(&mut exchange, true) {
            Stopped::Held(op) => Some(Held {
                connection,
                exchange,
                op: Some(op),
            }),
            Stopped::Queued => Some(Held { connection, exchange, op: None }),
            stopped => {
                self.write(&mut connection, exchange, stopped, answered);
                None
            }
        }
    }

    /// Send one request on a new connection and hand it to the server: its connection
    /// and exchange, unless it was not whole or was refused.
    fn arrive(&self, bytes: &[u8]) -> Option<(Connection, Exchange)> {
        let mut connection = self.connection();
        connection.feed(bytes, self.clock.get());
        let begun = self.server.request_begun(self.clock.get());
        let Http::Request(request) = connection.poll() else {
            return None;
        };
        match self.server.exchange(request, self.inputs(), begun) {
            Arrived::Exchange(exchange) => Some((connection, exchange)),
            Arrived::Refused => None,
        }
    }

    /// Run a held request to its answer: the bytes the server writes.
    pub fn finish(&self, held: Held) -> Vec<u8> {
        let Held {
            mut connection,
            mut exchange,
            op,
        } = held;
        let mut out = Vec::new();
        let stopped = match op {
            Some(op) => self.storage(&mut exchange, op).unwrap_or_else(|| self.drive(&mut exchange, false)),
            None => self.drive(&mut exchange, false),
        };
        self.write(&mut connection, exchange, stopped, &mut out);
        out
    }

    /// Serve every request the connection holds.
    fn serve(&self, connection: &mut Connection, out: &mut Vec<u8>, mut begun: Option<crate::lifecycle::InFlight>) {
        if connection.buffered() > 0 && begun.is_none() {
            begun = self.server.request_begun(self.clock.get());
        }
        loop {
            match connection.poll() {
                Http::Request(request) => {
                    let mut exchange = match self.server.exchange(request, self.inputs(), begun.take()) {
                        Arrived::Exchange(exchange) => exchange,
                        Arrived::Refused => return,
                    };
                    let stopped = self.drive(&mut exchange, false);
                    self.write(connection, exchange, stopped, out);
                    if connection.should_close() {
                        return;
                    }
                    if connection.buffered() > 0 {
                        begun = self.server.request_begun(self.clock.get());
                    }
                }
                Http::Continue(bytes) => out.extend_from_slice(&bytes),
                Http::TimedOut(mut response) => {
                    let closing = true;
                    crate::exchange::answer_headers(response.headers_mut(), &http::HeaderValue::from_static(""), self.epoch + self.clock.get(), closing);
                    out.extend_from_slice(&connection.encode_response(&response));
                    return;
                }
                Http::Fatal(bytes) => {
                    out.extend_from_slice(&bytes);
                    return;
                }
                Http::NeedMore | Http::Closed => return,
            }
        }
    }

    /// Drive an exchange until it answers, becomes a watch, or (when `hold`) reaches a
    /// storage operation.
    fn drive(&self, exchange: &mut Exchange, hold: bool) -> Stopped {
        loop {
            match exchange.poll() {
                Next::Yield => {}
                Next::Respond(response) => return Stopped::Answered(response),
                Next::Watch { source, head, stream } => return Stopped::Watching(source, head, stream),
                Next::Close => return Stopped::Closed,
                Next::Storage(op) if hold => return Stopped::Held(op),
                Next::Storage(op) => {
                    if let Some(stopped) = self.storage(exchange, op) {
                        return stopped;
                    }
                }
                Next::Wait { turn, until } => {
                    if hold {
                        return Stopped::Queued;
                    }
                    // Its turn has come, or the clock moves on to when it looks again.
                    let mut turn = turn;
                    let waker = std::task::Waker::noop();
                    let ready = std::future::Future::poll(std::pin::Pin::new(&mut turn), &mut std::task::Context::from_waker(waker)).is_ready();
                    if !ready {
                        self.clock.set(until.max(self.clock.get()));
                    }
                    exchange.waited(self.clock.get());
                }
                Next::Call(outbound) => {
                    let outcome = (self.calls.borrow())(&outbound);
                    exchange.call_done(outcome, self.clock.get());
                }
                Next::Calls(outbound) => {
                    let outcomes = outbound.iter().map(|o| (self.calls.borrow())(o)).collect();
                    exchange.calls_done(outcomes, self.clock.get());
                }
                Next::Relay(outbound) => match (self.calls.borrow())(&outbound) {
                    Ok(answer) => {
                        let (head, body) = answer.into_parts();
                        match exchange.relay_started(head, self.clock.get()) {
                            Some(head) => return Stopped::Relayed(head, body),
                            None => return Stopped::Closed,
                        }
                    }
                    Err(e) => exchange.call_done(Err(e), self.clock.get()),
                },
            }
        }
    }

    /// Run one storage operation on the clock: `Some` when the deadline passed first.
    fn storage(&self, exchange: &mut Exchange, op: StorageOp) -> Option<Stopped> {
        let done_at = self.clock.get() + self.storage_latency.get();
        if let Some(deadline) = exchange.deadline().filter(|d| *d < done_at) {
            self.clock.set(deadline.max(self.clock.get()));
            return Some(Stopped::Answered(exchange.expired(self.clock.get())));
        }
        self.clock.set(done_at);
        exchange.storage_done(self.store.run_now(op), self.clock.get());
        None
    }

    /// Write what an exchange came to, then let it go.
    fn write(&self, connection: &mut Connection, mut exchange: Exchange, stopped: Stopped, out: &mut Vec<u8>) {
        match stopped {
            Stopped::Answered(response) => out.extend_from_slice(&connection.encode_response(&response)),
            Stopped::Watching(source, head, mut stream) => {
                out.extend_from_slice(&connection.encode_stream_head(&head));
                for frame in stream.take_initial() {
                    out.extend_from_slice(&connection.encode_chunk(&frame));
                }
                let calls = self.calls.borrow();
                watch_frames(&self.store, source, &mut *stream, self.epoch + self.clock.get(), &*calls, |frame| {
                    out.extend_from_slice(&connection.encode_chunk(&frame))
                });
                out.extend_from_slice(&connection.encode_stream_end());
                exchange.stream_ended(self.clock.get());
            }
            Stopped::Relayed(head, body) => {
                out.extend_from_slice(&connection.encode_stream_head(&head));
                out.extend_from_slice(&connection.encode_chunk(&body));
                out.extend_from_slice(&connection.encode_stream_end());
                exchange.stream_ended(self.clock.get());
            }
            Stopped::Held(_) | Stopped::Queued | Stopped::Closed => {}
        }
        self.audit_lines.borrow_mut().extend(exchange.take_audit_lines());
        exchange.written(self.clock.get());
        self.carry_out_actions();
        self.reflect();
    }
}

/// The frames of every change a watch's source holds now: what the watch cache has
/// queued, or what `store` holds after the watch's revision; observed at `now`.
pub fn watch_frames<S: SyncStorage>(
    store: &S,
    source: WatchSource,
    stream: &mut dyn WatchResponse,
    now: SystemTime,
    calls: &dyn Fn(&Outbound) -> CallOutcome,
    mut write: impl FnMut(Bytes),
) {
    match Feed::open(store, source) {
        Ok(mut feed) => feed.pump(stream, now, calls, write),
        Err(e) => write(stream.on_error(e)),
    }
}


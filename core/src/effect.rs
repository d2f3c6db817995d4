//! The effects a request asks for: what the core hands the adapter to do, and the
//! paused request that continues once it is done. Every stage imports these; this
//! module imports no stage.

use crate::storage::{Completion, StorageError, StorageOp, WatchEvent};
use crate::watch_cache::{CachedEvent, Subscription};
use bytes::Bytes;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Everything about a request that looks like IO, passed in so the core stays
/// deterministic.
#[derive(Clone, Debug)]
pub struct Inputs {
    /// The current wall-clock time.
    pub now: SystemTime,
    /// The same moment on a monotonic clock: time since an origin the adapter chose
    /// (its start). Deadlines and durations are measured on it.
    pub monotonic: Duration,
    /// Fresh random bytes: UIDs (0..16), generateName suffixes (16..32) and audit IDs
    /// (32..48) are drawn from them.
    pub entropy: [u8; 48],
    /// The client's certificate chain (DER, leaf first), already verified by the
    /// adapter against the client CA. Empty when the client sent none, or one that did
    /// not verify.
    pub peer_certificates: Vec<Bytes>,
    /// The client sent a certificate chain that does not verify against the client CA
    /// (upstream's x509 authenticator fails): the request is not anonymous; it gets 401
    /// unless a bearer token authenticates it.
    pub peer_certificates_rejected: bool,
    /// The common name of the client certificate when its chain verified against the
    /// requestheader CA (`--requestheader-client-ca-file`): a front proxy, whose
    /// headers may name the user.
    pub request_header_common_name: Option<String>,
    /// The client's address.
    pub remote_addr: Option<SocketAddr>,
}

/// What must happen next for a request.
pub enum Step {
    /// Done: send this response.
    Respond(http::Response<Bytes>),
    /// Run this against the storage backend, then [`Pending::resume`] with the result.
    Storage(StorageOp, Pending),
    /// Send this request out (to an aggregated API server, later to admission
    /// webhooks), then [`PendingCall::resume`] with its answer.
    Call(Outbound, PendingCall),
    /// Send these requests side by side (validating admission webhooks), then
    /// [`PendingCalls::resume`] with their answers in the same order.
    Calls(Vec<Outbound>, PendingCalls),
    /// Send this request out and stream its answer to the client as it comes (a watch
    /// through the aggregator): the head once it arrives, as
    /// [`PendingRelay::head`] leaves it, then the body piece by piece until it ends,
    /// the client goes away or the server shuts down. If no head comes,
    /// [`PendingRelay::failed`] says what the client gets instead.
    Relay(Outbound, PendingRelay),
    /// A long-running watch: write the stream's head and frames as chunks, feed it every
    /// event of its source, and end it when it says so, when its timeout passes, or when
    /// the client goes away.
    Watch(WatchSource, Box<dyn WatchResponse>),
}

/// Where a [`Step::Watch`]'s events come from, decided by the core when the watch is
/// created.
#[derive(Debug)]
pub enum WatchSource {
    /// The resource's watch cache covers the watch's revision: its events are queued on
    /// this subscription; feed each to [`WatchResponse::on_cached`].
    Cache(Arc<Subscription>),
    /// The backend, which keeps the longer history: open a watch of every change under
    /// `prefix` after revision `after` and feed each to [`WatchResponse::on_event`].
    Backend {
        prefix: String,
        after: crate::storage::Revision,
    },
}

/// A request paused while the adapter runs its storage operation: one owned value
/// holding everything the request needs to continue.
pub struct Pending {
    inner: Box<dyn Continuation>,
}

/// The state of a paused request; each handler defines its own.
pub(crate) trait Continuation: Send {
    fn resume(self: Box<Self>, done: Completion) -> Step;
}

impl Pending {
    pub(crate) fn new(state: impl Continuation + 'static) -> Pending {
        Pending {
            inner: Box::new(state),
        }
    }

    /// Continue the request with the outcome of the storage operation it asked for.
    pub fn resume(self, done: Completion) -> Step {
        self.inner.resume(done)
    }
}

/// A request the server sends to another server.
#[derive(Debug)]
pub struct Outbound {
    /// The request, its URI absolute (`https://host:port/path?query`).
    pub request: http::Request<Bytes>,
    /// How long to wait for the whole answer.
    pub timeout: Duration,
    /// How to trust the server and present ourselves over TLS; `None`: the system's
    /// roots and no client certificate.
    pub tls: Option<std::sync::Arc<ClientTls>>,
}

/// In an outbound request's `extensions`: sending the request twice does no harm (a
/// TokenReview or SubjectAccessReview POST asks and changes nothing). When a reused
/// keep-alive connection breaks before any byte of the answer arrived, the adapter
/// sends such a request again on a fresh connection, as it does GET, HEAD, OPTIONS and
/// TRACE (Go's rule); any other request gets the failure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Replayable;

/// The TLS side of an outbound request, as a kubeconfig's cluster and user name it
/// (a webhook's `--authentication-token-webhook-config-file`, an APIService's
/// `caBundle`). Plain data: the adapter builds (and may cache, per `Arc`) its TLS
/// client from it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientTls {
    /// PEM certificates to trust; empty: the system's roots.
    pub ca_pem: Vec<u8>,
    /// A PEM client certificate chain and its PEM key, presented when asked.
    pub client_cert_pem: Vec<u8>,
    pub client_key_pem: Vec<u8>,
    /// The name to verify the server's certificate against instead of the URI's host.
    pub server_name: Option<String>,
    /// Trust any server certificate (`insecure-skip-tls-verify`).
    pub insecure_skip_verify: bool,
}

/// Why an outbound request got no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallError {
    /// No connection, a TLS failure, a broken answer: the words say which.
    Unreachable(String),
    /// No whole answer within the request's timeout.
    TimedOut,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Unreachable(why) => f.write_str(why),
            CallError::TimedOut => f.write_str("the request timed out"),
        }
    }
}

/// The answer to an outbound request.
pub type CallOutcome = Result<http::Response<Bytes>, CallError>;

/// A request paused while the adapter sends its outbound request.
pub struct PendingCall {
    inner: Box<dyn FnOnce(CallOutcome) -> Step + Send>,
}

impl PendingCall {
    pub(crate) fn new(next: impl FnOnce(CallOutcome) -> Step + Send + 'static) -> PendingCall {
        PendingCall {
            inner: Box::new(next),
        }
    }

    /// Continue the request with the outbound request's answer.
    pub fn resume(self, outcome: CallOutcome) -> Step {
        (self.inner)(outcome)
    }
}

/// A request whose answer another server streams: what the client is told.
pub struct PendingRelay {
    inner: Box<dyn Relaying>,
}

/// How a relayed answer reaches the client; each relay defines its own.
pub(crate) trait Relaying: Send {
    /// The answer's head as the client gets it.
    fn head(&self, head: &mut http::response::Parts);
    /// No head came: the answer instead.
    fn failed(self: Box<Self>, error: CallError) -> Step;
}

impl PendingRelay {
    pub(crate) fn new(relaying: impl Relaying + 'static) -> PendingRelay {
        PendingRelay { inner: Box::new(relaying) }
    }

    /// Make the other server's head the client's.
    pub fn head(&self, head: &mut http::response::Parts) {
        self.inner.head(head)
    }

    /// No head came because of `error`: continue with the answer the client gets.
    pub fn failed(self, error: CallError) -> Step {
        self.inner.failed(error)
    }
}

/// A request paused while the adapter sends several outbound requests at once.
pub struct PendingCalls {
    inner: Box<dyn FnOnce(Vec<CallOutcome>) -> Step + Send>,
}

impl PendingCalls {
    pub(crate) fn new(next: impl FnOnce(Vec<CallOutcome>) -> Step + Send + 'static) -> PendingCalls {
        PendingCalls {
            inner: Box::new(next),
        }
    }

    /// Continue the request with the answers, in the order the requests were asked.
    pub fn resume(self, outcomes: Vec<CallOutcome>) -> Step {
        (self.inner)(outcomes)
    }
}

impl Step {
    /// Ask for `op`, continuing in `state` once it is done.
    pub(crate) fn storage(op: StorageOp, state: impl Continuation + 'static) -> Step {
        Step::Storage(op, Pending::new(state))
    }
}

/// A continuation written as a closure.
impl<F> Continuation for F
where
    F: FnOnce(Completion) -> Step + Send,
{
    fn resume(self: Box<Self>, done: Completion) -> Step {
        (*self)(done)
    }
}

/// A watch's response as the adapter streams it: write [`WatchResponse::head`], then the
/// frames of [`WatchResponse::take_initial`], then feed every event and write what comes
/// back, ask for a [`WatchResponse::bookmark`] every [`WatchResponse::bookmark_interval`],
/// and end the response when it [`is_done`](WatchResponse::is_done), its
/// [`timeout`](WatchResponse::timeout) passes, or the client goes away.
pub trait WatchResponse: Send {
    /// The response head: 200 with the stream's content type.
    fn head(&self) -> http::response::Parts;
    /// How long the watch may run before the server ends it.
    fn timeout(&self) -> Duration;
    /// How often to ask for a bookmark, if the client wants them.
    fn bookmark_interval(&self) -> Option<Duration>;
    /// Whether the watch has ended (after an ERROR event).
    fn is_done(&self) -> bool;
    /// The frames to write before the first event (the initial state).
    fn take_initial(&mut self) -> Vec<Bytes>;
    /// A backend event (or the backend watch's failure), observed at `now`: the frame
    /// to write, if the client is to see it.
    fn on_event(&mut self, event: Result<WatchEvent, StorageError>, now: SystemTime)
        -> Option<Bytes>;
    /// A watch cache's event, observed at `now`: the frame to write, if any.
    fn on_cached(&mut self, event: &CachedEvent, now: SystemTime) -> Option<Bytes>;
    /// The event source could not be opened or broke: an ERROR frame, and the end.
    fn on_error(&mut self, error: StorageError) -> Bytes;
    /// A BOOKMARK frame carrying the newest revision the client has seen.
    fn bookmark(&mut self) -> Option<Bytes>;
    /// The outbound call the last event needs before its frame can be written (a
    /// conversion webhook's): make it, feed its outcome to
    /// [`WatchResponse::call_done`], and only then the next event.
    fn take_call(&mut self) -> Option<Outbound> {
        None
    }
    /// The outcome of the call [`WatchResponse::take_call`] asked for, at `now`: the
    /// frame of the event that waited for it, if any.
    fn call_done(&mut self, _outcome: CallOutcome, _now: SystemTime) -> Option<Bytes> {
        None
    }
}

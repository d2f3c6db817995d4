//! The connection's timers, as kube-apiserver's HTTP server and filters set them:
//!
//! * a connection waiting for a request is closed after [`Timeouts::idle`] with nothing
//!   from the peer (Go's `IdleTimeout`);
//! * a request whose first bytes came has [`Timeouts::read_header`] to finish its head,
//!   and the connection is closed without an answer past it (`ReadHeaderTimeout`);
//! * it has [`Timeouts::request_body`] to finish its body, and is answered `504` past it
//!   (`--request-timeout`, which upstream's timeout filter enforces on a handler still
//!   reading its body).
//!
//! The idle limit also bounds each silence of the peer while a request is read. No timer
//! runs while the peer is owed an answer.
//!
//! Time is an input: a monotonic [`Duration`] since an origin the adapter picks.

use std::time::Duration;

/// How long the peer may take; the defaults are kube-apiserver's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Nothing from the peer for this long while it owes bytes: close.
    pub idle: Duration,
    /// A request's head not complete this long after its first bytes: close.
    pub read_header: Duration,
    /// A request's body not complete this long after its first bytes: answer `504`, close.
    pub request_body: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            idle: Duration::from_secs(90),
            read_header: Duration::from_secs(32),
            request_body: Duration::from_secs(60),
        }
    }
}

/// What the connection's clock counts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Timer {
    /// No timer runs: the peer is owed an answer, or the adapter has not started waiting
    /// for it since the last answer (or since the connection opened).
    Paused,
    /// Waiting for a request's first bytes since `since`.
    Idle { since: Duration },
    /// A request's first bytes came at `began`; the peer last sent bytes, or the adapter
    /// last started waiting for them, at `last`.
    Reading { began: Duration, last: Duration },
    /// A timer fired; the connection takes nothing more.
    Expired(Expiry),
}

/// Which timer fired, and so what the peer gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Expiry {
    /// Nothing came while waiting for a request: close.
    Idle,
    /// A request's head did not finish in time: close without an answer.
    Head,
    /// A request's body did not finish in time: answer `504`, then close.
    Body,
}

impl Timer {
    /// The peer's bytes came at `now`; `owed`: an answer is owed to it.
    pub(super) fn bytes_came(&mut self, now: Duration, owed: bool) {
        match self {
            Timer::Reading { last, .. } => *last = now,
            Timer::Paused | Timer::Idle { .. } if !owed => {
                *self = Timer::Reading {
                    began: now,
                    last: now,
                }
            }
            Timer::Paused | Timer::Idle { .. } | Timer::Expired(_) => {}
        }
    }

    /// The adapter starts waiting for the peer at `now`; `owed`: an answer is owed to it.
    pub(super) fn waiting(&mut self, now: Duration, owed: bool) {
        match self {
            Timer::Reading { last, .. } => *last = now,
            Timer::Paused | Timer::Idle { .. } if !owed => *self = Timer::Idle { since: now },
            Timer::Paused | Timer::Idle { .. } | Timer::Expired(_) => {}
        }
    }

    /// When the running timer fires, and which it is; `body`: the request's head is read
    /// and its body awaited.
    pub(super) fn deadline(&self, timeouts: &Timeouts, body: bool) -> Option<(Duration, Expiry)> {
        match *self {
            Timer::Idle { since } => Some((since.saturating_add(timeouts.idle), Expiry::Idle)),
            Timer::Reading { began, last } => {
                let (limit, expiry) = if body {
                    (timeouts.request_body, Expiry::Body)
                } else {
                    (timeouts.read_header, Expiry::Head)
                };
                let deadline = began
                    .saturating_add(limit)
                    .min(last.saturating_add(timeouts.idle));
                Some((deadline, expiry))
            }
            Timer::Paused | Timer::Expired(_) => None,
        }
    }
}

//! The reflector: fills every watch cache from one list of the whole key space and keeps
//! them current from one backend watch of it, starting over after a backoff whenever
//! that watch cannot be opened, fails or ends.
//!
//! A sans-IO machine. [`Reflector::next`] says what the adapter must do now: run a list,
//! open the backend watch, read the watch's next item, or sleep until a time.
//! [`Reflector::handle`] takes what came of it. Time is an input: a monotonic `Duration`
//! since an origin the adapter picks. The driver is a loop:
//!
//! ```text
//! loop {
//!     let input = match reflector.next(now()) {
//!         Next::List(op) => Input::Listed(storage.run(op)),
//!         Next::OpenWatch { prefix, after } => open the watch → WatchOpened or WatchEnded(Some(e)),
//!         Next::ReadWatch => Input::read(watch.next()),
//!         Next::Sleep { until } => { drop the watch; sleep until `until`; continue }
//!     };
//!     reflector.handle(input, now());
//! }
//! ```
//!
//! The states run Listing → Opening → Watching; any failure or end leads to BackingOff,
//! which turns back into Listing once its time has come. A resource that joins while
//! watching (a CRD's) is caught up without disturbing the others: Watching → CatchingUp
//! lists everything at the watch's revision, fills only the new caches from it, and
//! watches on.

mod backoff;
mod fanout;
#[cfg(test)]
mod tests;

pub use backoff::{FIRST_BACKOFF, MAX_BACKOFF};

use crate::server::Server;
use crate::storage::{
    Completion, ListPage, Revision, StorageError, StorageOp, StorageOutput, WatchEvent,
};
use backoff::Backoff;
use fanout::Fanout;
use std::time::Duration;

/// What the adapter must do next for the reflector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Run this list of everything under the storage prefix; feed [`Input::Listed`].
    List(StorageOp),
    /// Open a backend watch of every change under `prefix` after revision `after`; feed
    /// [`Input::WatchOpened`], or [`Input::WatchEnded`] with the error if it cannot be
    /// opened.
    OpenWatch { prefix: String, after: Revision },
    /// Read the open watch's next item and feed it ([`Input::read`]).
    ReadWatch,
    /// Drop the watch if one is open, and ask again once the clock reaches `until`.
    Sleep { until: Duration },
}

/// What came of the reflector's last [`Next`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// The list's outcome.
    Listed(Completion),
    /// The backend watch is open.
    WatchOpened,
    /// One change the watch saw.
    Event(WatchEvent),
    /// The watch could not be opened, failed (with the error) or ended.
    WatchEnded(Option<StorageError>),
}

impl Input {
    /// What one read of a backend watch yielded: a change, or the watch's end.
    pub fn read(item: Option<Result<WatchEvent, StorageError>>) -> Input {
        match item {
            Some(Ok(event)) => Input::Event(event),
            Some(Err(e)) => Input::WatchEnded(Some(e)),
            None => Input::WatchEnded(None),
        }
    }

    /// The input's name, for logs (not its contents, which may be large).
    fn name(&self) -> &'static str {
        match self {
            Input::Listed(_) => "a list outcome",
            Input::WatchOpened => "an opened watch",
            Input::Event(_) => "an event",
            Input::WatchEnded(_) => "the end of a watch",
        }
    }
}

/// The reflector of one server's watch caches.
pub struct Reflector {
    fanout: Fanout,
    /// Everything under the storage prefix: what is listed and watched.
    root: String,
    state: State,
    backoff: Backoff,
}

impl std::fmt::Debug for Reflector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reflector")
            .field("root", &self.root)
            .field("state", &self.state)
            .field("backoff", &self.backoff)
            .finish()
    }
}

#[derive(Debug)]
enum State {
    Listing(Listing),
    Opening(Opening),
    Watching(Watching),
    CatchingUp(CatchingUp),
    BackingOff(BackingOff),
}

/// Watching, while caches that joined since the last fill are filled from a list at
/// the watch's revision; the watch's next events wait until they are.
#[derive(Debug)]
struct CatchingUp {
    revision: Revision,
}

/// The list of everything is asked for.
#[derive(Debug)]
struct Listing;

/// Listed; the backend watch from the list's revision is being opened. The caches are
/// filled only once it is open, so they never claim a state that no watch follows.
struct Opening {
    page: ListPage,
}

impl std::fmt::Debug for Opening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opening")
            .field("revision", &self.page.revision)
            .field("items", &self.page.items.len())
            .finish()
    }
}

/// The caches are filled and the watch is open: each change goes to its cache.
#[derive(Debug)]
struct Watching {
    /// The newest revision seen: the list's, then each event's.
    revision: Revision,
}

/// The list or the watch failed or ended: relist once the clock reaches `until`.
#[derive(Debug)]
struct BackingOff {
    until: Duration,
}

/// What a state needs to move on.
struct Context<'a> {
    fanout: &'a mut Fanout,
    backoff: &'a mut Backoff,
    now: Duration,
}

impl Context<'_> {
    /// Lose the caches and wait before relisting.
    fn back_off(&mut self, why: &str) -> State {
        self.fanout.unsync();
        let wait = self.backoff.take();
        tracing::debug!("the watch caches lost their backend watch ({why}); relisting in {wait:?}");
        State::BackingOff(BackingOff {
            until: self.now.saturating_add(wait),
        })
    }
}

/// `input` makes no sense in `state` (an adapter bug): keep the state.
fn ignored(state: State, input: &Input) -> State {
    tracing::warn!("the reflector ignored {} while in {state:?}", input.name());
    state
}

impl Listing {
    fn handle(self, input: Input, cx: &mut Context<'_>) -> State {
        match input {
            Input::Listed(Ok(StorageOutput::Listed(page))) => State::Opening(Opening { page }),
            Input::Listed(Err(e)) => cx.back_off(&format!("list failed: {e}")),
            Input::Listed(Ok(_)) => cx.back_off("a list answered with something else"),
            other => ignored(State::Listing(self), &other),
        }
    }
}

impl Opening {
    fn handle(self, input: Input, cx: &mut Context<'_>) -> State {
        match input {
            Input::WatchOpened => {
                let revision = self.page.revision;
                cx.fanout.fill(self.page.items, revision);
                cx.backoff.reset();
                State::Watching(Watching { revision })
            }
            Input::WatchEnded(why) => cx.back_off(&ended(why)),
            other => ignored(State::Opening(self), &other),
        }
    }
}

impl Watching {
    fn handle(self, input: Input, cx: &mut Context<'_>) -> State {
        match input {
            Input::Event(event) => {
                let revision = self.revision.max(event.revision());
                cx.fanout.apply(event);
                State::Watching(Watching { revision })
            }
            Input::WatchEnded(why) => cx.back_off(&ended(why)),
            other => ignored(State::Watching(self), &other),
        }
    }
}

impl CatchingUp {
    fn handle(self, input: Input, cx: &mut Context<'_>) -> State {
        match input {
            Input::Listed(Ok(StorageOutput::Listed(page))) => {
                cx.fanout.catch_up(page.items, self.revision);
                State::Watching(Watching { revision: self.revision })
            }
            // The revision may be compacted away already: start over.
            Input::Listed(Err(e)) => cx.back_off(&format!("catching up failed: {e}")),
            Input::Listed(Ok(_)) => cx.back_off("a list answered with something else"),
            other => ignored(State::CatchingUp(self), &other),
        }
    }
}

impl BackingOff {
    fn handle(self, input: Input, _cx: &mut Context<'_>) -> State {
        ignored(State::BackingOff(self), &input)
    }
}

fn ended(why: Option<StorageError>) -> String {
    match why {
        Some(e) => format!("watch failed: {e}"),
        None => "watch ended".to_owned(),
    }
}

impl Reflector {
    /// The reflector of `server`'s watch caches, over everything under its storage
    /// prefix. It starts from nothing: every cache is stale until its first fill.
    pub fn new(server: &Server) -> Reflector {
        let shared = server.shared.clone();
        let root = format!("{}/", shared.config.storage_prefix.trim_end_matches('/'));
        let fanout = Fanout::new(shared);
        fanout.unsync();
        Reflector {
            fanout,
            root,
            state: State::Listing(Listing),
            backoff: Backoff::default(),
        }
    }

    /// What to do now, at `now`. A backoff whose time has come turns into a relist.
    pub fn next(&mut self, now: Duration) -> Next {
        if let State::BackingOff(BackingOff { until }) = self.state {
            if now >= until {
                self.state = State::Listing(Listing);
            }
        }
        // A resource joined or left: fill the new caches (and let the old go) at the
        // revision the watch has reached; the others go on serving.
        if let State::Watching(Watching { revision }) = self.state {
            if !self.fanout.is_current() {
                self.state = State::CatchingUp(CatchingUp { revision });
            }
        }
        match &self.state {
            State::Listing(_) => Next::List(StorageOp::list_latest(self.root.clone())),
            State::Opening(opening) => Next::OpenWatch {
                prefix: self.root.clone(),
                after: opening.page.revision,
            },
            State::Watching(_) => Next::ReadWatch,
            State::CatchingUp(CatchingUp { revision }) => Next::List(StorageOp::List {
                prefix: self.root.clone(),
                revision: Some(*revision),
                start_after: None,
                limit: None,
            }),
            State::BackingOff(BackingOff { until }) => Next::Sleep { until: *until },
        }
    }

    /// What came of the last [`Next`], at `now`.
    pub fn handle(&mut self, input: Input, now: Duration) {
        let mut cx = Context {
            fanout: &mut self.fanout,
            backoff: &mut self.backoff,
            now,
        };
        // A placeholder while the state moves on; every arm puts the next one back.
        let state = std::mem::replace(&mut self.state, State::Listing(Listing));
        self.state = match state {
            State::Listing(s) => s.handle(input, &mut cx),
            State::Opening(s) => s.handle(input, &mut cx),
            State::Watching(s) => s.handle(input, &mut cx),
            State::CatchingUp(s) => s.handle(input, &mut cx),
            State::BackingOff(s) => s.handle(input, &mut cx),
        };
    }

    /// The newest revision the caches are current at, while the watch follows the
    /// store.
    pub fn revision(&self) -> Option<Revision> {
        match &self.state {
            State::Watching(Watching { revision }) | State::CatchingUp(CatchingUp { revision }) => Some(*revision),
            _ => None,
        }
    }
}

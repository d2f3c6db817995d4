//! The lifecycle machine as one server shares it: the adapter reports signals, hooks,
//! the listener and time passing; requests report themselves started and finished
//! from inside the core's chain. Either way the machine's actions pile up in one
//! outbox, and the adapter's lifecycle task is woken to carry them out.

use super::{Action, Admission, Event, Kind, Lifecycle, LifecycleConfig, RequestClass, Signal};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// What the controller guards.
#[derive(Debug)]
struct State {
    machine: Lifecycle,
    /// Actions not yet taken by the adapter, oldest first.
    outbox: VecDeque<Action>,
    /// The adapter's lifecycle task, to wake when the outbox or the next deadline changes.
    waker: Option<Waker>,
    /// Whether something changed since the adapter last looked.
    changed: bool,
    /// The latest time reported: a request that ends without saying when (its guard
    /// dropped) is taken to end then.
    latest: Duration,
}

/// The shared lifecycle of one server.
#[derive(Debug)]
pub struct LifecycleController {
    state: Mutex<State>,
    /// NotAcceptingNewRequest has fired: asked of every request, so kept apart from
    /// the lock.
    closing: AtomicBool,
}

impl LifecycleController {
    /// A lifecycle with these post-start hooks, every handler installed from the start
    /// (resources that arrive later will hold [`Signal::MuxAndDiscoveryComplete`] back).
    pub fn new(config: LifecycleConfig, post_start_hooks: &[&str]) -> LifecycleController {
        let mut machine = Lifecycle::new(config, post_start_hooks, false);
        let outbox: VecDeque<Action> = machine.handle(Event::HandlersInstalled, Duration::ZERO).into();
        LifecycleController {
            state: Mutex::new(State {
                machine,
                outbox,
                waker: None,
                changed: false,
                latest: Duration::ZERO,
            }),
            closing: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The machine stays consistent across a panic elsewhere: keep going.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Take `event` at `now` (time since an origin the adapter chose, from a monotonic
    /// clock).
    pub fn event(&self, event: Event, now: Duration) {
        let mut state = self.lock();
        let now = now.max(state.latest);
        state.latest = now;
        let before = state.machine.next_deadline();
        let actions = state.machine.handle(event, now);
        if state.machine.signaled(Signal::NotAcceptingNewRequest) {
            self.closing.store(true, Ordering::Release);
        }
        let deadline_moved = before != state.machine.next_deadline();
        if actions.is_empty() && !deadline_moved {
            return;
        }
        state.outbox.extend(actions);
        state.changed = true;
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
    }

    /// The actions to carry out, once there are any or the next deadline moved;
    /// pending otherwise (the task is woken when that changes).
    pub fn poll_actions(&self, cx: &mut Context<'_>) -> Poll<Vec<Action>> {
        let mut state = self.lock();
        if state.changed {
            state.changed = false;
            return Poll::Ready(state.outbox.drain(..).collect());
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    /// The actions queued so far, without waiting (the deterministic harness).
    pub fn take_actions(&self) -> Vec<Action> {
        let mut state = self.lock();
        state.changed = false;
        state.outbox.drain(..).collect()
    }

    /// When the machine next needs an [`Event::Tick`].
    pub fn next_deadline(&self) -> Option<Duration> {
        self.lock().machine.next_deadline()
    }

    pub fn signaled(&self, signal: Signal) -> bool {
        self.lock().machine.signaled(signal)
    }

    /// Whether new requests are no longer taken (NotAcceptingNewRequest has fired).
    pub fn closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    /// How to treat a request that arrived; a request served counts in flight until its
    /// [`InFlight`] is dropped.
    pub fn admit(self: &Arc<Self>, class: RequestClass, now: Duration) -> Result<InFlight, Admission> {
        let admission = self.lock().machine.admit(class);
        match admission {
            Admission::Serve => Ok(self.started(now)),
            turned => Err(turned),
        }
    }

    /// A request's first bytes arrived: while requests are still taken it counts in
    /// flight from now on, so that the drain waits for a slow upload.
    pub fn begin(self: &Arc<Self>, now: Duration) -> Option<InFlight> {
        if self.closing() {
            return None;
        }
        Some(self.started(now))
    }

    fn started(self: &Arc<Self>, now: Duration) -> InFlight {
        self.event(Event::RequestStarted(Kind::Short), now);
        InFlight {
            lifecycle: self.clone(),
            kind: Kind::Short,
            finished_at: None,
        }
    }
}

/// A request the drain waits for, or once long-running a watch the drain ends. Reports
/// itself finished when dropped.
#[derive(Debug)]
#[must_use = "the request counts as finished as soon as this is dropped"]
pub struct InFlight {
    lifecycle: Arc<LifecycleController>,
    kind: Kind,
    finished_at: Option<Duration>,
}

impl InFlight {
    /// The request turned out to be a watch: not waited for, but ended.
    pub fn long_running(&mut self, now: Duration) {
        if self.kind == Kind::Short {
            self.lifecycle.event(Event::RequestStarted(Kind::LongRunning), now);
            self.lifecycle.event(Event::RequestFinished(Kind::Short), now);
            self.kind = Kind::LongRunning;
        }
    }

    /// The request ends at `now` (when the guard is dropped).
    pub fn finish_at(&mut self, now: Duration) {
        self.finished_at = Some(now);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let now = self.finished_at.unwrap_or_else(|| self.lifecycle.lock().latest);
        self.lifecycle.event(Event::RequestFinished(self.kind), now);
    }
}

//! The adapter's side of the core's lifecycle machine: it feeds the machine events
//! (signals, hooks finished, requests started and finished, the listener closed, timer
//! ticks) with the time since start, and carries out what the machine asks for by firing
//! latches that the accept loop, the watches and `main` wait on.

use apiary_core::health::SHUTDOWN;
use apiary_core::lifecycle::{
    Action, Admission, Event, Kind, Lifecycle as Machine, LifecycleConfig, RequestClass, Signal,
};
use smol::channel::{Receiver, Sender};
use smol::Timer;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A one-way flag that tasks can wait on: once fired it stays fired.
pub struct Latch {
    sender: Mutex<Option<Sender<()>>>,
    receiver: Receiver<()>,
}

impl Latch {
    fn new() -> Latch {
        let (sender, receiver) = smol::channel::bounded(1);
        Latch {
            sender: Mutex::new(Some(sender)),
            receiver,
        }
    }

    fn fire(&self) {
        // Dropping the only sender closes the channel: every waiter wakes up.
        lock(&self.sender).take();
    }

    pub fn fired(&self) -> bool {
        self.receiver.is_closed()
    }

    /// Resolves once the latch has fired.
    pub fn wait(&self) -> impl std::future::Future<Output = ()> + 'static {
        let receiver = self.receiver.clone();
        async move {
            let _ = receiver.recv().await;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The machine's state stays consistent across a panic elsewhere: keep going.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The lifecycle of one server.
pub struct Lifecycle {
    machine: Mutex<Machine>,
    started: Instant,
    /// The post-start hooks may run: the listener is bound.
    pub post_start: Latch,
    /// Close the listener.
    pub stop_listening: Latch,
    /// End every watch with a clean end of stream.
    pub end_watches: Latch,
    /// No new requests are taken: responses carry `Connection: close`.
    pub closing: Latch,
    exit: Latch,
    exit_code: AtomicI32,
    /// Wakes the timer task when the next deadline may have changed.
    poke: (Sender<()>, Receiver<()>),
    /// Whose `shutdown` readiness check to fail when shutdown begins.
    server: apiary_core::Server,
}

/// How the gate answers a request that arrived.
pub enum Gate<'a> {
    /// Serve it; the guard reports it finished when dropped.
    Serve(InFlight<'a>),
    Turned(Admission),
}

/// A request the drain waits for (or, once long-running, a watch the drain ends).
pub struct InFlight<'a> {
    lifecycle: &'a Lifecycle,
    kind: Kind,
}

impl InFlight<'_> {
    /// The request turned out to be a watch: not waited for, but ended.
    pub fn long_running(&mut self) {
        if self.kind == Kind::Short {
            self.lifecycle
                .event(Event::RequestStarted(Kind::LongRunning));
            self.lifecycle.event(Event::RequestFinished(Kind::Short));
            self.kind = Kind::LongRunning;
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.lifecycle.event(Event::RequestFinished(self.kind));
    }
}

/// The post-start hook of the default namespaces, as the machine names it.
pub const BOOTSTRAP: &str = "apiary-bootstrap-namespaces";

impl Lifecycle {
    /// The lifecycle of `server`, which has every handler installed.
    pub fn new(config: LifecycleConfig, server: apiary_core::Server) -> Self {
        let lifecycle = Lifecycle {
            machine: Mutex::new(Machine::new(config, &[BOOTSTRAP], false)),
            started: Instant::now(),
            post_start: Latch::new(),
            stop_listening: Latch::new(),
            end_watches: Latch::new(),
            closing: Latch::new(),
            exit: Latch::new(),
            exit_code: AtomicI32::new(0),
            poke: smol::channel::bounded(1),
            server,
        };
        // Routes and discovery are complete before the listener is served: a later
        // source of resources (custom resources) will report this once it has synced.
        lifecycle.event(Event::HandlersInstalled);
        lifecycle
    }

    /// The server's monotonic clock: the time since it started, as the core's machines
    /// (this one, the connections' codecs) take time.
    pub(super) fn now(&self) -> Duration {
        self.started.elapsed()
    }

    /// Take `event` now and carry out what the machine asks.
    pub fn event(&self, event: Event) {
        let (actions, deadline_before, deadline_after, shutting_down, closing) = {
            let mut machine = lock(&self.machine);
            let before = machine.next_deadline();
            let actions = machine.handle(event, self.now());
            (
                actions,
                before,
                machine.next_deadline(),
                machine.signaled(Signal::ShutdownInitiated),
                machine.signaled(Signal::NotAcceptingNewRequest),
            )
        };
        if shutting_down {
            self.server.health().set(SHUTDOWN, false);
        }
        if closing {
            self.closing.fire();
        }
        for action in actions {
            match action {
                Action::RunPostStartHooks => self.post_start.fire(),
                // No pre-shutdown hooks are registered (the machine is told so).
                Action::RunPreShutdownHooks => self.event(Event::PreShutdownHooksFinished),
                Action::StopListening => self.stop_listening.fire(),
                Action::EndWatches => self.end_watches.fire(),
                Action::Exit(code) => {
                    self.exit_code.store(code, Ordering::Release);
                    self.exit.fire();
                }
            }
        }
        if deadline_before != deadline_after {
            let _ = self.poke.0.try_send(());
        }
    }

    /// Decide on a request that has arrived. `begun` is true when its first bytes came
    /// while requests were still accepted: it is served whatever happened since, as a
    /// request already in a handler is.
    pub fn admit(&self, path: &str, begun: bool) -> Gate<'_> {
        if !begun {
            let class = RequestClass {
                exempt: apiary_core::lifecycle::is_exempt_path(path),
                resource: path.starts_with("/api/") || path.starts_with("/apis/"),
            };
            let admission = lock(&self.machine).admit(class);
            if admission != Admission::Serve {
                return Gate::Turned(admission);
            }
        }
        self.event(Event::RequestStarted(Kind::Short));
        Gate::Serve(InFlight {
            lifecycle: self,
            kind: Kind::Short,
        })
    }

    /// A request's first bytes arrived on a connection: if requests are still taken, it
    /// counts as in flight from now on (a slow upload is waited for when draining).
    pub fn begin(&self) -> Option<InFlight<'_>> {
        if self.closing.fired() {
            return None;
        }
        self.event(Event::RequestStarted(Kind::Short));
        Some(InFlight {
            lifecycle: self,
            kind: Kind::Short,
        })
    }

    /// Resolves with the exit code once the process must exit.
    pub async fn exited(&self) -> i32 {
        self.exit.wait().await;
        self.exit_code.load(Ordering::Acquire)
    }

    /// Tick the machine at each deadline it sets (the shutdown delay, the drain's end).
    pub async fn run_timer(&self) {
        loop {
            let next = lock(&self.machine).next_deadline();
            let poked = self.poke.1.recv();
            match next {
                Some(at) => {
                    let wait = at.saturating_sub(self.now());
                    let timer = async {
                        Timer::after(wait).await;
                        Ok(())
                    };
                    let _ = smol::future::or(timer, poked).await;
                }
                None => {
                    let _ = poked.await;
                }
            }
            self.event(Event::Tick);
        }
    }
}

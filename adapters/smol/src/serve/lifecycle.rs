//! The adapter's side of the core's lifecycle: it reports events (signals, hooks
//! finished, the listener closed, timer ticks) with the time since start, and carries
//! out the actions the core queues (its own, and those of requests finishing inside the
//! core's chain) by firing latches that the accept loop, the watches and `main` wait on.

use apiary_core::lifecycle::{Action, Event};
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
    started: Instant,
    /// The post-start hooks may run: the listener is bound.
    pub post_start: Latch,
    /// Close the listener.
    pub stop_listening: Latch,
    /// End every watch with a clean end of stream.
    pub end_watches: Latch,
    /// No new requests are taken: idle connections close.
    pub closing: Latch,
    exit: Latch,
    exit_code: AtomicI32,
    server: apiary_core::Server,
}

/// The post-start hook of the default namespaces, as the machine names it.
pub const BOOTSTRAP: &str = apiary_core::lifecycle::BOOTSTRAP;

impl Lifecycle {
    /// The lifecycle of `server`, whose clock starts now.
    pub fn new(server: apiary_core::Server) -> Self {
        Lifecycle {
            started: Instant::now(),
            post_start: Latch::new(),
            stop_listening: Latch::new(),
            end_watches: Latch::new(),
            closing: Latch::new(),
            exit: Latch::new(),
            exit_code: AtomicI32::new(0),
            server,
        }
    }

    /// The server's monotonic clock: the time since it started, as the core's machines
    /// (this one, the connections' codecs) take time.
    pub(super) fn now(&self) -> Duration {
        self.started.elapsed()
    }

    /// Report `event` now; [`Lifecycle::run`] carries out what it leads to.
    pub fn event(&self, event: Event) {
        self.server.lifecycle_event(event, self.now());
    }

    /// Resolves with the exit code once the process must exit.
    pub async fn exited(&self) -> i32 {
        self.exit.wait().await;
        self.exit_code.load(Ordering::Acquire)
    }

    /// Carry out the core's lifecycle actions as they come, and tick it at each
    /// deadline it sets (the shutdown delay, the drain's end).
    pub async fn run(&self) {
        let core = self.server.lifecycle().clone();
        loop {
            let deadline = core.next_deadline();
            let actions = async { Some(std::future::poll_fn(|cx| core.poll_actions(cx)).await) };
            let tick = async {
                match deadline {
                    Some(at) => Timer::after(at.saturating_sub(self.now())).await,
                    None => smol::future::pending().await,
                };
                None
            };
            match smol::future::or(actions, tick).await {
                Some(actions) => self.carry_out(actions),
                None => self.event(Event::Tick),
            }
            if core.closing() {
                self.closing.fire();
            }
        }
    }

    fn carry_out(&self, actions: Vec<Action>) {
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
    }
}

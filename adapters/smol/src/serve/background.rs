//! What runs beside the requests: the reflector feeding the watch caches, the storage
//! probe behind /readyz, the compactor, the certificate reloader and the return of free
//! memory to the OS.

use super::{timeout, Apiary};
use crate::memory;
use apiary_core::storage::Storage;
use smol::Timer;
use std::time::{Duration, Instant};

/// How often the built-in controllers look whether the caches they read changed: a
/// CRD is established and served within about one look.
const CONTROLLER_LOOK_INTERVAL: Duration = Duration::from_millis(10);

/// How often the aggregator checks that the extension API servers behind APIServices
/// answer (upstream re-checks on every change and resync; a few seconds is as fresh).
const AVAILABILITY_CHECK_INTERVAL: Duration = Duration::from_secs(3);

/// How many of the controllers' writes run side by side.
const CONTROLLER_WRITES_AT_ONCE: usize = 64;

/// Every future's output, once all are done; they run side by side on this task.
async fn join_all<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pending: Vec<Option<std::pin::Pin<Box<F>>>> = futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut outputs: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut waiting = false;
        for (slot, output) in pending.iter_mut().zip(outputs.iter_mut()) {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => {
                        *output = Some(value);
                        *slot = None;
                    }
                    std::task::Poll::Pending => waiting = true,
                }
            }
        }
        if waiting {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().map(|o| o.expect("every future finished")).collect()
}
/// How often an outside storage backend is probed for /readyz.
const STORAGE_PROBE_INTERVAL: Duration = Duration::from_secs(1);
/// How long a probe may take before the backend counts as down.
const STORAGE_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

impl<S: Storage> Apiary<S> {
    /// Feed every resource's watch cache: run the core's reflector, performing the list,
    /// the backend watch and the sleeps it asks for, and feeding it what came of each.
    pub(super) async fn reflect(&self) {
        use apiary_core::reflector::{Input, Next, Reflector};
        use apiary_core::storage::WatchStream as _;
        let origin = Instant::now();
        let mut reflector = Reflector::new(&self.server);
        let mut watch = None;
        loop {
            let input = match reflector.next(origin.elapsed()) {
                Next::List(op) => Input::Listed(self.storage.run(op).await),
                Next::OpenWatch { prefix, after } => match self.storage.watch(&prefix, after).await {
                    Ok(opened) => {
                        watch = Some(opened);
                        Input::WatchOpened
                    }
                    Err(e) => Input::WatchEnded(Some(e)),
                },
                Next::ReadWatch => match watch.as_mut() {
                    Some(events) => Input::read(events.next().await),
                    None => Input::WatchEnded(None),
                },
                Next::Sleep { until } => {
                    watch = None;
                    Timer::at(origin + until).await;
                    continue;
                }
            };
            reflector.handle(input, origin.elapsed());
        }
    }

    /// Keep the storage readiness check true to whether the backend answers.
    pub(super) async fn probe_storage(&self, check: &str) {
        use apiary_core::storage::StorageOp;
        let mut was = None;
        loop {
            let probe = self.storage.run(StorageOp::CurrentRevision);
            let ok = matches!(timeout(STORAGE_PROBE_TIMEOUT, probe).await, Some(Ok(_)));
            if was != Some(ok) {
                if ok {
                    tracing::info!("storage check {check} passes");
                } else {
                    tracing::warn!("storage check {check} fails: the backend does not answer");
                }
                was = Some(ok);
            }
            self.server.health().set(check, ok);
            Timer::after(STORAGE_PROBE_INTERVAL).await;
        }
    }

    /// Every `interval`, compact away the history before the revision seen at the
    /// previous tick, as kube-apiserver's compactor does: clients keep at least one
    /// interval of history to resume watches from.
    pub(super) async fn compact_periodically(&self, interval: Duration) {
        let mut last = apiary_core::storage::CompactorTick::default();
        loop {
            Timer::after(interval).await;
            match self.storage.compactor_tick(last).await {
                Ok(next) => {
                    tracing::debug!(
                        compacted_before = last.revision,
                        next = next.revision,
                        "compactor tick"
                    );
                    last = next;
                }
                // Try again at the next tick, from the same point.
                Err(e) => tracing::warn!(revision = last.revision, "compaction failed: {e}"),
            }
        }
    }

    /// Every [`crate::tls::RELOAD_INTERVAL`], read the certificate files again and serve
    /// new connections with what changed (off the executor: it reads files).
    pub(super) async fn reload_certificates_periodically(&self) {
        loop {
            Timer::after(crate::tls::RELOAD_INTERVAL).await;
            let tls = self.tls.clone();
            smol::unblock(move || tls.reload()).await;
        }
    }

    /// Run the core's built-in controllers: whenever a cache they read has changed,
    /// carry out the writes they want, as the server's own requests,
    /// [`CONTROLLER_WRITES_AT_ONCE`] side by side (a look's writes are independent of
    /// one another, and storage commits writes that arrive together at once). A failed
    /// write is wanted again at the next look.
    pub(super) async fn run_controllers(&self) {
        let mut seen = None;
        loop {
            Timer::after(CONTROLLER_LOOK_INTERVAL).await;
            let now = self.server.controller_changes();
            if seen == Some(now) {
                continue;
            }
            seen = Some(now);
            let mut writes = self.server.controller_writes(std::time::SystemTime::now()).into_iter();
            loop {
                let batch: Vec<_> = writes.by_ref().take(CONTROLLER_WRITES_AT_ONCE).map(|r| self.controller_write(r)).collect();
                if batch.is_empty() {
                    break;
                }
                if !join_all(batch).await.into_iter().all(|ok| ok) {
                    // Look again next time even if nothing else changes.
                    seen = None;
                }
            }
        }
    }

    /// Every [`AVAILABILITY_CHECK_INTERVAL`], the aggregator's availability check: its
    /// discovery GETs side by side, then the status writes they and the caches call for.
    pub(super) async fn check_availability_periodically(&self) {
        loop {
            Timer::after(AVAILABILITY_CHECK_INTERVAL).await;
            let pass = self.server.availability_checks(std::time::SystemTime::now());
            let calls = pass.checks.into_iter().map(|check| async move {
                let outcome = crate::outbound::shared().call(check.outbound).await;
                check.verdict.finish(outcome, std::time::SystemTime::now())
            });
            let mut writes = pass.writes;
            writes.extend(join_all(calls.collect()).await.into_iter().flatten());
            for request in writes {
                self.controller_write(request).await;
            }
        }
    }

    /// Carry out one controller write; whether it succeeded.
    async fn controller_write(&self, request: http::Request<bytes::Bytes>) -> bool {
        use super::drive::{drive, Driven};
        let uri = request.uri().clone();
        let step = self.server.handle_as_system(request, super::drive::inputs(self.lifecycle.now(), None, Vec::new()));
        match drive(&*self.storage, step).await {
            Driven::Respond(response) if !response.status().is_success() => {
                tracing::warn!(%uri, status = response.status().as_u16(), "controller write failed");
                false
            }
            _ => true,
        }
    }

    /// Every [`memory::TRIM_INTERVAL`] in which requests were answered, hand the heap
    /// pages they freed back to the OS.
    pub(super) async fn release_memory_periodically(&self) {
        use std::sync::atomic::Ordering;
        loop {
            Timer::after(memory::TRIM_INTERVAL).await;
            if self.answered.swap(0, Ordering::Relaxed) > 0 {
                memory::release_free_memory();
            }
        }
    }
}

//! The faults the scheduler injects.

use super::World;
use apiary_core::storage::{StorageOp, StorageOutput};
use std::time::Duration;

impl World {
    /// Inject one fault.
    pub(super) fn fault(&mut self) {
        let mut faults = self.store.faults.borrow_mut();
        let kind = self.rng.below(11);
        if std::env::var("SIM_SKIP_FAULT").is_ok_and(|v| v.split(',').any(|k| k == kind.to_string())) {
            return;
        }
        match kind {
            0 => faults.refuse_next += 1 + self.rng.below(3) as u32,
            1 => faults.lose_answer_next += 1,
            2 => {
                faults.cut_watches += 1;
                faults.injected.watches_cut += 1;
            }
            3 => {
                drop(faults);
                let current = match self.store.inner.apply(StorageOp::CurrentRevision) {
                    Ok(StorageOutput::Revision(r)) => r,
                    _ => return,
                };
                let at = current.saturating_sub(self.rng.below(20)).max(1);
                self.store.compact(at);
            }
            4 => {
                // A replica crashes: everything it held in memory is gone.
                drop(faults);
                let i = self.rng.below(self.replicas.len() as u64) as usize;
                if self.replicas[i].harness.take().is_some() {
                    self.replicas[i].generation += 1;
                    self.replicas[i].terminating = None;
                    self.store.faults.borrow_mut().injected.crashes += 1;
                }
            }
            5 | 6 => {
                // A replica comes back (after a crash), with faults held off while it
                // starts (its bootstrap must get through).
                drop(faults);
                if let Some(i) = (0..self.replicas.len()).find(|i| self.replicas[*i].harness.is_none()) {
                    self.store.calm();
                    self.restart(i);
                }
            }
            7 => {
                // A replica's storage turns slow (or fast again): each operation takes up
                // to 90 s of its clock, so requests run past their 60 s deadline and are
                // answered 504 — their outcome unknown to their clients.
                faults.injected.slow_storage += 1;
                drop(faults);
                let i = self.rng.below(self.replicas.len() as u64) as usize;
                let latency = match self.rng.chance(500) {
                    true => Duration::from_secs(self.rng.below(90)),
                    false => Duration::ZERO,
                };
                if let Some(h) = &self.replicas[i].harness {
                    h.set_storage_latency(latency);
                }
            }
            9 => {
                // SIGTERM: a replica shuts down gracefully (followed every step).
                drop(faults);
                let i = self.rng.below(self.replicas.len() as u64) as usize;
                self.terminate(i);
            }
            10 => {
                // A slow client: an informer stops reading its watch for a while.
                faults.injected.stalls += 1;
                drop(faults);
                if let Some(i) = self.one_of(self.informers.len()) {
                    self.informers[i].stalled_until = self.now + 50 + self.rng.below(250);
                }
            }
            _ => {
                faults.injected.clock_jumps += 1;
                drop(faults);
                let by = Duration::from_secs(1 + self.rng.below(120));
                for replica in self.replicas.iter().filter_map(|r| r.harness.as_ref()) {
                    replica.advance(by);
                }
            }
        }
    }
}

//! The simulated storage every replica shares: the memory backend (which follows the
//! storage contract: one revision counter, compare-and-swap, watches, compaction)
//! behind a door where faults come in — operations refused as unavailable before they
//! run, or run with their answer lost; watches cut — and where the planted bugs that
//! prove the checkers live (never in the server).

use apiary_core::harness::{SyncStorage, SyncWatch};
use apiary_core::storage::{Completion, StorageError, StorageOp, StorageOutput, WatchEvent};
use apiary_memory::{MemoryStore, MemoryWatch};
use std::cell::RefCell;
use std::rc::Rc;

/// What the store does wrong next, set by the scheduler.
#[derive(Debug, Default)]
pub struct Faults {
    /// Operations refused as unavailable before they run.
    pub refuse_next: u32,
    /// Writes that run but whose answer is lost (unavailable).
    pub lose_answer_next: u32,
    /// Bumped to cut every open watch once (each sees one error).
    pub cut_watches: u64,
    /// How many faults were injected, by kind.
    pub injected: Injected,
}

/// Counts of injected faults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Injected {
    pub refused: u64,
    pub answers_lost: u64,
    pub watches_cut: u64,
    pub compactions: u64,
    pub crashes: u64,
    pub clock_jumps: u64,
    /// A replica's storage made slow (requests past their deadlines) or fast again.
    pub slow_storage: u64,
    /// Replicas told to shut down (SIGTERM), and informers that stopped reading.
    pub terminations: u64,
    pub stalls: u64,
}

impl Injected {
    /// Both counts added.
    pub fn plus(&self, other: &Injected) -> Injected {
        Injected {
            refused: self.refused + other.refused,
            answers_lost: self.answers_lost + other.answers_lost,
            watches_cut: self.watches_cut + other.watches_cut,
            compactions: self.compactions + other.compactions,
            crashes: self.crashes + other.crashes,
            clock_jumps: self.clock_jumps + other.clock_jumps,
            slow_storage: self.slow_storage + other.slow_storage,
            terminations: self.terminations + other.terminations,
            stalls: self.stalls + other.stalls,
        }
    }
}

/// Bugs planted on purpose, to show the checkers catch them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Planted {
    /// A create or update acknowledged but not kept: the store answers as if written.
    pub lose_write: bool,
    /// A GET answered from an older revision than the latest.
    pub stale_read: bool,
    /// A client's watch stream delivers one event twice (planted between the server
    /// and the client: the server itself drops an event its backend repeats).
    pub duplicate_event: bool,
    /// Watches deliver two events in the wrong order.
    pub reorder_events: bool,
}

impl Planted {
    /// The bug of that name: `lose-write`, `stale-read`, `duplicate-event`,
    /// `reorder-events`.
    pub fn named(name: &str) -> Option<Planted> {
        let mut planted = Planted::default();
        match name {
            "lose-write" => planted.lose_write = true,
            "stale-read" => planted.stale_read = true,
            "duplicate-event" => planted.duplicate_event = true,
            "reorder-events" => planted.reorder_events = true,
            _ => return None,
        }
        Some(planted)
    }
}

/// The store, shared by every replica (clones share everything).
#[derive(Clone)]
pub struct SimStore {
    pub inner: MemoryStore,
    pub faults: Rc<RefCell<Faults>>,
    pub planted: Planted,
    /// Writes acknowledged, and the state before the last one (for a stale read).
    history: Rc<RefCell<PlantState>>,
}

#[derive(Default)]
struct PlantState {
    writes: u64,
    lost_one: bool,
    /// The value a key had before its last write.
    before: std::collections::HashMap<String, apiary_core::storage::KeyValue>,
    reordered: bool,
}

impl SimStore {
    pub fn new(planted: Planted) -> SimStore {
        SimStore { inner: MemoryStore::new(), faults: Rc::default(), planted, history: Rc::default() }
    }

    /// No more faults pending (those injected stay counted).
    pub fn calm(&self) {
        let mut faults = self.faults.borrow_mut();
        faults.refuse_next = 0;
        faults.lose_answer_next = 0;
    }

    /// Forget history before `revision` (a compaction at any revision).
    pub fn compact(&self, revision: u64) {
        let _ = self.inner.apply(StorageOp::Compact { revision });
        self.faults.borrow_mut().injected.compactions += 1;
    }

    /// The planted bugs' doing, if any, for `op`: `Some` answer instead of the store's.
    fn planted(&self, op: &StorageOp) -> Option<Completion> {
        let mut plant = self.history.borrow_mut();
        match op {
            // The third write to a configmap of the simulation is acknowledged, not kept.
            StorageOp::Create { key, value } | StorageOp::Update { key, value, .. }
                if self.planted.lose_write && !plant.lost_one && key.contains("/configmaps/sim/") =>
            {
                plant.writes += 1;
                if plant.writes < 3 {
                    return None;
                }
                plant.lost_one = true;
                let revision = match self.inner.apply(StorageOp::CurrentRevision) {
                    Ok(StorageOutput::Revision(r)) => r + 1,
                    _ => return None,
                };
                let kv = apiary_core::storage::KeyValue { key: key.clone(), value: value.clone(), create_revision: revision, mod_revision: revision };
                Some(Ok(StorageOutput::Written(kv)))
            }
            StorageOp::Get { key } if self.planted.stale_read && key.contains("/configmaps/sim/") => {
                let before = plant.before.get(key)?.clone();
                let revision = before.mod_revision;
                Some(Ok(StorageOutput::Got { kv: Some(before), revision }))
            }
            _ => None,
        }
    }

    /// Remember what a write replaced (for the planted stale read).
    fn remember(&self, op: &StorageOp) {
        if !self.planted.stale_read {
            return;
        }
        if let StorageOp::Update { key, .. } = op {
            if let Ok(StorageOutput::Got { kv: Some(kv), .. }) = self.inner.apply(StorageOp::Get { key: key.clone() }) {
                self.history.borrow_mut().before.insert(key.clone(), kv);
            }
        }
    }
}

impl SyncStorage for SimStore {
    type Watch = SimWatch;

    fn run_now(&self, op: StorageOp) -> Completion {
        let writes = matches!(op, StorageOp::Create { .. } | StorageOp::Update { .. } | StorageOp::Delete { .. });
        {
            let mut faults = self.faults.borrow_mut();
            if faults.refuse_next > 0 && !matches!(op, StorageOp::Compact { .. }) {
                faults.refuse_next -= 1;
                faults.injected.refused += 1;
                return Err(StorageError::Unavailable("simulated: the store is unavailable".into()));
            }
        }
        if let Some(answer) = self.planted(&op) {
            return answer;
        }
        self.remember(&op);
        let done = self.inner.apply(op);
        let mut faults = self.faults.borrow_mut();
        if writes && faults.lose_answer_next > 0 {
            faults.lose_answer_next -= 1;
            faults.injected.answers_lost += 1;
            return Err(StorageError::Unavailable("simulated: the answer was lost".into()));
        }
        done
    }

    fn watch_now(&self, prefix: &str, after: u64) -> Result<SimWatch, StorageError> {
        let inner = self.inner.open_watch(prefix, after)?;
        let cut_seen = self.faults.borrow().cut_watches;
        Ok(SimWatch { inner, store: self.clone(), cut_seen, held: None })
    }
}

/// A backend watch through the door: cut when the scheduler says, and (planted) with
/// an event duplicated or two swapped.
pub struct SimWatch {
    inner: MemoryWatch,
    store: SimStore,
    cut_seen: u64,
    /// An event held back to be delivered after the next one (planted reorder).
    held: Option<WatchEvent>,
}

impl SyncWatch for SimWatch {
    fn next_now(&mut self) -> Option<Result<WatchEvent, StorageError>> {
        let cuts = self.store.faults.borrow().cut_watches;
        if cuts != self.cut_seen {
            self.cut_seen = cuts;
            return Some(Err(StorageError::Unavailable("simulated: the watch was cut".into())));
        }
        let event = match self.inner.try_next() {
            Some(Ok(event)) => event,
            Some(Err(e)) => return Some(Err(e)),
            None => return self.held.take().map(Ok),
        };
        let ours = event.key().contains("/configmaps/sim/");
        let mut plant = self.store.history.borrow_mut();
        if ours && self.store.planted.reorder_events && !plant.reordered {
            if let Some(first) = self.held.take() {
                plant.reordered = true;
                self.held = Some(first);
                return Some(Ok(event));
            }
            if matches!(event, WatchEvent::Put { ref prev, .. } if prev.is_some()) {
                self.held = Some(event);
                drop(plant);
                return self.next_now();
            }
        }
        if let Some(held) = self.held.take() {
            self.held = Some(event);
            return Some(Ok(held));
        }
        Some(Ok(event))
    }
}

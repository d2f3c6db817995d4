//! The end of a run: faults stop, everything catches up, and the invariants are
//! checked on what was recorded.

use super::{one_reply, World};
use crate::linearizability::{check, Operation, Verdict};
use crate::object::{Action, Input, ObjectModel, Output, Version};
use crate::watch_order::{check_watch, ChangeKind};
use crate::wire;
use std::collections::BTreeMap;
use std::time::Duration;

impl World {
    /// Faults stop; shutdowns under way finish; every replica comes back; every
    /// request is carried to its answer; caches, informers and controllers catch up;
    /// then each key is read once more.
    pub(super) fn quiesce(&mut self) {
        self.store.calm();
        for replica in self.replicas.iter().filter_map(|r| r.harness.as_ref()) {
            replica.set_storage_latency(Duration::ZERO);
        }
        self.finish_requests();
        // A replica shutting down drains and exits (its in-flight requests answered
        // above, its watches ended when it says).
        for _ in 0..10 {
            for replica in self.replicas.iter().filter(|r| r.terminating.is_some()).filter_map(|r| r.harness.as_ref()) {
                replica.pass_time(Duration::from_secs(10));
            }
            self.follow_shutdowns();
        }
        if let Some(r) = self.replicas.iter().position(|r| r.terminating.is_some()) {
            self.violation = Some(format!("replica {r} did not exit from its graceful shutdown: {:?}", self.replicas[r].harness.as_ref().map(|h| h.actions())));
        }
        for i in 0..self.replicas.len() {
            if self.replicas[i].harness.is_none() {
                self.restart(i);
            }
        }
        self.finish_requests();
        for informer in &mut self.informers {
            informer.stalled_until = 0;
        }
        // Long enough for every reflector's back-off to pass, and its relist to fill
        // the caches (a watch cut during the first round backs off again).
        for _ in 0..3 {
            for replica in self.replicas.iter().filter_map(|r| r.harness.as_ref()) {
                replica.advance(Duration::from_secs(10));
            }
        }
        for i in 0..self.informers.len() {
            // Once listed and watching, the informer catches up with what is left.
            for _ in 0..3 {
                self.inform(i);
            }
            self.catch_up(i);
        }
        self.settle_controllers();
        self.read_truth();
        // A last consistent read of every key, on every replica.
        for r in 0..self.replicas.len() {
            for k in 0..self.config.keys {
                let key = format!("k{k}");
                let op = self.history.len();
                self.history.push(Operation {
                    client: u32::MAX,
                    input: Input { key: format!("{}{key}", wire::STORE_PREFIX), action: Action::Read },
                    output: None,
                    call: self.now,
                    ret: None,
                });
                let bytes = self.replicas[r].harness.as_ref().expect("live").send(&wire::request(&key, &Action::Read, false));
                self.now += 1;
                if let Some(reply) = one_reply(&bytes) {
                    if let Ok(output) = wire::outcome(&Action::Read, &reply) {
                        self.history[op].output = output;
                        self.history[op].ret = Some(self.now);
                    }
                }
            }
        }
    }

    /// Every writer's and reader's request carried to its answer.
    fn finish_requests(&mut self) {
        for i in 0..self.actors.len() {
            for _ in 0..100 {
                if self.actors[i].in_flight.is_none() {
                    break;
                }
                self.act(i);
            }
        }
    }

    /// Let the built-in controllers of every replica finish what they have to do:
    /// each catches up with the others' writes and passes time for its back-offs.
    fn settle_controllers(&mut self) {
        for _ in 0..5 {
            for replica in self.replicas.iter().filter_map(|r| r.harness.as_ref()) {
                replica.advance(Duration::from_secs(10));
            }
        }
    }

    /// The invariants, on what was recorded.
    pub(super) fn check(&mut self) {
        if self.violation.is_some() {
            return;
        }
        // Operations refused before they did anything were made reads of nothing.
        let history: Vec<Operation<Input, Output>> =
            self.history.iter().filter(|o| !(matches!(o.input.action, Action::Read) && o.output.is_none())).cloned().collect();
        match check(&ObjectModel, &history, 5_000_000) {
            Verdict::Linearizable => {}
            Verdict::Illegal { partition, operations, longest } => {
                let shown: Vec<String> = operations.iter().map(|i| format!("  {:?}", history[*i])).collect();
                self.violation = Some(format!(
                    "the history of {partition} is not linearizable (longest linearizable prefix: {} of {} operations):\n{}",
                    longest.len(),
                    operations.len(),
                    shown.join("\n")
                ));
                return;
            }
            Verdict::TooLong { partition } => {
                self.violation = Some(format!("the linearizability search of {partition} ran out of budget"));
                return;
            }
        }
        for (from, delivered) in &self.sessions {
            if let Err(e) = check_watch(&self.log, wire::STORE_PREFIX, Some(*from), delivered) {
                self.violation = Some(format!("a watch from {from} broke its order: {e:?}; delivered {delivered:?}"));
                return;
            }
        }
        let truth: BTreeMap<String, (u64, Version)> = self.current_state();
        for (i, informer) in self.informers.iter().enumerate() {
            if informer.watch.is_some() && informer.cache != truth {
                let session = informer.watch.as_ref().map(|s| (s.delivery.from, &s.delivery.delivered, &s.open));
                self.violation = Some(format!(
                    "informer {i}'s cache {:?} did not converge to the store's {truth:?}; its watch (from, delivered, stream): {session:?}; its server's reflector: {:?}; the store's last changes: {:?}",
                    informer.cache,
                    self.replicas[informer.replica].harness.as_ref().map(|h| h.reflector_state()),
                    self.log.iter().rev().take(8).collect::<Vec<_>>()
                ));
                return;
            }
        }
        self.violation = self.check_tenants(0);
    }

    /// The objects as the store holds them now.
    pub(super) fn current_state(&self) -> BTreeMap<String, (u64, Version)> {
        let mut state = BTreeMap::new();
        for change in &self.log {
            match change.kind {
                ChangeKind::Deleted => {
                    state.remove(&change.key);
                }
                _ => {
                    state.insert(change.key.clone(), (change.value, change.revision));
                }
            }
        }
        state
    }
}

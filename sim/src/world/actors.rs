//! Writers and readers: single-object requests stepped one storage operation at a
//! time, consistent and paged lists, lists at any version.

use super::{one_reply, World};
use crate::linearizability::Operation;
use crate::object::{Action, Input, Output, Version};
use crate::watch_order::ChangeKind;
use crate::wire;
use apiary_core::harness::{Held, Stepped};
use std::collections::BTreeMap;
use std::time::Duration;

/// A request under way on a replica.
pub(super) struct InFlight {
    pub(super) replica: usize,
    pub(super) generation: u64,
    pub(super) held: Box<Held>,
    /// When its replica accepted it, on the replica's clock.
    pub(super) started: Duration,
    /// Its entry in the history.
    pub(super) op: usize,
}

/// A client that writes and reads single objects.
pub(super) struct Actor {
    pub(super) reads_only: bool,
    pub(super) in_flight: Option<InFlight>,
    /// A paged list under way: one page per step, other clients in between.
    pub(super) paging: Option<Paging>,
    /// The latest resourceVersion it saw per key (its next precondition).
    pub(super) known: BTreeMap<String, Version>,
}

/// A consistent LIST read a page at a time: every page must be of the first page's
/// version, and together they are the snapshot at it, taken during the first page.
pub(super) struct Paging {
    pub(super) replica: usize,
    pub(super) generation: u64,
    pub(super) token: String,
    pub(super) version: Version,
    pub(super) items: BTreeMap<String, (u64, Version)>,
    /// When the first page was asked for and answered.
    pub(super) call: u64,
    pub(super) ret: u64,
}

impl World {
    /// A writer or reader's step: on with its request, or a new one.
    pub(super) fn act(&mut self, i: usize) {
        if let Some(paging) = self.actors[i].paging.take() {
            return self.next_page(i, paging);
        }
        if let Some(in_flight) = self.actors[i].in_flight.take() {
            let replica = &self.replicas[in_flight.replica];
            let Some(harness) = replica.harness.as_ref().filter(|_| replica.generation == in_flight.generation) else {
                // Its replica crashed under it: the outcome is not known.
                return;
            };
            match harness.step(*in_flight.held) {
                Stepped::Held(held) => self.actors[i].in_flight = Some(InFlight { held, ..in_flight }),
                Stepped::Answered(bytes) => self.answered(i, in_flight.op, &bytes),
            }
            return;
        }
        // Any replica that is up, one shutting down included: it must refuse what it
        // does not serve, and serve what it accepts.
        let up: Vec<usize> = (0..self.replicas.len()).filter(|r| self.replicas[*r].harness.is_some()).collect();
        if up.is_empty() {
            return;
        }
        let replica = *self.rng.pick(&up);
        let key = format!("k{}", self.rng.below(self.config.keys as u64));
        let action = self.choose(i, &key);
        let merge = self.rng.chance(500);
        let bytes = if matches!(action, Action::Read) && self.actors[i].reads_only && self.rng.chance(500) {
            return match self.rng.below(3) {
                0 => self.list(i, replica),
                1 => self.first_page(i, replica),
                _ => self.list_any_version(replica),
            };
        } else {
            wire::request(&key, &action, merge)
        };
        let op = self.history.len();
        self.history.push(Operation {
            client: i as u32,
            input: Input { key: format!("{}{key}", wire::STORE_PREFIX), action },
            output: None,
            call: self.now,
            ret: None,
        });
        let harness = self.replicas[replica].harness.as_ref().expect("live");
        let mut answered = Vec::new();
        let started = harness.now();
        match harness.start(&bytes, &mut answered) {
            Some(held) => {
                let generation = self.replicas[replica].generation;
                self.actors[i].in_flight = Some(InFlight { replica, generation, held: Box::new(held), started, op });
            }
            None => self.answered(i, op, &answered),
        }
    }

    /// What client `i` does next to `key`.
    pub(super) fn choose(&mut self, i: usize, key: &str) -> Action {
        if self.actors[i].reads_only {
            return Action::Read;
        }
        let value = self.next_value;
        let known = self.actors[i].known.get(key).copied();
        let roll = self.rng.below(100);
        let action = match roll {
            0..=19 => Action::Create { value },
            20..=44 => Action::Update { value, precondition: known },
            45..=52 => Action::Update { value, precondition: None },
            53..=59 => Action::Apply { value },
            60..=69 => Action::Delete { precondition: if self.rng.chance(500) { known } else { None } },
            _ => Action::Read,
        };
        if !matches!(action, Action::Read | Action::Delete { .. }) {
            self.next_value += 1;
        }
        action
    }

    /// A consistent LIST by reader `i`: recorded as a read of every key.
    pub(super) fn list(&mut self, i: usize, replica: usize) {
        let call = self.now;
        let harness = self.replicas[replica].harness.as_ref().expect("live");
        let Some(reply) = one_reply(&harness.send(&wire::list())) else { return };
        if reply.status != 200 {
            return;
        }
        let listed = wire::list_of(&reply.json());
        let mut seen = BTreeMap::new();
        self.take_items(listed.items, listed.version.unwrap_or(0), &mut seen);
        self.now += 1;
        self.record_snapshot(i, &seen, call, self.now);
    }

    /// A list's `items` at `version` into `seen`; an item newer than its list breaks an
    /// invariant.
    pub(super) fn take_items(&mut self, items: Vec<(String, u64, Version)>, version: Version, seen: &mut BTreeMap<String, (u64, Version)>) {
        for (name, value, at) in items {
            if at > version {
                self.violation = Some(format!("a list at {version} holds {name} at {at}"));
            }
            seen.insert(name, (value, at));
        }
    }

    /// The first page of a paged consistent LIST by reader `i`.
    pub(super) fn first_page(&mut self, i: usize, replica: usize) {
        let call = self.now;
        let harness = self.replicas[replica].harness.as_ref().expect("live");
        let Some(reply) = one_reply(&harness.send(&wire::list_page(1, None))) else { return };
        if reply.status != 200 {
            return;
        }
        self.now += 1;
        let wire::Listed { items, version, token } = wire::list_of(&reply.json());
        let version = version.unwrap_or(0);
        let mut paging = Paging { replica, generation: self.replicas[replica].generation, token: String::new(), version, items: BTreeMap::new(), call, ret: self.now };
        let mut seen = std::mem::take(&mut paging.items);
        self.take_items(items, version, &mut seen);
        paging.items = seen;
        match token {
            Some(token) => self.actors[i].paging = Some(Paging { token, ..paging }),
            None => self.record_snapshot(i, &paging.items, paging.call, paging.ret),
        }
    }

    /// The next page of reader `i`'s paged list: at the first page's version, or 410
    /// once that version is compacted away (the list is then given up, as clients do).
    pub(super) fn next_page(&mut self, i: usize, mut paging: Paging) {
        let replica = &self.replicas[paging.replica];
        let Some(harness) = replica.harness.as_ref().filter(|_| replica.generation == paging.generation) else { return };
        let Some(reply) = one_reply(&harness.send(&wire::list_page(1, Some(&paging.token)))) else { return };
        if reply.status != 200 {
            return;
        }
        self.tally.later_pages += 1;
        let wire::Listed { items, version, token } = wire::list_of(&reply.json());
        if version != Some(paging.version) {
            self.violation = Some(format!("a page of a list at {} came at {version:?}", paging.version));
            return;
        }
        let mut seen = std::mem::take(&mut paging.items);
        self.take_items(items, paging.version, &mut seen);
        paging.items = seen;
        match token {
            Some(token) => self.actors[i].paging = Some(Paging { token, ..paging }),
            None => self.record_snapshot(i, &paging.items, paging.call, paging.ret),
        }
    }

    /// A LIST at `resourceVersion=0`: however old, every item must be a write the store
    /// made, at its version, and no newer than the list.
    pub(super) fn list_any_version(&mut self, replica: usize) {
        let harness = self.replicas[replica].harness.as_ref().expect("live");
        let Some(reply) = one_reply(&harness.send(&wire::list_any_version())) else { return };
        if reply.status != 200 {
            return;
        }
        self.read_truth();
        self.tally.lists_at_any_version += 1;
        let wire::Listed { items, version, .. } = wire::list_of(&reply.json());
        let version = version.unwrap_or(0);
        for (name, value, at) in items {
            let key = format!("{}{name}", wire::STORE_PREFIX);
            let made = self.log.iter().any(|c| c.revision == at && c.key == key && c.value == value && c.kind != ChangeKind::Deleted);
            if !made || at > version {
                self.violation = Some(format!("a list at any version (answered at {version}) holds {name} = {value} at {at}, which the store never wrote so"));
            }
        }
    }

    /// A list's snapshot, taken between `call` and `ret`, as a read of every key.
    pub(super) fn record_snapshot(&mut self, i: usize, seen: &BTreeMap<String, (u64, Version)>, call: u64, ret: u64) {
        for k in 0..self.config.keys {
            let key = format!("k{k}");
            let output = match seen.get(&key) {
                Some((value, version)) => Output::Read { value: *value, version: *version },
                None => Output::NotFound,
            };
            self.history.push(Operation {
                client: i as u32,
                input: Input { key: format!("{}{key}", wire::STORE_PREFIX), action: Action::Read },
                output: Some(output),
                call,
                ret: Some(ret),
            });
        }
    }

    /// Record the answer of client `i`'s operation `op`.
    pub(super) fn answered(&mut self, i: usize, op: usize, bytes: &[u8]) {
        self.now += 1;
        let Some(reply) = one_reply(bytes) else { return };
        let entry = &mut self.history[op];
        match wire::outcome(&entry.input.action, &reply) {
            // Refused before it did anything: not part of the history.
            Err(wire::Refused) => {
                entry.input.action = Action::Read;
                entry.output = None;
            }
            Ok(output) => {
                if let Some(Output::Written(v) | Output::Read { version: v, .. }) = &output {
                    let name = entry.input.key.trim_start_matches(wire::STORE_PREFIX).to_owned();
                    self.actors[i].known.insert(name, *v);
                }
                // A known outcome returned now; an unknown one may take effect later.
                if output.is_some() {
                    entry.ret = Some(self.now);
                }
                entry.output = output;
            }
        }
    }
}

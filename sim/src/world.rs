//! One simulated run: replicas of the server (cores over the harness) sharing one
//! simulated store, clients writing, reading and watching through them, and faults —
//! all chosen by one seeded generator on one logical clock, so that a seed replays
//! the run exactly. The history the clients record is then checked.

use crate::linearizability::{check, Operation, Verdict};
use crate::object::{Action, Input, ObjectModel, Output, Version};
use crate::rng::Rng;
use crate::store::{Injected, Planted, SimStore};
use crate::watch_order::{check_watch, Change, ChangeKind, Delivered};
use crate::wire;
use apiary_core::harness::{parse_responses, Harness, Held, OpenWatch, Reply, Stepped};
use apiary_core::http1::client::{BodyPiece, ResponseReader};
use apiary_core::storage::{StorageOp, StorageOutput};
use apiary_core::Config;
use std::collections::BTreeMap;
use std::time::Duration;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    pub replicas: usize,
    /// Scheduler steps (each one client's step, a fault, or a replica catching up).
    pub steps: usize,
    /// How many objects the clients share.
    pub keys: usize,
    pub writers: usize,
    pub readers: usize,
    pub informers: usize,
    /// Inject faults (crashes, storage errors, lost answers, cut watches, compaction,
    /// clock jumps).
    pub faults: bool,
    pub planted: Planted,
}

impl SimConfig {
    /// The default shape of a run for `seed`.
    pub fn seeded(seed: u64) -> SimConfig {
        SimConfig { seed, replicas: 3, steps: 400, keys: 3, writers: 4, readers: 2, informers: 2, faults: true, planted: Planted::default() }
    }
}

/// What a run did and found.
#[derive(Clone, Debug)]
pub struct Report {
    pub seed: u64,
    /// Operations recorded in the history.
    pub operations: usize,
    /// Watch events delivered and checked.
    pub events: usize,
    /// Pages after the first of paged lists read, and lists at any version checked.
    pub later_pages: usize,
    pub lists_at_any_version: usize,
    pub injected: Injected,
    /// The first invariant broken, in words.
    pub violation: Option<String>,
}

/// A replica: a server's core over the shared store, or nothing while it is down.
struct Replica {
    harness: Option<Harness<SimStore>>,
    /// Bumped at every crash: requests held by an older one died with it.
    generation: u64,
}

/// A request under way on a replica.
struct InFlight {
    replica: usize,
    generation: u64,
    held: Box<Held>,
    /// Its entry in the history.
    op: usize,
}

/// A client that writes and reads single objects.
struct Actor {
    reads_only: bool,
    in_flight: Option<InFlight>,
    /// A paged list under way: one page per step, other clients in between.
    paging: Option<Paging>,
    /// The latest resourceVersion it saw per key (its next precondition).
    known: BTreeMap<String, Version>,
}

/// A consistent LIST read a page at a time: every page must be of the first page's
/// version, and together they are the snapshot at it, taken during the first page.
struct Paging {
    replica: usize,
    generation: u64,
    token: String,
    version: Version,
    items: BTreeMap<String, (u64, Version)>,
    /// When the first page was asked for and answered.
    call: u64,
    ret: u64,
}

/// A client that lists, then watches from the list's version, and lists again when the
/// watch ends: what client-go's reflector does.
struct Informer {
    replica: usize,
    generation: u64,
    cache: BTreeMap<String, (u64, Version)>,
    watch: Option<Session>,
}

/// One watch of an informer, and what it delivered.
struct Session {
    open: OpenWatch<crate::store::SimWatch>,
    reader: ResponseReader,
    pending: Vec<u8>,
    from: Version,
    delivered: Vec<Delivered>,
}

/// The world of one run.
struct World {
    config: SimConfig,
    rng: Rng,
    store: SimStore,
    replicas: Vec<Replica>,
    actors: Vec<Actor>,
    informers: Vec<Informer>,
    history: Vec<Operation<Input, Output>>,
    /// Watch sessions finished: where they started and what they delivered.
    sessions: Vec<(Version, Vec<Delivered>)>,
    /// The store's own log of changes to the simulation's objects, and the watch that
    /// reads it.
    log: Vec<Change>,
    truth: apiary_memory::MemoryWatch,
    /// The logical clock of the history.
    now: u64,
    next_value: u64,
    violation: Option<String>,
    /// (Planted) the next event a watch delivers comes twice.
    duplicate_next: bool,
    later_pages: usize,
    lists_at_any_version: usize,
}

/// Run one simulation.
pub fn run(config: &SimConfig) -> Report {
    let mut world = World::new(config.clone());
    for _ in 0..config.steps {
        world.tick();
        if world.violation.is_some() {
            break;
        }
    }
    world.quiesce();
    world.check();
    let injected = world.store.faults.borrow().injected;
    Report {
        seed: config.seed,
        operations: world.history.len(),
        events: world.sessions.iter().map(|(_, d)| d.len()).sum(),
        later_pages: world.later_pages,
        lists_at_any_version: world.lists_at_any_version,
        injected,
        violation: world.violation,
    }
}

impl World {
    fn new(config: SimConfig) -> World {
        let planted = config.planted;
        let store = SimStore::new(planted);
        let mut rng = Rng::new(config.seed);
        let mut replicas = Vec::new();
        for i in 0..config.replicas {
            replicas.push(Replica { harness: Some(start_replica(&store, rng.next_u64() ^ i as u64)), generation: 0 });
        }
        let first = replicas[0].harness.as_ref().expect("started");
        let namespace = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": wire::NAMESPACE}});
        let reply = first.json_call("POST", "/api/v1/namespaces", "application/json", Some(&namespace));
        assert_eq!(reply.status, 201, "the simulation's namespace");
        let revision = match store.inner.apply(StorageOp::CurrentRevision) {
            Ok(StorageOutput::Revision(r)) => r,
            other => panic!("the store's revision: {other:?}"),
        };
        let truth = store.inner.open_watch(wire::STORE_PREFIX, revision).expect("the ground truth's watch");
        let actors = (0..config.writers + config.readers)
            .map(|i| Actor { reads_only: i >= config.writers, in_flight: None, paging: None, known: BTreeMap::new() })
            .collect();
        let informers = (0..config.informers)
            .map(|i| Informer { replica: i % config.replicas, generation: 0, cache: BTreeMap::new(), watch: None })
            .collect();
        World {
            config,
            rng,
            store,
            replicas,
            actors,
            informers,
            history: Vec::new(),
            sessions: Vec::new(),
            log: Vec::new(),
            truth,
            now: 0,
            next_value: 1,
            violation: None,
            duplicate_next: planted.duplicate_event,
            later_pages: 0,
            lists_at_any_version: 0,
        }
    }

    /// One step of the scheduler.
    fn tick(&mut self) {
        self.now += 1;
        self.read_truth();
        // Time passes on every server alike (each tick a few milliseconds).
        for replica in self.replicas.iter().filter_map(|r| r.harness.as_ref()) {
            replica.pass_time(TICK);
        }
        let roll = self.rng.below(100);
        match roll {
            0..=59 => {
                let n = self.actors.len();
                if n > 0 {
                    let i = self.rng.below(n as u64) as usize;
                    self.act(i);
                }
            }
            60..=74 => {
                let n = self.informers.len();
                if n > 0 {
                    let i = self.rng.below(n as u64) as usize;
                    self.inform(i);
                }
            }
            75..=89 => {
                // A replica's caches catch up (the others lag meanwhile).
                let i = self.rng.below(self.replicas.len() as u64) as usize;
                if let Some(h) = &self.replicas[i].harness {
                    h.reflect();
                }
            }
            _ if self.config.faults => self.fault(),
            _ => {}
        }
    }

    /// Append the store's new changes to the ground truth.
    fn read_truth(&mut self) {
        while let Some(Ok(event)) = self.truth.try_next() {
            self.log.push(wire::change_of(&event));
        }
    }

    /// A live replica, chosen at random.
    fn live_replica(&mut self) -> Option<usize> {
        let live: Vec<usize> = (0..self.replicas.len()).filter(|i| self.replicas[*i].harness.is_some()).collect();
        (!live.is_empty()).then(|| *self.rng.pick(&live))
    }

    /// A writer or reader's step: on with its request, or a new one.
    fn act(&mut self, i: usize) {
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
        let Some(replica) = self.live_replica() else { return };
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
        match harness.start(&bytes, &mut answered) {
            Some(held) => {
                let generation = self.replicas[replica].generation;
                self.actors[i].in_flight = Some(InFlight { replica, generation, held: Box::new(held), op });
            }
            None => self.answered(i, op, &answered),
        }
    }

    /// What client `i` does next to `key`.
    fn choose(&mut self, i: usize, key: &str) -> Action {
        if self.actors[i].reads_only {
            return Action::Read;
        }
        let value = self.next_value;
        let known = self.actors[i].known.get(key).copied();
        let roll = self.rng.below(100);
        let action = match roll {
            0..=19 => Action::Create { value },
            20..=44 => Action::Update { value, precondition: known },
            45..=59 => Action::Update { value, precondition: None },
            60..=69 => Action::Delete { precondition: if self.rng.chance(500) { known } else { None } },
            _ => Action::Read,
        };
        if !matches!(action, Action::Read | Action::Delete { .. }) {
            self.next_value += 1;
        }
        action
    }

    /// A consistent LIST by reader `i`: recorded as a read of every key.
    fn list(&mut self, i: usize, replica: usize) {
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
    fn take_items(&mut self, items: Vec<(String, u64, Version)>, version: Version, seen: &mut BTreeMap<String, (u64, Version)>) {
        for (name, value, at) in items {
            if at > version {
                self.violation = Some(format!("a list at {version} holds {name} at {at}"));
            }
            seen.insert(name, (value, at));
        }
    }

    /// The first page of a paged consistent LIST by reader `i`.
    fn first_page(&mut self, i: usize, replica: usize) {
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
    fn next_page(&mut self, i: usize, mut paging: Paging) {
        let replica = &self.replicas[paging.replica];
        let Some(harness) = replica.harness.as_ref().filter(|_| replica.generation == paging.generation) else { return };
        let Some(reply) = one_reply(&harness.send(&wire::list_page(1, Some(&paging.token)))) else { return };
        if reply.status != 200 {
            return;
        }
        self.later_pages += 1;
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
    fn list_any_version(&mut self, replica: usize) {
        let harness = self.replicas[replica].harness.as_ref().expect("live");
        let Some(reply) = one_reply(&harness.send(&wire::list_any_version())) else { return };
        if reply.status != 200 {
            return;
        }
        self.read_truth();
        self.lists_at_any_version += 1;
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
    fn record_snapshot(&mut self, i: usize, seen: &BTreeMap<String, (u64, Version)>, call: u64, ret: u64) {
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
    fn answered(&mut self, i: usize, op: usize, bytes: &[u8]) {
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

    /// An informer's step.
    fn inform(&mut self, i: usize) {
        let informer = &mut self.informers[i];
        let replica = &self.replicas[informer.replica];
        let alive = replica.harness.is_some() && replica.generation == informer.generation;
        if !alive {
            // Its server went away: what its watch delivered is checked, and it lists
            // again elsewhere.
            if let Some(session) = informer.watch.take() {
                self.sessions.push((session.from, session.delivered));
            }
            let Some(replica) = self.live_replica() else { return };
            let informer = &mut self.informers[i];
            informer.replica = replica;
            informer.generation = self.replicas[replica].generation;
            return;
        }
        let harness = replica.harness.as_ref().expect("alive");
        match informer.watch.as_mut() {
            None => {
                let Some(reply) = one_reply(&harness.send(&wire::list())) else { return };
                if reply.status != 200 {
                    return;
                }
                let body = reply.json();
                let Some(from) = body.pointer("/metadata/resourceVersion").and_then(|v| v.as_str()).and_then(|v| v.parse().ok()) else {
                    return;
                };
                informer.cache = body["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(wire::value_of)
                    .map(|(name, value, version)| (format!("{}{name}", wire::STORE_PREFIX), (value, version)))
                    .collect();
                // Refused (410 for a compacted version, or the server is not ready):
                // list again later.
                if let Ok((open, bytes)) = harness.open_watch(&wire::watch(from)) {
                    let mut session = Session { open, reader: ResponseReader::new(&http::Method::GET, LIMITS), pending: Vec::new(), from, delivered: Vec::new() };
                    let ended = session.feed(&bytes, &mut informer.cache, &mut self.duplicate_next);
                    informer.watch = Some(session);
                    if ended {
                        self.end_session(i);
                    }
                }
            }
            Some(session) => {
                let bytes = harness.pump_watch(&mut session.open);
                let ended = session.feed(&bytes, &mut informer.cache, &mut self.duplicate_next) || session.open.is_done();
                if ended || self.rng.chance(20) {
                    self.end_session(i);
                }
            }
        }
    }

    /// End informer `i`'s watch: closed by the client, checked, and a list to follow.
    fn end_session(&mut self, i: usize) {
        let informer = &mut self.informers[i];
        let Some(session) = informer.watch.take() else { return };
        let Session { open, mut reader, mut pending, from, mut delivered } = session;
        if let Some(harness) = self.replicas[informer.replica].harness.as_ref() {
            let bytes = harness.close_watch(open);
            let (events, _) = decode(&mut reader, &mut pending, &bytes);
            for e in &events {
                apply(&mut informer.cache, e);
            }
            delivered.extend(events);
        }
        self.sessions.push((from, delivered));
    }

    /// Inject one fault.
    fn fault(&mut self) {
        let mut faults = self.store.faults.borrow_mut();
        let kind = self.rng.below(9);
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
                    self.store.faults.borrow_mut().injected.crashes += 1;
                }
            }
            5 | 6 => {
                // A replica comes back (after a crash), with faults held off while it
                // starts (its bootstrap must get through).
                drop(faults);
                if let Some(i) = (0..self.replicas.len()).find(|i| self.replicas[*i].harness.is_none()) {
                    self.store.calm();
                    let seed = self.rng.next_u64();
                    self.replicas[i].harness = Some(start_replica(&self.store, seed));
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

    /// Faults stop; every replica comes back; every request is carried to its answer;
    /// caches and informers catch up; then each key is read once more.
    fn quiesce(&mut self) {
        self.store.calm();
        for replica in self.replicas.iter().filter_map(|r| r.harness.as_ref()) {
            replica.set_storage_latency(Duration::ZERO);
        }
        for i in 0..self.replicas.len() {
            if self.replicas[i].harness.is_none() {
                let seed = self.rng.next_u64();
                self.replicas[i].harness = Some(start_replica(&self.store, seed));
            }
        }
        for i in 0..self.actors.len() {
            for _ in 0..100 {
                if self.actors[i].in_flight.is_none() {
                    break;
                }
                self.act(i);
            }
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
            let informer = &mut self.informers[i];
            if let Some(session) = informer.watch.as_mut() {
                let harness = self.replicas[informer.replica].harness.as_ref().expect("all live");
                let bytes = harness.pump_watch(&mut session.open);
                session.feed(&bytes, &mut informer.cache, &mut self.duplicate_next);
            }
        }
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

    /// The invariants, on what was recorded.
    fn check(&mut self) {
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
                let session = informer.watch.as_ref().map(|s| (s.from, &s.delivered, &s.open));
                self.violation = Some(format!(
                    "informer {i}'s cache {:?} did not converge to the store's {truth:?}; its watch (from, delivered, stream): {session:?}; its server's reflector: {:?}; the store's last changes: {:?}",
                    informer.cache,
                    self.replicas[informer.replica].harness.as_ref().map(|h| h.reflector_state()),
                    self.log.iter().rev().take(8).collect::<Vec<_>>()
                ));
                return;
            }
        }
    }

    /// The objects as the store holds them now.
    fn current_state(&self) -> BTreeMap<String, (u64, Version)> {
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

/// How much time passes per scheduler step.
const TICK: Duration = Duration::from_millis(5);

/// Bounds for reading watch streams (a frame is one small object).
const LIMITS: apiary_core::http1::Limits = apiary_core::http1::Limits { max_header_bytes: 1 << 20, max_body_bytes: 1 << 20 };

impl Session {
    /// Read `bytes` of the stream into `cache`; whether an ERROR event ended the watch.
    /// `duplicate`: (planted) the first event comes twice.
    fn feed(&mut self, bytes: &[u8], cache: &mut BTreeMap<String, (u64, Version)>, duplicate: &mut bool) -> bool {
        let (mut events, error) = decode(&mut self.reader, &mut self.pending, bytes);
        if *duplicate && !events.is_empty() {
            *duplicate = false;
            events.insert(0, events[0].clone());
        }
        for e in &events {
            apply(cache, e);
        }
        self.delivered.extend(events);
        error.is_some()
    }
}

/// The watch events in `bytes` of an HTTP stream read by `reader`, with `pending` the
/// part of a line read so far.
fn decode(reader: &mut ResponseReader, pending: &mut Vec<u8>, bytes: &[u8]) -> (Vec<Delivered>, Option<u64>) {
    reader.feed(bytes);
    let _ = reader.poll_head();
    while let Ok(BodyPiece::Data(data)) = reader.poll_body() {
        pending.extend_from_slice(&data);
    }
    let Some(end) = pending.iter().rposition(|b| *b == b'\n') else {
        return (Vec::new(), None);
    };
    let whole: Vec<u8> = pending.drain(..=end).collect();
    wire::events(&whole)
}

/// An event applied to an informer's cache.
fn apply(cache: &mut BTreeMap<String, (u64, Version)>, event: &Delivered) {
    match event.kind {
        ChangeKind::Deleted => {
            cache.remove(&event.key);
        }
        _ => {
            cache.insert(event.key.clone(), (event.value, event.revision));
        }
    }
}

/// A replica started over `store`, with its own entropy.
fn start_replica(store: &SimStore, seed: u64) -> Harness<SimStore> {
    let harness = Harness::new(Config::default(), store.clone());
    harness.reseed(seed);
    harness
}

/// The one answer in `bytes`, if whole.
fn one_reply(bytes: &[u8]) -> Option<Reply> {
    parse_responses(bytes).ok()?.into_iter().next()
}

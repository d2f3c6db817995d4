//! One simulated run: replicas of the server (cores over the harness) sharing one
//! simulated store, clients writing, reading and watching through them, and faults —
//! all chosen by one seeded generator on one logical clock, so that a seed replays
//! the run exactly. The history the clients record is then checked.

mod actors;
mod ending;
mod faults;
mod informers;
mod shutdown;
mod tenants;

use crate::linearizability::Operation;
use crate::object::{Input, Output, Version};
use crate::rng::Rng;
use crate::store::{Injected, Planted, SimStore};
use crate::watch_order::{Change, Delivered};
use crate::wire;
use actors::Actor;
use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::storage::{StorageOp, StorageOutput};
use apiary_core::lifecycle::LifecycleConfig;
use apiary_core::Config;
use informers::Informer;
use shutdown::Terminating;
use tenants::Tenant;
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
    /// Clients whose objects the built-in controllers finish with (namespaces
    /// deleted, owners deleted with their dependents).
    pub tenants: usize,
    /// Inject faults (crashes, storage errors, lost answers, cut watches, compaction,
    /// clock jumps).
    pub faults: bool,
    pub planted: Planted,
}

impl SimConfig {
    /// The default shape of a run for `seed`.
    pub fn seeded(seed: u64) -> SimConfig {
        SimConfig { seed, replicas: 3, steps: 400, keys: 3, writers: 4, readers: 2, informers: 2, tenants: 2, faults: true, planted: Planted::default() }
    }
}

/// What a run did and found.
#[derive(Clone, Debug)]
pub struct Report {
    pub seed: u64,
    pub tally: Tally,
    pub injected: Injected,
    /// The first invariant broken, in words.
    pub violation: Option<String>,
}

/// What a run checked, in counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Operations recorded in the history.
    pub operations: usize,
    /// Server-side applies among them.
    pub applies: usize,
    /// Watch events delivered and checked.
    pub events: usize,
    /// Watches that resumed from the last revision their informer saw, without a list.
    pub resumed_watches: usize,
    /// Watches the server ended because their client fell too far behind.
    pub watches_behind: usize,
    /// Pages after the first of paged lists read, and lists at any version checked.
    pub later_pages: usize,
    pub lists_at_any_version: usize,
    /// Graceful shutdowns carried to their exit, and the requests they let finish.
    pub shutdowns: usize,
    pub drained: usize,
    /// Namespaces deleted (and checked emptied and gone), dependents checked collected
    /// with their owner, orphaned by it, or kept while it lives.
    pub namespaces_deleted: usize,
    pub collected: usize,
    pub orphaned: usize,
    pub kept: usize,
}

impl Tally {
    /// Both counts added.
    pub fn plus(&self, o: &Tally) -> Tally {
        Tally {
            operations: self.operations + o.operations,
            applies: self.applies + o.applies,
            events: self.events + o.events,
            resumed_watches: self.resumed_watches + o.resumed_watches,
            watches_behind: self.watches_behind + o.watches_behind,
            later_pages: self.later_pages + o.later_pages,
            lists_at_any_version: self.lists_at_any_version + o.lists_at_any_version,
            shutdowns: self.shutdowns + o.shutdowns,
            drained: self.drained + o.drained,
            namespaces_deleted: self.namespaces_deleted + o.namespaces_deleted,
            collected: self.collected + o.collected,
            orphaned: self.orphaned + o.orphaned,
            kept: self.kept + o.kept,
        }
    }
}

/// A replica: a server's core over the shared store, or nothing while it is down.
struct Replica {
    harness: Option<Harness<SimStore>>,
    /// Bumped at every crash: requests held by an older one died with it.
    generation: u64,
    /// Once told to terminate: how far its shutdown has been followed.
    terminating: Option<Terminating>,
}

/// The world of one run.
struct World {
    config: SimConfig,
    rng: Rng,
    store: SimStore,
    replicas: Vec<Replica>,
    actors: Vec<Actor>,
    informers: Vec<Informer>,
    tenants: Vec<Tenant>,
    /// What every replica runs with (its shutdown and its watches' queue limit drawn
    /// from the seed).
    server: Config,
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
    tally: Tally,
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
    let mut tally = world.tally;
    tally.operations = world.history.len();
    tally.applies = world.history.iter().filter(|o| matches!(o.input.action, crate::object::Action::Apply { .. })).count();
    tally.events = world.sessions.iter().map(|(_, d)| d.len()).sum();
    Report { seed: config.seed, tally, injected, violation: world.violation }
}

impl World {
    fn new(config: SimConfig) -> World {
        let planted = config.planted;
        let store = SimStore::new(planted);
        let mut rng = Rng::new(config.seed);
        let server = server_config(&mut Rng::new(config.seed ^ 0x5e7e_c0f1));
        let mut replicas = Vec::new();
        for i in 0..config.replicas {
            let harness = start_replica(&store, &server, rng.next_u64() ^ i as u64);
            replicas.push(Replica { harness: Some(harness), generation: 0, terminating: None });
        }
        let first = replicas[0].harness.as_ref().expect("started");
        let namespace = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": wire::NAMESPACE}});
        let reply = first.json_call("POST", "/api/v1/namespaces", "application/json", Some(&namespace));
        assert_eq!(reply.status, 201, "the simulation's namespace");
        let namespace = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": tenants::GC_NAMESPACE}});
        let reply = first.json_call("POST", "/api/v1/namespaces", "application/json", Some(&namespace));
        assert_eq!(reply.status, 201, "the owners' namespace");
        let revision = match store.inner.apply(StorageOp::CurrentRevision) {
            Ok(StorageOutput::Revision(r)) => r,
            other => panic!("the store's revision: {other:?}"),
        };
        let truth = store.inner.open_watch(wire::STORE_PREFIX, revision).expect("the ground truth's watch");
        let actors = (0..config.writers + config.readers)
            .map(|i| Actor { reads_only: i >= config.writers, in_flight: None, paging: None, known: BTreeMap::new() })
            .collect();
        let informers = (0..config.informers).map(|i| Informer::new(i % config.replicas)).collect();
        let tenants = (0..config.tenants).map(Tenant::new).collect();
        World {
            config,
            rng,
            store,
            replicas,
            actors,
            informers,
            tenants,
            server,
            history: Vec::new(),
            sessions: Vec::new(),
            log: Vec::new(),
            truth,
            now: 0,
            next_value: 1,
            violation: None,
            duplicate_next: planted.duplicate_event,
            tally: Tally::default(),
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
        self.follow_shutdowns();
        let roll = self.rng.below(100);
        match roll {
            0..=51 => {
                if let Some(i) = self.one_of(self.actors.len()) {
                    self.act(i);
                }
            }
            52..=59 => {
                if let Some(i) = self.one_of(self.tenants.len()) {
                    self.tend(i);
                }
            }
            60..=74 => {
                if let Some(i) = self.one_of(self.informers.len()) {
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

    /// One of `n` (a client or replica), chosen at random; none of none.
    fn one_of(&mut self, n: usize) -> Option<usize> {
        (n > 0).then(|| self.rng.below(n as u64) as usize)
    }

    /// Append the store's new changes to the ground truth.
    fn read_truth(&mut self) {
        while let Some(Ok(event)) = self.truth.try_next() {
            self.log.push(wire::change_of(&event));
        }
    }

    /// A live replica not shutting down, chosen at random.
    fn live_replica(&mut self) -> Option<usize> {
        let live: Vec<usize> =
            (0..self.replicas.len()).filter(|i| self.replicas[*i].harness.is_some() && self.replicas[*i].terminating.is_none()).collect();
        (!live.is_empty()).then(|| *self.rng.pick(&live))
    }

    /// Start replica `i` again (after a crash or an exit).
    fn restart(&mut self, i: usize) {
        let seed = self.rng.next_u64();
        self.replicas[i].harness = Some(start_replica(&self.store, &self.server, seed));
        self.replicas[i].terminating = None;
    }
}

/// How much time passes per scheduler step.
const TICK: Duration = Duration::from_millis(5);

/// Bounds for reading watch streams (a frame is one small object).
const LIMITS: apiary_core::http1::Limits = apiary_core::http1::Limits { max_header_bytes: 1 << 20, max_body_bytes: 1 << 20 };

/// What the replicas of a run are configured with: how they shut down (a delay or
/// none; new requests refused, or answered 429 with Retry-After) and how far behind a
/// watch may fall (a few events, so that slow clients are ended).
fn server_config(rng: &mut Rng) -> Config {
    let shutdown_delay = Duration::from_millis(*rng.pick(&[0, 200, 1000]));
    let lifecycle = LifecycleConfig { shutdown_delay, send_retry_after: rng.chance(500), ..LifecycleConfig::default() };
    Config { lifecycle, watch_queue_limit: 1 + rng.below(4) as usize, ..Config::default() }
}

/// A replica started over `store`, with its own entropy.
fn start_replica(store: &SimStore, config: &Config, seed: u64) -> Harness<SimStore> {
    let harness = Harness::new(config.clone(), store.clone());
    harness.reseed(seed);
    harness
}

/// The one answer in `bytes`, if whole.
fn one_reply(bytes: &[u8]) -> Option<Reply> {
    parse_responses(bytes).ok()?.into_iter().next()
}

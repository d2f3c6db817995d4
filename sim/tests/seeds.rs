//! The time-boxed batch CI runs: seeds from 0 on, with every fault, until the box is
//! full (`SIM_SECONDS`, default 120; at least `SIM_MIN_SEEDS`, default 5). Any seed that
//! breaks an invariant fails the test with the seed and what broke; replay it with
//! `cargo run -p apiary-sim --release -- --from SEED --seeds 1`.

use apiary_sim::world::{run, SimConfig};
use std::time::{Duration, Instant};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn seeded_runs_with_faults_keep_every_invariant() {
    let budget = Duration::from_secs(env("SIM_SECONDS", 120));
    let min_seeds = env("SIM_MIN_SEEDS", 5);
    let started = Instant::now();
    let (mut seeds, mut operations, mut events) = (0u64, 0usize, 0usize);
    let mut injected = apiary_sim::store::Injected::default();
    while seeds < min_seeds || started.elapsed() < budget {
        let report = run(&SimConfig::seeded(seeds));
        if let Some(violation) = report.violation {
            panic!("seed {seeds}: {violation}");
        }
        operations += report.operations;
        events += report.events;
        injected = injected.plus(&report.injected);
        seeds += 1;
    }
    eprintln!("{seeds} seeds in {:.0?}: {operations} operations, {events} watch events checked; faults: {injected:?}", started.elapsed());
    assert!(operations > 0 && events > 0, "the runs did something");
    assert!(injected.crashes > 0 && injected.refused > 0 && injected.watches_cut > 0, "faults were injected: {injected:?}");
}

/// Seed 8 without faults found that a create through one replica into a namespace
/// just created through another was refused 404: NamespaceLifecycle answered from a
/// cache that had not caught up, where upstream looks the namespace up live.
#[test]
fn regression_seed_8_a_namespace_another_replica_created_is_found() {
    let mut config = SimConfig::seeded(8);
    config.faults = false;
    let report = run(&config);
    assert_eq!(report.violation, None);
}

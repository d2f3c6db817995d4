//! Run the simulation over many seeds: `cargo run -p apiary-sim --release -- [--seeds N]
//! [--from SEED] [--steps K] [--replicas R] [--plant BUG]`. Prints each failing seed
//! with what broke (replay it with `--from SEED --seeds 1`), then the totals; exits 1
//! if any failed. `--plant` plants a bug in the simulated store (`lose-write`,
//! `stale-read`, `duplicate-event`, `reorder-events`) to see the checkers catch it.

use apiary_sim::world::{run, SimConfig};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: u64| -> u64 {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse().unwrap_or_else(|_| panic!("{name} takes a number")))
            .unwrap_or(default)
    };
    let (seeds, from) = (flag("--seeds", 100), flag("--from", 0));
    let planted = match args.iter().position(|a| a == "--plant").and_then(|i| args.get(i + 1)).map(String::as_str) {
        None => apiary_sim::store::Planted::default(),
        Some(name) => apiary_sim::store::Planted::named(name).unwrap_or_else(|| panic!("no planted bug named {name}")),
    };
    let mut failed = 0u64;
    let (mut tally, mut injected) = (apiary_sim::world::Tally::default(), apiary_sim::store::Injected::default());
    let started = std::time::Instant::now();
    for seed in from..from + seeds {
        let mut config = SimConfig::seeded(seed);
        config.steps = flag("--steps", config.steps as u64) as usize;
        config.replicas = flag("--replicas", config.replicas as u64) as usize;
        config.planted = planted;
        let report = run(&config);
        tally = tally.plus(&report.tally);
        injected = injected.plus(&report.injected);
        if let Some(violation) = report.violation {
            failed += 1;
            println!("seed {seed} FAILED: {violation}");
        }
    }
    println!("{seeds} seeds from {from} in {:.1} s: {failed} failed", started.elapsed().as_secs_f64());
    println!("checked: {tally:?}");
    println!("faults injected: {injected:?}");
    std::process::exit(i32::from(failed > 0));
}

//! The checkers are trusted because they catch bugs planted on purpose (in the
//! simulated store, or between the server and a client's watch): a write acknowledged
//! and lost, a stale read served as consistent, a watch event delivered twice, two
//! watch events swapped. Each must be caught within the first few seeds.

use apiary_sim::store::Planted;
use apiary_sim::world::{run, SimConfig};

/// The first seed below 10 whose run with `bug` planted breaks an invariant, and what
/// it reported.
fn caught(bug: &str) -> (u64, String) {
    let planted = Planted::named(bug).expect("a planted bug");
    for seed in 0..10 {
        let mut config = SimConfig::seeded(seed);
        config.planted = planted;
        if let Some(violation) = run(&config).violation {
            return (seed, violation);
        }
    }
    panic!("{bug} was not caught in 10 seeds");
}

#[test]
fn a_lost_write_is_caught() {
    let (_, violation) = caught("lose-write");
    assert!(violation.contains("not linearizable"), "{violation}");
}

#[test]
fn a_stale_read_served_as_consistent_is_caught() {
    let (_, violation) = caught("stale-read");
    assert!(violation.contains("not linearizable"), "{violation}");
}

#[test]
fn a_duplicated_watch_event_is_caught() {
    let (_, violation) = caught("duplicate-event");
    assert!(violation.contains("OutOfOrder"), "{violation}");
}

#[test]
fn reordered_watch_events_are_caught() {
    caught("reorder-events");
}

#[test]
fn without_a_planted_bug_the_same_seeds_pass() {
    for seed in 0..3 {
        assert_eq!(run(&SimConfig::seeded(seed)).violation, None, "seed {seed}");
    }
}

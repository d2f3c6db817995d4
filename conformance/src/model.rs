//! A randomized model test for storage backends.
//!
//! [`model_test`] runs a long random sequence of operations against a fresh store and,
//! side by side, against [`Model`]: a small reference implementation of the storage
//! contract that keeps every write in one list and recomputes each answer from it the
//! slow, plain way. Every result — the whole `Result<StorageOutput, StorageError>` — must
//! be equal. Watches opened along the way must, at the end, have delivered exactly the
//! events the model derives from its list of writes.
//!
//! The sequence comes from a tiny seeded PRNG, so a failure names its seed and step and
//! replays the same way every time. A backend's test file runs it with
//! [`model_test_seeds`]:
//!
//! ```ignore
//! use apiary_conformance::{model, storage_suite::block_on};
//! block_on(model::model_test_seeds(apiary_memory::MemoryStore::new, 0..8, 2_000));
//! ```
//!
//! Set `APIARY_MODEL_SEEDS` (`7`, or a range `0..1000`) and `APIARY_MODEL_STEPS` to run
//! other seeds or longer sequences without editing a test.
//!
//! The model compares exact revisions, so unlike the storage suite it needs a store of
//! its own, empty (at revision 0, or 1 for a fresh etcd), that nobody else writes to.

use crate::storage_suite::{within, WATCH_TIMEOUT};
use apiary_core::storage::{
    Completion, KeyValue, ListPage, Revision, Storage, StorageError, StorageOp, StorageOutput,
    WatchEvent, WatchStream,
};
use bytes::Bytes;
use std::collections::BTreeMap;
use std::ops::Range;

// ---------------------------------------------------------------------------------------
// The key space. Small on purpose, so creates collide, updates conflict and deletes
// hit missing keys; with names chosen to trip common mistakes.

/// The two "directories" the keys live in.
const DIRS: [&str; 2] = ["/registry/model/a/", "/registry/model/b/"];

/// Names under each directory. `n_1` and `n%1` hold SQL LIKE wildcards and `N1` differs
/// only by case (LIKE is case-insensitive in sqlite), so a backend that turns a prefix
/// into a LIKE pattern lists the wrong keys; `n10` sorts between `n1` and `n2`.
const NAMES: [&str; 7] = ["n0", "n1", "n2", "n10", "n_1", "n%1", "N1"];

/// Keys next to the directories that a prefix must tell apart: the directory's own
/// name without the slash, and a sibling directory whose name extends it.
const NEIGHBOUR_KEYS: [&str; 2] = ["/registry/model/a", "/registry/model/a0/n0"];

/// Prefixes lists use: the directories, the parent, the neighbours' shared text, partial
/// names (one with a wildcard, one with an upper-case letter) and an empty directory.
const LIST_PREFIXES: [&str; 8] = [
    "/registry/model/",
    "/registry/model/a/",
    "/registry/model/b/",
    "/registry/model/a",
    "/registry/model/a/n_",
    "/registry/model/a/n1",
    "/registry/model/a/N",
    "/registry/model/x/",
];

/// Prefixes watches use. At the end a sentinel key is written under each, so every
/// watch has at least one event to wait for.
const WATCH_PREFIXES: [&str; 5] = [
    "/registry/model/",
    "/registry/model/a/",
    "/registry/model/b/",
    "/registry/model/a",
    "/registry/model/a/n_",
];

/// At most this many watches are open at once.
const MAX_OPEN_WATCHES: usize = 16;

fn key_space() -> Vec<String> {
    let mut keys: Vec<String> = DIRS
        .iter()
        .flat_map(|dir| NAMES.iter().map(move |name| format!("{dir}{name}")))
        .collect();
    keys.extend(NEIGHBOUR_KEYS.iter().map(|key| key.to_string()));
    keys
}

// ---------------------------------------------------------------------------------------
// The reference model.

/// The storage contract written the obvious way: a list of every write ever made (the
/// write at index `i` has revision `i + 1`) and the compacted revision. Nothing is ever
/// forgotten; compaction only makes old revisions unreadable. Every answer is recomputed
/// from the list of writes, which is slow but easy to check by eye.
#[derive(Debug, Default)]
struct Model {
    /// The store's revision before the first step: 0 for memory and sqlite, 1 for a
    /// fresh etcd.
    base: Revision,
    /// Every write, as the watch event it produces, in revision order.
    writes: Vec<WatchEvent>,
    /// Reads before this revision, and watches from before it, fail.
    compacted: Revision,
}

impl Model {
    /// The newest revision: one per write, starting from the base.
    fn revision(&self) -> Revision {
        self.base + self.writes.len() as Revision
    }

    /// The live value of `key`: whatever its last write left, if any.
    fn latest(&self, key: &str) -> Option<KeyValue> {
        match self.writes.iter().rev().find(|w| w.key() == key)? {
            WatchEvent::Put { kv, .. } => Some(kv.clone()),
            WatchEvent::Delete { .. } => None,
        }
    }

    /// Every live key as of `revision`, by replaying the writes up to it.
    fn state_at(&self, revision: Revision) -> BTreeMap<&str, &KeyValue> {
        let mut state = BTreeMap::new();
        for write in &self.writes[..revision.saturating_sub(self.base) as usize] {
            match write {
                WatchEvent::Put { kv, .. } => {
                    state.insert(kv.key.as_str(), kv);
                }
                WatchEvent::Delete { prev, .. } => {
                    state.remove(prev.key.as_str());
                }
            }
        }
        state
    }

    /// Whether history at `revision` can still be read.
    fn readable(&self, revision: Revision) -> Result<(), StorageError> {
        if revision > self.revision() {
            return Err(StorageError::FutureRevision {
                requested: revision,
                current: self.revision(),
            });
        }
        if revision < self.compacted {
            return Err(StorageError::Compacted {
                requested: revision,
                compacted: self.compacted,
            });
        }
        Ok(())
    }

    fn apply(&mut self, op: &StorageOp) -> Completion {
        match op.clone() {
            StorageOp::Get { key } => Ok(StorageOutput::Got {
                kv: self.latest(&key),
                revision: self.revision(),
            }),
            StorageOp::List {
                prefix,
                revision,
                start_after,
                limit,
            } => self.list(&prefix, revision, start_after.as_deref(), limit),
            StorageOp::Create { key, value } => {
                if self.latest(&key).is_some() {
                    return Err(StorageError::AlreadyExists { key });
                }
                let revision = self.revision() + 1;
                let kv = KeyValue {
                    key,
                    value,
                    create_revision: revision,
                    mod_revision: revision,
                };
                self.writes.push(WatchEvent::Put {
                    kv: kv.clone(),
                    prev: None,
                });
                Ok(StorageOutput::Written(kv))
            }
            StorageOp::Update {
                key,
                value,
                expected_revision,
            } => {
                let Some(current) = self.latest(&key) else {
                    return Err(StorageError::NotFound { key });
                };
                if current.mod_revision != expected_revision {
                    return Err(StorageError::Conflict { key, current });
                }
                let kv = KeyValue {
                    key,
                    value,
                    create_revision: current.create_revision,
                    mod_revision: self.revision() + 1,
                };
                self.writes.push(WatchEvent::Put {
                    kv: kv.clone(),
                    prev: Some(current),
                });
                Ok(StorageOutput::Written(kv))
            }
            StorageOp::Delete {
                key,
                expected_revision,
            } => {
                let Some(current) = self.latest(&key) else {
                    return Err(StorageError::NotFound { key });
                };
                if expected_revision.is_some_and(|expected| expected != current.mod_revision) {
                    return Err(StorageError::Conflict { key, current });
                }
                let revision = self.revision() + 1;
                self.writes.push(WatchEvent::Delete {
                    prev: current.clone(),
                    revision,
                });
                Ok(StorageOutput::Deleted {
                    prev: current,
                    revision,
                })
            }
            StorageOp::Compact { revision } => {
                // Compacting to the compacted revision again is allowed (nothing to do);
                // going back, or past the newest revision, is not.
                self.readable(revision)?;
                self.compacted = revision;
                Ok(StorageOutput::Compacted)
            }
            StorageOp::CurrentRevision => Ok(StorageOutput::Revision(self.revision())),
        }
    }

    fn list(
        &self,
        prefix: &str,
        revision: Option<Revision>,
        start_after: Option<&str>,
        limit: Option<usize>,
    ) -> Completion {
        let at = match revision {
            Some(revision) => {
                self.readable(revision)?;
                revision
            }
            None => self.revision(),
        };
        // Every key the list covers, in key order (the map's order)...
        let matching: Vec<KeyValue> = self
            .state_at(at)
            .into_values()
            .filter(|kv| kv.key.starts_with(prefix))
            .filter(|kv| start_after.is_none_or(|after| kv.key.as_str() > after))
            .cloned()
            .collect();
        // ...of which the page shows the first `limit`, and counts the rest.
        let shown = limit.unwrap_or(usize::MAX).min(matching.len());
        let remaining = (matching.len() - shown) as u64;
        Ok(StorageOutput::Listed(ListPage {
            items: matching[..shown].to_vec(),
            revision: at,
            more: remaining > 0,
            remaining,
        }))
    }

    /// Whether a watch from `after` can be opened.
    fn watch(&self, after: Revision) -> Result<(), StorageError> {
        if after < self.compacted {
            return Err(StorageError::Compacted {
                requested: after,
                compacted: self.compacted,
            });
        }
        Ok(())
    }

    /// What a watch of `prefix` from `after` must have delivered by now.
    fn events(&self, prefix: &str, after: Revision) -> Vec<WatchEvent> {
        self.writes
            .iter()
            .filter(|w| w.revision() > after && w.key().starts_with(prefix))
            .cloned()
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// The random sequence.

/// splitmix64: a few lines, no dependency, and the same numbers on every platform, so
/// a seed replays the same sequence anywhere.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `low..=high`. (The modulo bias is irrelevant at these sizes.)
    fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next_u64() % (high - low + 1)
    }

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.between(0, items.len() as u64 - 1) as usize]
    }
}

/// One step of the sequence.
#[derive(Debug)]
enum Step {
    Run(StorageOp),
    OpenWatch {
        prefix: String,
        after: Revision,
    },
    /// Drop the open watch at this index (a client going away mid-stream).
    DropWatch {
        index: usize,
    },
}

/// Choose the next step, using the model to aim most preconditions right.
fn next_step(rng: &mut Rng, model: &Model, keys: &[String], open: usize, step: usize) -> Step {
    let current = model.revision();
    let compacted = model.compacted;
    let key = rng.pick(keys).clone();
    // A fresh value per step, so a value from the wrong write never compares equal; now
    // and then an empty one, which is a value and not an absent key.
    let value = if rng.chance(5) {
        Bytes::new()
    } else {
        Bytes::from(format!("v{step}"))
    };
    let mod_revision = model.latest(&key).map(|kv| kv.mod_revision);
    // A revision that is most likely not the key's: zero, an old one, or a future one.
    let wrong_revision = |rng: &mut Rng| rng.between(0, current + 2);

    let op = match rng.between(0, 99) {
        0..=19 => StorageOp::Create { key, value },
        20..=39 => StorageOp::Update {
            key,
            value,
            expected_revision: match mod_revision {
                Some(right) if rng.chance(75) => right,
                _ => wrong_revision(rng),
            },
        },
        40..=51 => StorageOp::Delete {
            key,
            expected_revision: match rng.between(0, 9) {
                0..=3 => None,
                4..=7 => mod_revision.or_else(|| Some(wrong_revision(rng))),
                _ => Some(wrong_revision(rng)),
            },
        },
        52..=60 => StorageOp::Get { key },
        61..=84 => StorageOp::List {
            prefix: rng.pick(&LIST_PREFIXES).to_string(),
            revision: match rng.between(0, 19) {
                0..=7 => None,
                8..=14 => Some(rng.between(compacted, current)),
                15..=16 if compacted > 0 => Some(rng.between(0, compacted - 1)),
                15..=17 => Some(current + rng.between(1, 3)),
                _ => Some(current),
            },
            start_after: if rng.chance(40) {
                // Keys and prefixes alike: inside, before and after the listed range.
                let candidates = [rng.pick(keys).as_str(), *rng.pick(&LIST_PREFIXES), "", "~"];
                Some(rng.pick(&candidates).to_string())
            } else {
                None
            },
            // Never Some(0): the core never sends it and the contract leaves it open.
            limit: rng.chance(50).then(|| rng.between(1, 8) as usize),
        },
        85..=87 => StorageOp::Compact {
            revision: match rng.between(0, 9) {
                0 if compacted > 0 => rng.between(0, compacted - 1),
                0 | 1 => current + rng.between(1, 3),
                _ => rng.between(compacted, current),
            },
        },
        88..=90 => StorageOp::CurrentRevision,
        91..=95 if open < MAX_OPEN_WATCHES => {
            return Step::OpenWatch {
                prefix: rng.pick(&WATCH_PREFIXES).to_string(),
                after: if compacted > 0 && rng.chance(15) {
                    rng.between(0, compacted - 1)
                } else {
                    rng.between(compacted, current)
                },
            }
        }
        96 if open > 0 => {
            return Step::DropWatch {
                index: rng.between(0, open as u64 - 1) as usize,
            }
        }
        _ => StorageOp::Get { key },
    };
    Step::Run(op)
}

// ---------------------------------------------------------------------------------------
// Running it.

/// A watch the test opened, with what it needs to say what the watch should have seen.
struct OpenWatch<W> {
    watch: W,
    prefix: String,
    after: Revision,
    opened_at: usize,
}

/// What a failure message must carry to replay the run.
struct Run {
    seed: u64,
    steps: usize,
}

impl Run {
    /// Where in the run step number `step` is: one of the random steps, or one of the
    /// sentinel writes after them.
    fn step(&self, step: usize) -> String {
        if step < self.steps {
            format!("step {step} of {}", self.steps)
        } else {
            format!(
                "sentinel write {} after the {} steps",
                step - self.steps,
                self.steps
            )
        }
    }

    fn fail(&self, at: &str, what: &str, detail: String) -> ! {
        panic!(
            "model test failed: seed {seed}, {at}: {what}\n{detail}\n\
             (replay with model_test(<fresh store>, {seed}, {steps}), or \
             APIARY_MODEL_SEEDS={seed} APIARY_MODEL_STEPS={steps})",
            seed = self.seed,
            steps = self.steps,
        )
    }
}

/// Run `steps` random operations (and watches) against `store` and a reference model,
/// panicking on the first difference with the seed, the step and the operation.
///
/// The store must be fresh: at revision 0, written to by nobody else. Its watches must
/// not cut off a reader that leaves a few thousand events unread (they are only read at
/// the end).
pub async fn model_test<S: Storage>(store: S, seed: u64, steps: usize) {
    let run = Run { seed, steps };
    let mut rng = Rng(seed);
    let mut model = Model::default();
    let keys = key_space();
    let mut watches: Vec<OpenWatch<S::Watch>> = Vec::new();

    // The model counts revisions from where the empty store starts (0, or 1 for etcd);
    // a store that has history already would differ on every revision, so say so once.
    match store.run(StorageOp::CurrentRevision).await {
        Ok(StorageOutput::Revision(start)) if start <= 1 => model.base = start,
        start => run.fail(
            "before the first step",
            "CurrentRevision",
            format!("the model test needs a fresh, empty store, got {start:?}"),
        ),
    }

    for step in 0..steps {
        let next = next_step(&mut rng, &model, &keys, watches.len(), step);
        perform(&run, step, next, &store, &mut model, &mut watches).await;
    }

    // A sentinel under every watch prefix, so each watch ends on an event the test knows
    // is last: reading up to it shows a missing event (it comes early) or an extra one
    // (it comes late) without waiting on a timer.
    for (i, prefix) in WATCH_PREFIXES.iter().enumerate() {
        let sentinel = StorageOp::Create {
            key: format!("{prefix}~sentinel"),
            value: Bytes::from_static(b"end"),
        };
        perform(
            &run,
            steps + i,
            Step::Run(sentinel),
            &store,
            &mut model,
            &mut watches,
        )
        .await;
    }

    for open in &mut watches {
        let expected = model.events(&open.prefix, open.after);
        let what = format!(
            "watch of {:?} after revision {} (opened at step {})",
            open.prefix, open.after, open.opened_at
        );
        let got = match read_watch(&mut open.watch, &expected).await {
            Ok(got) => got,
            // A compaction overtook history the watch had yet to deliver: the contract
            // lets a backend end it so (etcd cancels such watches), after a true prefix.
            Err((_, got, Some(StorageError::Compacted { compacted, .. })))
                if compacted <= model.compacted
                    && compacted > got.last().map_or(open.after, WatchEvent::revision)
                    && expected.starts_with(&got) =>
            {
                continue
            }
            Err((why, got, _)) => run.fail(
                "reading the watches",
                &what,
                format!("{why} after {} of {} events", got.len(), expected.len()),
            ),
        };
        if got != expected {
            run.fail(
                "reading the watches",
                &what,
                describe_difference(&got, &expected),
            );
        }
    }
}

/// Perform one step on the store and the model and compare what they say.
async fn perform<S: Storage>(
    run: &Run,
    step: usize,
    next: Step,
    store: &S,
    model: &mut Model,
    watches: &mut Vec<OpenWatch<S::Watch>>,
) {
    match next {
        Step::Run(op) => {
            let got = store.run(op.clone()).await;
            if let Err(StorageError::Internal(_) | StorageError::Unavailable(_)) = got {
                run.fail(
                    &run.step(step),
                    &format!("{op:?}"),
                    format!("the backend failed: {got:?}"),
                );
            }
            let want = model.apply(&op);
            if got != want {
                run.fail(
                    &run.step(step),
                    &format!("{op:?}"),
                    format!("store returned  {got:?}\nmodel expected  {want:?}"),
                );
            }
        }
        Step::OpenWatch { ref prefix, after } => {
            let got = store.watch(prefix, after).await;
            match (got, model.watch(after)) {
                (Ok(watch), Ok(())) => watches.push(OpenWatch {
                    watch,
                    prefix: prefix.clone(),
                    after,
                    opened_at: step,
                }),
                (Err(got), Err(want)) if got == want => {}
                (got, want) => run.fail(
                    &run.step(step),
                    &format!("{next:?}"),
                    format!(
                        "store returned  {:?}\nmodel expected  {want:?}",
                        got.map(|_| "an open watch")
                    ),
                ),
            }
        }
        Step::DropWatch { index } => drop(watches.remove(index)),
    }
}

/// Read a watch up to its last expected event: as many events as expected, but stopping
/// early at one as new as the last expected, so a missing event shows at once instead
/// of after the timeout. Gives up after [`WATCH_TIMEOUT`].
async fn read_watch<W: WatchStream>(
    watch: &mut W,
    expected: &[WatchEvent],
) -> Result<Vec<WatchEvent>, (String, Vec<WatchEvent>, Option<StorageError>)> {
    let last = expected.last().map_or(0, WatchEvent::revision);
    let mut events = Vec::with_capacity(expected.len());
    let outcome = within(WATCH_TIMEOUT, async {
        while events.len() < expected.len() {
            match watch.next().await {
                Some(Ok(event)) => {
                    let done = event.revision() >= last;
                    events.push(event);
                    if done {
                        break;
                    }
                }
                Some(Err(err)) => return Err((format!("the watch failed: {err:?}"), Some(err))),
                None => return Err(("the watch ended".to_owned(), None)),
            }
        }
        Ok(())
    })
    .await;
    match outcome {
        Some(Ok(())) => Ok(events),
        Some(Err((why, error))) => Err((why, events, error)),
        None => Err((format!("no event within {WATCH_TIMEOUT:?}"), events, None)),
    }
}

/// The first place two event sequences differ, rather than thousands of events.
fn describe_difference(got: &[WatchEvent], expected: &[WatchEvent]) -> String {
    let at = got
        .iter()
        .zip(expected)
        .position(|(g, e)| g != e)
        .unwrap_or(got.len().min(expected.len()));
    format!(
        "the watch delivered {} events, the model expected {}; first difference at event \
         {at}:\nstore delivered {:?}\nmodel expected  {:?}",
        got.len(),
        expected.len(),
        got.get(at),
        expected.get(at),
    )
}

/// Run [`model_test`] once per seed, each on a fresh store from `make`.
///
/// `APIARY_MODEL_SEEDS` (one seed, `7`, or a range, `0..1000`) and `APIARY_MODEL_STEPS`
/// override `seeds` and `steps`, to replay a failure or to run longer.
pub async fn model_test_seeds<S: Storage>(make: impl Fn() -> S, seeds: Range<u64>, steps: usize) {
    let seeds = match std::env::var("APIARY_MODEL_SEEDS") {
        Ok(text) => parse_seeds(&text),
        Err(_) => seeds,
    };
    let steps = match std::env::var("APIARY_MODEL_STEPS") {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("APIARY_MODEL_STEPS={text:?} is not a number")),
        Err(_) => steps,
    };
    for seed in seeds {
        model_test(make(), seed, steps).await;
    }
}

fn parse_seeds(text: &str) -> Range<u64> {
    let number = |s: &str| {
        s.trim().parse::<u64>().unwrap_or_else(|_| {
            panic!("APIARY_MODEL_SEEDS={text:?} is neither a seed (7) nor a range (0..100)")
        })
    };
    match text.split_once("..") {
        Some((start, end)) => number(start)..number(end),
        None => {
            let seed = number(text);
            seed..seed + 1
        }
    }
}

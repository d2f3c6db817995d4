//! The store alone, without HTTP, with synchronous=FULL:
//!
//! 1. creates per second from 64 concurrent writers (each on its own thread, one write
//!    at a time), and the CPU time each create costs the process;
//! 2. a steady update load (64 writers, 16 keys each) for 10 s without compaction, then
//!    10 s with a compaction every second to the revision of the second before (as the
//!    adapter's compactor does): write latencies in both halves, and the size of the
//!    database and its log each second — it must level off, not grow.
//!
//! Run: `cargo bench -p apiary-sqlite --bench group_commit`

use apiary_core::storage::{Storage, StorageOp, StorageOutput};
use apiary_sqlite::{SqliteOptions, SqliteStore};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const WRITERS: usize = 64;
const ROUND_TIME: Duration = Duration::from_secs(4);
const KEYS_PER_WRITER: usize = 16;
const HALF: u64 = 10;

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

fn run(store: &SqliteStore, op: StorageOp) -> StorageOutput {
    futures_lite::future::block_on(store.run(op)).unwrap()
}

fn creates(store: &SqliteStore, value: &[u8]) {
    for round in 0..3 {
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU64::new(0));
        let cpu = cpu_seconds();
        let begin = Instant::now();
        let threads: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (store, stop, done) = (store.clone(), stop.clone(), done.clone());
                let value = value.to_vec();
                std::thread::spawn(move || {
                    let mut i = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let key = format!("/registry/configmaps/default/r{round}-{w}-{i}");
                        run(
                            &store,
                            StorageOp::Create {
                                key,
                                value: value.clone().into(),
                            },
                        );
                        done.fetch_add(1, Ordering::Relaxed);
                        i += 1;
                    }
                })
            })
            .collect();
        std::thread::sleep(ROUND_TIME);
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().unwrap();
        }
        let n = done.load(Ordering::Relaxed) as f64;
        println!(
            "creates round {}: {:.0} creates/s, {:.1} µs of CPU per create",
            round + 1,
            n / begin.elapsed().as_secs_f64(),
            (cpu_seconds() - cpu) / n * 1e6
        );
    }
}

fn file_mib(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64) / (1024.0 * 1024.0)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e3
}

fn updates_with_compaction(store: &SqliteStore, value: &[u8], db: &Path) {
    let stop = Arc::new(AtomicBool::new(false));
    let compacting = Arc::new(AtomicBool::new(false));
    // Latencies (without, with compaction).
    let latencies = Arc::new(Mutex::new((Vec::new(), Vec::new())));
    let threads: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (store, stop, compacting, latencies) = (
                store.clone(),
                stop.clone(),
                compacting.clone(),
                latencies.clone(),
            );
            let value = value.to_vec();
            std::thread::spawn(move || {
                let mut revisions: Vec<(String, u64)> = (0..KEYS_PER_WRITER)
                    .map(|k| {
                        let key = format!("/registry/configmaps/steady/w{w}-{k}");
                        let StorageOutput::Written(kv) = run(
                            &store,
                            StorageOp::Create {
                                key: key.clone(),
                                value: value.clone().into(),
                            },
                        ) else {
                            unreachable!()
                        };
                        (key, kv.mod_revision)
                    })
                    .collect();
                let (mut plain, mut compacted) = (Vec::new(), Vec::new());
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let (key, revision) = &mut revisions[i % KEYS_PER_WRITER];
                    let begin = Instant::now();
                    let StorageOutput::Written(kv) = run(
                        &store,
                        StorageOp::Update {
                            key: key.clone(),
                            value: value.clone().into(),
                            expected_revision: *revision,
                        },
                    ) else {
                        unreachable!()
                    };
                    let took = begin.elapsed();
                    *revision = kv.mod_revision;
                    if compacting.load(Ordering::Relaxed) {
                        compacted.push(took);
                    } else {
                        plain.push(took);
                    }
                }
                let mut all = latencies.lock().unwrap();
                all.0.extend(plain);
                all.1.extend(compacted);
            })
        })
        .collect();
    let wal = db.with_extension("db-wal");
    let mut previous = None;
    for second in 1..=2 * HALF {
        std::thread::sleep(Duration::from_secs(1));
        if second > HALF {
            compacting.store(true, Ordering::Relaxed);
            if let Some(revision) = previous {
                run(store, StorageOp::Compact { revision });
            }
            previous = Some(store.current_revision());
        }
        println!(
            "second {second:2}{}: revision {}, database {:.1} MiB, log {:.1} MiB",
            if second > HALF { " (compacting)" } else { "" },
            store.current_revision(),
            file_mib(db),
            file_mib(&wal)
        );
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let (mut plain, mut compacted) = Arc::try_unwrap(latencies).unwrap().into_inner().unwrap();
    plain.sort();
    compacted.sort();
    for (what, sorted) in [
        ("without compaction", &plain),
        ("compacting every second", &compacted),
    ] {
        println!(
            "updates {what}: {:.0}/s, latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            sorted.len() as f64 / HALF as f64,
            percentile(sorted, 0.5),
            percentile(sorted, 0.99),
            sorted.last().unwrap().as_secs_f64() * 1e3
        );
    }
}

fn main() {
    let dir = std::env::temp_dir().join(format!("apiary-group-commit-{}", std::process::id()));
    let db = dir.join("state.db");
    let store = SqliteStore::open(&db, SqliteOptions::default()).unwrap();
    let value = vec![b'x'; 269];
    creates(&store, &value);
    updates_with_compaction(&store, &value, &db);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

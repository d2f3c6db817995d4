//! The store alone, without HTTP: creates per second from 64 concurrent writers (each on
//! its own thread, one write at a time) with synchronous=FULL, and the CPU time each
//! create costs the process. Run: `cargo bench -p apiary-sqlite --bench group_commit`

use apiary_core::storage::{Storage, StorageOp};
use apiary_sqlite::{SqliteOptions, SqliteStore};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const WRITERS: usize = 64;
const ROUND_TIME: Duration = Duration::from_secs(4);

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

fn main() {
    let dir = std::env::temp_dir().join(format!("apiary-group-commit-{}", std::process::id()));
    let store = SqliteStore::open(dir.join("state.db"), SqliteOptions::default()).unwrap();
    let value = vec![b'x'; 269];
    for round in 0..3 {
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU64::new(0));
        let cpu = cpu_seconds();
        let begin = Instant::now();
        let threads: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (store, stop, done, value) =
                    (store.clone(), stop.clone(), done.clone(), value.clone());
                std::thread::spawn(move || {
                    let mut i = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let key = format!("/registry/configmaps/default/r{round}-{w}-{i}");
                        futures_lite::future::block_on(store.run(StorageOp::Create {
                            key,
                            value: value.clone().into(),
                        }))
                        .unwrap();
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
        let secs = begin.elapsed().as_secs_f64();
        println!(
            "round {}: {:.0} creates/s, {:.1} µs of CPU per create",
            round + 1,
            n / secs,
            (cpu_seconds() - cpu) / n * 1e6
        );
    }
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

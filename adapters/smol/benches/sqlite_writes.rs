//! Writes on the sqlite backend, side by side with what sqlite itself does:
//!
//! 1. creates per second over HTTPS from 64 concurrent clients (keep-alive, one
//!    connection each) against the release `apiary` on sqlite with synchronous=FULL;
//! 2. in the same run, alternating with (1), the raw rusqlite rate of single-row
//!    transactions with synchronous=FULL in WAL mode, each row as large as the objects
//!    apiary stored in (1);
//! 3. for reference, the same load as (1) on the memory backend;
//! 4. the time from start to the ready line on a database of 10,000 ConfigMaps, and the
//!    resident memory of that server once idle.
//!
//! Prints each round and the medians. Run: `cargo bench -p apiary-smol --bench sqlite_writes`

mod support;

use std::path::Path;
use std::time::{Duration, Instant};
use support::{create_concurrently, median, memory_kib, Server};

use support::CONNECTIONS;
const ROUND_TIME: Duration = Duration::from_secs(5);
const ROUNDS: usize = 5;
const STARTUP_OBJECTS: usize = 10_000;
const STARTS: usize = 5;

/// Single-row FULL transactions on a fresh WAL database for [`ROUND_TIME`]; per second.
fn raw_sqlite_rate(path: &Path, value_len: usize) -> f64 {
    let _ = std::fs::remove_file(path);
    let conn = rusqlite::Connection::open(path).unwrap();
    // The same page size as apiary's database, set before the file is made.
    conn.execute_batch(&format!("PRAGMA page_size = {};", apiary_sqlite::PAGE_SIZE))
        .unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    conn.execute_batch(
        "PRAGMA synchronous = FULL;
         CREATE TABLE kv (key BLOB PRIMARY KEY, value BLOB NOT NULL);",
    )
    .unwrap();
    let page_size: u32 = conn
        .query_row("PRAGMA page_size", [], |row| row.get(0))
        .unwrap();
    assert_eq!(
        page_size,
        apiary_sqlite::PAGE_SIZE,
        "the same page size as apiary's database"
    );
    let value = vec![b'x'; value_len];
    let begin = Instant::now();
    let mut n = 0u64;
    while begin.elapsed() < ROUND_TIME {
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        conn.prepare_cached("INSERT INTO kv (key, value) VALUES (?1, ?2)")
            .unwrap()
            .execute(rusqlite::params![
                format!("/registry/configmaps/default/raw-{n}").as_bytes(),
                &value
            ])
            .unwrap();
        conn.execute_batch("COMMIT").unwrap();
        n += 1;
    }
    n as f64 / begin.elapsed().as_secs_f64()
}

fn main() {
    let dir = std::env::temp_dir().join(format!("apiary-bench-sqlite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let pki = dir.join("pki");

    // 1 and 2, alternating.
    let server = Server::start_with(
        &dir,
        &["--storage", "sqlite", "--sqlite-synchronous", "full"],
    );
    // Warm up, and learn how large a stored ConfigMap is.
    create_concurrently(&server, &pki, "warmup", |_, done| done >= 640);
    let value_len: f64 = rusqlite::Connection::open(dir.join("state.db"))
        .unwrap()
        .query_row(
            "SELECT avg(length(value)) FROM log WHERE key LIKE CAST('/registry/configmaps/%' AS BLOB)",
            [],
            |row| row.get(0),
        )
        .unwrap();
    let value_len = value_len.round() as usize;
    println!("stored ConfigMap: {value_len} bytes");
    let (mut apiary_rates, mut raw_rates, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let begin = Instant::now();
        let created = create_concurrently(&server, &pki, &format!("r{round}"), |begin, _| {
            begin.elapsed() >= ROUND_TIME
        });
        let rate = created as f64 / begin.elapsed().as_secs_f64();
        let raw = raw_sqlite_rate(&dir.join("raw.db"), value_len);
        println!(
            "round {}: apiary {rate:.0} creates/s over HTTPS ({CONNECTIONS} clients), raw sqlite {raw:.0} transactions/s, ratio {:.2}",
            round + 1,
            rate / raw
        );
        apiary_rates.push(rate);
        raw_rates.push(raw);
        ratios.push(rate / raw);
    }
    drop(server);

    // For reference: the same load on the memory backend, where storage costs nothing.
    let memory_dir = dir.join("memory");
    let server = Server::start_with(&memory_dir, &["--storage", "memory"]);
    let mut memory_rates = Vec::new();
    for round in 0..ROUNDS {
        let begin = Instant::now();
        let created = create_concurrently(
            &server,
            &memory_dir.join("pki"),
            &format!("m{round}"),
            |begin, _| begin.elapsed() >= ROUND_TIME,
        );
        memory_rates.push(created as f64 / begin.elapsed().as_secs_f64());
    }
    drop(server);

    // 3: a database of exactly STARTUP_OBJECTS ConfigMaps (plus the default namespaces).
    let startup_dir = dir.join("startup");
    let server = Server::start_with(&startup_dir, &["--storage", "sqlite"]);
    let made = create_concurrently(&server, &startup_dir.join("pki"), "obj", |_, done| {
        done >= STARTUP_OBJECTS
    });
    drop(server);
    let mut starts = Vec::new();
    let mut idle_rss = Vec::new();
    for _ in 0..STARTS {
        let begin = Instant::now();
        let server = Server::start_with(&startup_dir, &["--storage", "sqlite"]);
        starts.push(begin.elapsed().as_secs_f64() * 1e3);
        std::thread::sleep(Duration::from_secs(2));
        idle_rss.push(memory_kib(server.pid(), "VmRSS:") as f64 / 1024.0);
    }
    let db_mib = std::fs::metadata(startup_dir.join("state.db")).map_or(0.0, |m| m.len() as f64)
        / (1024.0 * 1024.0);
    let _ = std::fs::remove_dir_all(&dir);

    let (apiary, raw) = (median(apiary_rates), median(raw_rates));
    println!();
    println!("creates/s over HTTPS, {CONNECTIONS} clients, sqlite FULL (median): {apiary:.0}");
    println!("raw rusqlite single-row FULL transactions/s (median): {raw:.0}");
    println!(
        "ratio apiary / raw: {:.2} (ratio of the medians), {:.2} (median of the rounds' ratios)",
        apiary / raw,
        median(ratios)
    );
    println!(
        "the same load on --storage memory, for reference (median): {:.0} creates/s",
        median(memory_rates)
    );
    println!(
        "start to ready on {made} ConfigMaps ({db_mib:.1} MiB database), median of {STARTS}: {:.1} ms",
        median(starts)
    );
    println!(
        "resident memory idle after that start (median): {:.1} MiB",
        median(idle_rss)
    );
}

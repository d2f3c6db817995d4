//! Time from starting the release `apiary` binary to its ready line, on a fresh data
//! directory (creating the CA and certificates) and on one that already has them.
//! Prints the medians of several starts.
//!
//! Run: `cargo bench -p apiary-smol --bench startup`

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const STARTS: usize = 11;

/// Start apiary in `dir`, wait for the ready line, stop it; the time to ready.
fn start_once(dir: &Path) -> Duration {
    let begin = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_apiary"))
        .args(["--storage", "memory", "--bind-address", "127.0.0.1", "--secure-port", "0", "--data-dir"])
        .arg(dir)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("apiary starts");
    let stderr = child.stderr.take().expect("stderr");
    for line in BufReader::new(stderr).lines() {
        if line.expect("stderr line").contains("apiary ready at ") {
            break;
        }
    }
    let elapsed = begin.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    elapsed
}

fn median_ms(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    let root = std::env::temp_dir().join(format!("apiary-startup-{}", std::process::id()));
    let fresh: Vec<Duration> = (0..STARTS).map(|i| start_once(&root.join(format!("fresh-{i}")))).collect();
    let warm_dir = root.join("warm");
    start_once(&warm_dir);
    let warm: Vec<Duration> = (0..STARTS).map(|_| start_once(&warm_dir)).collect();
    let _ = std::fs::remove_dir_all(&root);
    println!(
        "startup to ready: median {:.1} ms on a fresh data dir (creates the PKI), {:.1} ms on an existing one ({STARTS} starts each)",
        median_ms(fresh),
        median_ms(warm)
    );
}

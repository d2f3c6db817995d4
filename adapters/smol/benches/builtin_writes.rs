//! Creates of built-in kinds on the real `apiary` binary (release build, memory
//! storage) against another build of it, side by side in one run: a Deployment of
//! about 1 KiB and a Pod of about 4 KiB, each created from 64 keep-alive HTTPS clients
//! for a short round on one server, then on the other, the order swapped each round.
//! Issue 18 asks that its defaulting, validation and typed encoding leave creates at
//! least 0.85 of the build before it.
//!
//! Run: `APIARY_BENCH_BASELINE=/path/to/old/apiary cargo bench -p apiary-smol --bench builtin_writes`
//! (without it, the rates of this build alone).

mod support;

use std::time::{Duration, Instant};
use support::objects::{deployment, pod};
use support::{create_concurrently_with, Server};

const ROUNDS: usize = 6;
const ROUND_TIME: Duration = Duration::from_secs(2);

fn post(path: &str, body: &serde_json::Value) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn deployment_create(name: &str) -> Vec<u8> {
    post("/apis/apps/v1/namespaces/default/deployments", &deployment(name))
}

fn pod_create(name: &str) -> Vec<u8> {
    post("/api/v1/namespaces/default/pods", &pod(name))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    println!(
        "objects: Deployment {} bytes, Pod {} bytes",
        deployment("bench-0-0").to_string().len(),
        pod("bench-0-0").to_string().len()
    );
    let base = std::env::temp_dir().join(format!("apiary-bench-writes-{}", std::process::id()));
    let this = Server::start_binary(env!("CARGO_BIN_EXE_apiary").as_ref(), &base.join("this"), &["--storage", "memory"]);
    let baseline = std::env::var_os("APIARY_BENCH_BASELINE")
        .map(|binary| Server::start_binary(&binary, &base.join("baseline"), &["--storage", "memory"]));
    let mut servers = vec![("this", &this, base.join("this/pki"))];
    if let Some(b) = &baseline {
        servers.push(("baseline", b, base.join("baseline/pki")));
    }
    let kinds: [(&str, fn(&str) -> Vec<u8>); 2] = [("deployments", deployment_create), ("pods", pod_create)];
    // rates[kind][server]
    let mut rates = vec![vec![Vec::new(); servers.len()]; kinds.len()];
    let mut ratios = vec![Vec::new(); kinds.len()];
    for round in 0..ROUNDS {
        for (k, (kind, make)) in kinds.iter().enumerate() {
            let mut order: Vec<usize> = (0..servers.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            let mut this_round = vec![0.0; servers.len()];
            for &s in &order {
                let (name, server, pki) = &servers[s];
                let start = Instant::now();
                let created = create_concurrently_with(server, pki, &format!("{kind}-{round}"), *make, |begin, _| begin.elapsed() >= ROUND_TIME);
                let rate = created as f64 / start.elapsed().as_secs_f64();
                println!("round {round} {kind:<12} {name:<9} {rate:>8.0} creates/s");
                this_round[s] = rate;
                rates[k][s].push(rate);
            }
            if servers.len() == 2 {
                ratios[k].push(this_round[0] / this_round[1]);
            }
        }
    }
    for (k, (kind, _)) in kinds.iter().enumerate() {
        let medians: Vec<String> = servers.iter().enumerate().map(|(s, (name, ..))| format!("{name} {:.0}/s", median(rates[k][s].clone()))).collect();
        let ratio = if ratios[k].is_empty() { String::new() } else { format!(", median ratio this/baseline {:.3}", median(ratios[k].clone())) };
        println!("{kind}: {}{ratio}", medians.join(", "));
    }
    drop(baseline);
    drop(this);
    let _ = std::fs::remove_dir_all(&base);
}

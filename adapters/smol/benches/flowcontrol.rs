//! API Priority and Fairness under a noisy neighbour, on the real `apiary` binary
//! (release build, memory storage), rounds alternating (issue 21): a quiet user's
//! GETs (one connection, one at a time) alone, then while a noisy user loops LISTs
//! of 300 ConfigMaps from 256 connections, each waiting a second after a 429 as
//! client-go waits out `Retry-After` (the in-flight limits refuse nothing here, so
//! their noisy user never waits). Both users are in one priority level of
//! 24 seats (16 queues of 5, hands of 2), a flow each. Reported: the quiet flow's
//! p99 with the noise against its p99 alone (target: within 2×), and how the noisy
//! flow fared (LISTs served, 429s with Retry-After). The same is measured on a
//! server with `--enable-priority-and-fairness=false` (the in-flight limits only),
//! side by side, for comparison.
//!
//! Run: `cargo bench -p apiary-smol --bench flowcontrol`

mod support;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{call, connect, percentile, request, round_trip, tls_config, user_tls_config, Server};

const ROUNDS: usize = 5;
const NOISY_CONNECTIONS: usize = 256;
const QUIET_GETS: usize = 400;
const LIST: &str = "/api/v1/namespaces/apf/configmaps";

/// Objects, access and the priority level, as the admin.
fn set_up(server: &Server, pki: &Path) {
    let admin = tls_config(pki);
    smol::block_on(async {
        let mut stream = connect(&server.addr, &admin).await;
        let mut bodies = vec![
            ("/api/v1/namespaces".to_owned(), r#"{"metadata":{"name":"apf"}}"#.to_owned()),
            ("/apis/rbac.authorization.k8s.io/v1/clusterroles".to_owned(),
             r#"{"metadata":{"name":"reader"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list"]}]}"#.to_owned()),
            ("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings".to_owned(),
             r#"{"metadata":{"name":"reader"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"reader"},"subjects":[{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"dev"}]}"#.to_owned()),
            ("/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations".to_owned(),
             r#"{"metadata":{"name":"apf-bench"},"spec":{"type":"Limited","limited":{"nominalConcurrencyShares":10,"lendablePercent":0,"borrowingLimitPercent":0,"limitResponse":{"type":"Queue","queuing":{"queues":16,"handSize":2,"queueLengthLimit":5}}}}}"#.to_owned()),
            ("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas".to_owned(),
             r#"{"metadata":{"name":"apf-bench"},"spec":{"matchingPrecedence":500,"priorityLevelConfiguration":{"name":"apf-bench"},"distinguisherMethod":{"type":"ByUser"},"rules":[{"subjects":[{"kind":"Group","group":{"name":"dev"}}],"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"],"namespaces":["*"]}]}]}}"#.to_owned()),
        ];
        for i in 0..300 {
            bodies.push((
                LIST.to_owned(),
                format!(r#"{{"metadata":{{"name":"cm-{i}"}},"data":{{"payload":"{}"}}}}"#, "x".repeat(512)),
            ));
        }
        for (path, body) in bodies {
            let (status, answer) = call(&mut stream, &request("POST", &path, &body)).await;
            assert_eq!(status, 201, "{path}: {answer}");
        }
    });
}

/// One round: the quiet flow's latencies (ms), and the noisy flow's LISTs served and
/// refused, when `noisy` is set.
fn round(server: &Server, pki: &Path, noisy: bool) -> (Vec<f64>, usize, usize) {
    let quiet_tls = user_tls_config(pki, "quiet", "dev");
    let noisy_tls = user_tls_config(pki, "noisy", "dev");
    smol::block_on(async {
        let stop = Arc::new(AtomicBool::new(false));
        let (served, refused) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let list = Arc::new(request("GET", LIST, ""));
        let mut noise = Vec::new();
        if noisy {
            for _ in 0..NOISY_CONNECTIONS {
                let (addr, tls, list) = (server.addr.clone(), noisy_tls.clone(), list.clone());
                let (stop, served, refused) = (stop.clone(), served.clone(), refused.clone());
                noise.push(smol::spawn(async move {
                    let mut stream = connect(&addr, &tls).await;
                    let mut buf = Vec::with_capacity(256 * 1024);
                    while !stop.load(Ordering::Relaxed) {
                        match round_trip(&mut stream, &list, &mut buf).await {
                            200 => served.fetch_add(1, Ordering::Relaxed),
                            429 => {
                                // Told to retry later, it waits as client-go does: the
                                // answer's Retry-After, a second at first.
                                smol::Timer::after(Duration::from_secs(1)).await;
                                refused.fetch_add(1, Ordering::Relaxed)
                            }
                            other => panic!("noisy LIST: {other}"),
                        };
                    }
                }));
            }
            // Let the noise build up.
            smol::Timer::after(Duration::from_millis(500)).await;
        }
        let mut stream = connect(&server.addr, &quiet_tls).await;
        let mut buf = Vec::new();
        let mut latencies = Vec::with_capacity(QUIET_GETS);
        for i in 0..QUIET_GETS {
            let get = request("GET", &format!("{LIST}/cm-{}", i % 300), "");
            let started = Instant::now();
            let status = round_trip(&mut stream, &get, &mut buf).await;
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(status, 200, "quiet GET: {}", String::from_utf8_lossy(&buf));
        }
        stop.store(true, Ordering::Relaxed);
        for task in noise {
            task.await;
        }
        (latencies, served.load(Ordering::Relaxed), refused.load(Ordering::Relaxed))
    })
}

fn main() {
    let dirs = [support::bench_dir("apf-on"), support::bench_dir("apf-off")];
    let servers = [
        Server::start_with(&dirs[0], &["--storage", "memory"]),
        Server::start_with(&dirs[1], &["--storage", "memory", "--enable-priority-and-fairness=false"]),
    ];
    let pkis: Vec<_> = dirs.iter().map(|d| d.join("pki")).collect();
    for (server, pki) in servers.iter().zip(&pkis) {
        set_up(server, pki);
    }
    let names = ["priority and fairness", "in-flight limits only"];
    let mut alone: [Vec<f64>; 2] = Default::default();
    let mut noisy: [Vec<f64>; 2] = Default::default();
    let mut lists = [(0usize, 0usize); 2];
    for r in 0..ROUNDS {
        for s in [r % 2, 1 - r % 2] {
            let (quiet, ..) = round(&servers[s], &pkis[s], false);
            alone[s].push(percentile(quiet, 0.99));
            let (quiet, served, refused) = round(&servers[s], &pkis[s], true);
            noisy[s].push(percentile(quiet, 0.99));
            lists[s].0 += served;
            lists[s].1 += refused;
        }
    }
    for s in 0..2 {
        let (a, n) = (support::median(alone[s].clone()), support::median(noisy[s].clone()));
        println!(
            "{}: quiet GET p99 alone {a:.2} ms, with {NOISY_CONNECTIONS} noisy LIST loops {n:.2} ms, ratio {:.2}x (rounds: alone {:?}, noisy {:?}); noisy LISTs served {}, refused 429 {}",
            names[s],
            n / a,
            alone[s].iter().map(|v| (v * 100.0).round() / 100.0).collect::<Vec<_>>(),
            noisy[s].iter().map(|v| (v * 100.0).round() / 100.0).collect::<Vec<_>>(),
            lists[s].0,
            lists[s].1,
        );
    }
}

//! Object lifecycle on the real `apiary` binary (release build), on memory and on
//! sqlite storage:
//!
//! - a namespace holding 10,000 ConfigMaps, from its DELETE until it is gone (the
//!   namespace controller empties and finalizes it);
//! - 10,000 ConfigMaps owned by one, from the owner's DELETE until the last dependent
//!   is gone (the garbage collector, in the background);
//! - the CPU the server spends idle afterwards (the controllers only look when
//!   something changed).
//!
//! Run: `cargo bench -p apiary-smol --bench lifecycle`

mod support;

use std::time::{Duration, Instant};
use support::{call, connect, median, request, round_trip, tls_config, Server, Tls, CONNECTIONS};

const OBJECTS: usize = 10_000;
const ROUNDS: usize = 3;

/// Create [`OBJECTS`] ConfigMaps in `namespace` from [`CONNECTIONS`] clients, each with
/// `metadata` (JSON members) added.
async fn fill(addr: &str, config: &std::sync::Arc<futures_rustls::rustls::ClientConfig>, namespace: &str, metadata: &str) {
    let per = OBJECTS / CONNECTIONS + 1;
    let tasks: Vec<_> = (0..CONNECTIONS)
        .map(|c| {
            let (addr, config, namespace, metadata) = (addr.to_owned(), config.clone(), namespace.to_owned(), metadata.to_owned());
            smol::spawn(async move {
                let mut stream = connect(&addr, &config).await;
                let mut buf = Vec::with_capacity(4096);
                for i in (0..per).filter(|i| c * per + i < OBJECTS) {
                    let body = format!(
                        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm-{c}-{i}"{metadata}}},"data":{{"key":"value"}}}}"#
                    );
                    let post = request("POST", &format!("/api/v1/namespaces/{namespace}/configmaps"), &body);
                    let status = round_trip(&mut stream, &post, &mut buf).await;
                    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&buf));
                }
            })
        })
        .collect();
    for t in tasks {
        t.await;
    }
}

/// Poll `path` until it answers `gone` (404, or an empty list); how long that took.
async fn until_gone(stream: &mut Tls, path: &str, begin: Instant) -> Duration {
    let get = request("GET", path, "");
    loop {
        let (status, body) = call(stream, &get).await;
        if status == 404 || (status == 200 && body.contains(r#""items":[]"#)) {
            return begin.elapsed();
        }
        smol::Timer::after(Duration::from_millis(5)).await;
    }
}

/// The CPU time (user + system) the process has used.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc stat");
    // Fields after the command (which may hold spaces): utime is the 12th, stime the 13th.
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap_or(0) + fields[12].parse::<u64>().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

fn run(storage: &str) {
    let dir = std::env::temp_dir().join(format!("apiary-bench-lifecycle-{storage}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let server = Server::start_with(&dir, &["--storage", storage]);
    let pki = dir.join("pki");
    let config = tls_config(&pki);
    let (mut namespace_times, mut collect_times) = (Vec::new(), Vec::new());
    smol::block_on(async {
        let mut stream = connect(&server.addr, &config).await;
        for round in 0..ROUNDS {
            // A namespace of 10,000 objects, deleted.
            let ns = format!("bench-{round}");
            let body = format!(r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{ns}"}}}}"#);
            assert_eq!(call(&mut stream, &request("POST", "/api/v1/namespaces", &body)).await.0, 201);
            fill(&server.addr, &config, &ns, "").await;
            let begin = Instant::now();
            assert_eq!(call(&mut stream, &request("DELETE", &format!("/api/v1/namespaces/{ns}"), "")).await.0, 200);
            namespace_times.push(until_gone(&mut stream, &format!("/api/v1/namespaces/{ns}"), begin).await.as_secs_f64());

            // 10,000 dependents of one owner (in their namespace), collected once it is
            // deleted.
            let owner = format!("owner-{round}");
            let gc_ns = format!("gc-{round}");
            let body = format!(r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{gc_ns}"}}}}"#);
            assert_eq!(call(&mut stream, &request("POST", "/api/v1/namespaces", &body)).await.0, 201);
            let body = format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{owner}"}}}}"#);
            let (_, created) = call(&mut stream, &request("POST", &format!("/api/v1/namespaces/{gc_ns}/configmaps"), &body)).await;
            let uid = serde_json::from_str::<serde_json::Value>(&created).unwrap()["metadata"]["uid"].as_str().unwrap().to_owned();
            let refs = format!(
                r#","labels":{{"owned":"yes"}},"ownerReferences":[{{"apiVersion":"v1","kind":"ConfigMap","name":"{owner}","uid":"{uid}"}}]"#
            );
            fill(&server.addr, &config, &gc_ns, &refs).await;
            let begin = Instant::now();
            let delete = request("DELETE", &format!("/api/v1/namespaces/{gc_ns}/configmaps/{owner}"), "");
            assert_eq!(call(&mut stream, &delete).await.0, 200);
            let owned = format!("/api/v1/namespaces/{gc_ns}/configmaps?labelSelector=owned%3Dyes&limit=1");
            collect_times.push(until_gone(&mut stream, &owned, begin).await.as_secs_f64());
        }
    });
    // Idle: nothing changes, so the controllers should not look.
    std::thread::sleep(Duration::from_secs(2));
    let before = cpu_time(server.pid());
    std::thread::sleep(Duration::from_secs(10));
    let idle = cpu_time(server.pid()) - before;
    println!(
        "{storage}: namespace of {OBJECTS} ConfigMaps, DELETE to gone: median {:.3} s ({:?}); {OBJECTS} dependents collected after their owner's DELETE: median {:.3} s ({:?}); idle CPU over 10 s: {} ms",
        median(namespace_times.clone()),
        namespace_times.iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>(),
        median(collect_times.clone()),
        collect_times.iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>(),
        idle.as_millis()
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    for storage in ["memory", "sqlite"] {
        run(storage);
    }
}

//! Server-side apply through the core alone, over the memory backend, no sockets: a
//! Deployment of about 4 KiB applied by one manager, each apply changing the image
//! and replicas (so it is stored), and re-applied unchanged (a no-op apply); beside it
//! a JSON merge patch of the same change, and the apply engine alone (merge, field
//! sets, conflicts, managed fields) without decoding or storage. Prints medians of
//! several rounds.
//!
//! Run: `cargo bench -p apiary-core --bench core_apply`

mod support;

use apiary_core::apply::FieldManager;
use apiary_core::{Config, Server};
use apiary_memory::MemoryStore;
use bytes::Bytes;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::drive;

const PATH: &str = "/apis/apps/v1/namespaces/default/deployments/web";
/// The object the merge patches go to: apart, so they take no fields from the applier.
const MERGED: &str = "/apis/apps/v1/namespaces/default/deployments/merged";

/// A Deployment of about 4 KiB: three containers with ports, env, mounts, resources
/// and probes.
fn deployment(version: u32) -> Value {
    let container = |name: &str, port: u32| {
        json!({
            "name": name,
            "image": format!("registry.example.com/team/{name}:{version}"),
            "imagePullPolicy": "IfNotPresent",
            "args": ["--port", port.to_string(), "--log-level", "info"],
            "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"},
                      {"name": "metrics", "containerPort": port + 1000, "protocol": "TCP"}],
            "env": (0..10).map(|i| json!({"name": format!("SETTING_{i}"), "value": format!("value-of-setting-{i}")})).collect::<Vec<_>>(),
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": port}, "periodSeconds": 5},
            "livenessProbe": {"httpGet": {"path": "/live", "port": port}, "periodSeconds": 10},
            "volumeMounts": [{"name": "cache", "mountPath": format!("/cache/{name}")},
                             {"name": "config", "mountPath": format!("/etc/{name}")}]
        })
    };
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", "tier": "frontend", "team": "a"},
                     "annotations": {"owner": "team-a", "runbook": "https://runbooks.example.com/web"}},
        "spec": {
            "replicas": 3 + version % 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "frontend"}},
                "spec": {
                    "containers": [container("web", 8080), container("sidecar", 8081), container("proxy", 8082)],
                    "volumes": [{"name": "cache", "emptyDir": {}}, {"name": "config", "configMap": {"name": "web-config"}}],
                    "terminationGracePeriodSeconds": 30
                }
            }
        }
    })
}

fn patch(content_type: &str, query: &str, body: &Value) -> http::Request<Bytes> {
    patch_at(PATH, content_type, query, body)
}

fn patch_at(path: &str, content_type: &str, query: &str, body: &Value) -> http::Request<Bytes> {
    http::Request::patch(format!("{path}?{query}"))
        .header("content-type", content_type)
        .body(Bytes::from(body.to_string()))
        .unwrap()
}

fn median(mut rounds: Vec<Duration>) -> Duration {
    rounds.sort();
    rounds[rounds.len() / 2]
}

fn report(label: &str, rounds: Vec<Duration>) {
    let m = median(rounds);
    println!(
        "{label}: median {:.1} µs ({:.0}/s on one core)",
        m.as_secs_f64() * 1e6,
        1.0 / m.as_secs_f64()
    );
}

fn main() {
    let server = Server::new(Config::default());
    let store = MemoryStore::new();
    support::bootstrap(&server, &store);
    println!(
        "applied configuration: {} bytes of JSON",
        deployment(0).to_string().len()
    );
    const APPLY: &str = "application/apply-patch+yaml";
    let r = drive(
        &server,
        &store,
        patch(APPLY, "fieldManager=bench", &deployment(0)),
    );
    assert_eq!(r.status(), 201, "{:?}", r.body());
    let mut other = deployment(0);
    other["metadata"]["name"] = json!("merged");
    let r = drive(
        &server,
        &store,
        patch_at(MERGED, APPLY, "fieldManager=bench", &other),
    );
    assert_eq!(r.status(), 201, "{:?}", r.body());

    let per_round = 1_000;
    let (mut changed, mut unchanged, mut merge) = (Vec::new(), Vec::new(), Vec::new());
    let mut version = 1;
    for _ in 0..9 {
        let bodies: Vec<Value> = (0..per_round).map(|i| deployment(version + i)).collect();
        version += per_round;
        let start = Instant::now();
        for body in &bodies {
            let r = drive(&server, &store, patch(APPLY, "fieldManager=bench", body));
            assert_eq!(r.status(), 200, "{:?}", r.body());
        }
        changed.push(start.elapsed() / per_round);

        let same = deployment(version - 1);
        let start = Instant::now();
        for _ in 0..per_round {
            let r = drive(&server, &store, patch(APPLY, "fieldManager=bench", &same));
            assert_eq!(r.status(), 200);
        }
        unchanged.push(start.elapsed() / per_round);

        let start = Instant::now();
        for body in &bodies {
            let mut body = body.clone();
            body["metadata"]["name"] = json!("merged");
            let r = drive(
                &server,
                &store,
                patch_at(
                    MERGED,
                    "application/merge-patch+json",
                    "fieldManager=patcher",
                    &body,
                ),
            );
            assert_eq!(r.status(), 200);
        }
        merge.push(start.elapsed() / per_round);
    }
    report(
        "core apply of the Deployment, changed each time (stored)",
        changed,
    );
    report(
        "core apply of the Deployment, unchanged (no write)",
        unchanged,
    );
    report(
        "core JSON merge patch of the same change, for comparison",
        merge,
    );

    // The engine alone: apply to the live object, managed fields and all.
    let live = {
        let r = drive(
            &server,
            &store,
            http::Request::get(PATH).body(Bytes::new()).unwrap(),
        );
        serde_json::from_slice::<Value>(r.body()).unwrap()
    };
    let manager = FieldManager::new("apps", "v1", "Deployment", "", true);
    let mut engine = Vec::new();
    for _ in 0..9 {
        let configs: Vec<Value> = (0..per_round).map(|i| deployment(version + i)).collect();
        let start = Instant::now();
        for config in &configs {
            std::hint::black_box(
                manager
                    .apply(Some(&live), config, "bench", false, "2026-11-22T00:00:00Z")
                    .unwrap(),
            );
        }
        engine.push(start.elapsed() / per_round);
    }
    report(
        "apply engine alone (merge, field sets, conflicts, managed fields)",
        engine,
    );
}

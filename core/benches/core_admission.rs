//! ConfigMap creates through the whole core (the harness: HTTP/1.1 bytes in and out,
//! memory storage, watch caches fed), without admission configurations and under one
//! ValidatingAdmissionPolicy of three CEL validations bound to every ConfigMap (the
//! policy `admission_writes` runs on the binary): the median on-CPU time per create of
//! each, rounds alternating. Shows what the policy path costs without sockets. The
//! harness lets the reflector and the built-in controllers catch up after every write,
//! on both servers alike: read the difference, not the ratio.
//!
//! Run: `cargo bench -p apiary-core --bench core_admission`

mod support;

use apiary_core::harness::Harness;
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::json;
use std::time::Duration;
use support::thread_cpu;

const ROUNDS: usize = 7;
const CREATES: usize = 2000;


fn server(policy: bool) -> Harness<MemoryStore> {
    let h = Harness::new(Config::default(), MemoryStore::new());
    if policy {
        let rule = json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]);
        let vap = json!({"metadata": {"name": "bench"}, "spec": {
            "matchConstraints": {"resourceRules": rule},
            "validations": [
                {"expression": "object.metadata.name.size() < 64"},
                {"expression": "!has(object.data) || object.data.all(k, object.data[k].size() < 1024)"},
                {"expression": "has(object.metadata.labels) && object.metadata.labels['app'] == 'bench'", "message": "app=bench"},
            ],
        }});
        let binding = json!({"metadata": {"name": "bench"}, "spec": {"policyName": "bench", "validationActions": ["Deny"]}});
        for (path, body) in [("validatingadmissionpolicies", vap), ("validatingadmissionpolicybindings", binding)] {
            let reply = h.json_call("POST", &format!("/apis/admissionregistration.k8s.io/v1/{path}"), "application/json", Some(&body));
            assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.body));
        }
    }
    h.reflect();
    h
}

/// On-CPU time per create of `n` ConfigMaps.
fn creates(h: &Harness<MemoryStore>, round: usize, n: usize) -> Duration {
    let start = thread_cpu();
    for i in 0..n {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{round}-{i}"), "labels": {"app": "bench"}}, "data": {"key": "value", "other": "some more configuration text"}});
        let reply = h.json_call("POST", "/api/v1/namespaces/default/configmaps", "application/json", Some(&body));
        assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.body));
    }
    (thread_cpu() - start) / n as u32
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let only_policy = std::env::args().any(|a| a == "policy");
    let (plain, policed) = (server(false), server(true));
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        if !only_policy {
            a.push(creates(&plain, round, CREATES));
        }
        b.push(creates(&policed, round, CREATES));
    }
    if !only_policy {
        let (a, b) = (median(a), median(b));
        println!("ConfigMap create: {a:?} without configurations, {b:?} under one policy of three validations ({:.2}x the time)", b.as_secs_f64() / a.as_secs_f64());
    } else {
        println!("under one policy: {:?}", median(b));
    }
}

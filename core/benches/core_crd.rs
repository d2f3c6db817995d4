//! Custom resources against ConfigMaps through the core alone, interleaved in one run:
//! creates and GETs of a small custom resource (its schema validated, pruned and
//! defaulted) and of a ConfigMap of about the same size, over the memory backend, no
//! sockets, in short alternating batches. Prints the median time per request of each,
//! and the custom resource's rate as a fraction of the ConfigMap's (issue 16 asks for
//! ≥ 0.8).
//!
//! Run: `cargo bench -p apiary-core --bench core_crd`

mod support;

use apiary_core::harness::{parse_responses, Harness};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use bytes::Bytes;
use serde_json::json;
use std::time::{Duration, Instant};
use support::drive;

const ROUNDS: usize = 21;
const PER_ROUND: usize = 400;
const BATCH: usize = 20;

const CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"widgets.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
  "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
   "schema":{"openAPIV3Schema":{"type":"object","properties":{
    "spec":{"type":"object","required":["image"],"properties":{
     "image":{"type":"string","maxLength":128},
     "replicas":{"type":"integer","minimum":0,"maximum":100,"default":1},
     "mode":{"type":"string","enum":["fast","safe"],"default":"safe"},
     "labels":{"type":"object","additionalProperties":{"type":"string"}}}},
    "status":{"type":"object","properties":{"ready":{"type":"integer"}}}}}}}]}}"#;

fn widget(name: &str) -> String {
    format!(r#"{{"apiVersion":"example.com/v1","kind":"Widget","metadata":{{"name":"{name}"}},"spec":{{"image":"nginx:1.27","replicas":3,"labels":{{"app":"web"}}}}}}"#)
}

fn configmap(name: &str) -> String {
    format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{{"image":"nginx:1.27","replicas":"3","app":"web"}}}}"#)
}

fn request(method: &str, path: &str, body: String) -> http::Request<Bytes> {
    http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(Bytes::from(body))
        .unwrap()
}

/// The median of the batches, per request.
fn median(mut batches: Vec<Duration>) -> Duration {
    batches.sort();
    batches[batches.len() / 2] / BATCH as u32
}

fn main() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let crd = format!(
        "POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions HTTP/1.1\r\nHost: apiary\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{CRD}",
        CRD.len()
    );
    let created = parse_responses(&h.send(crd.as_bytes())).unwrap().remove(0);
    assert_eq!(created.status, 201);

    let paths = [
        ("configmaps", "/api/v1/namespaces/default/configmaps", configmap as fn(&str) -> String),
        ("widgets", "/apis/example.com/v1/namespaces/default/widgets", widget),
    ];
    // The kinds alternate in small batches, and each batch is one sample: on a busy
    // machine the median of many short samples is what the code costs, whatever else
    // ran in between.
    let mut creates = [Vec::new(), Vec::new()];
    let mut gets = [Vec::new(), Vec::new()];
    for round in 0..ROUNDS {
        for batch in 0..PER_ROUND / BATCH {
            for (k, (_, path, body)) in paths.iter().enumerate() {
                let names: Vec<String> = (0..BATCH).map(|i| format!("o-{round}-{}", batch * BATCH + i)).collect();
                let start = Instant::now();
                for name in &names {
                    let r = drive(&h.server, &h.store, request("POST", path, body(name)));
                    assert_eq!(r.status(), 201, "{}", String::from_utf8_lossy(r.body()));
                }
                creates[k].push(start.elapsed());
                let start = Instant::now();
                for name in &names {
                    let r = drive(&h.server, &h.store, request("GET", &format!("{path}/{name}"), String::new()));
                    assert_eq!(r.status(), 200);
                }
                gets[k].push(start.elapsed());
            }
        }
    }
    let defaulted: serde_json::Value = serde_json::from_slice(
        drive(&h.server, &h.store, request("GET", "/apis/example.com/v1/namespaces/default/widgets/o-0-0", String::new())).body(),
    )
    .unwrap();
    assert_eq!(defaulted["spec"]["mode"], json!("safe"), "the schema applied");

    let [cm_create, cr_create] = creates.map(median);
    let [cm_get, cr_get] = gets.map(median);
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("create: configmap {:.1} µs, widget {:.1} µs: widget rate {:.2}× the configmap's", us(cm_create), us(cr_create), us(cm_create) / us(cr_create));
    println!("get:    configmap {:.1} µs, widget {:.1} µs: widget rate {:.2}× the configmap's", us(cm_get), us(cr_get), us(cm_get) / us(cr_get));
}

//! API Priority and Fairness over the deterministic whole server: requests are
//! classified (their answers name the FlowSchema and priority level), run on their
//! level's seats, are turned away with upstream's 429 when the level has none, and
//! `system:masters` and health probes are exempt.

use apiary_core::authorization::{Authorizer, Mode};
use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;

fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\n\r\n").into_bytes()
}

fn post(path: &str, body: &str) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nHost: apiary\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn configmap(name: &str) -> String {
    format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}}}}"#)
}

fn one(bytes: &[u8]) -> Reply {
    let mut replies = parse_responses(bytes).expect("well-formed HTTP/1.1");
    assert_eq!(replies.len(), 1, "{}", String::from_utf8_lossy(bytes));
    replies.remove(0)
}

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// A server of `seats` seats where every user may do anything.
fn harness(seats: usize) -> Harness<MemoryStore> {
    Harness::new(
        Config {
            inflight: apiary_core::inflight::Limits {
                max_requests_inflight: seats - 1,
                max_mutating_requests_inflight: 1,
            },
            authorizer: Authorizer::new(vec![Mode::AlwaysAllow]),
            ..Config::default()
        },
        MemoryStore::new(),
    )
}

#[test]
fn answers_name_the_classification_and_a_full_level_answers_429() {
    let h = harness(2);
    h.act_as(Some("dev"), &["system:authenticated"]);
    let ok = one(&h.send(&get(CONFIGMAPS)));
    assert_eq!(ok.status, 200);
    assert!(ok.header("x-kubernetes-pf-flowschema-uid").is_some(), "{:?}", ok.headers);
    assert!(ok.header("x-kubernetes-pf-prioritylevel-uid").is_some());

    // catch-all rejects when its seats are taken: two writes held at storage.
    let mut answered = Vec::new();
    let first = h.start(&post(CONFIGMAPS, &configmap("a")), &mut answered).expect("held at storage");
    let second = h.start(&post(CONFIGMAPS, &configmap("b")), &mut answered).expect("held at storage");
    let refused = one(&h.send(&get(CONFIGMAPS)));
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(&refused.body[..], b"Too many requests, please try again later.\n");
    assert!(refused.header("x-kubernetes-pf-flowschema-uid").is_some());

    // system:masters never waits.
    h.act_as(Some("root"), &["system:masters"]);
    assert_eq!(one(&h.send(&get(CONFIGMAPS))).status, 200);

    // The seats come back with the answers.
    h.act_as(Some("dev"), &["system:authenticated"]);
    assert_eq!(one(&h.finish(first)).status, 201);
    assert_eq!(one(&h.finish(second)).status, 201);
    assert_eq!(one(&h.send(&get(CONFIGMAPS))).status, 200);

    let metrics = String::from_utf8_lossy(&one(&{
        h.act_as(Some("root"), &["system:masters"]);
        h.send(&get("/metrics"))
    }).body)
    .into_owned();
    assert!(metrics.contains(r#"apiserver_flowcontrol_rejected_requests_total{flow_schema="catch-all",priority_level="catch-all",reason="concurrency-limit"} 1"#), "{metrics}");
    assert!(metrics.contains(r#"apiserver_flowcontrol_nominal_limit_seats{priority_level="catch-all"} 2"#));
}

#[test]
fn without_priority_and_fairness_answers_name_nothing() {
    let h = Harness::new(Config { priority_and_fairness: false, ..Config::default() }, MemoryStore::new());
    let ok = one(&h.send(&get(CONFIGMAPS)));
    assert_eq!(ok.status, 200);
    assert_eq!(ok.header("x-kubernetes-pf-flowschema-uid"), None);
}

//! API Priority and Fairness over the deterministic whole server: requests are
//! classified (their answers name the FlowSchema and priority level), run on their
//! level's seats, are turned away with upstream's 429 when the level has none, and
//! `system:masters` and health probes are exempt.

use apiary_core::authorization::{Authorizer, Mode};
use apiary_core::harness::{json_request, parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

fn get(path: &str) -> Vec<u8> {
    json_request("GET", path, "", "")
}

fn post(path: &str, body: &str) -> Vec<u8> {
    json_request("POST", path, "", body)
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

/// A server where every user may do anything, of 600 seats as kube-apiserver's
/// defaults give.
fn harness() -> Harness<MemoryStore> {
    Harness::new(
        Config { authorizer: Authorizer::new(vec![Mode::AlwaysAllow]), ..Config::default() },
        MemoryStore::new(),
    )
}

/// As system:masters: a priority level of `limit` and a FlowSchema sending user `dev`
/// to it; their UIDs.
fn level_for_dev(h: &Harness<MemoryStore>, shares: u32, limit: Value) -> (String, String) {
    h.act_as(Some("root"), &["system:masters"]);
    let level = h.json_call(
        "POST",
        "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
        "application/json",
        Some(&json!({"metadata": {"name": "dev-level"}, "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": shares, "lendablePercent": 0, "borrowingLimitPercent": 0, "limitResponse": limit}}})),
    );
    assert_eq!(level.status, 201, "{}", level.json());
    let schema = h.json_call(
        "POST",
        "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
        "application/json",
        Some(&json!({"metadata": {"name": "dev-schema"}, "spec": {
            "matchingPrecedence": 500, "priorityLevelConfiguration": {"name": "dev-level"},
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "dev"}}],
                       "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"], "clusterScope": true}]}]}})),
    );
    assert_eq!(schema.status, 201, "{}", schema.json());
    h.act_as(Some("dev"), &["system:authenticated"]);
    let uid = |r: &Reply| r.json()["metadata"]["uid"].as_str().unwrap().to_owned();
    (uid(&schema), uid(&level))
}

/// Hold writes of `dev` at storage until one is not held: the held ones and the bytes
/// of the one that was not.
fn fill(h: &Harness<MemoryStore>) -> (Vec<apiary_core::harness::Held>, Vec<u8>) {
    let mut held = Vec::new();
    for i in 0..1000 {
        let mut answered = Vec::new();
        match h.start(&post(CONFIGMAPS, &configmap(&format!("cm-{i}"))), &mut answered) {
            Some(request) if !request.is_queued() => held.push(request),
            Some(queued) => {
                held.push(queued);
                return (held, Vec::new());
            }
            None => return (held, answered),
        }
    }
    panic!("the level never filled");
}

#[test]
fn answers_name_the_classification_and_exempt_requests_never_wait() {
    let h = harness();
    h.act_as(Some("dev"), &["system:authenticated"]);
    let ok = one(&h.send(&get(CONFIGMAPS)));
    assert_eq!(ok.status, 200);
    // global-default, as the bootstrap configuration sends authenticated users.
    h.act_as(Some("root"), &["system:masters"]);
    let uid = |path: &str| h.json_call("GET", path, "application/json", None).json()["metadata"]["uid"].as_str().unwrap().to_owned();
    let schema = uid("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/global-default");
    let level = uid("/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/global-default");
    assert_eq!(ok.header("x-kubernetes-pf-flowschema-uid"), Some(schema.as_str()), "{:?}", ok.headers);
    assert_eq!(ok.header("x-kubernetes-pf-prioritylevel-uid"), Some(level.as_str()));
    // system:masters goes to exempt; health probes of anyone too.
    let exempt = uid("/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/exempt");
    let root = one(&h.send(&get(CONFIGMAPS)));
    assert_eq!(root.header("x-kubernetes-pf-prioritylevel-uid"), Some(exempt.as_str()));
    h.act_as(None, &[]);
    let probe = one(&h.send(&get("/readyz")));
    assert_eq!(probe.status, 200);
    assert_eq!(probe.header("x-kubernetes-pf-prioritylevel-uid"), Some(exempt.as_str()));
}

#[test]
fn a_rejecting_level_answers_429_when_its_seats_are_taken() {
    let h = harness();
    let (schema, level) = level_for_dev(&h, 1, json!({"type": "Reject"}));
    let (held, refused) = fill(&h);
    assert!(!held.is_empty());
    let refused = one(&refused);
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(&refused.body[..], b"Too many requests, please try again later.\n");
    assert_eq!(refused.header("x-kubernetes-pf-flowschema-uid"), Some(schema.as_str()));
    assert_eq!(refused.header("x-kubernetes-pf-prioritylevel-uid"), Some(level.as_str()));
    // system:masters is served meanwhile.
    h.act_as(Some("root"), &["system:masters"]);
    assert_eq!(one(&h.send(&get(CONFIGMAPS))).status, 200);
    // The seats come back with the answers.
    h.act_as(Some("dev"), &["system:authenticated"]);
    for request in held {
        assert_eq!(one(&h.finish(request)).status, 201);
    }
    assert_eq!(one(&h.send(&get(CONFIGMAPS))).status, 200);

    h.act_as(Some("root"), &["system:masters"]);
    let metrics = String::from_utf8_lossy(&one(&h.send(&get("/metrics"))).body).into_owned();
    assert!(metrics.contains(r#"apiserver_flowcontrol_rejected_requests_total{flow_schema="dev-schema",priority_level="dev-level",reason="concurrency-limit"} 1"#), "{metrics}");
    assert!(metrics.contains(r#"apiserver_flowcontrol_nominal_limit_seats{priority_level="dev-level"}"#));
}

#[test]
fn a_queued_request_runs_when_a_seat_frees_and_gives_up_at_its_wait_limit() {
    let h = harness();
    // One queue of one: a second waiting request is refused at once.
    let limit = json!({"type": "Queue", "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 1}});
    level_for_dev(&h, 1, limit);
    let (mut held, _) = fill(&h);
    let queued = held.pop().expect("one queued");
    assert!(queued.is_queued());
    let full = one(&h.send(&post(CONFIGMAPS, &configmap("no-room"))));
    assert_eq!(full.status, 429);
    // A seat comes back: the queued request runs.
    assert_eq!(one(&h.finish(held.pop().unwrap())).status, 201);
    assert_eq!(one(&h.finish(queued)).status, 201);

    // Queued again with every seat held: after a quarter of its minute, 429.
    let mut answered = Vec::new();
    held.push(h.start(&post(CONFIGMAPS, &configmap("refill")), &mut answered).expect("held at storage"));
    let waiting = h.start(&post(CONFIGMAPS, &configmap("late")), &mut answered).expect("queued");
    assert!(waiting.is_queued());
    let before = h.now();
    let late = one(&h.finish(waiting));
    assert_eq!(late.status, 429);
    assert_eq!(h.now() - before, std::time::Duration::from_secs(15));
    for request in held {
        assert_eq!(one(&h.finish(request)).status, 201);
    }
    h.act_as(Some("root"), &["system:masters"]);
    let metrics = String::from_utf8_lossy(&one(&h.send(&get("/metrics"))).body).into_owned();
    for reason in ["queue-full", "time-out"] {
        let line = format!(r#"apiserver_flowcontrol_rejected_requests_total{{flow_schema="dev-schema",priority_level="dev-level",reason="{reason}"}} 1"#);
        assert!(metrics.contains(&line), "{line} in {metrics}");
    }
}

#[test]
fn without_priority_and_fairness_answers_name_nothing() {
    let h = Harness::new(Config { priority_and_fairness: false, ..Config::default() }, MemoryStore::new());
    let ok = one(&h.send(&get(CONFIGMAPS)));
    assert_eq!(ok.status, 200);
    assert_eq!(ok.header("x-kubernetes-pf-flowschema-uid"), None);
}

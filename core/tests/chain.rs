//! The whole request chain, bytes in and bytes out, over the memory store on a fake
//! clock: the deterministic harness as the next stages' tests use it.

use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::lifecycle::{Action, LifecycleConfig};
use apiary_core::authorization::{Authorizer, Mode};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use std::time::Duration;

fn harness(config: Config) -> Harness<MemoryStore> {
    Harness::new(config, MemoryStore::new())
}

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
    format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{{"k":"v"}}}}"#)
}

fn one(bytes: &[u8]) -> Reply {
    let mut replies = parse_responses(bytes).expect("well-formed HTTP/1.1");
    assert_eq!(replies.len(), 1, "{}", String::from_utf8_lossy(bytes));
    replies.remove(0)
}

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

#[test]
fn a_create_and_a_get_travel_the_whole_chain() {
    let h = harness(Config::default());
    let created = one(&h.send(&post(CONFIGMAPS, &configmap("a"))));
    assert_eq!(created.status, 201);
    // Every answer carries an Audit-Id and a Date from the fake clock.
    assert_eq!(created.header("audit-id").map(str::len), Some(36));
    assert_eq!(created.header("date"), Some("Wed, 18 Nov 2026 11:06:40 GMT"));
    let got = one(&h.send(&get(&format!("{CONFIGMAPS}/a"))));
    assert_eq!(got.status, 200);
    assert_eq!(got.json()["data"]["k"], "v");
    // A caller's Audit-ID is answered as sent; pipelined requests are answered in order.
    let mut two = b"GET /version HTTP/1.1\r\nAudit-ID: mine\r\n\r\n".to_vec();
    two.extend(get("/api/v1/namespaces/default/configmaps/missing"));
    let replies = parse_responses(&h.send(&two)).unwrap();
    assert_eq!((replies[0].status, replies[0].header("audit-id")), (200, Some("mine")));
    assert_eq!(replies[1].status, 404);
}

#[test]
fn the_same_run_gives_the_same_bytes() {
    let run = || {
        let h = harness(Config::default());
        let mut out = h.send(&post(CONFIGMAPS, &configmap("a")));
        out.extend(h.send(&get(CONFIGMAPS)));
        out
    };
    assert_eq!(run(), run());
}

#[test]
fn anonymous_clients_are_forbidden_except_on_public_info_paths() {
    let h = harness(Config::default());
    h.act_as(None, &[]);
    let refused = one(&h.send(&get(CONFIGMAPS)));
    // Upstream's answer, byte for byte: system:anonymous reaches authorization.
    assert_eq!(refused.status, 403);
    assert_eq!(
        std::str::from_utf8(&refused.body).unwrap(),
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\
         \"message\":\"configmaps is forbidden: User \\\"system:anonymous\\\" cannot list resource \\\"configmaps\\\" \
         in API group \\\"\\\" in the namespace \\\"default\\\"\",\"reason\":\"Forbidden\",\
         \"details\":{\"kind\":\"configmaps\"},\"code\":403}\n"
    );
    // The bootstrap policy's system:public-info-viewer lets anyone read these.
    for path in ["/version", "/readyz", "/healthz", "/livez"] {
        assert_eq!(one(&h.send(&get(path))).status, 200, "{path}");
    }
    // It names the paths exactly, not what is below them; discovery is for
    // system:authenticated only.
    for path in ["/readyz/ping", "/healthzfoo", "/apis", "/api/v1/namespaces"] {
        assert_eq!(one(&h.send(&get(path))).status, 403, "{path}");
    }
    let metrics = one(&h.send(&get("/metrics")));
    assert_eq!(metrics.status, 403);
    assert_eq!(
        metrics.json()["message"],
        "forbidden: User \"system:anonymous\" cannot get path \"/metrics\""
    );
}

#[test]
fn the_in_flight_limits_refuse_what_is_over_them() {
    // Every user may write here: the test is about the limits.
    let h = harness(Config {
        inflight: apiary_core::inflight::Limits {
            max_requests_inflight: 1,
            max_mutating_requests_inflight: 1,
        },
        // The limits as they are, without priority and fairness in their place.
        priority_and_fairness: false,
        authorizer: Authorizer::new(vec![Mode::AlwaysAllow]),
        ..Config::default()
    });
    h.act_as(Some("dev"), &[]);
    let mut answered = Vec::new();
    let held = h.start(&post(CONFIGMAPS, &configmap("a")), &mut answered).expect("held at storage");
    // The mutating place is taken; a read has its own.
    let refused = one(&h.send(&post(CONFIGMAPS, &configmap("b"))));
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.json()["reason"], "TooManyRequests");
    assert_eq!(one(&h.send(&get(CONFIGMAPS))).status, 200);
    // system:masters is always served.
    h.act_as(Some("root"), &["system:masters"]);
    assert_eq!(one(&h.send(&post(CONFIGMAPS, &configmap("c")))).status, 201);
    h.act_as(Some("dev"), &[]);
    assert_eq!(one(&h.finish(held)).status, 201);
    assert_eq!(one(&h.send(&post(CONFIGMAPS, &configmap("b")))).status, 201);
}

#[test]
fn a_request_past_its_deadline_gets_504_and_writes_nothing() {
    let h = harness(Config::default());
    h.set_storage_latency(Duration::from_secs(2));
    let late = one(&h.send(&post(&format!("{CONFIGMAPS}?timeout=1s"), &configmap("slow"))));
    // The namespace is known from the watch cache; the create would end past the
    // deadline, so it is never sent.
    assert_eq!(late.status, 504);
    assert_eq!(late.json()["reason"], "Timeout");
    h.set_storage_latency(Duration::ZERO);
    assert_eq!(one(&h.send(&get(&format!("{CONFIGMAPS}/slow")))).status, 404);
    let bad = one(&h.send(&get(&format!("{CONFIGMAPS}?timeout=soon"))));
    assert_eq!(bad.status, 400);
}

#[test]
fn shutdown_drains_what_is_in_flight_and_refuses_the_rest() {
    let h = harness(Config {
        lifecycle: LifecycleConfig {
            shutdown_delay: Duration::from_secs(5),
            ..LifecycleConfig::default()
        },
        ..Config::default()
    });
    let mut answered = Vec::new();
    let held = h.start(&post(CONFIGMAPS, &configmap("late")), &mut answered).unwrap();
    h.terminate();
    // During the delay requests are served, but the server is not ready.
    assert_eq!(one(&h.send(&get("/readyz"))).status, 500);
    assert_eq!(one(&h.send(&get("/livez"))).status, 200);
    assert_eq!(one(&h.send(&get(CONFIGMAPS))).status, 200);
    h.advance(Duration::from_secs(5));
    // No new requests now: the connection closes without an answer.
    assert!(h.send(&get(CONFIGMAPS)).is_empty());
    assert!(!h.actions().contains(&Action::Exit(0)), "the held request is waited for");
    let last = one(&h.finish(held));
    assert_eq!(last.status, 201);
    assert_eq!(last.header("connection"), Some("close"));
    let actions = h.actions();
    let at = |a: &Action| actions.iter().position(|x| x == a).unwrap();
    assert!(at(&Action::EndWatches) < at(&Action::Exit(0)), "{actions:?}");
    assert!(actions.contains(&Action::StopListening));
}

#[test]
fn a_watch_streams_chunked_frames_with_its_audit_id() {
    let h = harness(Config::default());
    assert_eq!(one(&h.send(&post(CONFIGMAPS, &configmap("a")))).status, 201);
    let watch = one(&h.send(&get(&format!("{CONFIGMAPS}?watch=1&resourceVersion=1"))));
    assert_eq!(watch.status, 200);
    assert_eq!(watch.header("transfer-encoding"), Some("chunked"));
    assert!(watch.header("audit-id").is_some());
    let frame: serde_json::Value = serde_json::from_slice(watch.body.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(frame["type"], "ADDED");
    assert_eq!(frame["object"]["metadata"]["name"], "a");
}

#[test]
fn the_connections_own_timers_answer_slow_and_idle_clients() {
    let h = harness(Config::default());
    // A body that stops arriving: 504 at --request-timeout (60 s) after its first
    // bytes, and the connection closes; nothing is written.
    let partial = b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"apiVersion\"";
    let (early, closed) = h.send_then_wait(partial, Duration::from_secs(59));
    assert!(early.is_empty() && !closed);
    let (late, closed) = h.send_then_wait(partial, Duration::from_secs(61));
    let late = one(&late);
    assert!(closed);
    assert_eq!(late.status, 504);
    assert_eq!(late.header("connection"), Some("close"));
    assert_eq!(late.json()["reason"], "Timeout");
    // A head still unfinished 32 s after it began: closed without an answer.
    let (nothing, closed) = h.send_then_wait(b"GET /version HTTP/1.1\r\nHost", Duration::from_secs(33));
    assert!(nothing.is_empty() && closed);
    // An answered connection left idle: kept for 90 s, then closed.
    let (answered, closed) = h.send_then_wait(&get("/version"), Duration::from_secs(89));
    assert_eq!((one(&answered).status, closed), (200, false));
    let (_, closed) = h.send_then_wait(&get("/version"), Duration::from_secs(91));
    assert!(closed);
    assert_eq!(one(&h.send(&get(CONFIGMAPS))).json()["items"], serde_json::json!([]));
}

#[test]
fn bearer_tokens_from_a_token_file_authenticate() {
    let tokens = apiary_core::authn::TokenFile::parse("tokens.csv", "s3cret,alice,1001,\"dev,ops\"\n").unwrap();
    // Every authenticated user may write here: the test is about who is asking.
    let h = harness(Config {
        authenticators: apiary_core::authn::Authenticators {
            token_file: Some(std::sync::Arc::new(tokens)),
            ..Default::default()
        },
        authorizer: Authorizer::new(vec![Mode::AlwaysAllow]),
        ..Config::default()
    });
    h.act_as(None, &[]);
    let with = |token: &str, request: Vec<u8>| {
        let text = String::from_utf8(request).unwrap();
        let (line, rest) = text.split_once("\r\n").unwrap();
        format!("{line}\r\nAuthorization: Bearer {token}\r\n{rest}").into_bytes()
    };
    let created = one(&h.send(&with("s3cret", post(CONFIGMAPS, &configmap("a")))));
    assert_eq!(created.status, 201);
    // The managed fields name the writer by user agent, not user; the audit names the
    // user. What the token buys is being served at all:
    assert_eq!(one(&h.send(&with("s3cret", get(CONFIGMAPS)))).status, 200);
    // A token nobody knows is refused even where anonymous clients are served.
    let refused = one(&h.send(&with("guess", get("/version"))));
    assert_eq!(refused.status, 401);
    assert_eq!(refused.json()["reason"], "Unauthorized");
    assert_eq!(one(&h.send(&with("guess", get(CONFIGMAPS)))).status, 401);
    // No token at all: anonymous, which AlwaysAllow lets do anything, as upstream.
    assert_eq!(one(&h.send(&get("/version"))).status, 200);
    assert_eq!(one(&h.send(&get(CONFIGMAPS))).status, 200);
}

#[test]
fn without_anonymous_auth_every_path_needs_credentials() {
    let h = harness(Config {
        authenticators: apiary_core::authn::Authenticators {
            anonymous: false,
            ..Default::default()
        },
        ..Config::default()
    });
    h.act_as(None, &[]);
    for path in ["/version", "/healthz", "/readyz", CONFIGMAPS] {
        assert_eq!(one(&h.send(&get(path))).status, 401, "{path}");
    }
    h.act_as(Some("apiary-admin"), &["system:masters"]);
    assert_eq!(one(&h.send(&get("/healthz"))).status, 200);
}

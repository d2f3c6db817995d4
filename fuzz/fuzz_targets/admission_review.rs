//! A webhook's answer (`apiary_core::admission::webhooks`): any status and body, read
//! by the dispatcher as a mutating or validating webhook's answer to the review it
//! sent, under `failurePolicy` Fail or Ignore. Never panics; the object stays a JSON
//! object; a validating webhook never changes it; an allowed answer with no patch
//! changes nothing; a refusal's code is an HTTP error code; the same answer read
//! again decides the same.
//!
//! Input: a byte picking mutating or validating, Fail or Ignore, v1 or v1beta1 and the
//! HTTP status; the rest is the body. The uid the dispatcher drew is written into the
//! body where it says `UID` (so answers can carry it).
#![no_main]

use apiary_core::admission::webhooks::admission_review::Presented;
use apiary_core::admission::webhooks::{Hook, WebhookCalls};
use apiary_core::admission::{NoCaches, Notes, Operation, Request};
use apiary_core::authn::UserInfo;
use apiary_core::effect::CallOutcome;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use std::time::{Duration, UNIX_EPOCH};

fn request(operation: Operation) -> Request {
    Request {
        operation,
        group: String::new(),
        version: "v1".into(),
        resource: "configmaps".into(),
        subresource: String::new(),
        kind: "ConfigMap".into(),
        namespaced: true,
        namespace: Some("default".into()),
        name: "cm".into(),
        user: UserInfo::default(),
        dry_run: false,
        old_object: None,
        now: UNIX_EPOCH + Duration::from_secs(1_800_000_000),
        entropy: [7; 8],
    }
}

fn object() -> Map<String, Value> {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default", "labels": {"a": "b"}}, "data": {"k": "v"}})
        .as_object()
        .cloned()
        .unwrap()
}

/// One call of one webhook, answered with `status` and `body`: the outcome and the
/// object as left.
fn run(mutating: bool, ignore: bool, version: &str, status: u16, body: &[u8]) -> (Result<(), String>, Map<String, Value>, Notes) {
    let request = request(Operation::Create);
    let webhook = json!({
        "name": "fuzz.example.com",
        "clientConfig": {"url": "https://fuzz.example/hook"},
        "failurePolicy": if ignore { "Ignore" } else { "Fail" },
        "sideEffects": "None",
        "admissionReviewVersions": [version],
        "timeoutSeconds": 5,
    });
    let hook = Hook::of("fuzz", &webhook, Presented::as_requested(&request));
    let mut calls = WebhookCalls::new(mutating, vec![hook]);
    let mut object = object();
    let mut notes = Notes::default();
    let mut outbound = calls.next(&request, &object, &NoCaches, &mut notes).expect("one call");
    assert_eq!(outbound.len(), 1, "one webhook, one call");
    let outbound = outbound.remove(0);
    let sent: Value = serde_json::from_slice(outbound.request.body()).expect("the review is JSON");
    let uid = sent["request"]["uid"].as_str().expect("a uid").to_owned();
    let body = String::from_utf8_lossy(body).replace("UID", &uid);
    let answer: CallOutcome = Ok(http::Response::builder().status(status).body(bytes::Bytes::from(body)).unwrap());
    let answered = calls.answered(vec![answer], &request, &mut object, &mut notes);
    let outcome = answered.and_then(|()| match calls.next(&request, &object, &NoCaches, &mut notes) {
        Ok(more) if more.is_empty() => Ok(()),
        Ok(_) => panic!("one webhook is called once"),
        Err(e) => Err(e),
    });
    let outcome = outcome.map_err(|e| {
        assert!((400..600).contains(&e.code), "refused with {}", e.code);
        format!("{} {}", e.code, e.message)
    });
    (outcome, object, notes)
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else { return };
    let mutating = pick & 1 == 1;
    let ignore = pick & 2 == 2;
    let version = if pick & 4 == 4 { "v1beta1" } else { "v1" };
    let status = [200, 200, 200, 201, 400, 500, 302, 204][(pick >> 3) as usize % 8];
    let (outcome, object, notes) = run(mutating, ignore, version, status, body);
    if !mutating {
        assert_eq!(object, self::object(), "a validating webhook changed the object");
    }
    if ignore && outcome.is_err() {
        // Under Ignore only a refusal the webhook meant refuses: its answer was read.
        // (The body is sent as text, invalid UTF-8 replaced.)
        let review: Value = serde_json::from_str(&String::from_utf8_lossy(body)).unwrap_or(Value::Null);
        assert!(review.get("response").is_some(), "{outcome:?}");
    }
    let again = run(mutating, ignore, version, status, body);
    assert_eq!(outcome, again.0);
    assert_eq!(object, again.1);
    assert_eq!(notes.warnings, again.2.warnings);
});

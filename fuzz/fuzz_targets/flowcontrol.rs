//! API Priority and Fairness (`apiary_core::flowcontrol`) driven by arbitrary
//! configurations and request sequences: stored objects of any shape, requests from
//! several users arriving, finishing, giving up and leaving at any time, the
//! configuration changing under them. Never panics; executing counts never go
//! below zero; once every request is done, every seat is back and nothing is
//! counted executing.
//!
//! Input: a JSON document `{"schemas": [...], "levels": [...]}` up to the first 0xFF
//! byte (taken if it parses), then one operation per pair of bytes.
#![no_main]

use apiary_core::authn::UserInfo;
use apiary_core::flowcontrol::{Admit, Counts, FlowControl, Seat, Waited, Waiting};
use apiary_core::request_info::{resolve, RequestInfo};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use std::time::Duration;

const PATHS: [(&str, &str, Option<&str>); 6] = [
    ("GET", "/api/v1/namespaces/a/pods", None),
    ("GET", "/api/v1/pods", Some("watch=true")),
    ("POST", "/api/v1/namespaces/b/configmaps", None),
    ("GET", "/healthz", None),
    ("DELETE", "/apis/apps/v1/namespaces/a/deployments/d", None),
    ("GET", "/api/v1/namespaces/a/pods/p/log", None),
];

fn user(n: u8) -> UserInfo {
    let groups = match n % 4 {
        0 => vec!["system:masters".to_owned()],
        1 => vec!["system:authenticated".to_owned()],
        2 => vec!["system:serviceaccounts".to_owned(), "system:authenticated".to_owned()],
        _ => vec![],
    };
    UserInfo::named(format!("user-{}", n % 7), groups)
}

/// A configuration made from two bytes: levels of varied limits and a schema per user.
fn generated(a: u8, b: u8) -> (Vec<Value>, Vec<Value>) {
    let limit = |n: u8| match n % 3 {
        0 => json!({"type": "Reject"}),
        1 => json!({"type": "Queue", "queuing": {"queues": 1 + n % 9, "handSize": 1 + n % 3, "queueLengthLimit": n % 5}}),
        _ => json!({"type": "Queue"}),
    };
    let levels = (0..3)
        .map(|i| {
            json!({"metadata": {"name": format!("level-{i}"), "uid": format!("u{i}")}, "spec": {"type": "Limited", "limited": {
                "nominalConcurrencyShares": (a >> i) % 40, "lendablePercent": b % 101,
                "borrowingLimitPercent": if b % 2 == 0 { Value::from(a % 200) } else { Value::Null },
                "limitResponse": limit(a.wrapping_add(i * 31))}}})
        })
        .collect();
    let schemas = (0..4)
        .map(|i| {
            json!({"metadata": {"name": format!("schema-{i}")}, "spec": {
                "matchingPrecedence": 100 + i32::from(b % 4 == i as u8) * 10,
                "priorityLevelConfiguration": {"name": format!("level-{}", (a as usize + i) % 4)},
                "distinguisherMethod": {"type": if i % 2 == 0 { "ByUser" } else { "ByNamespace" }},
                "rules": [{"subjects": [{"kind": "User", "user": {"name": format!("user-{i}")}}, {"kind": "Group", "group": {"name": "system:serviceaccounts"}}],
                           "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": true, "namespaces": ["*"]}],
                           "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}})
        })
        .collect();
    (schemas, levels)
}

fn check(control: &FlowControl) {
    let (levels, counters) = control.gauges();
    for level in &levels {
        let seats: i64 = counters.executing.iter().filter(|((_, l), _)| *l == level.name).map(|(_, (_, s))| *s).sum();
        let requests: i64 = counters.executing.iter().filter(|((_, l), _)| *l == level.name).map(|(_, (r, _))| *r).sum();
        assert!(seats >= 0 && requests >= 0, "{level:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let (config, ops) = match data.iter().position(|b| *b == 0xFF) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (&data[..0], data),
    };
    let control = FlowControl::new(1 + u32::from(data.first().copied().unwrap_or(0) % 32));
    if let Ok(document) = serde_json::from_slice::<Value>(config) {
        let list = |key| document.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
        control.configure(&list("schemas"), &list("levels"), Duration::ZERO);
    }
    let mut now = Duration::ZERO;
    let mut seats: Vec<Seat> = Vec::new();
    let mut waiting: Vec<(Waiting, Duration)> = Vec::new();
    let infos: Vec<(RequestInfo, Option<&str>)> =
        PATHS.iter().map(|(m, p, q)| (resolve(&m.parse().unwrap(), p, *q), *q)).collect();
    for pair in ops.chunks(2) {
        let (op, arg) = (pair[0], pair.get(1).copied().unwrap_or(0));
        match op % 7 {
            0 | 1 => {
                let (info, query) = &infos[usize::from(arg) % infos.len()];
                let counts = || Counts { objects: Some(usize::from(arg) * 37), watches: usize::from(op) };
                match control.admit(&user(arg / 8), info, *query, counts, now).1 {
                    Admit::Execute(seat) => seats.push(seat),
                    Admit::Queued(w) => {
                        let limit = Waiting::wait_limit(now, Some(now + Duration::from_secs(60)), Duration::from_secs(60));
                        waiting.push((w, limit));
                    }
                    Admit::Rejected { retry_after } => assert!((1..=32).contains(&retry_after)),
                    Admit::Bypass => {}
                }
            }
            2 if !seats.is_empty() => {
                let seat = seats.swap_remove(usize::from(arg) % seats.len());
                if arg % 2 == 0 { seat.release(now) } else { drop(seat) }
            }
            3 if !waiting.is_empty() => {
                let at = usize::from(arg) % waiting.len();
                let (w, limit) = &mut waiting[at];
                match w.waited(now, *limit) {
                    Waited::Execute(seat) => {
                        seats.push(seat);
                        waiting.swap_remove(at);
                    }
                    Waited::Rejected { .. } => {
                        waiting.swap_remove(at);
                    }
                    Waited::StillWaiting => {}
                }
            }
            4 if !waiting.is_empty() => drop(waiting.swap_remove(usize::from(arg) % waiting.len())),
            5 => now += Duration::from_millis(u64::from(arg) * 97),
            _ => {
                let (schemas, levels) = generated(op, arg);
                control.configure(&schemas, &levels, now);
            }
        }
        check(&control);
    }
    // Everyone leaves: every seat comes back.
    drop(waiting);
    for seat in seats {
        seat.release(now);
    }
    now += Duration::from_secs(1);
    control.sync(now);
    let (levels, counters) = control.gauges();
    assert!(counters.executing.values().all(|(r, s)| *r == 0 && *s == 0), "{counters:?}");
    for level in levels {
        assert_eq!(level.seats_in_use, 0, "{level:?}");
        assert!(level.waiting_by_schema.values().all(|n| *n == 0));
    }
});

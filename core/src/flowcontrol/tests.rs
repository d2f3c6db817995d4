//! The flow control as a whole: classification by the bootstrap configuration,
//! queuing, rejection, borrowing and reconfiguration, with time as an input.

use super::*;
use serde_json::json;

const MS: Duration = Duration::from_millis(1);

/// Upstream's bootstrap objects (the ones these tests need), as stored.
fn bootstrap() -> (Vec<Value>, Vec<Value>) {
    let every = json!([{
        "subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}},
                     {"kind": "Group", "group": {"name": "system:unauthenticated"}}],
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": true, "namespaces": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]
    }]);
    let schemas = vec![
        json!({"metadata": {"name": "exempt", "uid": "fs-exempt"}, "spec": {"matchingPrecedence": 1,
            "priorityLevelConfiguration": {"name": "exempt"},
            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:masters"}}],
                       "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": true, "namespaces": ["*"]}],
                       "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}}),
        json!({"metadata": {"name": "probes", "uid": "fs-probes"}, "spec": {"matchingPrecedence": 2,
            "priorityLevelConfiguration": {"name": "exempt"},
            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}},
                                    {"kind": "Group", "group": {"name": "system:unauthenticated"}}],
                       "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}]}}),
        json!({"metadata": {"name": "global-default", "uid": "fs-global"}, "spec": {"matchingPrecedence": 9900,
            "priorityLevelConfiguration": {"name": "global-default"}, "distinguisherMethod": {"type": "ByUser"},
            "rules": every.clone()}}),
        json!({"metadata": {"name": "catch-all", "uid": "fs-catch-all"}, "spec": {"matchingPrecedence": 10000,
            "priorityLevelConfiguration": {"name": "catch-all"}, "distinguisherMethod": {"type": "ByUser"},
            "rules": every}}),
    ];
    let levels = vec![
        json!({"metadata": {"name": "exempt", "uid": "pl-exempt"}, "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}}),
        json!({"metadata": {"name": "global-default", "uid": "pl-global"}, "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 20, "lendablePercent": 50,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 6, "queueLengthLimit": 50}}}}}),
        json!({"metadata": {"name": "catch-all", "uid": "pl-catch-all"}, "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 5, "lendablePercent": 0, "limitResponse": {"type": "Reject"}}}}),
    ];
    (schemas, levels)
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo::named(name, groups.iter().map(|g| g.to_string()).collect())
}

fn info(method: &str, path: &str) -> RequestInfo {
    crate::request_info::resolve(&method.parse().unwrap(), path, None)
}

fn none() -> Counts {
    Counts::default()
}

#[test]
fn requests_are_classified_as_upstream_classifies_them() {
    let control = FlowControl::new(600);
    let (schemas, levels) = bootstrap();
    control.configure(&schemas, &levels, Duration::ZERO);
    assert!(status_updates(&schemas, &levels).iter().all(|u| !u.dangling && u.reason == "Found"));
    let admin = user("admin", &["system:masters", "system:authenticated"]);
    let alice = user("alice", &["system:authenticated"]);
    let (class, admit) = control.admit(&admin, &info("GET", "/api/v1/pods"), None, none, MS);
    assert_eq!(&*class.unwrap().flow_schema, "exempt");
    assert!(matches!(admit, Admit::Execute(_)));
    let (class, _) = control.admit(&alice, &info("GET", "/readyz"), None, none, MS);
    assert_eq!(class.unwrap().flow_schema_uid, "fs-probes");
    let (class, _) = control.admit(&alice, &info("GET", "/api/v1/pods"), None, none, MS);
    let class = class.unwrap();
    assert_eq!((&*class.flow_schema, &*class.priority_level, class.priority_level_uid.as_str()), ("global-default", "global-default", "pl-global"));
    // Long-running requests other than watches are not limited or classified.
    let (class, admit) = control.admit(&alice, &info("GET", "/api/v1/namespaces/a/pods/p/log"), None, none, MS);
    assert!(class.is_none() && matches!(admit, Admit::Bypass));
}

#[test]
fn mandatory_objects_stand_in_for_missing_ones_and_dangling_schemas_are_reported() {
    let control = FlowControl::new(600);
    let orphan = json!({"metadata": {"name": "orphan"}, "spec": {"matchingPrecedence": 5, "priorityLevelConfiguration": {"name": "nowhere"},
        "rules": [{"subjects": [{"kind": "User", "user": {"name": "*"}}], "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}});
    control.configure(std::slice::from_ref(&orphan), &[], Duration::ZERO);
    let updates = status_updates(&[orphan], &[]);
    assert_eq!(updates.len(), 1);
    assert!(updates[0].dangling && updates[0].reason == "NotFound");
    assert!(updates[0].message.contains("named \"nowhere\" but there is no such object"));
    // With nothing stored, everyone but system:masters is caught by catch-all.
    let (class, _) = control.admit(&user("bob", &["system:authenticated"]), &info("GET", "/version"), None, none, MS);
    assert_eq!(&*class.unwrap().flow_schema, CATCH_ALL);
}

#[test]
fn a_full_level_queues_then_rejects_after_the_wait_limit() {
    // Eight server seats: global-default gets ceil(8 × 20/25) = 7 nominal seats.
    let control = FlowControl::new(8);
    let (schemas, levels) = bootstrap();
    control.configure(&schemas, &levels, Duration::ZERO);
    let alice = user("alice", &["system:authenticated"]);
    let pods = info("GET", "/api/v1/namespaces/a/pods");
    let mut seats = Vec::new();
    let mut queued = Vec::new();
    for _ in 0..20 {
        match control.admit(&alice, &pods, None, none, MS).1 {
            Admit::Execute(seat) => seats.push(seat),
            Admit::Queued(waiting) => queued.push(waiting),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(!seats.is_empty() && !queued.is_empty(), "{} ran, {} queued", seats.len(), queued.len());
    let limit = Waiting::wait_limit(MS, Some(MS + Duration::from_secs(60)), Duration::from_secs(60));
    assert_eq!(limit, MS + Duration::from_secs(15));
    // A seat given back lets the first queued request run.
    seats.pop().unwrap().release(2 * MS);
    let mut first = queued.remove(0);
    assert!(matches!(first.waited(2 * MS, limit), Waited::Execute(_)));
    // The rest wait on, and give up at their limit with 429 and a Retry-After.
    let mut second = queued.remove(0);
    assert!(matches!(second.waited(3 * MS, limit), Waited::StillWaiting));
    assert!(matches!(second.waited(limit, limit), Waited::Rejected { retry_after: 1 }));
    let (_, counters) = control.gauges();
    let rejected: u64 = counters.rejected.iter().filter(|((_, _, why), _)| *why == "time-out").map(|(_, n)| n).sum();
    assert_eq!(rejected, 1);
}

#[test]
fn a_rejecting_level_answers_at_once() {
    let control = FlowControl::new(4);
    control.configure(&[], &[], Duration::ZERO);
    let bob = user("bob", &["system:authenticated"]);
    let mut seats = Vec::new();
    let rejected = (0..10)
        .filter_map(|_| match control.admit(&bob, &info("GET", "/version"), None, none, MS).1 {
            Admit::Execute(seat) => {
                seats.push(seat);
                None
            }
            Admit::Rejected { retry_after } => Some(retry_after),
            other => panic!("{other:?}"),
        })
        .count();
    assert_eq!((seats.len(), rejected), (4, 6));
}

#[test]
fn an_idle_level_lends_its_seats_to_a_busy_one() {
    let control = FlowControl::new(100);
    let (schemas, mut levels) = bootstrap();
    // Two levels of 50 nominal seats, each lending half.
    levels[2] = json!({"metadata": {"name": "catch-all"}, "spec": {"type": "Limited", "limited": {
        "nominalConcurrencyShares": 20, "lendablePercent": 50, "limitResponse": {"type": "Reject"}}}});
    control.configure(&schemas, &levels, Duration::ZERO);
    let before = control.gauges().0.into_iter().find(|g| &*g.name == "global-default").unwrap();
    assert_eq!(before.nominal, 50);
    // Keep global-default's seats full for a whole period.
    let alice = user("alice", &["system:authenticated"]);
    let pods = info("GET", "/api/v1/namespaces/a/pods");
    let mut held = Vec::new();
    let mut queued = Vec::new();
    for _ in 0..200 {
        match control.admit(&alice, &pods, None, none, MS).1 {
            Admit::Execute(seat) => held.push(seat),
            Admit::Queued(w) => queued.push(w),
            Admit::Rejected { .. } | Admit::Bypass => {}
        }
    }
    let at = Duration::from_secs(11);
    control.admit(&alice, &info("GET", "/api/v1/namespaces/b/pods"), None, none, at);
    let after = control.gauges().0.into_iter().find(|g| &*g.name == "global-default").unwrap();
    // Busy, it gets its nominal 50 and 25 lent by the idle level, which keeps what it
    // may not lend.
    assert_eq!((before.current, after.current), (50, 75));
    let idle = control.gauges().0.into_iter().find(|g| &*g.name == "catch-all").unwrap();
    assert_eq!(idle.current, 25);
}

#[test]
fn reconfiguring_keeps_running_requests_and_drops_unused_levels_once_idle() {
    let control = FlowControl::new(20);
    let (schemas, levels) = bootstrap();
    control.configure(&schemas, &levels, Duration::ZERO);
    let alice = user("alice", &["system:authenticated"]);
    let Admit::Execute(seat) = control.admit(&alice, &info("GET", "/api/v1/pods"), None, none, MS).1 else {
        panic!("should run");
    };
    // global-default's schema and level are gone from the configuration.
    control.configure(&[schemas[0].clone(), schemas[3].clone()], &[levels[0].clone(), levels[2].clone()], 2 * MS);
    assert!(control.gauges().0.iter().any(|g| &*g.name == "global-default"));
    seat.release(3 * MS);
    assert!(!control.gauges().0.iter().any(|g| &*g.name == "global-default"));
}

//! API Priority and Fairness on the real binary, with kube-rs clients: a noisy flow
//! (64 clients looping LISTs as one user) and a quiet one (GETs as another user) in a
//! priority level of 24 seats whose noisy flow's queues fill: the noisy one gets
//! upstream's 429 (plain text, `Retry-After`, the FlowSchema and priority level
//! named), the quiet one is never refused; `system:masters` and health probes are
//! never queued; /metrics counts the rejections. Timing is the `flowcontrol` bench's.
mod limits_support;

use apiary_conformance::harness::{ok, Apiary};
use limits_support::{admin_client, anonymous_client, configmap, send, user_client};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const LIST: &str = "/api/v1/namespaces/apf/configmaps";
const NOISY_CLIENTS: usize = 64;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_noisy_flow_is_refused_while_a_quiet_one_is_served() {
    let apiary = Apiary::start_with(&["--storage", "memory"]);
    let admin = admin_client(&apiary).await;
    for args in [
        &["create", "namespace", "apf"][..],
        &["create", "clusterrole", "reader", "--verb=get,list", "--resource=configmaps"],
        &["create", "clusterrolebinding", "reader", "--clusterrole=reader", "--group=dev"],
    ] {
        ok(&apiary.kubectl("1.33", args));
    }
    // 300 objects: each LIST costs three seats.
    for i in 0..300 {
        let a = send(&admin, "POST", LIST, Some(&configmap(&format!("cm-{i}"), 512))).await;
        assert_eq!(a.status, 201);
    }
    // A level of 10 shares that neither lends nor borrows (24 of the 600 seats), 16
    // queues of 5, hands of 2; both users' requests go there, a flow per user.
    let level = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "apf-test"}, "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 10, "lendablePercent": 0, "borrowingLimitPercent": 0,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 16, "handSize": 2, "queueLengthLimit": 5}}}}});
    let schema = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "apf-test"}, "spec": {"matchingPrecedence": 500,
            "priorityLevelConfiguration": {"name": "apf-test"}, "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "dev"}}],
                       "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"]}]}]}});
    let created = send(&admin, "POST", "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations", Some(&level)).await;
    assert_eq!(created.status, 201, "{}", created.json());
    let level_uid = created.json()["metadata"]["uid"].as_str().unwrap().to_owned();
    let created = send(&admin, "POST", "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", Some(&schema)).await;
    assert_eq!(created.status, 201, "{}", created.json());
    let schema_uid = created.json()["metadata"]["uid"].as_str().unwrap().to_owned();

    let noisy = user_client(&apiary, "noisy", "dev").await;
    let quiet = user_client(&apiary, "quiet", "dev").await;
    let anonymous = anonymous_client(&apiary).await;
    // The level is in use once the configuration has been taken.
    let first = send(&quiet, "GET", &format!("{LIST}/cm-0"), None).await;
    assert_eq!(first.status, 200, "{}", first.json());
    assert_eq!(first.headers["x-kubernetes-pf-flowschema-uid"], schema_uid.as_str());
    assert_eq!(first.headers["x-kubernetes-pf-prioritylevel-uid"], level_uid.as_str());

    let stop = Arc::new(AtomicBool::new(false));
    let refused = Arc::new(AtomicUsize::new(0));
    let listed = Arc::new(AtomicUsize::new(0));
    let mut load = Vec::new();
    for _ in 0..NOISY_CLIENTS {
        let (client, stop, refused, listed) = (noisy.clone(), stop.clone(), refused.clone(), listed.clone());
        let (schema_uid, level_uid) = (schema_uid.clone(), level_uid.clone());
        load.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let a = send(&client, "GET", LIST, None).await;
                match a.status {
                    200 => {
                        listed.fetch_add(1, Ordering::Relaxed);
                    }
                    429 => {
                        refused.fetch_add(1, Ordering::Relaxed);
                        assert!(a.retry_after.as_deref().and_then(|s| s.parse::<u64>().ok()).is_some_and(|s| (1..=32).contains(&s)));
                        assert_eq!(&a.body[..], b"Too many requests, please try again later.\n");
                        assert_eq!(a.headers["content-type"], "text/plain; charset=utf-8");
                        assert_eq!(a.headers["x-kubernetes-pf-flowschema-uid"], schema_uid.as_str());
                        assert_eq!(a.headers["x-kubernetes-pf-prioritylevel-uid"], level_uid.as_str());
                        // Back off as told, a little: the load goes on.
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    other => panic!("noisy LIST answered {other}: {}", a.json()),
                }
            }
        }));
    }
    // Meanwhile: the quiet user's GETs, the admin's writes and anonymous probes.
    let started = Instant::now();
    let (mut quiet_served, mut admin_served) = (0, 0);
    while started.elapsed() < Duration::from_secs(8) {
        let a = send(&quiet, "GET", &format!("{LIST}/cm-{}", quiet_served % 300), None).await;
        assert_eq!(a.status, 200, "the quiet flow is never refused: {}", a.json());
        quiet_served += 1;
        let a = send(&admin, "PUT", &format!("{LIST}/cm-1"), Some(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cm-1"}, "data": {"n": admin_served.to_string()}}))).await;
        assert_eq!(a.status, 200, "system:masters is exempt: {}", a.json());
        admin_served += 1;
        let probe = send(&anonymous, "GET", "/readyz", None).await;
        assert_eq!((probe.status, &probe.body[..]), (200, &b"ok"[..]), "probes are exempt");
    }
    stop.store(true, Ordering::Relaxed);
    for task in load {
        task.await.unwrap();
    }
    let (refused, listed) = (refused.load(Ordering::Relaxed), listed.load(Ordering::Relaxed));
    assert!(refused > 0, "the noisy flow was never refused ({listed} LISTs served)");
    assert!(listed > 0, "the noisy flow was never served ({refused} refused)");
    assert!(quiet_served > 10, "{quiet_served}");

    let metrics = send(&admin, "GET", "/metrics", None).await;
    let text = String::from_utf8_lossy(&metrics.body);
    let counted: f64 = text
        .lines()
        .filter(|l| l.starts_with("apiserver_flowcontrol_rejected_requests_total{flow_schema=\"apf-test\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert_eq!(counted as usize, refused, "{text}");
    let dispatched = |flow: &str| text.lines().any(|l| l.starts_with(&format!("apiserver_flowcontrol_dispatched_requests_total{{flow_schema=\"{flow}\"")));
    assert!(dispatched("apf-test") && dispatched("exempt") && dispatched("probes"));
    let _: Value = metrics.json();
}

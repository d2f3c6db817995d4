//! Pod validation over any JSON: an arbitrary object checked as a Pod (create, and
//! update against itself and against a valid pod) and as the pod template of every
//! workload never panics, and every error it reports names a field and prints.
#![no_main]

use apiary_core::resources::{
    cronjobs::CronJobs, daemonsets::DaemonSets, deployments::Deployments, jobs::Jobs, pods::Pods, podtemplates::PodTemplates,
    replicasets::ReplicaSets, replicationcontrollers::ReplicationControllers, statefulsets::StatefulSets, Strategy,
};
use apiary_core::validation::FieldError;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => Map::from_iter([("spec".to_owned(), other)]),
    }
}

fn check(errors: Vec<FieldError>) {
    for e in errors {
        assert!(!e.to_string().is_empty());
        assert!(!e.kind.cause_type().is_empty());
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else { return };
    let pod = object(value.clone());
    let valid = object(json!({"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}));
    check(Pods.validate_create(&pod));
    check(Pods.validate_update(&pod, &pod));
    check(Pods.validate_update(&pod, &valid));
    check(Pods.validate_update(&valid, &pod));

    // The same value as the template of each workload, and as its whole spec.
    let spec = value.get("spec").cloned().unwrap_or(Value::Null);
    let workload = object(json!({"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": value.clone()}}));
    let strategies: [&dyn Strategy; 8] =
        [&PodTemplates, &ReplicationControllers, &ReplicaSets, &Deployments, &DaemonSets, &StatefulSets, &Jobs, &CronJobs];
    for strategy in strategies {
        for candidate in [&workload, &pod, &object(json!({"template": value, "spec": {"jobTemplate": {"spec": spec}}}))] {
            check(strategy.validate_create(candidate));
            check(strategy.validate_update(candidate, &workload));
        }
    }
});

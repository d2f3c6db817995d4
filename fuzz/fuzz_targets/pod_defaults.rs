#![no_main]
//! Upstream's defaulting of Pods and of every kind embedding a pod template
//! (`apiary_core::resources::pod_spec` through each kind's `Strategy::default`), over
//! any JSON: as the object itself, as its `spec`, and as a template's pod spec. Never
//! panics, and defaulting twice is defaulting once. The image reference reader that
//! picks `imagePullPolicy` also reads the raw input: a tag it finds is `latest` or a
//! piece of the reference.

use apiary_core::resources::pod_spec::image;
use apiary_core::resources::{
    cronjobs::CronJobs, daemonsets::DaemonSets, deployments::Deployments, jobs::Jobs, persistentvolumes::PersistentVolumes,
    pods::Pods, podtemplates::PodTemplates, replicasets::ReplicaSets, replicationcontrollers::ReplicationControllers,
    statefulsets::StatefulSets, Strategy,
};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Some(tag) = image::tag(text) {
            assert!(tag == "latest" || text.contains(tag), "{tag} from {text}");
        }
    }
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(input) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    let strategies: [&dyn Strategy; 10] = [
        &Pods,
        &PodTemplates,
        &ReplicationControllers,
        &Deployments,
        &ReplicaSets,
        &StatefulSets,
        &DaemonSets,
        &Jobs,
        &CronJobs,
        &PersistentVolumes,
    ];
    let strategy = strategies[pick as usize % strategies.len()];
    let shapes = [
        input.clone(),
        json!({"spec": input.clone()}),
        json!({"template": {"spec": input.clone()}}),
        json!({"spec": {"template": {"spec": input.clone()}}}),
        json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": input}}}}}),
    ];
    for shape in shapes {
        let Value::Object(mut once) = shape else {
            continue;
        };
        strategy.default(&mut once);
        let mut twice = once.clone();
        strategy.default(&mut twice);
        assert_eq!(once, twice, "{}: defaulting again changed the object", strategy.name());
    }
});

//! What the fault tests on real processes share: the workload of real clients
//! (kube-rs writers and watchers on ConfigMaps in one namespace) and the history they
//! record on one clock, in the shape the simulation's checkers read.

#![allow(dead_code)]

use apiary_sim::linearizability::Operation;
use apiary_sim::object::{Action, Input, Output};
use apiary_sim::watch_order::{ChangeKind, Delivered};
use apiary_sim::wire::Refused;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions, WatchEvent as KubeEvent, WatchParams};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const NAMESPACE: &str = "jepsen";
pub const PREFIX: &str = "/registry/configmaps/jepsen/";
pub const KEYS: u64 = 3;
/// How long a client waits for an answer before it counts the outcome unknown.
pub const PATIENCE: Duration = Duration::from_secs(5);

/// How long the workload runs: `default`, or `JEPSEN_SECONDS` for a longer soak.
pub fn workload(default: Duration) -> Duration {
    std::env::var("JEPSEN_SECONDS").ok().and_then(|s| s.parse().ok()).map_or(default, Duration::from_secs)
}

/// What every client records, on one clock (microseconds since the start).
#[derive(Default)]
pub struct Recorded {
    pub history: Vec<Operation<Input, Output>>,
    pub sessions: Vec<(u64, Vec<Delivered>)>,
}

pub struct Clock(pub Instant);

impl Clock {
    pub fn now(&self) -> u64 {
        self.0.elapsed().as_micros() as u64
    }
}

pub fn value_of(cm: &ConfigMap) -> Option<(u64, u64)> {
    let value = cm.data.as_ref()?.get("v")?.parse().ok()?;
    let version = cm.metadata.resource_version.as_ref()?.parse().ok()?;
    Some((value, version))
}

/// The outcome of a write or read, from kube-rs's answer: `None` unknown; `Refused`
/// before it did anything (429).
pub fn outcome(result: Result<Result<Output, kube::Error>, tokio::time::error::Elapsed>) -> Result<Option<Output>, Refused> {
    match result {
        Err(_) => Ok(None),
        Ok(Ok(output)) => Ok(Some(output)),
        Ok(Err(kube::Error::Api(status))) => apiary_sim::wire::failed(status.code, &status.reason),
        Ok(Err(_)) => Ok(None),
    }
}

/// A GET of ConfigMap `name` as a read of its value.
async fn read(api: &Api<ConfigMap>, name: &str) -> Result<Output, kube::Error> {
    api.get(name).await.map(|cm| {
        let (value, version) = value_of(&cm).unwrap_or((0, 0));
        Output::Read { value, version }
    })
}

/// One client's loop against replica `replica`'s API until `until`.
pub async fn client_loop(id: u32, api: Api<ConfigMap>, clock: Arc<Clock>, until: Instant, recorded: Arc<Mutex<Recorded>>, seed: u64) {
    let mut rng = apiary_sim::rng::Rng::new(seed);
    let mut known: BTreeMap<String, u64> = BTreeMap::new();
    while Instant::now() < until {
        let name = format!("k{}", rng.below(KEYS));
        let value = u64::from(id) * 1_000_000 + rng.next_u64() % 1_000_000;
        let precondition = known.get(&name).copied();
        let action = match rng.below(100) {
            0..=19 => Action::Create { value },
            20..=44 => Action::Update { value, precondition },
            45..=52 => Action::Update { value, precondition: None },
            53..=59 => Action::Apply { value },
            60..=69 => Action::Delete { precondition: if rng.chance(500) { precondition } else { None } },
            _ => Action::Read,
        };
        let object = |version: Option<u64>| -> ConfigMap {
            let mut o = serde_json::json!({"metadata": {"name": name, "namespace": NAMESPACE}, "data": {"v": value.to_string()}});
            if let Some(v) = version {
                o["metadata"]["resourceVersion"] = serde_json::json!(v.to_string());
            }
            serde_json::from_value(o).expect("a ConfigMap")
        };
        let call = clock.now();
        let written = |r: Result<ConfigMap, kube::Error>| r.map(|cm| Output::Written(value_of(&cm).map_or(0, |(_, v)| v)));
        let result = tokio::time::timeout(PATIENCE, async {
            match &action {
                Action::Create { .. } => written(api.create(&PostParams::default(), &object(None)).await),
                Action::Update { precondition: Some(v), .. } => written(api.replace(&name, &PostParams::default(), &object(Some(*v))).await),
                Action::Update { .. } => {
                    let patch = serde_json::json!({"data": {"v": value.to_string()}});
                    written(api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await)
                }
                Action::Apply { .. } => {
                    let mut applied = object(None);
                    applied.metadata.namespace = None;
                    let params = PatchParams::apply("jepsen").force();
                    written(api.patch(&name, &params, &Patch::Apply(&applied)).await)
                }
                Action::Delete { precondition } => {
                    let params = DeleteParams { preconditions: precondition.map(|v| Preconditions { resource_version: Some(v.to_string()), uid: None }), ..Default::default() };
                    api.delete(&name, &params).await.map(|_| Output::Deleted)
                }
                Action::Read => read(&api, &name).await,
            }
        })
        .await;
        let Ok(output) = outcome(result) else { continue };
        let ret = output.as_ref().map(|_| clock.now());
        if let Some(Output::Written(v) | Output::Read { version: v, .. }) = &output {
            known.insert(name.clone(), *v);
        }
        recorded.lock().unwrap().history.push(Operation { client: id, input: Input { key: format!("{PREFIX}{name}"), action }, output, call, ret });
        if output_unknown(&recorded, id) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn output_unknown(recorded: &Mutex<Recorded>, id: u32) -> bool {
    recorded.lock().unwrap().history.iter().rev().find(|o| o.client == id).is_some_and(|o| o.output.is_none())
}

/// A watcher on one replica: list, watch from the list's version, list again when the
/// watch ends; each watch's events recorded.
pub async fn watch_loop(api: Api<ConfigMap>, until: Instant, recorded: Arc<Mutex<Recorded>>) {
    while Instant::now() < until {
        let Ok(Ok(list)) = tokio::time::timeout(PATIENCE, api.list(&ListParams::default())).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let Some(from) = list.metadata.resource_version.and_then(|v| v.parse::<u64>().ok()) else { continue };
        let params = WatchParams::default().timeout(10);
        let Ok(Ok(stream)) = tokio::time::timeout(PATIENCE, api.watch(&params, &from.to_string())).await else { continue };
        let mut stream = stream.boxed();
        let mut delivered = Vec::new();
        loop {
            let left = until.saturating_duration_since(Instant::now()) + Duration::from_secs(5);
            let next = match tokio::time::timeout(left, stream.next()).await {
                Ok(Some(Ok(event))) => event,
                _ => break,
            };
            let (kind, cm) = match next {
                KubeEvent::Added(cm) => (ChangeKind::Added, cm),
                KubeEvent::Modified(cm) => (ChangeKind::Modified, cm),
                KubeEvent::Deleted(cm) => (ChangeKind::Deleted, cm),
                KubeEvent::Bookmark(_) => continue,
                KubeEvent::Error(_) => break,
            };
            // Objects the workload did not write (the namespace's kube-root-ca.crt)
            // carry no value: 0, as in etcd's log.
            let revision = cm.metadata.resource_version.as_ref().and_then(|v| v.parse().ok());
            if let (Some(name), Some(revision)) = (cm.metadata.name.clone(), revision) {
                let value = value_of(&cm).map_or(0, |(value, _)| value);
                delivered.push(Delivered { kind, key: format!("{PREFIX}{name}"), revision, value });
            }
        }
        recorded.lock().unwrap().sessions.push((from, delivered));
    }
}

/// A kube-rs client for `kubeconfig` that never retries (one request, one operation
/// in the history) and gives up after [`PATIENCE`].
pub async fn plain_client(kubeconfig: &Path) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig");
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.expect("config");
    config.default_retry = false;
    config.read_timeout = Some(PATIENCE);
    kube::Client::try_from(config).expect("client")
}

/// Read every key once more through `kubeconfig`'s server, as client `id`.
pub async fn read_all(kubeconfig: &Path, id: u32, clock: &Clock, recorded: &Mutex<Recorded>) {
    let api: Api<ConfigMap> = Api::namespaced(plain_client(kubeconfig).await, NAMESPACE);
    for k in 0..KEYS {
        let name = format!("k{k}");
        let call = clock.now();
        let result = tokio::time::timeout(PATIENCE, read(&api, &name)).await;
        if let Ok(Some(output)) = outcome(result) {
            let input = Input { key: format!("{PREFIX}{name}"), action: Action::Read };
            recorded.lock().unwrap().history.push(Operation { client: id, input, output: Some(output), call, ret: Some(clock.now()) });
        }
    }
}

/// Check `recorded`'s history for linearizability; panic with it if it is not.
pub fn assert_linearizable(recorded: &Recorded) {
    use apiary_sim::linearizability::{check, Verdict};
    match check(&apiary_sim::object::ObjectModel, &recorded.history, 20_000_000) {
        Verdict::Linearizable => {}
        other => {
            let shown: Vec<String> = recorded.history.iter().map(|o| format!("  {o:?}")).collect();
            panic!("{other:?}\n{}", shown.join("\n"));
        }
    }
}

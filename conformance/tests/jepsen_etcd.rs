//! Jepsen-style: three real Apiary replicas on one real etcd (through a TCP proxy of our
//! own), real clients (kube-rs) writing, reading and watching ConfigMaps through all of
//! them while faults are injected — replicas killed (SIGKILL) and restarted, etcd
//! frozen (SIGSTOP/SIGCONT) and restarted, the proxy delaying, holding back and cutting
//! the connections to etcd. Then the recorded history is checked as the simulation's
//! is: every object's history linearizable, every watch delivering each change once,
//! in order, against etcd's own log of the changes. Bounded in time; every process is
//! stopped.

mod fault_proxy;
mod kube_support;

use apiary_conformance::etcd::Etcd;
use apiary_conformance::harness::Apiary;
use apiary_core::storage::{Storage, WatchEvent, WatchStream};
use apiary_sim::linearizability::{check, Operation, Verdict};
use apiary_sim::object::{Action, Input, ObjectModel, Output};
use apiary_sim::watch_order::{check_watch, Change, ChangeKind, Delivered};
use fault_proxy::FaultProxy;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions, WatchEvent as KubeEvent, WatchParams};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const NAMESPACE: &str = "jepsen";
const PREFIX: &str = "/registry/configmaps/jepsen/";
const KEYS: u64 = 3;
const REPLICAS: usize = 3;
const WORKLOAD: Duration = Duration::from_secs(30);
/// How long a client waits for an answer before it counts the outcome unknown.
const PATIENCE: Duration = Duration::from_secs(5);

/// What every client records, on one clock (microseconds since the start).
#[derive(Default)]
struct Recorded {
    history: Vec<Operation<Input, Output>>,
    sessions: Vec<(u64, Vec<Delivered>)>,
}

struct Clock(Instant);

impl Clock {
    fn now(&self) -> u64 {
        self.0.elapsed().as_micros() as u64
    }
}

/// One replica: its process (absent while killed), data dir and port.
struct Replica {
    apiary: Option<Apiary>,
    dir: tempfile::TempDir,
    args: Vec<String>,
}

impl Replica {
    fn start(&mut self) {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        self.apiary = Some(Apiary::start_in(self.dir.path(), &args));
    }

    fn kill(&mut self) {
        if let Some(mut apiary) = self.apiary.take() {
            apiary.signal("KILL");
            let _ = apiary.wait_exit(Duration::from_secs(10));
        }
    }
}

fn value_of(cm: &ConfigMap) -> Option<(u64, u64)> {
    let value = cm.data.as_ref()?.get("v")?.parse().ok()?;
    let version = cm.metadata.resource_version.as_ref()?.parse().ok()?;
    Some((value, version))
}

/// The outcome of a write or read, from kube-rs's answer: `None` unknown; `Err(())` refused
/// before it did anything (429).
fn outcome(result: Result<Result<Output, kube::Error>, tokio::time::error::Elapsed>) -> Result<Option<Output>, ()> {
    match result {
        Err(_) => Ok(None),
        Ok(Ok(output)) => Ok(Some(output)),
        Ok(Err(kube::Error::Api(status))) => match (status.code, status.reason.as_str()) {
            (429, _) => Err(()),
            (404, _) => Ok(Some(Output::NotFound)),
            (409, "AlreadyExists") => Ok(Some(Output::Exists)),
            (409, _) => Ok(Some(Output::Conflict)),
            _ => Ok(None),
        },
        Ok(Err(_)) => Ok(None),
    }
}

/// One client's loop against replica `replica`'s API until `until`.
async fn client_loop(id: u32, api: Api<ConfigMap>, clock: Arc<Clock>, until: Instant, recorded: Arc<Mutex<Recorded>>, seed: u64) {
    let mut rng = apiary_sim::rng::Rng::new(seed);
    let mut known: BTreeMap<String, u64> = BTreeMap::new();
    while Instant::now() < until {
        let name = format!("k{}", rng.below(KEYS));
        let value = u64::from(id) * 1_000_000 + rng.next_u64() % 1_000_000;
        let precondition = known.get(&name).copied();
        let action = match rng.below(100) {
            0..=19 => Action::Create { value },
            20..=44 => Action::Update { value, precondition },
            45..=59 => Action::Update { value, precondition: None },
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
                Action::Delete { precondition } => {
                    let params = DeleteParams { preconditions: precondition.map(|v| Preconditions { resource_version: Some(v.to_string()), uid: None }), ..Default::default() };
                    api.delete(&name, &params).await.map(|_| Output::Deleted)
                }
                Action::Read => api.get(&name).await.map(|cm| {
                    let (value, version) = value_of(&cm).unwrap_or((0, 0));
                    Output::Read { value, version }
                }),
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
async fn watch_loop(api: Api<ConfigMap>, until: Instant, recorded: Arc<Mutex<Recorded>>) {
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

/// etcd's own log of the changes under the prefix after `from`, up to its revision now.
async fn etcd_log(url: &str, from: u64) -> Vec<Change> {
    {
        let store = apiary_etcd::EtcdStore::new(apiary_etcd::EtcdOptions { servers: vec![url.to_owned()], ..Default::default() }).expect("an etcd client");
        let current = match store.run(apiary_core::storage::StorageOp::CurrentRevision).await {
            Ok(apiary_core::storage::StorageOutput::Revision(r)) => r,
            other => panic!("etcd's revision: {other:?}"),
        };
        let mut watch = store.watch(PREFIX, from).await.expect("a watch of etcd's history");
        let mut log = Vec::new();
        let mut last = from;
        while last < current {
            let Ok(Some(Ok(event))) = tokio::time::timeout(Duration::from_secs(5), watch.next()).await else { break };
            let (kind, kv, revision) = match &event {
                WatchEvent::Put { kv, prev } => (if prev.is_some() { ChangeKind::Modified } else { ChangeKind::Added }, kv, kv.mod_revision),
                WatchEvent::Delete { prev, revision } => (ChangeKind::Deleted, prev, *revision),
            };
            let value = serde_json::from_slice::<serde_json::Value>(&kv.value)
                .ok()
                .and_then(|o| o.pointer("/data/v").and_then(|v| v.as_str()).and_then(|v| v.parse().ok()))
                .unwrap_or(0);
            last = revision;
            log.push(Change { revision, key: kv.key.clone(), kind, value });
        }
        log
    }
}

#[test]
fn replicas_on_etcd_under_faults_lose_duplicate_and_reorder_nothing() {
    let mut etcd = Etcd::start();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let proxy = rt.block_on(FaultProxy::start(etcd.url().trim_start_matches("http://").to_owned()));
    let servers = format!("--etcd-servers=http://127.0.0.1:{}", proxy.port);
    // One PKI for every replica (the first makes it), as replicas behind one name
    // share their CA: else each would publish its own CA in kube-root-ca.crt.
    let pki = tempfile::tempdir().unwrap();
    let cert_dir = format!("--cert-dir={}", pki.path().display());
    let mut replicas: Vec<Replica> = (0..REPLICAS)
        .map(|_| {
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let args = ["--storage", "etcd", &servers, &cert_dir, "--secure-port", &port.to_string()].map(str::to_owned).to_vec();
            Replica { apiary: None, dir: tempfile::tempdir().unwrap(), args }
        })
        .collect();
    for r in &mut replicas {
        r.start();
    }
    apiary_conformance::harness::ok(&replicas[0].apiary.as_ref().unwrap().kubectl("1.33", &["create", "namespace", NAMESPACE]));
    let start_revision = {
        let store = apiary_etcd::EtcdStore::new(apiary_etcd::EtcdOptions { servers: vec![etcd.url()], ..Default::default() }).expect("etcd");
        match futures_lite::future::block_on(store.run(apiary_core::storage::StorageOp::CurrentRevision)) {
            Ok(apiary_core::storage::StorageOutput::Revision(r)) => r,
            other => panic!("etcd's revision: {other:?}"),
        }
    };

    let clock = Arc::new(Clock(Instant::now()));
    let recorded = Arc::new(Mutex::new(Recorded::default()));
    let until = Instant::now() + WORKLOAD;
    // Clients: two writers per replica and a watcher per replica, each with the
    // replica's own admin kubeconfig (the replicas made their own CAs).
    let kubeconfigs: Vec<std::path::PathBuf> = replicas.iter().map(|r| r.apiary.as_ref().unwrap().kubeconfig.clone()).collect();
    let mut tasks = Vec::new();
    for (i, kubeconfig) in kubeconfigs.iter().enumerate() {
        let client = rt.block_on(async {
            let kubeconfig = kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig");
            let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.expect("config");
            // No retries: one request, one operation in the history.
            config.default_retry = false;
            config.read_timeout = Some(PATIENCE);
            kube::Client::try_from(config).expect("client")
        });
        for w in 0..2 {
            let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
            let id = (i * 2 + w) as u32;
            tasks.push(rt.spawn(client_loop(id, api, clock.clone(), until, recorded.clone(), 0x5eed + u64::from(id))));
        }
        tasks.push(rt.spawn(watch_loop(Api::namespaced(client, NAMESPACE), until, recorded.clone())));
    }

    // The nemesis: every kind of fault in turn, each healed before the next.
    let mut faults: BTreeMap<&str, u32> = BTreeMap::new();
    let mut rng = apiary_sim::rng::Rng::new(0xfa17);
    let kinds = ["kill replica", "freeze etcd", "cut", "restart etcd", "delay", "kill replica", "partition"];
    let mut turn = 0;
    while Instant::now() + Duration::from_secs(3) < until {
        std::thread::sleep(Duration::from_millis(300));
        let fault = kinds[turn % kinds.len()];
        turn += 1;
        *faults.entry(fault).or_default() += 1;
        match fault {
            "kill replica" => {
                let i = rng.below(REPLICAS as u64) as usize;
                replicas[i].kill();
                replicas[i].start();
            }
            "freeze etcd" => {
                etcd.pause();
                std::thread::sleep(Duration::from_millis(1000));
                etcd.resume();
            }
            "restart etcd" => etcd.restart(),
            "delay" => {
                proxy.delay(Duration::from_millis(100));
                std::thread::sleep(Duration::from_millis(1000));
                proxy.delay(Duration::ZERO);
            }
            "partition" => {
                proxy.hold(true);
                std::thread::sleep(Duration::from_millis(1000));
                proxy.hold(false);
            }
            _ => proxy.cut(),
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    for task in tasks {
        let _ = rt.block_on(task);
    }
    // Every key read once more through every replica.
    for (i, kubeconfig) in kubeconfigs.iter().enumerate() {
        rt.block_on(async {
            let client = kube_support::client_from(kubeconfig).await;
            let api: Api<ConfigMap> = Api::namespaced(client, NAMESPACE);
            for k in 0..KEYS {
                let name = format!("k{k}");
                let call = clock.now();
                let result = tokio::time::timeout(PATIENCE, async {
                    api.get(&name).await.map(|cm| {
                        let (value, version) = value_of(&cm).unwrap_or((0, 0));
                        Output::Read { value, version }
                    })
                })
                .await;
                if let Ok(Some(output)) = outcome(result) {
                    let input = Input { key: format!("{PREFIX}{name}"), action: Action::Read };
                    recorded.lock().unwrap().history.push(Operation { client: 100 + i as u32, input, output: Some(output), call, ret: Some(clock.now()) });
                }
            }
        });
    }
    let log = rt.block_on(etcd_log(&etcd.url(), start_revision));
    for r in &mut replicas {
        r.kill();
    }
    drop(rt);

    let recorded = recorded.lock().unwrap();
    let known = recorded.history.iter().filter(|o| o.output.is_some()).count();
    eprintln!(
        "{} operations ({known} with known outcomes), {} watches delivering {} events, {} changes in etcd; faults: {faults:?}",
        recorded.history.len(),
        recorded.sessions.len(),
        recorded.sessions.iter().map(|(_, d)| d.len()).sum::<usize>(),
        log.len()
    );
    assert!(known > 50, "the workload got answers");
    match check(&ObjectModel, &recorded.history, 20_000_000) {
        Verdict::Linearizable => {}
        other => {
            let shown: Vec<String> = recorded.history.iter().map(|o| format!("  {o:?}")).collect();
            panic!("{other:?}\n{}", shown.join("\n"));
        }
    }
    for (from, delivered) in &recorded.sessions {
        if let Err(e) = check_watch(&log, PREFIX, Some(*from), delivered) {
            panic!("a watch from {from}: {e:?}\ndelivered: {delivered:?}");
        }
    }
}

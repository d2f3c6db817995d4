//! Jepsen-style: three real Apiary replicas on one real etcd (through a TCP proxy of our
//! own), real clients (kube-rs) writing, reading and watching ConfigMaps through all of
//! them while faults are injected — replicas killed (SIGKILL) and restarted, etcd
//! frozen (SIGSTOP/SIGCONT) and restarted, the proxy delaying, holding back and cutting
//! the connections to etcd. Then the recorded history is checked as the simulation's
//! is: every object's history linearizable, every watch delivering each change once,
//! in order, against etcd's own log of the changes. Bounded in time; every process is
//! stopped.

mod fault_proxy;
mod jepsen_support;

use apiary_conformance::etcd::Etcd;
use apiary_conformance::harness::Apiary;
use apiary_core::storage::{Storage, WatchStream};
use apiary_sim::watch_order::{check_watch, Change};
use fault_proxy::FaultProxy;
use jepsen_support::{assert_linearizable, client_loop, plain_client, read_all, watch_loop, Clock, Recorded, NAMESPACE, PREFIX};
use kube::api::Api;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const REPLICAS: usize = 3;
/// Unless `JEPSEN_SECONDS` says otherwise.
const WORKLOAD: Duration = Duration::from_secs(30);

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

    /// SIGTERM: the replica must drain and exit 0 on its own; how long it took.
    fn terminate(&mut self) -> Duration {
        let mut apiary = self.apiary.take().expect("a running replica");
        let asked = Instant::now();
        apiary.signal("TERM");
        let status = apiary.wait_exit(Duration::from_secs(75)).expect("a replica sent SIGTERM exits within its drain");
        assert!(status.success(), "a graceful shutdown exits 0, not {status}");
        asked.elapsed()
    }

    fn kill(&mut self) {
        if let Some(mut apiary) = self.apiary.take() {
            apiary.signal("KILL");
            let _ = apiary.wait_exit(Duration::from_secs(10));
        }
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
            let change = apiary_sim::wire::change_of(&event);
            last = change.revision;
            log.push(change);
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
    let until = Instant::now() + jepsen_support::workload(WORKLOAD);
    // Clients: two writers per replica and a watcher per replica, each with the
    // replica's own admin kubeconfig (the replicas made their own CAs).
    let kubeconfigs: Vec<std::path::PathBuf> = replicas.iter().map(|r| r.apiary.as_ref().unwrap().kubeconfig.clone()).collect();
    let mut tasks = Vec::new();
    for (i, kubeconfig) in kubeconfigs.iter().enumerate() {
        let client = rt.block_on(plain_client(kubeconfig));
        for w in 0..2 {
            let api = Api::namespaced(client.clone(), NAMESPACE);
            let id = (i * 2 + w) as u32;
            tasks.push(rt.spawn(client_loop(id, api, clock.clone(), until, recorded.clone(), 0x5eed + u64::from(id))));
        }
        tasks.push(rt.spawn(watch_loop(Api::namespaced(client, NAMESPACE), until, recorded.clone())));
    }

    // The nemesis: every kind of fault in turn, each healed before the next.
    let mut faults: BTreeMap<&str, u32> = BTreeMap::new();
    let mut rng = apiary_sim::rng::Rng::new(0xfa17);
    let kinds = ["kill replica", "freeze etcd", "cut", "restart etcd", "delay", "terminate replica", "partition"];
    let mut shutdowns = Vec::new();
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
            "terminate replica" => {
                let i = rng.below(REPLICAS as u64) as usize;
                shutdowns.push(replicas[i].terminate());
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
        rt.block_on(read_all(kubeconfig, 100 + i as u32, &clock, &recorded));
    }
    let log = rt.block_on(etcd_log(&etcd.url(), start_revision));
    for r in &mut replicas {
        r.kill();
    }
    drop(rt);

    let recorded = recorded.lock().unwrap();
    let known = recorded.history.iter().filter(|o| o.output.is_some()).count();
    eprintln!(
        "{} operations ({known} with known outcomes), {} watches delivering {} events, {} changes in etcd; faults: {faults:?}; graceful shutdowns took {shutdowns:?}",
        recorded.history.len(),
        recorded.sessions.len(),
        recorded.sessions.iter().map(|(_, d)| d.len()).sum::<usize>(),
        log.len()
    );
    assert!(known > 50, "the workload got answers");
    assert_linearizable(&recorded);
    for (from, delivered) in &recorded.sessions {
        if let Err(e) = check_watch(&log, PREFIX, Some(*from), delivered) {
            panic!("a watch from {from}: {e:?}\ndelivered: {delivered:?}");
        }
    }
}

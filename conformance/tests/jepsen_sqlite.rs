//! Jepsen-style on sqlite: one real Apiary on its embedded store, real clients (kube-rs)
//! writing and reading ConfigMaps while the server is killed (SIGKILL) and restarted
//! again and again. No acknowledged write may be lost: the history, with every key
//! read once more at the end, must be linearizable. Bounded in time; the process is
//! stopped.

mod jepsen_support;

use apiary_conformance::harness::Apiary;
use jepsen_support::{assert_linearizable, client_loop, plain_client, read_all, Clock, Recorded, NAMESPACE};
use kube::api::Api;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Unless `JEPSEN_SECONDS` says otherwise.
const WORKLOAD: Duration = Duration::from_secs(20);

#[test]
fn sqlite_killed_again_and_again_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
    let args = ["--storage", "sqlite", "--secure-port", port.as_str()];
    let mut apiary = Some(Apiary::start_in(dir.path(), &args));
    let kubeconfig = apiary.as_ref().unwrap().kubeconfig.clone();
    apiary_conformance::harness::ok(&apiary.as_ref().unwrap().kubectl("1.33", &["create", "namespace", NAMESPACE]));

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let clock = Arc::new(Clock(Instant::now()));
    let recorded = Arc::new(Mutex::new(Recorded::default()));
    let until = Instant::now() + jepsen_support::workload(WORKLOAD);
    let client = rt.block_on(plain_client(&kubeconfig));
    let tasks: Vec<_> = (0..4u32)
        .map(|id| rt.spawn(client_loop(id, Api::namespaced(client.clone(), NAMESPACE), clock.clone(), until, recorded.clone(), 0x5ec + u64::from(id))))
        .collect();
    // SIGKILL every second and a half, started again at once on the same file.
    let mut kills = 0;
    while Instant::now() + Duration::from_secs(2) < until {
        std::thread::sleep(Duration::from_millis(1500));
        if let Some(mut running) = apiary.take() {
            running.signal("KILL");
            let _ = running.wait_exit(Duration::from_secs(10));
            kills += 1;
        }
        apiary = Some(Apiary::start_in(dir.path(), &args));
    }
    for task in tasks {
        let _ = rt.block_on(task);
    }
    rt.block_on(read_all(&kubeconfig, 100, &clock, &recorded));
    if let Some(mut running) = apiary.take() {
        running.stop();
    }
    drop(rt);

    let recorded = recorded.lock().unwrap();
    let known = recorded.history.iter().filter(|o| o.output.is_some()).count();
    let writes = recorded.history.iter().filter(|o| matches!(o.output, Some(apiary_sim::object::Output::Written(_)))).count();
    eprintln!("{} operations ({known} with known outcomes, {writes} acknowledged writes), {kills} SIGKILLs", recorded.history.len());
    assert!(kills >= 5 && writes > 20, "the run killed the server and wrote through it");
    assert_linearizable(&recorded);
}

//! The real binary on its default storage, sqlite: what survives a restart and a crash.
//!
//! - A restart serves the same objects at the same resourceVersions, and a watch
//!   resumed from a resourceVersion before the restart gets the events it missed.
//! - SIGKILL in the middle of concurrent creates and updates loses no write that was
//!   answered 200/201, several times over on one database.
//! - A database file that is not a database stops apiary with a clear error, and the
//!   file is left as it was.
mod kube_support;

use kube_support::client;

use apiary_conformance::harness::{apiary_command, ok, Apiary};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn config_map(name: &str, n: u64) -> ConfigMap {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "data": {"n": n.to_string()}
    }))
    .unwrap()
}

fn counter(cm: &ConfigMap) -> u64 {
    cm.data.as_ref().unwrap()["n"].parse().unwrap()
}

fn resource_version(cm: &ConfigMap) -> u64 {
    cm.metadata
        .resource_version
        .as_ref()
        .unwrap()
        .parse()
        .unwrap()
}

/// Every ConfigMap's name and resourceVersion.
async fn resource_versions(api: &Api<ConfigMap>) -> BTreeMap<String, String> {
    api.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|cm| {
            (
                cm.metadata.name.unwrap(),
                cm.metadata.resource_version.unwrap(),
            )
        })
        .collect()
}

/// Start apiary on sqlite (the default: no --storage flag) in `dir`.
fn start_sqlite(dir: &Path) -> Apiary {
    Apiary::start_in(dir, &[])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_objects_revisions_and_watch_history() {
    let dir = tempfile::tempdir().unwrap();
    let mut apiary = start_sqlite(dir.path());
    let api: Api<ConfigMap> = Api::namespaced(client(&apiary).await, "default");
    let pp = PostParams::default();
    let first = api.create(&pp, &config_map("first", 0)).await.unwrap();
    let before_restart = resource_version(&first);
    let mut missed = Vec::new();
    for i in 1..=5 {
        let created = api
            .create(&pp, &config_map(&format!("later-{i}"), i))
            .await
            .unwrap();
        missed.push((
            created.metadata.name.clone().unwrap(),
            resource_version(&created),
        ));
    }
    let listed = resource_versions(&api).await;
    apiary.stop();

    let apiary = start_sqlite(dir.path());
    let api: Api<ConfigMap> = Api::namespaced(client(&apiary).await, "default");
    let relisted = resource_versions(&api).await;
    assert_eq!(
        relisted, listed,
        "the same objects at the same resourceVersions"
    );

    // A watch from before the restart replays what came after, in order.
    let mut events = api
        .watch(&WatchParams::default(), &before_restart.to_string())
        .await
        .unwrap()
        .boxed();
    for (name, rv) in &missed {
        let event = tokio::time::timeout(Duration::from_secs(20), events.next())
            .await
            .expect("a missed event arrives")
            .expect("the watch stays open")
            .unwrap();
        match event {
            WatchEvent::Added(cm) => {
                assert_eq!(cm.metadata.name.as_ref(), Some(name));
                assert_eq!(resource_version(&cm), *rv);
            }
            other => panic!("expected ADDED {name}, got {other:?}"),
        }
    }
    // New writes continue the revision sequence.
    let next = api.create(&pp, &config_map("after", 9)).await.unwrap();
    assert!(resource_version(&next) > missed.last().unwrap().1);
    let out = apiary.kubectl(
        "1.33",
        &["get", "configmap", "first", "-o", "jsonpath={.data.n}"],
    );
    assert_eq!(ok(&out), "0");
}

/// What a writer task knows of one object.
#[derive(Clone, Debug, Default)]
struct Known {
    /// The last write answered with success: (counter, resourceVersion).
    acked: Option<(u64, u64)>,
    /// A write sent but not answered when the server died: its counter.
    in_flight: Option<u64>,
}

/// Creates and updates from `tasks` concurrent clients until the server goes away.
/// Each task owns its objects and writes them one request at a time, so for every
/// object at most one write is unanswered when the server is killed.
async fn write_until_killed(
    api: Api<ConfigMap>,
    round: usize,
    tasks: usize,
    acked_total: Arc<AtomicUsize>,
) -> BTreeMap<String, Known> {
    let known = Arc::new(Mutex::new(BTreeMap::<String, Known>::new()));
    let mut handles = Vec::new();
    for task in 0..tasks {
        let (api, known, acked_total) = (api.clone(), known.clone(), acked_total.clone());
        handles.push(tokio::spawn(async move {
            let pp = PostParams::default();
            for object in 0.. {
                let name = format!("crash-{round}-{task}-{object}");
                known
                    .lock()
                    .unwrap()
                    .entry(name.clone())
                    .or_default()
                    .in_flight = Some(0);
                let Ok(mut current) = api.create(&pp, &config_map(&name, 0)).await else {
                    return;
                };
                let record = |cm: &ConfigMap| {
                    let mut known = known.lock().unwrap();
                    let entry = known.get_mut(&name).unwrap();
                    entry.acked = Some((counter(cm), resource_version(cm)));
                    entry.in_flight = None;
                    acked_total.fetch_add(1, Ordering::Relaxed);
                };
                record(&current);
                for n in 1..=3 {
                    let mut next = config_map(&name, n);
                    next.metadata.resource_version = current.metadata.resource_version.clone();
                    known.lock().unwrap().get_mut(&name).unwrap().in_flight = Some(n);
                    let Ok(updated) = api.replace(&name, &pp, &next).await else {
                        return;
                    };
                    record(&updated);
                    current = updated;
                }
            }
        }));
    }
    for handle in handles {
        handle.await.unwrap();
    }
    Arc::try_unwrap(known).unwrap().into_inner().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_under_load_loses_no_answered_write() {
    const ROUNDS: usize = 4;
    const TASKS: usize = 16;
    let dir = tempfile::tempdir().unwrap();
    let mut highest_acked_rv = 0;
    let mut all_known = BTreeMap::new();
    for round in 0..ROUNDS {
        let mut apiary = start_sqlite(dir.path());
        let api: Api<ConfigMap> = Api::namespaced(client(&apiary).await, "default");
        // The server starts cleanly on what the previous round left and keeps serving:
        // a new write gets a revision above every one answered before.
        let probe = api
            .create(
                &PostParams::default(),
                &config_map(&format!("probe-{round}"), 0),
            )
            .await
            .expect("the restarted server takes writes");
        assert!(
            resource_version(&probe) > highest_acked_rv,
            "round {round}: revision {} reused (had {highest_acked_rv})",
            resource_version(&probe)
        );

        let acked = Arc::new(AtomicUsize::new(0));
        let load = tokio::spawn(write_until_killed(api.clone(), round, TASKS, acked.clone()));
        // Kill at a different point each round, once some hundreds of writes are in.
        let kill_after = 150 + round * 170;
        while acked.load(Ordering::Relaxed) < kill_after {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        apiary.stop(); // SIGKILL
        let known = load.await.unwrap();
        assert!(known.values().filter(|k| k.acked.is_some()).count() >= kill_after / 4);
        all_known.extend(known);
        drop(apiary);

        // Every answered write is there, in full, at its resourceVersion (or a write
        // sent after it but never answered took effect, wholly).
        let apiary = start_sqlite(dir.path());
        let api: Api<ConfigMap> = Api::namespaced(client(&apiary).await, "default");
        let stored: BTreeMap<String, ConfigMap> = api
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|cm| (cm.metadata.name.clone().unwrap(), cm))
            .collect();
        for (name, known) in &all_known {
            let found = stored
                .get(name)
                .map(|cm| (counter(cm), resource_version(cm)));
            match (known.acked, known.in_flight, found) {
                (Some(acked), _, Some(found)) if found == acked => {}
                (acked, Some(n), Some((found_n, found_rv)))
                    if found_n == n && acked.is_none_or(|(_, rv)| found_rv > rv) => {}
                (None, Some(_), None) => {}
                other => panic!("round {round}: {name}: (acked, in flight, stored) = {other:?}"),
            }
            if let Some((_, rv)) = known.acked {
                highest_acked_rv = highest_acked_rv.max(rv);
            }
        }
        let in_flight = all_known.values().filter(|k| k.in_flight.is_some()).count();
        eprintln!(
            "round {round}: {} objects with answered writes all present after SIGKILL; \
             {in_flight} writes were unanswered",
            all_known.values().filter(|k| k.acked.is_some()).count()
        );
        // Whatever took effect is now final: the next round checks against it.
        for (name, known) in all_known.iter_mut() {
            if let Some(cm) = stored.get(name) {
                known.acked = Some((counter(cm), resource_version(cm)));
            }
            known.in_flight = None;
        }
        all_known.retain(|_, known| known.acked.is_some());
    }
}

#[test]
fn a_corrupt_database_stops_apiary_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    let garbage: Vec<u8> = (0..100_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&db, &garbage).unwrap();
    let out = apiary_command(dir.path(), &[])
        .output()
        .expect("apiary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.contains(&db.display().to_string()),
        "stderr: {stderr}"
    );
    assert!(stderr.contains("not a database"), "stderr: {stderr}");
    assert!(!stderr.contains("apiary ready"), "stderr: {stderr}");
    assert!(
        std::fs::read(&db).unwrap() == garbage,
        "the database file was changed"
    );
}

/// `--etcd-compaction-interval`: each tick compacts history before the revision the
/// previous tick saw, so an exact read of an old revision turns 410 Gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_compaction_interval_compacts_old_history() {
    use kube::api::VersionMatch;
    let apiary = Apiary::start_with(&["--etcd-compaction-interval=1s"]);
    let api: Api<ConfigMap> = Api::namespaced(client(&apiary).await, "default");
    let pp = PostParams::default();
    let first = api.create(&pp, &config_map("early", 0)).await.unwrap();
    let old = (resource_version(&first) - 1).to_string();
    let exact = ListParams::default().at(&old).matching(VersionMatch::Exact);
    assert!(
        api.list(&exact).await.is_ok(),
        "the old revision is readable at first"
    );
    // Writes keep coming; within a few ticks the old revision is compacted away.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut i = 0;
    loop {
        api.create(&pp, &config_map(&format!("later-{i}"), i))
            .await
            .unwrap();
        i += 1;
        match api.list(&exact).await {
            Err(kube::Error::Api(status)) if status.code == 410 => break,
            Ok(_) if std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(300)).await
            }
            other => panic!("expected 410 Gone for revision {old}: {other:?}"),
        }
    }
}

//! apiary on etcd through an etcd restart: a watch with continuous writes sees every
//! write exactly once; while etcd is down requests fail fast with a Status and /readyz
//! reports the etcd check failing; everything recovers when etcd returns.
mod kube_support;

use kube_support::client;

use apiary_conformance::etcd::Etcd;
use apiary_conformance::harness::Apiary;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const WRITES: usize = 300;

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(serde_json::json!({"metadata": {"name": name}, "data": {"k": "v"}}))
        .unwrap()
}

/// Whether `kubectl get --raw /readyz/etcd` succeeds.
fn etcd_ready(apiary: &Apiary) -> bool {
    apiary
        .kubectl("1.33", &["get", "--raw", "/readyz/etcd"])
        .status
        .success()
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_etcd_restart_loses_and_repeats_no_event() {
    let mut etcd = Etcd::start();
    let servers = format!("--etcd-servers={}", etcd.url());
    let apiary = Apiary::start_with(&["--storage", "etcd", &servers]);
    let api: Api<ConfigMap> = Api::namespaced(client(&apiary).await, "default");
    wait_for("readyz/etcd passes", Duration::from_secs(20), || {
        etcd_ready(&apiary)
    });

    // The watch: every ADDED name, counted; watched again from the last resourceVersion
    // whenever the server ends it, as clients do.
    let start = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let seen = Arc::new(Mutex::new(BTreeMap::<String, usize>::new()));
    let watcher = {
        let (api, seen) = (api.clone(), seen.clone());
        tokio::spawn(async move {
            let mut from = start;
            loop {
                let Ok(stream) = api.watch(&WatchParams::default().timeout(290), &from).await
                else {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                };
                let mut stream = stream.boxed();
                while let Some(event) = stream.next().await {
                    match event {
                        Ok(WatchEvent::Added(cm)) => {
                            from = cm.metadata.resource_version.clone().unwrap();
                            let name = cm.metadata.name.unwrap();
                            *seen.lock().unwrap().entry(name).or_default() += 1;
                            if seen.lock().unwrap().len() == WRITES {
                                return;
                            }
                        }
                        Ok(WatchEvent::Bookmark(b)) => from = b.metadata.resource_version,
                        Ok(WatchEvent::Error(e)) => panic!("the watch failed: {e:?}"),
                        Ok(_) => {}
                        Err(_) => break,
                    }
                }
            }
        })
    };

    // Continuous writes; a failed one is retried (409 then means it had landed).
    let acked = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (api, acked, failures) = (api.clone(), acked.clone(), failures.clone());
        tokio::spawn(async move {
            for i in 0..WRITES {
                let name = format!("through-restart-{i:03}");
                loop {
                    // (kube-rs itself retries a 503 a few times before giving up.)
                    match api.create(&PostParams::default(), &config_map(&name)).await {
                        Ok(_) => break,
                        Err(kube::Error::Api(s)) if s.code == 409 => break,
                        Err(_) => {
                            failures.fetch_add(1, Ordering::Relaxed);
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    }
                }
                acked.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };

    // Restart etcd a third of the way in.
    while acked.load(Ordering::Relaxed) < WRITES / 3 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    etcd.stop();
    let down = tokio::task::block_in_place(|| {
        wait_for(
            "readyz/etcd fails while etcd is down",
            Duration::from_secs(15),
            || !etcd_ready(&apiary),
        );
        // A request fails fast, with a Status, rather than hanging.
        let begin = Instant::now();
        let out = apiary.kubectl(
            "1.33",
            &["get", "configmap", "through-restart-000", "-o", "name"],
        );
        (out, begin.elapsed())
    });
    let (out, took) = down;
    assert!(!out.status.success(), "a read succeeded with etcd down");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ServiceUnavailable")
            || stderr.contains("InternalError")
            || stderr.contains("503")
            || stderr.contains("500"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(15), "the request took {took:?}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    etcd.restart();
    tokio::task::block_in_place(|| {
        wait_for("readyz/etcd passes again", Duration::from_secs(20), || {
            etcd_ready(&apiary)
        })
    });

    writer.await.unwrap();
    tokio::time::timeout(Duration::from_secs(60), watcher)
        .await
        .expect("the watch saw every write")
        .unwrap();
    let seen = seen.lock().unwrap();
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "seen more than once: {twice:?}");
    assert_eq!(seen.len(), WRITES);
    eprintln!(
        "{WRITES} writes, {} given up by the client while etcd was down, every one seen once",
        failures.load(Ordering::Relaxed)
    );
}

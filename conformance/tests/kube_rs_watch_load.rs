//! kube-rs against the real binary under load: 50 concurrent `watcher`s each see every
//! one of 10,000 writes exactly once, and a raw watch restarted from the last
//! resourceVersion it saw misses nothing.
mod kube_support;

use kube_support::client;

use apiary_conformance::harness::Apiary;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams, WatchEvent, WatchParams};
use kube::runtime::watcher::{self, Event};
use std::collections::BTreeSet;
use std::time::Duration;

const WATCHERS: usize = 50;
const WRITES: usize = 10_000;

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(serde_json::json!({"metadata": {"name": name}, "data": {"k": "v"}}))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_watchers_see_every_write_exactly_once() {
    let apiary = Apiary::start();
    let api: Api<ConfigMap> = Api::namespaced(client(&apiary).await, "default");

    let mut watchers = Vec::new();
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(WATCHERS);
    for _ in 0..WATCHERS {
        let api = api.clone();
        let ready = ready_tx.clone();
        watchers.push(tokio::spawn(async move {
            let mut seen = BTreeSet::new();
            let mut events = watcher::watcher(api, watcher::Config::default()).boxed();
            while let Some(event) = events.next().await {
                match event.expect("no watch error") {
                    Event::InitDone => ready.send(()).await.unwrap(),
                    Event::Apply(o) => {
                        let name = o.metadata.name.unwrap();
                        assert!(seen.insert(name.clone()), "{name} seen twice");
                        if seen.len() == WRITES {
                            return seen;
                        }
                    }
                    _ => {}
                }
            }
            panic!("the watch ended after {} events", seen.len());
        }));
    }
    for _ in 0..WATCHERS {
        ready_rx.recv().await.unwrap();
    }

    // Writers in parallel, so the run takes seconds.
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let api = api.clone();
            tokio::spawn(async move {
                for i in (w..WRITES).step_by(8) {
                    api.create(&PostParams::default(), &cm(&format!("cm-{i:05}")))
                        .await
                        .expect("create");
                }
            })
        })
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    let want: BTreeSet<String> = (0..WRITES).map(|i| format!("cm-{i:05}")).collect();
    for w in watchers {
        let seen = tokio::time::timeout(Duration::from_secs(120), w)
            .await
            .expect("every watcher finishes")
            .unwrap();
        assert_eq!(seen, want);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_watch_restarted_from_its_last_resource_version_misses_nothing() {
    let apiary = Apiary::start();
    let api: Api<ConfigMap> = Api::namespaced(client(&apiary).await, "default");
    let start = api
        .list(&Default::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();

    for i in 0..10 {
        api.create(&PostParams::default(), &cm(&format!("a-{i}")))
            .await
            .unwrap();
    }
    // Watch, read the first five, stop.
    let mut seen = Vec::new();
    let mut last = start.clone();
    {
        let mut stream = api
            .watch(&WatchParams::default(), &start)
            .await
            .unwrap()
            .boxed();
        while seen.len() < 5 {
            if let WatchEvent::Added(o) = stream.try_next().await.unwrap().unwrap() {
                last = o.metadata.resource_version.clone().unwrap();
                seen.push(o.metadata.name.unwrap());
            }
        }
    }
    for i in 10..15 {
        api.create(&PostParams::default(), &cm(&format!("a-{i}")))
            .await
            .unwrap();
    }
    // Restart from the last resourceVersion seen: the rest, each once, in order.
    let mut stream = api
        .watch(&WatchParams::default(), &last)
        .await
        .unwrap()
        .boxed();
    while seen.len() < 15 {
        let event = tokio::time::timeout(Duration::from_secs(30), stream.try_next())
            .await
            .expect("an event within 30 s")
            .unwrap()
            .unwrap();
        if let WatchEvent::Added(o) = event {
            seen.push(o.metadata.name.unwrap());
        }
    }
    let want: Vec<String> = (0..15).map(|i| format!("a-{i}")).collect();
    assert_eq!(seen, want);
}

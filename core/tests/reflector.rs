//! The reflector driven against the memory backend as the adapter drives it: it fills
//! the watch caches, follows later writes, and client watches are then served from a
//! cache (or from the backend when the cache cannot).

mod support;

use apiary_core::reflector::{Input, Next, Reflector};
use apiary_core::{Step, WatchSource};
use apiary_memory::MemoryWatch;
use bytes::Bytes;
use serde_json::{json, Value};
use std::time::Duration;
use support::Harness;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
}

fn rv(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// The reflector and the backend watch it asked for.
struct Driver {
    reflector: Reflector,
    watch: Option<MemoryWatch>,
}

impl Driver {
    fn new(h: &Harness) -> Driver {
        Driver {
            reflector: Reflector::new(&h.server),
            watch: None,
        }
    }

    /// Do what the reflector asks until it waits for a change the store does not have yet.
    fn run(&mut self, h: &Harness) {
        let now = Duration::ZERO;
        loop {
            let input = match self.reflector.next(now) {
                Next::List(op) => Input::Listed(h.store.apply(op)),
                Next::OpenWatch { prefix, after } => match h.store.open_watch(&prefix, after) {
                    Ok(watch) => {
                        self.watch = Some(watch);
                        Input::WatchOpened
                    }
                    Err(e) => Input::WatchEnded(Some(e)),
                },
                Next::ReadWatch => match self.watch.as_mut().and_then(MemoryWatch::try_next) {
                    Some(item) => Input::read(Some(item)),
                    None => return,
                },
                Next::Sleep { .. } => panic!("the memory store does not fail"),
            };
            self.reflector.handle(input, now);
        }
    }
}

/// The configmap names the configmaps cache holds, and its revision.
fn cached(h: &Harness) -> Option<(Vec<String>, u64)> {
    let cache = h.server.watch_cache("/registry/configmaps/")?;
    let (items, revision) = cache.snapshot("/registry/configmaps/", 0)?;
    let names = items
        .iter()
        .map(|kv| kv.key.rsplit('/').next().unwrap().to_owned())
        .collect();
    Some((names, revision))
}

fn informer_synced(h: &Harness) -> bool {
    h.send("GET", "/readyz/informer-sync", &[], "").status == 200
}

/// Where the core sends a watch of `uri`.
fn source_of(h: &Harness, uri: &str) -> WatchSource {
    let request = http::Request::get(uri).body(Bytes::new()).unwrap();
    let mut step = h.server.handle_as_system(request, h.inputs());
    loop {
        step = match step {
            Step::Storage(op, pending) => pending.resume(h.store.apply(op)),
            Step::Watch(source, _) => return source,
            Step::Respond(r) => panic!("not a watch: {}", r.status()),
            Step::Call(..) | Step::Calls(..) | Step::Relay(..) => panic!("a watch calls nothing out"),
        }
    }
}

#[test]
fn the_caches_fill_follow_writes_and_serve_client_watches() {
    let h = Harness::new();
    let a = h.call("POST", CMS, cm("a")).json();
    assert_eq!(cached(&h), None);
    assert!(!informer_synced(&h));

    let mut driver = Driver::new(&h);
    driver.run(&h);
    let filled_at = h.store.current_revision();
    assert_eq!(cached(&h), Some((vec!["a".to_owned()], filled_at)));
    assert!(informer_synced(&h));
    assert_eq!(driver.reflector.revision(), Some(filled_at));

    // Later writes reach the cache through the reflector's watch.
    let b = h.call("POST", CMS, cm("b")).json();
    driver.run(&h);
    assert_eq!(
        cached(&h),
        Some((vec!["a".to_owned(), "b".to_owned()], rv(&b)))
    );
    // A write to another resource moves the cache's revision on too.
    h.call(
        "POST",
        "/api/v1/namespaces/default/secrets",
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
    );
    driver.run(&h);
    let now = h.store.current_revision();
    assert_eq!(cached(&h).map(|(_, revision)| revision), Some(now));

    // A watch from a revision the cache's window covers is served from the cache...
    let uri = format!("{CMS}?watch=true&resourceVersion={filled_at}");
    assert!(matches!(source_of(&h, &uri), WatchSource::Cache(_)));
    let frames = Harness::frames(&h.send("GET", &uri, &[], ""));
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0]["type"], "ADDED");
    assert_eq!(frames[0]["object"]["metadata"]["name"], "b");

    // ...and one from before the cache was filled goes to the backend, which has the
    // longer history.
    let before = rv(&a) - 1;
    let uri = format!("{CMS}?watch=true&resourceVersion={before}");
    assert_eq!(
        format!("{:?}", source_of(&h, &uri)),
        format!(
            "{:?}",
            WatchSource::Backend {
                prefix: "/registry/configmaps/default/".into(),
                after: before
            }
        )
    );
    let frames = Harness::frames(&h.send("GET", &uri, &[], ""));
    let names: Vec<&str> = frames
        .iter()
        .map(|f| f["object"]["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
}

#[test]
fn a_subscribed_client_watch_gets_writes_the_reflector_follows() {
    let h = Harness::new();
    let mut driver = Driver::new(&h);
    driver.run(&h);
    let from = h.store.current_revision();
    let WatchSource::Cache(subscription) =
        source_of(&h, &format!("{CMS}?watch=true&resourceVersion={from}"))
    else {
        panic!("served from the cache")
    };
    let c = h.call("POST", CMS, cm("c")).json();
    assert!(
        subscription.try_next().is_none(),
        "not before the reflector sees it"
    );
    driver.run(&h);
    let event = subscription
        .try_next()
        .expect("an event")
        .expect("not an error");
    assert_eq!(event.event.revision(), rv(&c));
    assert_eq!(event.event.key(), "/registry/configmaps/default/c");
}

#[test]
fn a_resource_joining_is_caught_up_without_ending_the_other_watches() {
    let h = Harness::new();
    let mut driver = Driver::new(&h);
    driver.run(&h);
    let from = h.store.current_revision();
    let WatchSource::Cache(subscription) =
        source_of(&h, &format!("{CMS}?watch=true&resourceVersion={from}"))
    else {
        panic!("served from the cache")
    };
    // Objects stored under a prefix no cache serves yet, then the resource joins.
    let widgets = apiary_core::registry::Registry::builtin()
        .lookup("", "v1", "configmaps")
        .map(|cm| apiary_core::registry::Resource {
            group: "example.com".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            singular: "widget".into(),
            short_names: vec![],
            categories: vec![],
            storage_version_hash: None,
            schema: apiary_core::schema::ResourceSchema::custom(json!({"type": "object"})),
            ..cm.clone()
        })
        .unwrap();
    h.server.add_resource(widgets);
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
    h.call("POST", "/apis/example.com/v1/namespaces/default/widgets", widget);
    driver.run(&h);
    let cache = h.server.watch_cache("/registry/example.com/widgets/").expect("a cache for widgets");
    assert_eq!(cache.object_count(), Some(1), "the new cache is filled");
    let c = h.call("POST", CMS, cm("c")).json();
    driver.run(&h);
    let event = subscription.try_next().expect("an event").expect("the watch goes on, not ended");
    assert_eq!(event.event.revision(), rv(&c));
}

//! core/v1 and events.k8s.io/v1 Events are one resource stored once, as in
//! kube-apiserver: an Event written through either API is read, listed and watched
//! through the other, converted (`involvedObject` is `regarding`, `message` is `note`,
//! `source` is `deprecatedSource`, ...); an update or delete through one is seen
//! through the other; each API's field selectors keep their names; a namespace being
//! deleted takes its Events once, and the garbage collector an Event whose owner went.

use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::storage::{object_key, StorageOp, StorageOutput};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

const JSON: &str = "application/json";
const CORE: &str = "/api/v1/namespaces/default/events";
const NEW: &str = "/apis/events.k8s.io/v1/namespaces/default/events";

fn harness() -> Harness<MemoryStore> {
    Harness::new(Config::default(), MemoryStore::new())
}

fn ok(reply: Reply, status: u16) -> Value {
    assert_eq!(reply.status, status, "{}", String::from_utf8_lossy(&reply.body));
    reply.json()
}

fn call(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    h.json_call(method, path, JSON, body)
}

/// An old-style core Event about pod `pod`.
fn core_event(name: &str, pod: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": pod, "apiVersion": "v1"},
        "reason": "Started", "message": "Started container app", "type": "Normal",
        "source": {"component": "kubelet", "host": "node-a"},
        "firstTimestamp": "2026-11-24T05:00:00Z", "lastTimestamp": "2026-11-24T05:10:00Z", "count": 3
    })
}

/// A new-style events.k8s.io Event about pod `pod`.
fn new_event(name: &str, pod: &str) -> Value {
    json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": "2026-11-24T06:01:33.123456Z",
        "series": {"count": 5, "lastObservedTime": "2026-11-24T06:05:03.654321Z"},
        "reportingController": "default-scheduler", "reportingInstance": "scheduler-1",
        "action": "Scheduling", "reason": "FailedScheduling",
        "regarding": {"kind": "Pod", "namespace": "default", "name": pod, "apiVersion": "v1"},
        "related": {"kind": "Node", "name": "node-a", "apiVersion": "v1"},
        "note": "0/3 nodes are available", "type": "Warning",
        "deprecatedFirstTimestamp": null, "deprecatedLastTimestamp": null
    })
}

/// The bytes stored at `key`.
fn stored(h: &Harness<MemoryStore>, key: &str) -> Option<bytes::Bytes> {
    match h.store.apply(StorageOp::Get { key: key.into() }) {
        Ok(StorageOutput::Got { kv, .. }) => kv.map(|kv| kv.value),
        other => panic!("{other:?}"),
    }
}

fn names(list: &Value) -> Vec<String> {
    list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_owned()).collect()
}

/// The frames of a watch of `path` from `rv`: every change since, then the watch ends.
fn watch(h: &Harness<MemoryStore>, path: &str, rv: &str) -> Vec<Value> {
    let request = format!("GET {path}?watch=true&resourceVersion={rv}&timeoutSeconds=1 HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\n\r\n");
    let reply = parse_responses(&h.send(request.as_bytes())).unwrap().remove(0);
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    reply.body.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect()
}

#[test]
fn a_core_event_is_an_events_k8s_io_event() {
    let h = harness();
    let made = ok(call(&h, "POST", CORE, Some(&core_event("started", "web-0"))), 201);
    let rv = made["metadata"]["resourceVersion"].as_str().unwrap().to_owned();

    let got = ok(call(&h, "GET", &format!("{NEW}/started"), None), 200);
    assert_eq!(got["apiVersion"], "events.k8s.io/v1");
    assert_eq!(got["kind"], "Event");
    assert_eq!(got["metadata"]["uid"], made["metadata"]["uid"]);
    assert_eq!(got["metadata"]["resourceVersion"], rv.as_str());
    assert_eq!(got["regarding"], json!({"kind": "Pod", "namespace": "default", "name": "web-0", "apiVersion": "v1"}));
    assert_eq!(got["note"], "Started container app");
    assert_eq!(got["deprecatedSource"], json!({"component": "kubelet", "host": "node-a"}));
    assert_eq!(got["deprecatedFirstTimestamp"], "2026-11-24T05:00:00Z");
    assert_eq!(got["deprecatedLastTimestamp"], "2026-11-24T05:10:00Z");
    assert_eq!(got["deprecatedCount"], 3);
    assert_eq!(got["eventTime"], Value::Null);
    for core_only in ["involvedObject", "message", "source", "firstTimestamp", "lastTimestamp", "count", "reportingComponent"] {
        assert!(got.get(core_only).is_none(), "{core_only} in {got}");
    }

    // Listed through events.k8s.io, from the cache (resourceVersion=0) and from storage.
    for query in ["", "?resourceVersion=0", "?limit=10"] {
        let list = ok(call(&h, "GET", &format!("{NEW}{query}"), None), 200);
        assert_eq!(list["kind"], "EventList");
        assert_eq!(list["apiVersion"], "events.k8s.io/v1");
        assert_eq!(names(&list), ["started"], "{query}");
        assert_eq!(list["items"][0]["regarding"]["name"], "web-0", "{query}");
        assert_eq!(list["items"][0]["note"], "Started container app", "{query}");
    }
    // Across namespaces too.
    let all = ok(call(&h, "GET", "/apis/events.k8s.io/v1/events", None), 200);
    assert_eq!(names(&all), ["started"]);

    // Stored once, in the core/v1 form, under core's prefix.
    let key = object_key("/registry", "", "events", Some("default"), "started");
    let core_form: Value = serde_json::from_slice(&stored(&h, &key).expect("stored under /registry/events/")).unwrap();
    assert_eq!(core_form["apiVersion"], "v1");
    assert_eq!(core_form["message"], "Started container app");
    assert!(stored(&h, &object_key("/registry", "events.k8s.io", "events", Some("default"), "started")).is_none());
}

#[test]
fn an_events_k8s_io_event_is_a_core_event() {
    let h = harness();
    let made = ok(call(&h, "POST", NEW, Some(&new_event("scheduling", "web-1"))), 201);
    // The answer is in the version asked.
    assert_eq!(made["apiVersion"], "events.k8s.io/v1");
    assert_eq!(made["regarding"]["name"], "web-1");
    assert_eq!(made["note"], "0/3 nodes are available");
    assert_eq!(made["reportingController"], "default-scheduler");
    assert_eq!(made["deprecatedSource"], json!({}));
    assert!(made.get("message").is_none(), "{made}");
    // Managed fields keep the version they were written in.
    assert_eq!(made["metadata"]["managedFields"][0]["apiVersion"], "events.k8s.io/v1");

    let got = ok(call(&h, "GET", &format!("{CORE}/scheduling"), None), 200);
    assert_eq!(got["apiVersion"], "v1");
    assert_eq!(got["kind"], "Event");
    assert_eq!(got["metadata"]["uid"], made["metadata"]["uid"]);
    assert_eq!(got["metadata"]["managedFields"][0]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(got["involvedObject"], json!({"kind": "Pod", "namespace": "default", "name": "web-1", "apiVersion": "v1"}));
    assert_eq!(got["message"], "0/3 nodes are available");
    assert_eq!(got["reportingComponent"], "default-scheduler");
    assert_eq!(got["reportingInstance"], "scheduler-1");
    assert_eq!(got["eventTime"], "2026-11-24T06:01:33.123456Z");
    assert_eq!(got["series"], json!({"count": 5, "lastObservedTime": "2026-11-24T06:05:03.654321Z"}));
    assert_eq!(got["related"]["name"], "node-a");
    assert_eq!(got["action"], "Scheduling");
    assert_eq!(got["reason"], "FailedScheduling");
    assert_eq!(got["type"], "Warning");
    assert_eq!(got["source"], json!({}));
    assert_eq!(got["firstTimestamp"], Value::Null);
    for new_only in ["regarding", "note", "deprecatedSource", "deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedCount", "reportingController"] {
        assert!(got.get(new_only).is_none(), "{new_only} in {got}");
    }
    for query in ["", "?resourceVersion=0", "?limit=10"] {
        let list = ok(call(&h, "GET", &format!("{CORE}{query}"), None), 200);
        assert_eq!(list["apiVersion"], "v1");
        assert_eq!(names(&list), ["scheduling"], "{query}");
        assert_eq!(list["items"][0]["involvedObject"]["name"], "web-1", "{query}");
    }
    // A dry run answers what a write would have shown, and writes nothing.
    let dry = ok(call(&h, "POST", &format!("{NEW}?dryRun=All"), Some(&new_event("dry", "web-2"))), 201);
    assert_eq!(dry["deprecatedSource"], json!({}));
    assert_eq!(dry["deprecatedFirstTimestamp"], Value::Null);
    assert_eq!(dry["regarding"]["name"], "web-2");
    assert_eq!(call(&h, "GET", &format!("{CORE}/dry"), None).status, 404);
    // A name taken through one API is taken through the other.
    let again = call(&h, "POST", CORE, Some(&core_event("scheduling", "web-1")));
    assert_eq!(again.status, 409, "{}", String::from_utf8_lossy(&again.body));
}

#[test]
fn updates_and_deletes_through_one_api_show_through_the_other() {
    let h = harness();
    ok(call(&h, "POST", CORE, Some(&core_event("started", "web-0"))), 201);

    // A PUT through events.k8s.io of what it reads.
    let mut seen = ok(call(&h, "GET", &format!("{NEW}/started"), None), 200);
    seen["note"] = json!("Started container app again");
    seen["deprecatedCount"] = json!(4);
    let put = ok(call(&h, "PUT", &format!("{NEW}/started"), Some(&seen)), 200);
    assert_eq!(put["note"], "Started container app again");
    let core = ok(call(&h, "GET", &format!("{CORE}/started"), None), 200);
    assert_eq!(core["message"], "Started container app again");
    assert_eq!(core["count"], 4);
    assert_eq!(core["metadata"]["resourceVersion"], put["metadata"]["resourceVersion"]);

    // A merge patch through core/v1.
    let patch = json!({"message": "patched through core"});
    let patched = h.json_call("PATCH", &format!("{CORE}/started"), "application/merge-patch+json", Some(&patch));
    let patched = ok(patched, 200);
    let new = ok(call(&h, "GET", &format!("{NEW}/started"), None), 200);
    assert_eq!(new["note"], "patched through core");
    assert_eq!(new["metadata"]["resourceVersion"], patched["metadata"]["resourceVersion"]);

    // A merge patch through events.k8s.io, in its own names.
    let patch = json!({"note": "patched through events.k8s.io"});
    ok(h.json_call("PATCH", &format!("{NEW}/started"), "application/merge-patch+json", Some(&patch)), 200);
    let core = ok(call(&h, "GET", &format!("{CORE}/started"), None), 200);
    assert_eq!(core["message"], "patched through events.k8s.io");
    assert_eq!(core["involvedObject"]["name"], "web-0");

    // Deleted through events.k8s.io: gone from both.
    ok(call(&h, "DELETE", &format!("{NEW}/started"), None), 200);
    assert_eq!(call(&h, "GET", &format!("{CORE}/started"), None).status, 404);
    assert_eq!(call(&h, "GET", &format!("{NEW}/started"), None).status, 404);

    // And the other way round.
    ok(call(&h, "POST", NEW, Some(&new_event("scheduling", "web-1"))), 201);
    ok(call(&h, "DELETE", &format!("{CORE}/scheduling"), None), 200);
    assert_eq!(call(&h, "GET", &format!("{NEW}/scheduling"), None).status, 404);
    for path in [CORE, NEW] {
        for query in ["", "?resourceVersion=0"] {
            let list = ok(call(&h, "GET", &format!("{path}{query}"), None), 200);
            assert!(names(&list).is_empty(), "{path}{query}: {list}");
        }
    }
}

#[test]
fn watches_of_either_api_see_writes_through_both_converted() {
    let h = harness();
    let start = ok(call(&h, "GET", CORE, None), 200)["metadata"]["resourceVersion"].as_str().unwrap().to_owned();
    ok(call(&h, "POST", CORE, Some(&core_event("started", "web-0"))), 201);
    ok(call(&h, "POST", NEW, Some(&new_event("scheduling", "web-1"))), 201);
    ok(call(&h, "DELETE", &format!("{CORE}/scheduling"), None), 200);

    let new = watch(&h, NEW, &start);
    let seen: Vec<(String, String, String)> = new
        .iter()
        .map(|f| {
            let o = &f["object"];
            (f["type"].as_str().unwrap().to_owned(), o["metadata"]["name"].as_str().unwrap().to_owned(), o["apiVersion"].as_str().unwrap().to_owned())
        })
        .collect();
    let expected = |v: &str| {
        vec![
            ("ADDED".to_owned(), "started".to_owned(), v.to_owned()),
            ("ADDED".to_owned(), "scheduling".to_owned(), v.to_owned()),
            ("DELETED".to_owned(), "scheduling".to_owned(), v.to_owned()),
        ]
    };
    assert_eq!(seen, expected("events.k8s.io/v1"));
    assert_eq!(new[0]["object"]["regarding"]["name"], "web-0");
    assert_eq!(new[0]["object"]["note"], "Started container app");
    assert!(new[0]["object"].get("involvedObject").is_none());

    let core = watch(&h, CORE, &start);
    let seen: Vec<(String, String, String)> = core
        .iter()
        .map(|f| {
            let o = &f["object"];
            (f["type"].as_str().unwrap().to_owned(), o["metadata"]["name"].as_str().unwrap().to_owned(), o["apiVersion"].as_str().unwrap().to_owned())
        })
        .collect();
    assert_eq!(seen, expected("v1"));
    assert_eq!(core[1]["object"]["involvedObject"]["name"], "web-1");
    assert_eq!(core[1]["object"]["message"], "0/3 nodes are available");
    assert!(core[1]["object"].get("regarding").is_none());

    // A watch with the initial state, selecting by events.k8s.io's field names.
    let uri = format!("{NEW}?watch=true&fieldSelector=regarding.name%3Dweb-0&timeoutSeconds=1");
    let request = format!("GET {uri} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\n\r\n");
    let reply = parse_responses(&h.send(request.as_bytes())).unwrap().remove(0);
    let text = String::from_utf8_lossy(&reply.body).into_owned();
    let frames: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(frames.len(), 1, "{text}");
    assert_eq!(frames[0]["object"]["regarding"]["name"], "web-0");
}

#[test]
fn field_selectors_keep_each_apis_names() {
    let h = harness();
    ok(call(&h, "POST", CORE, Some(&core_event("a", "web-0"))), 201);
    ok(call(&h, "POST", NEW, Some(&new_event("b", "web-1"))), 201);
    for query in ["", "&resourceVersion=0"] {
        let core = ok(call(&h, "GET", &format!("{CORE}?fieldSelector=involvedObject.name%3Dweb-1{query}"), None), 200);
        assert_eq!(names(&core), ["b"]);
        let new = ok(call(&h, "GET", &format!("{NEW}?fieldSelector=regarding.name%3Dweb-0{query}"), None), 200);
        assert_eq!(names(&new), ["a"]);
        let by_controller = ok(call(&h, "GET", &format!("{NEW}?fieldSelector=reportingController%3Ddefault-scheduler{query}"), None), 200);
        assert_eq!(names(&by_controller), ["b"]);
        let by_component = ok(call(&h, "GET", &format!("{CORE}?fieldSelector=reportingComponent%3Ddefault-scheduler{query}"), None), 200);
        assert_eq!(names(&by_component), ["b"]);
    }
    // Each API refuses the other's names, as upstream's field label conversions do.
    let wrong = call(&h, "GET", &format!("{NEW}?fieldSelector=involvedObject.name%3Dweb-0"), None);
    assert_eq!(wrong.status, 400);
    let wrong = call(&h, "GET", &format!("{CORE}?fieldSelector=regarding.name%3Dweb-0"), None);
    assert_eq!(wrong.status, 400);
}

#[test]
fn a_deleted_namespace_takes_its_events_once() {
    let h = harness();
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}});
    ok(call(&h, "POST", "/api/v1/namespaces", Some(&ns)), 201);
    let mut a = core_event("a", "web-0");
    a["metadata"]["namespace"] = json!("gone");
    a["involvedObject"]["namespace"] = json!("gone");
    ok(call(&h, "POST", "/api/v1/namespaces/gone/events", Some(&a)), 201);
    let mut b = new_event("b", "web-1");
    b["metadata"]["namespace"] = json!("gone");
    b["regarding"]["namespace"] = json!("gone");
    ok(call(&h, "POST", "/apis/events.k8s.io/v1/namespaces/gone/events", Some(&b)), 201);

    ok(call(&h, "DELETE", "/api/v1/namespaces/gone", None), 200);
    h.reflect();
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/gone", None).status, 404);
    for path in ["/api/v1/namespaces/gone/events", "/apis/events.k8s.io/v1/namespaces/gone/events"] {
        let list = ok(call(&h, "GET", path, None), 200);
        assert!(names(&list).is_empty(), "{path}: {list}");
    }
}

#[test]
fn the_garbage_collector_takes_an_event_whose_owner_went() {
    let h = harness();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}});
    let owner = ok(call(&h, "POST", "/api/v1/namespaces/default/configmaps", Some(&cm)), 201);
    let mut event = new_event("owned", "web-0");
    event["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}]);
    ok(call(&h, "POST", NEW, Some(&event)), 201);
    ok(call(&h, "DELETE", "/api/v1/namespaces/default/configmaps/owner", None), 200);
    h.reflect();
    assert_eq!(call(&h, "GET", &format!("{NEW}/owned"), None).status, 404);
    assert_eq!(call(&h, "GET", &format!("{CORE}/owned"), None).status, 404);
}

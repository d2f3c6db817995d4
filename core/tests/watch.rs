//! Watches through the whole server over the memory backend: the initial state, every
//! change after a revision in order, one object's watch, watch-list bookmarks, and 410
//! for a compacted revision.

mod support;

use apiary_core::storage::StorageOp;
use serde_json::{json, Value};
use support::Harness;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn cm(name: &str, v: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": v}})
}

fn rv(obj: &Value) -> String {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn types(frames: &[Value]) -> Vec<String> {
    frames
        .iter()
        .map(|f| f["type"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn watch_from_a_revision_sees_every_later_change_in_order() {
    let h = Harness::new();
    let a = h.call("POST", CMS, cm("a", "1")).json();
    let start = rv(&a);
    let mut a2 = a.clone();
    a2["data"]["k"] = json!("2");
    let updated = h.call("PUT", &format!("{CMS}/a"), a2).json();
    h.call("POST", CMS, cm("b", "1"));
    h.call("DELETE", &format!("{CMS}/a"), Value::Null);

    let reply = h.send(
        "GET",
        &format!("{CMS}?watch=true&resourceVersion={start}"),
        &[],
        "",
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.content_type, "application/json");
    let frames = Harness::frames(&reply);
    assert_eq!(types(&frames), ["MODIFIED", "ADDED", "DELETED"]);
    assert_eq!(frames[0]["object"]["data"]["k"], "2");
    assert_eq!(rv(&frames[0]["object"]), rv(&updated));
    assert_eq!(frames[1]["object"]["metadata"]["name"], "b");
    assert_eq!(frames[2]["object"]["metadata"]["name"], "a");
    let deleted_at: u64 = rv(&frames[2]["object"]).parse().unwrap();
    assert!(deleted_at > rv(&frames[1]["object"]).parse::<u64>().unwrap());
}

#[test]
fn watch_without_a_revision_starts_with_the_current_state() {
    let h = Harness::new();
    h.call("POST", CMS, cm("a", "1"));
    h.call("POST", CMS, cm("b", "1"));
    let frames = Harness::frames(&h.send("GET", &format!("{CMS}?watch=1"), &[], ""));
    assert_eq!(types(&frames), ["ADDED", "ADDED"]);
    // The legacy /watch/ path, for one object.
    let frames = Harness::frames(&h.send(
        "GET",
        "/api/v1/watch/namespaces/default/configmaps/b",
        &[],
        "",
    ));
    assert_eq!(types(&frames), ["ADDED"]);
    assert_eq!(frames[0]["object"]["metadata"]["name"], "b");
    let by_field = format!("{CMS}?watch=true&fieldSelector=metadata.name%3Da");
    let frames = Harness::frames(&h.send("GET", &by_field, &[], ""));
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0]["object"]["metadata"]["name"], "a");
}

#[test]
fn watch_list_ends_its_initial_state_with_an_annotated_bookmark() {
    let h = Harness::new();
    h.call("POST", CMS, cm("a", "1"));
    let uri = format!("{CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true");
    let frames = Harness::frames(&h.send("GET", &uri, &[], ""));
    assert_eq!(types(&frames), ["ADDED", "BOOKMARK"]);
    let bookmark = &frames[1]["object"];
    assert_eq!(bookmark["kind"], "ConfigMap");
    assert_eq!(bookmark["apiVersion"], "v1");
    assert_eq!(
        bookmark["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    assert_eq!(rv(bookmark), rv(&frames[0]["object"]));

    let bad = format!("{CMS}?watch=true&sendInitialEvents=true");
    assert_eq!(h.send("GET", &bad, &[], "").status, 400);
}

#[test]
fn a_compacted_revision_is_an_error_event_with_410() {
    let h = Harness::new();
    let a = h.call("POST", CMS, cm("a", "1")).json();
    let old = rv(&a);
    h.call("POST", CMS, cm("b", "1"));
    let current = h.store.current_revision();
    h.store
        .apply(StorageOp::Compact { revision: current })
        .expect("compaction");
    let frames = Harness::frames(&h.send(
        "GET",
        &format!("{CMS}?watch=true&resourceVersion={old}"),
        &[],
        "",
    ));
    assert_eq!(types(&frames), ["ERROR"]);
    let status = &frames[0]["object"];
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["code"], 410);
    assert_eq!(status["reason"], "Expired");
}

#[test]
fn watches_refuse_yaml_and_can_carry_tables() {
    let h = Harness::new();
    h.call("POST", CMS, cm("a", "1"));
    h.call("POST", CMS, cm("b", "1"));
    let yaml = h.send(
        "GET",
        &format!("{CMS}?watch=true"),
        &[("accept", "application/yaml")],
        "",
    );
    assert_eq!(yaml.status, 406);
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let reply = h.send(
        "GET",
        &format!("{CMS}?watch=true"),
        &[("accept", accept)],
        "",
    );
    // Upstream names the serializer's media type alone.
    assert_eq!(reply.content_type, "application/json");
    let frames = Harness::frames(&reply);
    assert_eq!(frames[0]["object"]["kind"], "Table");
    assert_eq!(frames[0]["object"]["rows"][0]["cells"][0], "a");
    // Only the first Table carries the column definitions; later ones say null.
    assert_eq!(frames[0]["object"]["columnDefinitions"][0]["name"], "Name");
    assert_eq!(frames[1]["object"]["rows"][0]["cells"][0], "b");
    assert_eq!(frames[1]["object"]["columnDefinitions"], Value::Null);
    assert!(frames[1]["object"].as_object().unwrap().contains_key("columnDefinitions"));
}

#[test]
fn a_selector_turns_leaving_into_deleted_and_joining_into_added() {
    let h = Harness::new();
    let labelled = |name: &str, app: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"app": app}}});
    let a = h.call("POST", CMS, labelled("a", "web")).json();
    let b = h.call("POST", CMS, labelled("b", "db")).json();
    let start = rv(&b);
    let mut a2 = a.clone();
    a2["metadata"]["labels"]["app"] = json!("db");
    a2["metadata"]["resourceVersion"] = json!(rv(&a));
    h.call("PUT", &format!("{CMS}/a"), a2);
    let mut b2 = b.clone();
    b2["metadata"]["labels"]["app"] = json!("web");
    h.call("PUT", &format!("{CMS}/b"), b2);

    let uri = format!("{CMS}?watch=true&labelSelector=app%3Dweb&resourceVersion={start}");
    let frames = Harness::frames(&h.send("GET", &uri, &[], ""));
    assert_eq!(types(&frames), ["DELETED", "ADDED"]);
    assert_eq!(frames[0]["object"]["metadata"]["name"], "a");
    assert_eq!(
        frames[0]["object"]["metadata"]["labels"]["app"], "web",
        "the last matching state"
    );
    assert!(rv(&frames[0]["object"]).parse::<u64>().unwrap() > start.parse::<u64>().unwrap());
    assert_eq!(frames[1]["object"]["metadata"]["name"], "b");

    let initial = Harness::frames(&h.send(
        "GET",
        &format!("{CMS}?watch=true&labelSelector=app%3Dweb"),
        &[],
        "",
    ));
    assert_eq!(types(&initial), ["ADDED"]);
    assert_eq!(initial[0]["object"]["metadata"]["name"], "b");

    let bad = h.send(
        "GET",
        &format!("{CMS}?watch=true&fieldSelector=spec.bogus%3D1"),
        &[],
        "",
    );
    assert_eq!(bad.status, 400);
}

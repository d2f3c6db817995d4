//! resourceVersion and resourceVersionMatch on GET and LIST, as kube-apiserver answers
//! them: exact reads from history, not-older-than checks, and the option errors.

mod support;

use apiary_core::storage::StorageOp;
use serde_json::{json, Value};
use support::Harness;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn exact_lists_read_history_and_not_older_than_reads_the_latest() {
    let h = Harness::new();
    let a = h.call("POST", CMS, cm("a")).json();
    let at_a = a["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    h.call("POST", CMS, cm("b"));

    let exact = h
        .call(
            "GET",
            &format!("{CMS}?resourceVersion={at_a}&resourceVersionMatch=Exact"),
            Value::Null,
        )
        .json();
    assert_eq!(names(&exact), ["a"]);
    assert_eq!(exact["metadata"]["resourceVersion"], at_a.as_str());
    let newer = h
        .call(
            "GET",
            &format!("{CMS}?resourceVersion={at_a}&resourceVersionMatch=NotOlderThan"),
            Value::Null,
        )
        .json();
    assert_eq!(names(&newer), ["a", "b"]);
    let default = h
        .call("GET", &format!("{CMS}?resourceVersion={at_a}"), Value::Null)
        .json();
    assert_eq!(names(&default), ["a", "b"]);

    let current = h.store.current_revision();
    h.store
        .apply(StorageOp::Compact { revision: current })
        .expect("compaction");
    let gone = h.call(
        "GET",
        &format!("{CMS}?resourceVersion={at_a}&resourceVersionMatch=Exact"),
        Value::Null,
    );
    assert_eq!(gone.status, 410);
    assert_eq!(gone.json()["reason"], "Expired");
    assert_eq!(
        gone.message(),
        "The resourceVersion for the provided list is too old."
    );
}

#[test]
fn a_revision_from_the_future_is_504_too_large() {
    let h = Harness::new();
    h.call("POST", CMS, cm("a"));
    let future = h.store.current_revision() + 100;
    for uri in [
        format!("{CMS}?resourceVersion={future}"),
        format!("{CMS}/a?resourceVersion={future}"),
    ] {
        let r = h.call("GET", &uri, Value::Null);
        assert_eq!(r.status, 504, "{uri}");
        let s = r.json();
        assert_eq!(s["reason"], "Timeout");
        assert!(s["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("Too large resource version: {future}, current: ")));
        assert_eq!(
            s["details"]["causes"][0]["reason"],
            "ResourceVersionTooLarge"
        );
        assert_eq!(s["details"]["retryAfterSeconds"], 1);
    }
    let r = h.call("GET", &format!("{CMS}/a?resourceVersion=1"), Value::Null);
    assert_eq!(r.status, 200, "an older revision is fine for a GET");
}

#[test]
fn list_options_are_validated_like_upstream() {
    let h = Harness::new();
    let r = h.call(
        "GET",
        &format!("{CMS}?resourceVersionMatch=Exact"),
        Value::Null,
    );
    assert_eq!(r.status, 422);
    assert_eq!(
        r.message(),
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
    );
    let r = h.call(
        "GET",
        &format!("{CMS}?resourceVersion=0&resourceVersionMatch=Exact"),
        Value::Null,
    );
    assert_eq!(r.status, 422);
    let r = h.call(
        "GET",
        &format!("{CMS}?resourceVersion=5&resourceVersionMatch=Sometimes"),
        Value::Null,
    );
    assert_eq!(r.status, 422);
    assert!(
        r.message().contains("Unsupported value: \"Sometimes\""),
        "{}",
        r.message()
    );
    let r = h.call(
        "GET",
        &format!("{CMS}?resourceVersion=5&continue=abc"),
        Value::Null,
    );
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "specifying resource version is not allowed when using continue"
    );
}

#[test]
fn resource_version_zero_lists_come_from_the_watch_cache() {
    let h = Harness::new();
    h.call("POST", CMS, cm("a"));
    let cache = h
        .server
        .watch_caches()
        .iter()
        .find(|c| c.prefix() == "/registry/configmaps/")
        .unwrap()
        .clone();
    // Until a reflector feeds it, lists go to storage.
    assert_eq!(
        names(
            &h.call("GET", &format!("{CMS}?resourceVersion=0"), Value::Null)
                .json()
        ),
        ["a"]
    );
    // Feed it the current state, then write past it: "0" accepts the cache's state,
    // a plain list reads the latest from storage.
    let page = match h.store.apply(StorageOp::List {
        prefix: "/registry/configmaps/".into(),
        revision: None,
        start_after: None,
        limit: None,
    }) {
        Ok(apiary_core::storage::StorageOutput::Listed(page)) => page,
        other => panic!("{other:?}"),
    };
    cache.reset_with(page.items, page.revision);
    h.call("POST", CMS, cm("b"));
    let cached = h
        .call("GET", &format!("{CMS}?resourceVersion=0"), Value::Null)
        .json();
    assert_eq!(names(&cached), ["a"]);
    assert_eq!(
        cached["metadata"]["resourceVersion"],
        page.revision.to_string().as_str()
    );
    assert_eq!(names(&h.call("GET", CMS, Value::Null).json()), ["a", "b"]);
    // A revision the cache has not reached goes to storage too.
    let newer = h.store.current_revision();
    let r = h
        .call(
            "GET",
            &format!("{CMS}?resourceVersion={newer}"),
            Value::Null,
        )
        .json();
    assert_eq!(names(&r), ["a", "b"]);
}

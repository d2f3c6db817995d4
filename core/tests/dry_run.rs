//! dryRun=All through the whole server over the memory backend: every write is checked
//! as a real one and answered, and the store is left as it was (no new revision, no
//! watch event).
mod support;

use serde_json::{json, Value};
use support::Harness;

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const CM: &str = "/api/v1/namespaces/default/configmaps/a";

fn cm(name: &str, v: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": v}})
}

fn setup() -> Harness {
    let h = Harness::new();
    assert_eq!(h.call("POST", CMS, cm("a", "1")).status, 201);
    h
}

/// Run `f`, asserting that the store has no new revision and the resource's watch no
/// event afterwards.
fn unchanged<T>(h: &Harness, f: impl FnOnce() -> T) -> T {
    let before = h.store.current_revision();
    let out = f();
    assert_eq!(
        h.store.current_revision(),
        before,
        "a dry run wrote to the store"
    );
    let watch = h.send(
        "GET",
        &format!("{CMS}?watch=true&resourceVersion={before}"),
        &[],
        "",
    );
    assert_eq!(Harness::frames(&watch), Vec::<Value>::new());
    out
}

#[test]
fn a_dry_run_create_answers_the_object_it_would_store() {
    let h = setup();
    let r = unchanged(&h, || {
        h.call("POST", &format!("{CMS}?dryRun=All"), cm("b", "1"))
    });
    assert_eq!(r.status, 201, "{}", r.message());
    let obj = r.json();
    assert_eq!(obj["metadata"]["name"], "b");
    assert_eq!(obj["metadata"]["namespace"], "default");
    assert!(obj["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| u.len() == 36));
    assert!(obj["metadata"]["creationTimestamp"].is_string());
    // Nothing was stored, so there is no resourceVersion to give.
    assert!(obj["metadata"].get("resourceVersion").is_none(), "{obj}");
    assert_eq!(h.call("GET", &format!("{CMS}/b"), Value::Null).status, 404);

    // generateName is resolved as a real create resolves it.
    let generated =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "g-"}});
    let r = unchanged(&h, || {
        h.call("POST", &format!("{CMS}?dryRun=All"), generated)
    });
    assert_eq!(r.status, 201);
    assert!(r.json()["metadata"]["name"]
        .as_str()
        .unwrap()
        .starts_with("g-"));
}

#[test]
fn a_dry_run_create_is_refused_as_a_real_one_would_be() {
    let h = setup();
    // An existing name.
    let r = unchanged(&h, || {
        h.call("POST", &format!("{CMS}?dryRun=All"), cm("a", "2"))
    });
    assert_eq!(r.status, 409);
    assert_eq!(r.json()["reason"], "AlreadyExists");
    assert_eq!(r.message(), r#"configmaps "a" already exists"#);
    // A missing namespace.
    let r = h.call(
        "POST",
        "/api/v1/namespaces/nowhere/configmaps?dryRun=All",
        cm("x", "1"),
    );
    assert_eq!(r.status, 404, "{}", r.message());
    // An invalid name.
    let r = h.call("POST", &format!("{CMS}?dryRun=All"), cm("Not_Valid", "1"));
    assert_eq!(r.status, 422, "{}", r.message());
    // A type error in the body.
    let bad = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"}, "data": {"k": 1}});
    assert_eq!(
        h.call("POST", &format!("{CMS}?dryRun=All"), bad).status,
        400
    );
}

#[test]
fn a_dry_run_update_answers_the_update_at_the_stored_version() {
    let h = setup();
    let stored = h.call("GET", CM, Value::Null).json();
    let mut changed = stored.clone();
    changed["data"]["k"] = json!("2");
    let r = unchanged(&h, || {
        h.call("PUT", &format!("{CM}?dryRun=All"), changed.clone())
    });
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["data"]["k"], "2");
    assert_eq!(
        r.json()["metadata"]["resourceVersion"],
        stored["metadata"]["resourceVersion"]
    );
    assert_eq!(h.call("GET", CM, Value::Null).json(), stored);

    // Without a resourceVersion (an unconditional update), the stored one is shown.
    let mut unconditional = changed.clone();
    unconditional["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let r = unchanged(&h, || {
        h.call("PUT", &format!("{CM}?dryRun=All"), unconditional)
    });
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json()["metadata"]["resourceVersion"],
        stored["metadata"]["resourceVersion"]
    );

    // A stale resourceVersion still conflicts; a missing object is still not found.
    assert_eq!(h.call("PUT", CM, changed.clone()).status, 200);
    let r = unchanged(&h, || {
        h.call("PUT", &format!("{CM}?dryRun=All"), changed.clone())
    });
    assert_eq!(r.status, 409, "{}", r.message());
    assert_eq!(r.json()["reason"], "Conflict");
    let mut missing = cm("none", "1");
    missing["metadata"]["resourceVersion"] = json!("1");
    let r = h.call("PUT", &format!("{CMS}/none?dryRun=All"), missing);
    assert_eq!(r.status, 404);
}

#[test]
fn a_dry_run_update_of_a_deployment_counts_its_generation_without_storing_it() {
    let h = Harness::new();
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let created = h.call("POST", deployments, d).json();
    assert_eq!(created["metadata"]["generation"], 1);
    let mut scaled = created.clone();
    scaled["spec"]["replicas"] = json!(4);
    let r = unchanged(&h, || {
        h.call("PUT", &format!("{deployments}/web?dryRun=All"), scaled)
    });
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["metadata"]["generation"], 2);
    assert_eq!(r.json()["spec"]["replicas"], 4);
    let stored = h
        .call("GET", &format!("{deployments}/web"), Value::Null)
        .json();
    assert_eq!(stored["metadata"]["generation"], 1);
    assert_eq!(stored["spec"]["replicas"], 1);
}

#[test]
fn a_dry_run_patch_answers_the_patched_object() {
    let h = setup();
    let stored = h.call("GET", CM, Value::Null).json();
    for (content_type, patch) in [
        ("application/merge-patch+json", json!({"data": {"k": "m"}})),
        (
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/data/k", "value": "m"}]),
        ),
    ] {
        let r = unchanged(&h, || {
            h.send(
                "PATCH",
                &format!("{CM}?dryRun=All"),
                &[("Content-Type", content_type)],
                &patch.to_string(),
            )
        });
        assert_eq!(r.status, 200, "{content_type}: {}", r.message());
        assert_eq!(r.json()["data"]["k"], "m");
        assert_eq!(
            r.json()["metadata"]["resourceVersion"],
            stored["metadata"]["resourceVersion"]
        );
    }
    assert_eq!(h.call("GET", CM, Value::Null).json(), stored);
    // A failing JSON patch test still fails; so does a pinned stale resourceVersion.
    let failing = json!([{"op": "test", "path": "/data/k", "value": "nope"}]);
    let r = h.send(
        "PATCH",
        &format!("{CM}?dryRun=All"),
        &[("Content-Type", "application/json-patch+json")],
        &failing.to_string(),
    );
    assert_eq!(r.status, 422);
    let stale = json!({"metadata": {"resourceVersion": "1"}, "data": {"k": "s"}});
    let r = h.send(
        "PATCH",
        &format!("{CM}?dryRun=All"),
        &[("Content-Type", "application/merge-patch+json")],
        &stale.to_string(),
    );
    assert_eq!(r.status, 409, "{}", r.message());
}

#[test]
fn a_dry_run_delete_answers_as_a_delete_and_keeps_the_object() {
    let h = setup();
    let stored = h.call("GET", CM, Value::Null).json();
    // From the query string.
    let r = unchanged(&h, || {
        h.call("DELETE", &format!("{CM}?dryRun=All"), Value::Null)
    });
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["status"], "Success");
    assert_eq!(r.json()["details"]["name"], "a");
    // From a DeleteOptions body, as kubectl sends it.
    let options = json!({"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]});
    let r = unchanged(&h, || h.call("DELETE", CM, options));
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(h.call("GET", CM, Value::Null).json(), stored);

    // Refused as a real delete would be: a missing object, a failed precondition.
    let r = h.call("DELETE", &format!("{CMS}/none?dryRun=All"), Value::Null);
    assert_eq!(r.status, 404);
    let pinned = json!({"dryRun": ["All"], "preconditions": {"resourceVersion": "1"}});
    let r = unchanged(&h, || h.call("DELETE", CM, pinned));
    assert_eq!(r.status, 409, "{}", r.message());

    // A body's options win over the query string, as upstream reads them.
    let r = h.call(
        "DELETE",
        &format!("{CM}?dryRun=All"),
        json!({"kind": "DeleteOptions", "apiVersion": "v1"}),
    );
    assert_eq!(r.status, 200);
    assert_eq!(h.call("GET", CM, Value::Null).status, 404);
}

#[test]
fn a_dry_run_delete_of_a_namespace_leaves_it_and_its_contents() {
    let h = Harness::new();
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "keep"}});
    assert_eq!(h.call("POST", "/api/v1/namespaces", ns).status, 201);
    assert_eq!(
        h.call("POST", "/api/v1/namespaces/keep/configmaps", cm("c", "1"))
            .status,
        201
    );
    let r = unchanged(&h, || {
        h.call("DELETE", "/api/v1/namespaces/keep?dryRun=All", Value::Null)
    });
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["status"]["phase"], "Terminating");
    assert!(r.json()["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        h.call("GET", "/api/v1/namespaces/keep", Value::Null).json()["status"]["phase"],
        "Active"
    );
    assert_eq!(
        h.call("GET", "/api/v1/namespaces/keep/configmaps/c", Value::Null)
            .status,
        200
    );
    // The namespaces the server keeps are still refused.
    assert_eq!(
        h.call(
            "DELETE",
            "/api/v1/namespaces/default?dryRun=All",
            Value::Null
        )
        .status,
        403
    );
}

#[test]
fn a_dry_run_delete_collection_lists_what_it_would_delete() {
    let h = setup();
    assert_eq!(h.call("POST", CMS, cm("b", "1")).status, 201);
    let r = unchanged(&h, || {
        h.call("DELETE", &format!("{CMS}?dryRun=All"), Value::Null)
    });
    assert_eq!(r.status, 200, "{}", r.message());
    let list = r.json();
    let mut names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(
        h.call("GET", CMS, Value::Null).json()["items"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn dry_run_values_other_than_all_are_invalid_options() {
    let h = setup();
    let cases = [
        (
            "POST",
            format!("{CMS}?dryRun=true"),
            "CreateOptions",
            r#"[]string{"true"}"#,
        ),
        (
            "PUT",
            format!("{CM}?dryRun=All&dryRun=x"),
            "UpdateOptions",
            r#"[]string{"All", "x"}"#,
        ),
        (
            "DELETE",
            format!("{CM}?dryRun="),
            "DeleteOptions",
            r#"[]string{""}"#,
        ),
    ];
    for (method, uri, kind, shown) in cases {
        let r = h.call(
            method,
            &uri,
            if method == "DELETE" {
                Value::Null
            } else {
                cm("a", "9")
            },
        );
        assert_eq!(r.status, 422, "{method} {uri}: {}", r.message());
        let body = r.json();
        assert_eq!(body["reason"], "Invalid");
        assert_eq!(
            r.message(),
            format!(
                r#"{kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: {shown}: supported values: "All""#
            )
        );
        assert_eq!(body["details"]["kind"], kind);
        assert_eq!(body["details"]["group"], "meta.k8s.io");
        assert_eq!(
            body["details"]["causes"][0]["reason"],
            "FieldValueNotSupported"
        );
        assert_eq!(body["details"]["causes"][0]["field"], "dryRun");
    }
    let r = h.send(
        "PATCH",
        &format!("{CM}?dryRun=Some"),
        &[("Content-Type", "application/merge-patch+json")],
        "{}",
    );
    assert_eq!(r.status, 422);
    assert!(
        r.message().starts_with("PatchOptions.meta.k8s.io"),
        "{}",
        r.message()
    );
    // In a DeleteOptions body.
    let r = h.call("DELETE", CM, json!({"dryRun": ["Nope"]}));
    assert_eq!(r.status, 422, "{}", r.message());
    // dryRun and fieldValidation errors are reported together, as one options validation.
    let r = h.call(
        "POST",
        &format!("{CMS}?dryRun=x&fieldValidation=y"),
        cm("z", "1"),
    );
    assert_eq!(r.status, 422);
    assert_eq!(
        r.json()["details"]["causes"].as_array().unwrap().len(),
        2,
        "{}",
        r.message()
    );
    // Nothing was touched.
    assert_eq!(h.call("GET", CM, Value::Null).json()["data"]["k"], "1");
}

//! The scale subresource through the whole server over the memory backend: an
//! autoscaling/v1 Scale made from the parent, and PUT and PATCH of it writing the
//! parent's spec.replicas.
mod support;

use serde_json::{json, Value};
use support::Harness;

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const SCALE: &str = "/apis/apps/v1/namespaces/default/deployments/web/scale";

fn deployment(name: &str, replicas: Option<i64>) -> Value {
    let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": name, "tier": "front"},
                              "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "dev"]}]},
                 "template": {"metadata": {"labels": {"app": name, "tier": "front", "env": "prod"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    if let Some(n) = replicas {
        d["spec"]["replicas"] = json!(n);
    }
    d
}

fn setup() -> (Harness, Value) {
    let h = Harness::new();
    let created = h.call("POST", DEPLOYMENTS, deployment("web", Some(2)));
    assert_eq!(created.status, 201, "{}", created.message());
    (h, created.json())
}

fn merge(h: &Harness, uri: &str, patch: Value) -> support::Reply {
    h.send(
        "PATCH",
        uri,
        &[("Content-Type", "application/merge-patch+json")],
        &patch.to_string(),
    )
}

#[test]
fn get_shows_the_parent_as_an_autoscaling_v1_scale() {
    let (h, d) = setup();
    let r = h.call("GET", SCALE, Value::Null);
    assert_eq!(r.status, 200, "{}", r.message());
    let meta = &d["metadata"];
    assert_eq!(
        r.json(),
        json!({
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                "name": "web",
                "namespace": "default",
                "uid": meta["uid"],
                "resourceVersion": meta["resourceVersion"],
                "creationTimestamp": meta["creationTimestamp"],
            },
            "spec": {"replicas": 2},
            "status": {"replicas": 0, "selector": "app=web,env in (dev,prod),tier=front"},
        })
    );
}

#[test]
fn put_writes_the_parents_replicas_and_counts_its_generation() {
    let (h, d) = setup();
    let mut scale = h.call("GET", SCALE, Value::Null).json();
    scale["spec"]["replicas"] = json!(5);
    let r = h.call("PUT", SCALE, scale);
    assert_eq!(r.status, 200, "{}", r.message());
    let answered = r.json();
    assert_eq!(answered["kind"], "Scale");
    assert_eq!(answered["spec"]["replicas"], 5);
    let parent = h
        .call("GET", &format!("{DEPLOYMENTS}/web"), Value::Null)
        .json();
    assert_eq!(parent["spec"]["replicas"], 5);
    assert_eq!(parent["metadata"]["generation"], 2);
    assert_eq!(parent["spec"]["template"], d["spec"]["template"]);
    assert_eq!(
        answered["metadata"]["resourceVersion"],
        parent["metadata"]["resourceVersion"]
    );
    assert_ne!(
        parent["metadata"]["resourceVersion"],
        d["metadata"]["resourceVersion"]
    );

    // Zero replicas: Scale leaves a zero out of its spec, the parent keeps it.
    let r = h.call("PUT", SCALE, json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {}}));
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["spec"], json!({}));
    let parent = h
        .call("GET", &format!("{DEPLOYMENTS}/web"), Value::Null)
        .json();
    assert_eq!(parent["spec"]["replicas"], 0);
}

#[test]
fn a_stale_resource_version_on_put_conflicts_on_the_parent() {
    let (h, _) = setup();
    let scale = h.call("GET", SCALE, Value::Null).json();
    let mut first = scale.clone();
    first["spec"]["replicas"] = json!(3);
    assert_eq!(h.call("PUT", SCALE, first).status, 200);
    let mut stale = scale.clone();
    stale["spec"]["replicas"] = json!(7);
    let r = h.call("PUT", SCALE, stale);
    assert_eq!(r.status, 409, "{}", r.message());
    assert_eq!(r.json()["reason"], "Conflict");
    assert_eq!(
        r.message(),
        r#"Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again"#
    );
    assert_eq!(
        h.call("GET", &format!("{DEPLOYMENTS}/web"), Value::Null)
            .json()["spec"]["replicas"],
        3
    );

    // A wrong uid is a failed precondition on deployments/scale.
    let mut wrong_uid = h.call("GET", SCALE, Value::Null).json();
    wrong_uid["metadata"]["uid"] = json!("00000000-0000-0000-0000-000000000000");
    let r = h.call("PUT", SCALE, wrong_uid);
    assert_eq!(r.status, 409);
    assert!(
        r.message().starts_with(r#"Operation cannot be fulfilled on deployments/scale.apps "web": Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000, UID in object meta: "#),
        "{}",
        r.message()
    );
}

#[test]
fn bad_scales_are_refused() {
    let (h, _) = setup();
    let scale = |replicas: Value| json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": replicas}});
    let r = h.call("PUT", SCALE, scale(json!(-1)));
    assert_eq!(r.status, 422);
    assert_eq!(
        r.message(),
        r#"Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"#
    );
    // A type error, decoded against Scale's schema.
    let r = h.call("PUT", SCALE, scale(json!("two")));
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .starts_with(r#"Scale in version "v1" cannot be handled as a Scale: "#),
        "{}",
        r.message()
    );
    // The parent's kind is not a Scale.
    let mut wrong = scale(json!(1));
    wrong["apiVersion"] = json!("apps/v1");
    let r = h.call("PUT", SCALE, wrong);
    assert_eq!(r.status, 400);
    assert_eq!(r.message(), "the API version in the data (apps/v1) does not match the expected API version (autoscaling/v1)");
    // Another name.
    let mut renamed = scale(json!(1));
    renamed["metadata"]["name"] = json!("other");
    assert_eq!(h.call("PUT", SCALE, renamed).status, 400);
    // Not served: create and delete of a Scale.
    assert_eq!(h.call("DELETE", SCALE, Value::Null).status, 405);
    assert_eq!(
        h.call("GET", &format!("{DEPLOYMENTS}/web"), Value::Null)
            .json()["spec"]["replicas"],
        2
    );
}

#[test]
fn patches_apply_to_the_scale() {
    let (h, _) = setup();
    let r = merge(&h, SCALE, json!({"spec": {"replicas": 4}}));
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["kind"], "Scale");
    assert_eq!(r.json()["spec"]["replicas"], 4);
    let ops = json!([{"op": "test", "path": "/spec/replicas", "value": 4}, {"op": "replace", "path": "/spec/replicas", "value": 6}]);
    let r = h.send(
        "PATCH",
        SCALE,
        &[("Content-Type", "application/json-patch+json")],
        &ops.to_string(),
    );
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(
        h.call("GET", &format!("{DEPLOYMENTS}/web"), Value::Null)
            .json()["spec"]["replicas"],
        6
    );
    // Fields outside the Scale do not reach the parent.
    let r = merge(
        &h,
        SCALE,
        json!({"spec": {"replicas": 1, "paused": true}, "metadata": {"labels": {"x": "y"}}}),
    );
    assert_eq!(r.status, 200, "{}", r.message());
    let parent = h
        .call("GET", &format!("{DEPLOYMENTS}/web"), Value::Null)
        .json();
    assert_eq!(parent["spec"]["replicas"], 1);
    assert!(parent["spec"].get("paused").is_none());
    assert!(parent["metadata"].get("labels").is_none());
    // A pinned stale resourceVersion conflicts.
    let r = merge(
        &h,
        SCALE,
        json!({"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 9}}),
    );
    assert_eq!(r.status, 409, "{}", r.message());
    // A dry run answers the Scale and leaves the parent.
    let r = merge(
        &h,
        &format!("{SCALE}?dryRun=All"),
        json!({"spec": {"replicas": 8}}),
    );
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["spec"]["replicas"], 8);
    assert_eq!(
        h.call("GET", &format!("{DEPLOYMENTS}/web"), Value::Null)
            .json()["spec"]["replicas"],
        1
    );
}

#[test]
fn a_missing_parent_is_not_found_as_upstream_words_it() {
    let h = Harness::new();
    let cases = [
        (
            "/apis/apps/v1/namespaces/default/deployments/none/scale",
            r#"deployments.apps "none" not found"#,
        ),
        (
            "/apis/apps/v1/namespaces/default/statefulsets/none/scale",
            r#"statefulsets.apps "none" not found"#,
        ),
        (
            "/apis/apps/v1/namespaces/default/replicasets/none/scale",
            r#"replicasets/scale.apps "none" not found"#,
        ),
        (
            "/api/v1/namespaces/default/replicationcontrollers/none/scale",
            r#"replicationcontrollers/scale.autoscaling "none" not found"#,
        ),
    ];
    for (uri, message) in cases {
        let r = h.call("GET", uri, Value::Null);
        assert_eq!((r.status, r.message()), (404, message.to_owned()), "{uri}");
    }
    // Writes read the parent: its own NotFound.
    let r = merge(
        &h,
        "/api/v1/namespaces/default/replicationcontrollers/none/scale",
        json!({"spec": {"replicas": 1}}),
    );
    assert_eq!(
        (r.status, r.message()),
        (404, r#"replicationcontrollers "none" not found"#.to_owned())
    );
}

#[test]
fn every_scalable_kind_has_a_scale() {
    let h = Harness::new();
    let template = json!({"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    // A selector must select its template's pods (upstream refuses the RC otherwise).
    let mut rc_template = template.clone();
    rc_template["metadata"]["labels"]["b"] = json!("2");
    let parents = [
        (
            "/apis/apps/v1/namespaces/default/replicasets",
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "x"}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "x"}}, "template": template}}),
            "app=x",
        ),
        (
            "/apis/apps/v1/namespaces/default/statefulsets",
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "x"}, "spec": {"replicas": 3, "serviceName": "x", "selector": {"matchLabels": {"app": "x"}}, "template": template}}),
            "app=x",
        ),
        (
            "/api/v1/namespaces/default/replicationcontrollers",
            json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "x"}, "spec": {"replicas": 3, "selector": {"app": "x", "b": "2"}, "template": rc_template}}),
            "app=x,b=2",
        ),
    ];
    for (collection, parent, selector) in parents {
        let r = h.call("POST", collection, parent);
        assert_eq!(r.status, 201, "{collection}: {}", r.message());
        let scale_uri = format!("{collection}/x/scale");
        let scale = h.call("GET", &scale_uri, Value::Null).json();
        assert_eq!(scale["spec"]["replicas"], 3, "{collection}");
        assert_eq!(scale["status"]["selector"], selector, "{collection}");
        let r = merge(&h, &scale_uri, json!({"spec": {"replicas": 0}}));
        assert_eq!(r.status, 200, "{collection}: {}", r.message());
        assert_eq!(
            h.call("GET", &format!("{collection}/x"), Value::Null)
                .json()["spec"]["replicas"],
            0,
            "{collection}"
        );
    }
    // A parent without spec.replicas has the one replica v1 defaulting gives it.
    assert_eq!(
        h.call("POST", DEPLOYMENTS, deployment("web", None)).status,
        201
    );
    assert_eq!(
        h.call("GET", SCALE, Value::Null).json()["spec"]["replicas"],
        1
    );
    // Kinds without a scale subresource have none.
    let r = h.call(
        "GET",
        "/apis/apps/v1/namespaces/default/daemonsets/x/scale",
        Value::Null,
    );
    assert_eq!(r.status, 404);
}

#[test]
fn a_table_of_a_scale_has_desired_and_available_columns() {
    let (h, _) = setup();
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let r = h.send("GET", SCALE, &[("Accept", accept)], "");
    assert_eq!(r.status, 200, "{}", r.message());
    let table = r.json();
    assert_eq!(table["kind"], "Table");
    let names: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Desired", "Available", "Age"]);
    let cells = table["rows"][0]["cells"].as_array().unwrap();
    assert_eq!(cells[..3], [json!("web"), json!(2), json!(0)]);
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

//! The eviction subresource of pods through the whole server over the memory backend:
//! a delete that asks the pod's PodDisruptionBudget first, as kube-apiserver's
//! EvictionREST does.
mod support;

use serde_json::{json, Value};
use support::Harness;

const PODS: &str = "/api/v1/namespaces/default/pods";
const PDBS: &str = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";
const WOULD_VIOLATE: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

fn success() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
}

/// A pod labelled `app=<app>`, running and ready (as a kubelet would report it).
fn create_pod(h: &Harness, name: &str, app: &str) -> Value {
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let r = h.call("POST", PODS, pod);
    assert_eq!(r.status, 201, "{}", r.message());
    set_pod_status(
        h,
        name,
        json!({"phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}]}),
    )
}

/// A budget over `app=<app>` whose status (written as the disruption controller would)
/// allows `allowed` disruptions and has observed its generation.
fn create_budget(h: &Harness, name: &str, app: &str, allowed: i64) -> Value {
    let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}}});
    let r = h.call("POST", PDBS, pdb);
    assert_eq!(r.status, 201, "{}", r.message());
    set_budget_status(
        h,
        name,
        json!({"observedGeneration": 1, "disruptionsAllowed": allowed,
        "currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 2}),
    )
}

fn set_budget_status(h: &Harness, name: &str, status: Value) -> Value {
    let mut pdb = h.call("GET", &format!("{PDBS}/{name}"), Value::Null).json();
    pdb["status"] = status;
    let r = h.call("PUT", &format!("{PDBS}/{name}/status"), pdb);
    assert_eq!(r.status, 200, "{}", r.message());
    r.json()
}

fn set_pod_status(h: &Harness, name: &str, status: Value) -> Value {
    let mut pod = h.call("GET", &format!("{PODS}/{name}"), Value::Null).json();
    pod["status"] = status;
    let r = h.call("PUT", &format!("{PODS}/{name}/status"), pod);
    assert_eq!(r.status, 200, "{}", r.message());
    r.json()
}

fn eviction(name: &str) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}})
}

fn evict(h: &Harness, name: &str, body: Value) -> support::Reply {
    h.call("POST", &format!("{PODS}/{name}/eviction"), body)
}

fn pod_status(h: &Harness, name: &str) -> u16 {
    h.call("GET", &format!("{PODS}/{name}"), Value::Null).status
}

#[test]
fn a_pod_without_a_budget_is_deleted() {
    let h = Harness::new();
    create_pod(&h, "web-1", "web");
    let r = evict(&h, "web-1", eviction("web-1"));
    assert_eq!(r.status, 201, "{}", r.message());
    assert_eq!(r.json(), success());
    assert_eq!(pod_status(&h, "web-1"), 404);
    // A budget over other pods is not this pod's.
    create_pod(&h, "web-2", "web");
    create_budget(&h, "db", "db", 0);
    assert_eq!(evict(&h, "web-2", eviction("web-2")).status, 201);
    assert_eq!(pod_status(&h, "web-2"), 404);
}

#[test]
fn a_budget_allowing_a_disruption_spends_it_and_records_the_pod() {
    let h = Harness::new();
    create_pod(&h, "web-1", "web");
    create_pod(&h, "web-2", "web");
    let before = create_budget(&h, "web", "web", 1);
    let r = evict(&h, "web-1", eviction("web-1"));
    assert_eq!(r.status, 201, "{}", r.message());
    assert_eq!(r.json(), success());
    assert_eq!(pod_status(&h, "web-1"), 404);

    let pdb = h.call("GET", &format!("{PDBS}/web"), Value::Null).json();
    let status = &pdb["status"];
    assert_eq!(status["disruptionsAllowed"], 0);
    let disrupted = status["disruptedPods"].as_object().unwrap();
    assert_eq!(disrupted.keys().collect::<Vec<_>>(), ["web-1"]);
    assert!(disrupted["web-1"].as_str().unwrap().ends_with('Z'));
    // None left: the DisruptionAllowed condition says so.
    let conditions = status["conditions"].as_array().unwrap();
    assert_eq!(conditions.len(), 1);
    assert_eq!(conditions[0]["type"], "DisruptionAllowed");
    assert_eq!(conditions[0]["status"], "False");
    assert_eq!(conditions[0]["reason"], "InsufficientPods");
    assert_eq!(conditions[0]["observedGeneration"], 1);
    // A status update, generation unchanged, recorded as kube-apiserver's.
    assert_eq!(
        pdb["metadata"]["generation"],
        before["metadata"]["generation"]
    );
    assert_ne!(
        pdb["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );
    let entries = pdb["metadata"]["managedFields"].as_array().unwrap();
    assert!(
        entries.iter().any(|e| e["manager"] == "kube-apiserver"
            && e["operation"] == "Update"
            && e["subresource"] == "status"),
        "{entries:?}"
    );

    // The budget is spent: the next pod stays.
    let r = evict(&h, "web-2", eviction("web-2"));
    assert_eq!(r.status, 429, "{}", r.message());
    assert_eq!(pod_status(&h, "web-2"), 200);
}

#[test]
fn a_budget_allowing_no_disruption_refuses_with_429() {
    let h = Harness::new();
    create_pod(&h, "web-1", "web");
    let before = create_budget(&h, "web", "web", 0);
    let r = evict(&h, "web-1", eviction("web-1"));
    assert_eq!(r.status, 429, "{}", r.message());
    assert_eq!(
        r.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": WOULD_VIOLATE, "reason": "TooManyRequests",
            "details": {"causes": [{"reason": "DisruptionBudget",
                "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}]},
            "code": 429})
    );
    assert_eq!(pod_status(&h, "web-1"), 200);
    let pdb = h.call("GET", &format!("{PDBS}/web"), Value::Null).json();
    assert_eq!(
        pdb["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );
}

#[test]
fn a_budget_whose_status_is_behind_its_generation_refuses_with_429() {
    let h = Harness::new();
    create_pod(&h, "web-1", "web");
    create_budget(&h, "web", "web", 5);
    set_budget_status(
        &h,
        "web",
        json!({"observedGeneration": 0, "disruptionsAllowed": 5}),
    );
    let r = evict(&h, "web-1", eviction("web-1"));
    assert_eq!(r.status, 429, "{}", r.message());
    let body = r.json();
    assert_eq!(body["message"], WOULD_VIOLATE);
    assert_eq!(
        body["details"],
        json!({"causes": [{"reason": "DisruptionBudget",
            "message": "The disruption budget web is still being processed by the server."}],
            "retryAfterSeconds": 10})
    );
    assert_eq!(pod_status(&h, "web-1"), 200);

    // A negative allowance is forbidden outright.
    set_budget_status(
        &h,
        "web",
        json!({"observedGeneration": 1, "disruptionsAllowed": -1}),
    );
    let r = evict(&h, "web-1", eviction("web-1"));
    assert_eq!(r.status, 403);
    assert_eq!(
        r.message(),
        r#"poddisruptionbudget.policy "web" is forbidden: pdb disruptions allowed is negative"#
    );
}

#[test]
fn two_budgets_over_one_pod_are_not_supported() {
    let h = Harness::new();
    create_pod(&h, "web-1", "web");
    create_budget(&h, "web-a", "web", 1);
    create_budget(&h, "web-b", "web", 1);
    let r = evict(&h, "web-1", eviction("web-1"));
    // Upstream hands this Status back as the created object: a 201 whose body is the
    // failure (clients read it as a 500).
    assert_eq!(r.status, 201);
    assert_eq!(
        r.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            "code": 500})
    );
    assert_eq!(pod_status(&h, "web-1"), 200);
}

#[test]
fn the_eviction_must_name_the_pod() {
    let h = Harness::new();
    create_pod(&h, "web-1", "web");
    let r = evict(&h, "web-1", eviction("web-2"));
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["reason"], "BadRequest");
    assert_eq!(
        r.message(),
        "name in URL does not match name in Eviction object"
    );
    let r = evict(
        &h,
        "web-1",
        json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "web-1", "namespace": "other"}}),
    );
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "the namespace of the provided object does not match the namespace sent on the request"
    );
    let r = evict(
        &h,
        "web-1",
        json!({"apiVersion": "v1", "kind": "Eviction", "metadata": {"name": "web-1"}}),
    );
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "the API version in the data (v1) does not match the expected API version (policy/v1)"
    );
    assert_eq!(pod_status(&h, "web-1"), 200);
    // GET is not served.
    let r = h.call("GET", &format!("{PODS}/web-1/eviction"), Value::Null);
    assert_eq!(r.status, 405);
}

#[test]
fn a_missing_pod_is_not_found() {
    let h = Harness::new();
    let r = evict(&h, "ghost", eviction("ghost"));
    assert_eq!(r.status, 404);
    assert_eq!(r.message(), r#"pods "ghost" not found"#);
}

#[test]
fn policy_v1beta1_evictions_are_accepted() {
    let h = Harness::new();
    create_pod(&h, "web-1", "web");
    let body =
        json!({"apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": {"name": "web-1"}});
    let r = evict(&h, "web-1", body);
    assert_eq!(r.status, 201, "{}", r.message());
    assert_eq!(pod_status(&h, "web-1"), 404);
}

#[test]
fn a_dry_run_checks_everything_and_stores_nothing() {
    let h = Harness::new();
    create_pod(&h, "web-1", "web");
    let before = create_budget(&h, "web", "web", 1);
    let uri = format!("{PODS}/web-1/eviction?dryRun=All");
    let r = h.call("POST", &uri, eviction("web-1"));
    assert_eq!(r.status, 201, "{}", r.message());
    assert_eq!(r.json(), success());
    // Or in the Eviction's deleteOptions.
    let mut body = eviction("web-1");
    body["deleteOptions"] = json!({"dryRun": ["All"]});
    assert_eq!(evict(&h, "web-1", body).status, 201);
    assert_eq!(pod_status(&h, "web-1"), 200);
    let pdb = h.call("GET", &format!("{PDBS}/web"), Value::Null).json();
    assert_eq!(
        pdb["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );

    // A refused eviction is refused in a dry run too.
    set_budget_status(
        &h,
        "web",
        json!({"observedGeneration": 1, "disruptionsAllowed": 0}),
    );
    assert_eq!(h.call("POST", &uri, eviction("web-1")).status, 429);

    // The query and the body must agree.
    let mut body = eviction("web-1");
    body["deleteOptions"] = json!({"dryRun": ["All", "All"]});
    let r = h.call("POST", &uri, body);
    assert_eq!(r.status, 500);
    assert_eq!(
        r.message(),
        "Non-matching dry-run options in request and content: [All] and [All All]"
    );
    // And the query's must be valid CreateOptions.
    let r = h.call(
        "POST",
        &format!("{PODS}/web-1/eviction?dryRun=yes"),
        eviction("web-1"),
    );
    assert_eq!(r.status, 422);
    assert_eq!(pod_status(&h, "web-1"), 200);
}

#[test]
fn pending_and_terminal_pods_go_without_asking_the_budget() {
    let h = Harness::new();
    create_budget(&h, "web", "web", 0);
    for (name, phase) in [
        ("web-1", "Pending"),
        ("web-2", "Succeeded"),
        ("web-3", "Failed"),
    ] {
        create_pod(&h, name, "web");
        set_pod_status(&h, name, json!({"phase": phase}));
        let r = evict(&h, name, eviction(name));
        assert_eq!(r.status, 201, "{phase}: {}", r.message());
        assert_eq!(pod_status(&h, name), 404);
    }
    // A running one asks.
    create_pod(&h, "web-4", "web");
    assert_eq!(evict(&h, "web-4", eviction("web-4")).status, 429);
}

#[test]
fn an_unready_pod_of_a_healthy_application_goes_without_spending_the_budget() {
    let h = Harness::new();
    create_pod(&h, "web-1", "web");
    set_pod_status(
        &h,
        "web-1",
        json!({"phase": "Running",
        "conditions": [{"type": "Ready", "status": "False"}]}),
    );
    let before = create_budget(&h, "web", "web", 0);
    let r = evict(&h, "web-1", eviction("web-1"));
    assert_eq!(r.status, 201, "{}", r.message());
    assert_eq!(pod_status(&h, "web-1"), 404);
    let pdb = h.call("GET", &format!("{PDBS}/web"), Value::Null).json();
    assert_eq!(
        pdb["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );

    // A ready one spends it, and there is none.
    create_pod(&h, "web-2", "web");
    assert_eq!(evict(&h, "web-2", eviction("web-2")).status, 429);
}

#[test]
fn preconditions_of_the_delete_options_are_checked() {
    let h = Harness::new();
    let pod = create_pod(&h, "web-1", "web");
    let mut body = eviction("web-1");
    body["deleteOptions"] =
        json!({"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}});
    let r = evict(&h, "web-1", body);
    assert_eq!(r.status, 409, "{}", r.message());
    let uid = pod["metadata"]["uid"].as_str().unwrap();
    assert_eq!(
        r.message(),
        format!("Operation cannot be fulfilled on Pod \"web-1\": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record ({uid}). The object might have been deleted and then recreated")
    );
    let mut body = eviction("web-1");
    body["deleteOptions"] = json!({"preconditions": {"resourceVersion": "1"}});
    let r = evict(&h, "web-1", body);
    assert_eq!(r.status, 409, "{}", r.message());
    assert!(
        r.message()
            .contains("the ResourceVersion in the precondition (1) does not match"),
        "{}",
        r.message()
    );
    assert_eq!(pod_status(&h, "web-1"), 200);

    // The right ones, and a grace period: deleted (at once, as Apiary deletes).
    let mut body = eviction("web-1");
    body["deleteOptions"] = json!({"gracePeriodSeconds": 30, "preconditions": {
        "uid": uid, "resourceVersion": pod["metadata"]["resourceVersion"]}});
    let r = evict(&h, "web-1", body);
    assert_eq!(r.status, 201, "{}", r.message());
    assert_eq!(pod_status(&h, "web-1"), 404);
}

#[test]
fn watchers_see_the_pod_marked_then_deleted() {
    let h = Harness::new();
    let pod = create_pod(&h, "web-1", "web");
    let rv = pod["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(evict(&h, "web-1", eviction("web-1")).status, 201);
    let w = h.call(
        "GET",
        &format!("{PODS}?watch=1&resourceVersion={rv}"),
        Value::Null,
    );
    let frames = Harness::frames(&w);
    let types: Vec<&str> = frames.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["MODIFIED", "DELETED"]);
    let conditions = frames[0]["object"]["status"]["conditions"]
        .as_array()
        .unwrap();
    let condition = conditions
        .iter()
        .find(|c| c["type"] == "DisruptionTarget")
        .unwrap();
    assert!(condition["lastTransitionTime"].is_string());
    assert_eq!(condition["type"], "DisruptionTarget");
    assert_eq!(condition["status"], "True");
    assert_eq!(condition["reason"], "EvictionByEvictionAPI");
    assert_eq!(condition["message"], "Eviction API: evicting");
}

/// An evicted pod is deleted as a DELETE of it would be: one on a node gets its grace
/// period and stays Terminating, unless the eviction's deleteOptions shorten it to 0.
#[test]
fn an_evicted_pod_on_a_node_gets_its_grace_period() {
    let h = Harness::new();
    for name in ["bound", "forced"] {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}});
        assert_eq!(h.call("POST", PODS, pod).status, 201);
    }
    let eviction = |name: &str, options: Value| {
        json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}, "deleteOptions": options})
    };
    let r = evict(&h, "bound", eviction("bound", json!({})));
    assert_eq!(r.json(), success());
    let terminating = h.call("GET", &format!("{PODS}/bound"), Value::Null).json();
    assert_eq!(terminating["metadata"]["deletionGracePeriodSeconds"], 30);
    let condition = &terminating["status"]["conditions"][0];
    assert_eq!((condition["type"].clone(), condition["reason"].clone()), (json!("DisruptionTarget"), json!("EvictionByEvictionAPI")));

    assert_eq!(evict(&h, "forced", eviction("forced", json!({"gracePeriodSeconds": 0}))).json(), success());
    assert_eq!(pod_status(&h, "forced"), 404);
}

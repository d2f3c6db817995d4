//! Cases after upstream's limitranger admission tests, in our words.

use super::*;
use serde_json::json;

fn range(items: Value) -> Value {
    json!({"metadata": {"name": "limits", "namespace": "ns"}, "spec": {"limits": items}})
}

fn pod(containers: Value) -> Value {
    json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": containers}})
}

fn container(name: &str, requests: Value, limits: Value) -> Value {
    json!({"name": name, "image": "i", "resources": {"requests": requests, "limits": limits}})
}

fn refusal(ranges: &[Value], object: &mut Value, resource: &str) -> String {
    admit(ranges, resource, "", Operation::Create, object, None).unwrap_err().message
}

#[test]
fn defaults_fill_what_containers_lack_and_say_so() {
    let lr = range(json!([{"type": "Container",
        "default": {"cpu": "1", "memory": "1Gi"},
        "defaultRequest": {"cpu": "500m", "memory": "0.25Gi"}}]));
    let mut p = json!({"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "x", "image": "i"}],
        "initContainers": [{"name": "init", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]}});
    admit(&[lr], "pods", "", Operation::Create, &mut p, None).unwrap();
    assert_eq!(p["spec"]["containers"][0]["resources"], json!({
        "requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}));
    // What a container names is kept.
    assert_eq!(p["spec"]["initContainers"][0]["resources"]["requests"], json!({"cpu": "100m", "memory": "256Mi"}));
    assert_eq!(
        p["metadata"]["annotations"][ANNOTATION],
        "LimitRanger plugin set: cpu, memory request for container x; cpu, memory limit for container x; \
         memory request for init container init; cpu, memory limit for init container init"
    );
}

#[test]
fn defaults_leave_a_complete_pod_and_its_annotations_alone() {
    let lr = range(json!([{"type": "Container", "default": {"cpu": "1"}}]));
    let mut p = pod(json!([container("x", json!({}), json!({"cpu": "2"}))]));
    let before = p.clone();
    apply_defaults(&lr, &mut p);
    assert_eq!(p, before);
    // A Pod item's defaults are not a container's.
    let pod_item = range(json!([{"type": "Pod", "default": {"cpu": "1"}}]));
    let mut bare = pod(json!([{"name": "x"}]));
    apply_defaults(&pod_item, &mut bare);
    assert_eq!(bare, pod(json!([{"name": "x"}])));
}

#[test]
fn container_max_refuses_a_larger_limit_or_request_and_a_missing_limit() {
    let lr = range(json!([{"type": "Container", "max": {"cpu": "1"}}]));
    let mut p = pod(json!([container("x", json!({"cpu": "500m"}), json!({"cpu": "2"}))]));
    assert_eq!(
        refusal(std::slice::from_ref(&lr), &mut p, "pods"),
        "pods \"p\" is forbidden: maximum cpu usage per Container is 1, but limit is 2"
    );
    let p = pod(json!([container("x", json!({"cpu": "1500m"}), json!({"cpu": "1"}))]));
    assert_eq!(validate_pod(&lr, &p), Err("maximum cpu usage per Container is 1, but request is 1500m".into()));
    let bare = pod(json!([container("x", json!({}), json!({}))]));
    assert_eq!(validate_pod(&lr, &bare), Err("maximum cpu usage per Container is 1.  No limit is specified".into()));
    // Within the maximum passes.
    let mut ok = pod(json!([container("x", json!({"cpu": "1"}), json!({"cpu": "1000m"}))]));
    assert!(admit(&[lr], "pods", "", Operation::Create, &mut ok, None).is_ok());
}

#[test]
fn container_min_refuses_a_smaller_request_or_limit_and_a_missing_request() {
    let lr = range(json!([{"type": "Container", "min": {"memory": "100Mi"}}]));
    let p = pod(json!([container("x", json!({}), json!({}))]));
    assert_eq!(validate_pod(&lr, &p), Err("minimum memory usage per Container is 100Mi.  No request is specified".into()));
    let p = pod(json!([container("x", json!({"memory": "50Mi"}), json!({}))]));
    assert_eq!(validate_pod(&lr, &p), Err("minimum memory usage per Container is 100Mi, but request is 50Mi".into()));
    let p = pod(json!([container("x", json!({"memory": "100Mi"}), json!({"memory": "99Mi"}))]));
    assert_eq!(validate_pod(&lr, &p), Err("minimum memory usage per Container is 100Mi, but limit is 99Mi".into()));
}

#[test]
fn ratio_is_printed_with_six_decimals() {
    let lr = range(json!([{"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}]));
    let p = pod(json!([container("x", json!({"cpu": "250m"}), json!({"cpu": "1"}))]));
    assert_eq!(
        validate_pod(&lr, &p),
        Err("cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000".into())
    );
    let p = pod(json!([container("x", json!({"cpu": "300m"}), json!({"cpu": "1"}))]));
    assert_eq!(
        validate_pod(&lr, &p),
        Err("cpu max limit to request ratio per Container is 2, but provided ratio is 3.333333".into())
    );
    let p = pod(json!([container("x", json!({"cpu": "500m"}), json!({"cpu": "1"}))]));
    assert_eq!(validate_pod(&lr, &p), Ok(()));
    let p = pod(json!([container("x", json!({}), json!({"cpu": "1"}))]));
    assert_eq!(
        validate_pod(&lr, &p),
        Err("cpu max limit to request ratio per Container is 2, but no request is specified or request is 0".into())
    );
    let p = pod(json!([container("x", json!({"cpu": "1"}), json!({"cpu": "0"}))]));
    assert_eq!(
        validate_pod(&lr, &p),
        Err("cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0".into())
    );
}

#[test]
fn pod_items_check_the_sums_with_init_containers_and_sidecars() {
    let lr = range(json!([{"type": "Pod", "min": {"memory": "200Mi"}, "max": {"cpu": "2"}}]));
    let p = pod(json!([
        container("a", json!({"memory": "50Mi", "cpu": "500m"}), json!({"cpu": "1"})),
        container("b", json!({"memory": "50Mi", "cpu": "500m"}), json!({"cpu": "1"})),
    ]));
    assert_eq!(validate_pod(&lr, &p), Err("minimum memory usage per Pod is 200Mi, but request is 100Mi".into()));
    // An init container alone may need more than the regular ones together.
    let mut p = pod(json!([container("a", json!({"memory": "200Mi", "cpu": "1"}), json!({"cpu": "1"}))]));
    p["spec"]["initContainers"] = json!([container("i", json!({"memory": "300Mi"}), json!({"cpu": "3"}))]);
    assert_eq!(validate_pod(&lr, &p), Err("maximum cpu usage per Pod is 2, but limit is 3".into()));
    // A sidecar runs beside the regular containers, so it adds to them.
    p["spec"]["initContainers"] =
        json!([{"name": "s", "restartPolicy": "Always", "resources": {"limits": {"cpu": "1500m"}}}]);
    assert_eq!(validate_pod(&lr, &p), Err("maximum cpu usage per Pod is 2, but limit is 2500m".into()));
}

#[test]
fn several_failures_are_listed_together_in_brackets() {
    let lr = range(json!([{"type": "Container", "max": {"cpu": "1", "memory": "1Gi"}}]));
    let p = pod(json!([container("x", json!({}), json!({"cpu": "2", "memory": "2Gi"}))]));
    assert_eq!(
        validate_pod(&lr, &p),
        Err("[maximum cpu usage per Container is 1, but limit is 2, maximum memory usage per Container is 1Gi, but limit is 2Gi]".into())
    );
    // The same failure twice (two containers) is told once.
    let p = pod(json!([container("x", json!({}), json!({"cpu": "2"})), container("y", json!({}), json!({"cpu": "2"}))]));
    let lr = range(json!([{"type": "Container", "max": {"cpu": "1"}}]));
    assert_eq!(validate_pod(&lr, &p), Err("maximum cpu usage per Container is 1, but limit is 2".into()));
}

#[test]
fn defaults_apply_before_checks_and_may_satisfy_them() {
    let lr = range(json!([{"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "1"},
        "max": {"cpu": "2"}, "min": {"cpu": "500m"}}]));
    let mut p = pod(json!([{"name": "x", "image": "i"}]));
    assert!(admit(&[lr], "pods", "", Operation::Create, &mut p, None).is_ok());
    // Pod updates are not LimitRanger's to check (containers cannot change).
    let strict = range(json!([{"type": "Container", "max": {"cpu": "1"}}]));
    let mut big = pod(json!([container("x", json!({}), json!({"cpu": "5"}))]));
    assert!(admit(std::slice::from_ref(&strict), "pods", "", Operation::Update, &mut big, None).is_ok());
    assert!(admit(std::slice::from_ref(&strict), "pods", "status", Operation::Create, &mut big, None).is_ok());
    // A generateName stands in for a name not yet made.
    let mut unnamed = json!({"metadata": {"generateName": "web-"}, "spec": {"containers": [{"name": "x", "resources": {"limits": {"cpu": "5"}}}]}});
    assert_eq!(
        refusal(&[strict], &mut unnamed, "pods"),
        "pods \"web-\" is forbidden: maximum cpu usage per Container is 1, but limit is 5"
    );
}

#[test]
fn claims_are_checked_on_their_storage_request() {
    let lr = range(json!([{"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}]));
    let claim = |request: Value| json!({"metadata": {"name": "c"}, "spec": {"resources": {"requests": request}}});
    assert_eq!(
        refusal(std::slice::from_ref(&lr), &mut claim(json!({"storage": "500Mi"})), "persistentvolumeclaims"),
        "persistentvolumeclaims \"c\" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"
    );
    assert_eq!(
        validate_claim(&lr, &claim(json!({"storage": "20Gi"}))),
        Err("maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi".into())
    );
    assert_eq!(
        validate_claim(&lr, &claim(json!({}))),
        Err("[minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified, \
             maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified]"
            .into())
    );
    assert_eq!(validate_claim(&lr, &claim(json!({"storage": "5Gi"}))), Ok(()));
    // A claim being deleted is let through.
    let old = json!({"metadata": {"name": "c", "deletionTimestamp": "2026-01-01T00:00:00Z"}});
    let mut c = claim(json!({"storage": "20Gi"}));
    assert!(admit(&[lr], "persistentvolumeclaims", "", Operation::Update, &mut c, Some(&old)).is_ok());
}

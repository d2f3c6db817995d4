//! The built-in admission plugins over the whole server, as kube-apiserver v1.33 runs
//! them by default: PodSecurity from namespace labels, ResourceQuota charging and (with
//! the quota controller) releasing, ServiceAccount, Priority, LimitRanger and
//! DefaultTolerationSeconds on pods, and the flags that switch plugins off.

use apiary_core::admission::plugins::Plugins;
use apiary_core::harness::{Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

fn server() -> Harness<MemoryStore> {
    Harness::new(Config::default(), MemoryStore::new())
}

fn call(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    let content_type = if method == "PATCH" { "application/merge-patch+json" } else { "application/json" };
    h.json_call(method, path, content_type, body)
}

fn created(h: &Harness<MemoryStore>, path: &str, body: Value) -> Value {
    let reply = call(h, "POST", path, Some(&body));
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.body));
    reply.json()
}

fn namespace(h: &Harness<MemoryStore>, name: &str, labels: Value) {
    created(h, "/api/v1/namespaces", json!({"metadata": {"name": name, "labels": labels}}));
}

fn pod(name: &str, spec_extra: Value) -> Value {
    let mut spec = json!({"containers": [{"name": "c", "image": "nginx"}]});
    for (k, v) in spec_extra.as_object().unwrap() {
        spec[k] = v.clone();
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
}

/// A pod sharing its node's network: refused by baseline and restricted. (A
/// privileged container is refused before admission, unless `--allow-privileged`.)
fn host_network(name: &str) -> Value {
    pod(name, json!({"hostNetwork": true}))
}

fn warnings(reply: &Reply) -> Vec<String> {
    reply.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("warning")).map(|(_, v)| v.clone()).collect()
}

#[test]
fn pod_security_enforces_and_warns_by_namespace_labels() {
    let h = server();
    namespace(&h, "locked", json!({"pod-security.kubernetes.io/enforce": "restricted"}));
    let refused = call(&h, "POST", "/api/v1/namespaces/locked/pods", Some(&host_network("p")));
    assert_eq!(refused.status, 403);
    let message = refused.json()["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with(r#"pods "p" is forbidden: violates PodSecurity "restricted:latest": host namespaces (hostNetwork=true), allowPrivilegeEscalation != false"#),
        "{message}"
    );
    // A baseline-enforced namespace warned at restricted admits a plain pod, with a warning.
    namespace(&h, "watched", json!({"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted"}));
    let admitted = call(&h, "POST", "/api/v1/namespaces/watched/pods", Some(&pod("plain", json!({}))));
    assert_eq!(admitted.status, 201, "{}", String::from_utf8_lossy(&admitted.body));
    let warned = warnings(&admitted);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].starts_with(r#"299 - "would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false"#), "{warned:?}");
    // Baseline refuses the host network.
    let refused = call(&h, "POST", "/api/v1/namespaces/watched/pods", Some(&host_network("p")));
    assert_eq!(refused.status, 403);
    // Tightening a namespace's enforce level warns about the pods already there.
    let patch = json!({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}}});
    let tightened = call(&h, "PATCH", "/api/v1/namespaces/watched", Some(&patch));
    assert_eq!(tightened.status, 200, "{}", String::from_utf8_lossy(&tightened.body));
    let warned = warnings(&tightened);
    assert!(warned.iter().any(|w| w.contains(r#"existing pods in namespace \"watched\" violate the new PodSecurity enforce level \"restricted:latest\""#)), "{warned:?}");
    // A label that does not parse is refused.
    let bad = call(&h, "POST", "/api/v1/namespaces", Some(&json!({"metadata": {"name": "bad", "labels": {"pod-security.kubernetes.io/enforce": "strict"}}})));
    assert_eq!(bad.status, 422, "{}", String::from_utf8_lossy(&bad.body));
}

#[test]
fn a_quota_of_two_configmaps_refuses_the_third_and_frees_a_slot_on_delete() {
    let h = server();
    namespace(&h, "q", json!({}));
    created(&h, "/api/v1/namespaces/q/resourcequotas", json!({"metadata": {"name": "cm"}, "spec": {"hard": {"count/configmaps": "2"}}}));
    // The quota controller fills in usage (no root CA ConfigMap here: the harness
    // configures no CA to publish).
    let quota = call(&h, "GET", "/api/v1/namespaces/q/resourcequotas/cm", None).json();
    assert_eq!(quota["status"], json!({"hard": {"count/configmaps": "2"}, "used": {"count/configmaps": "0"}}), "{quota}");
    let cm = |name: &str| json!({"metadata": {"name": name}, "data": {"k": "v"}});
    created(&h, "/api/v1/namespaces/q/configmaps", cm("a"));
    // A dry run is checked and charges nothing.
    let dry = call(&h, "POST", "/api/v1/namespaces/q/configmaps?dryRun=All", Some(&cm("dry")));
    assert_eq!(dry.status, 201);
    created(&h, "/api/v1/namespaces/q/configmaps", cm("b"));
    let used = call(&h, "GET", "/api/v1/namespaces/q/resourcequotas/cm", None).json();
    assert_eq!(used["status"]["used"], json!({"count/configmaps": "2"}));
    let refused = call(&h, "POST", "/api/v1/namespaces/q/configmaps", Some(&cm("c")));
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.json()["message"],
        r#"configmaps "c" is forbidden: exceeded quota: cm, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2"#
    );
    assert_eq!(call(&h, "DELETE", "/api/v1/namespaces/q/configmaps/a", None).status, 200);
    let freed = call(&h, "GET", "/api/v1/namespaces/q/resourcequotas/cm", None).json();
    assert_eq!(freed["status"]["used"], json!({"count/configmaps": "1"}));
    created(&h, "/api/v1/namespaces/q/configmaps", cm("c"));
}

#[test]
fn a_compute_quota_wants_requests_and_counts_them() {
    let h = server();
    namespace(&h, "compute", json!({}));
    created(&h, "/api/v1/namespaces/compute/resourcequotas", json!({"metadata": {"name": "cpu"}, "spec": {"hard": {"requests.cpu": "1", "pods": "5"}}}));
    let refused = call(&h, "POST", "/api/v1/namespaces/compute/pods", Some(&pod("bare", json!({}))));
    assert_eq!(refused.status, 403);
    assert_eq!(refused.json()["message"], r#"pods "bare" is forbidden: failed quota: cpu: must specify requests.cpu for: c"#);
    let sized = |name: &str, cpu: &str| pod(name, json!({"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]}));
    created(&h, "/api/v1/namespaces/compute/pods", sized("a", "600m"));
    let refused = call(&h, "POST", "/api/v1/namespaces/compute/pods", Some(&sized("b", "500m")));
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.json()["message"],
        r#"pods "b" is forbidden: exceeded quota: cpu, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1"#
    );
}

#[test]
fn service_account_priority_and_tolerations_fill_in_a_pod() {
    let h = server();
    namespace(&h, "apps", json!({}));
    let stored = created(&h, "/api/v1/namespaces/apps/pods", pod("web", json!({"priorityClassName": "system-cluster-critical"})));
    let spec = &stored["spec"];
    assert_eq!((spec["serviceAccountName"].as_str(), spec["serviceAccount"].as_str()), (Some("default"), Some("default")));
    assert_eq!((spec["priority"].as_i64(), spec["preemptionPolicy"].as_str()), (Some(2_000_000_000), Some("PreemptLowerPriority")));
    let volume = spec["volumes"][0]["name"].as_str().unwrap();
    assert!(volume.starts_with("kube-api-access-") && volume.len() == 21, "{volume}");
    assert_eq!(spec["containers"][0]["volumeMounts"][0], json!({"name": volume, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}));
    let tolerations: Vec<&str> = spec["tolerations"].as_array().unwrap().iter().map(|t| t["key"].as_str().unwrap()).collect();
    assert_eq!(tolerations, ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]);
    // Opting out of the token, and a ServiceAccount's pull secrets.
    created(&h, "/api/v1/namespaces/apps/serviceaccounts", json!({"metadata": {"name": "puller"}, "imagePullSecrets": [{"name": "registry"}], "automountServiceAccountToken": false}));
    let stored = created(&h, "/api/v1/namespaces/apps/pods", pod("quiet", json!({"serviceAccountName": "puller"})));
    assert_eq!(stored["spec"]["imagePullSecrets"], json!([{"name": "registry"}]));
    assert!(stored["spec"].get("volumes").is_none(), "{stored}");
    // What does not exist is refused with upstream's words.
    let missing = call(&h, "POST", "/api/v1/namespaces/apps/pods", Some(&pod("lost", json!({"serviceAccountName": "ghost"}))));
    assert_eq!(missing.json()["message"], r#"pods "lost" is forbidden: error looking up service account apps/ghost: serviceaccount "ghost" not found"#);
    let missing = call(&h, "POST", "/api/v1/namespaces/apps/pods", Some(&pod("lost", json!({"priorityClassName": "nope"}))));
    assert_eq!(missing.json()["message"], r#"pods "lost" is forbidden: no PriorityClass with name nope was found"#);
    let given = call(&h, "POST", "/api/v1/namespaces/apps/pods", Some(&pod("lost", json!({"priority": 7}))));
    assert_eq!(
        given.json()["message"],
        r#"pods "lost" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name"#
    );
}

#[test]
fn one_global_default_priority_class_and_pods_take_it() {
    let h = server();
    namespace(&h, "apps", json!({}));
    let class = |name: &str, value: i64| json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value, "globalDefault": true});
    created(&h, "/apis/scheduling.k8s.io/v1/priorityclasses", class("normal", 1000));
    let second = call(&h, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", Some(&class("other", 5)));
    assert_eq!(second.status, 403);
    assert_eq!(
        second.json()["message"],
        r#"priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass normal is already marked as default. Only one default can exist"#
    );
    let stored = created(&h, "/api/v1/namespaces/apps/pods", pod("p", json!({})));
    assert_eq!((stored["spec"]["priorityClassName"].as_str(), stored["spec"]["priority"].as_i64()), (Some("normal"), Some(1000)));
}

#[test]
fn a_limit_range_refuses_what_exceeds_it() {
    let h = server();
    namespace(&h, "limited", json!({}));
    created(&h, "/api/v1/namespaces/limited/limitranges", json!({"metadata": {"name": "max"}, "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}}));
    let big = pod("big", json!({"containers": [{"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "2"}}}]}));
    let refused = call(&h, "POST", "/api/v1/namespaces/limited/pods", Some(&big));
    assert_eq!(refused.status, 403);
    assert_eq!(refused.json()["message"], r#"pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2"#);
}

#[test]
fn disabled_plugins_do_nothing() {
    let plugins = Plugins::choose(&[], &["ServiceAccount", "Priority", "DefaultTolerationSeconds", "PodSecurity", "NamespaceLifecycle"]).unwrap();
    let h = Harness::new(Config { admission_plugins: plugins, ..Config::default() }, MemoryStore::new());
    namespace(&h, "open", json!({"pod-security.kubernetes.io/enforce": "restricted"}));
    let stored = created(&h, "/api/v1/namespaces/open/pods", host_network("p"));
    for field in ["serviceAccountName", "priority", "tolerations", "volumes"] {
        assert!(stored["spec"].get(field).is_none(), "{field}: {stored}");
    }
    // Without NamespaceLifecycle, the immortal namespaces can go.
    assert_eq!(call(&h, "DELETE", "/api/v1/namespaces/kube-public", None).status, 200);
}

#[test]
fn the_namespaces_the_server_needs_are_kept_and_missing_ones_refuse_writes() {
    let h = server();
    let refused = call(&h, "DELETE", "/api/v1/namespaces/kube-system", None);
    assert_eq!((refused.status, refused.json()["message"].clone()), (403, json!(r#"namespaces "kube-system" is forbidden: this namespace may not be deleted"#)));
    // Upstream answers before validating: an invalid object in a missing namespace is a 404.
    let invalid = call(&h, "POST", "/api/v1/namespaces/nowhere/configmaps", Some(&json!({"metadata": {"name": "Not Valid"}})));
    assert_eq!((invalid.status, invalid.json()["message"].clone()), (404, json!(r#"namespaces "nowhere" not found"#)));
}

#[test]
fn pod_security_audit_annotations_reach_the_audit_event() {
    let policy = apiary_core::audit::Policy::parse(b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n").unwrap();
    let config = Config { audit_policy: Some(std::sync::Arc::new(policy)), ..Config::default() };
    let h = Harness::new(config, MemoryStore::new());
    namespace(&h, "audited", json!({"pod-security.kubernetes.io/audit": "restricted"}));
    h.take_audit_lines();
    created(&h, "/api/v1/namespaces/audited/pods", pod("p", json!({})));
    let lines = h.take_audit_lines();
    let complete: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["stage"] == "ResponseComplete" && e["verb"] == "create")
        .collect();
    assert_eq!(complete.len(), 1, "{lines:?}");
    let annotations = &complete[0]["annotations"];
    assert_eq!(annotations["authorization.k8s.io/decision"], "allow");
    let audit = annotations["pod-security.kubernetes.io/audit-violations"].as_str().unwrap_or_default();
    assert!(audit.starts_with(r#"would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false"#), "{annotations}");
}

#[test]
fn default_classes_and_runtime_classes_fill_in_what_is_left_out() {
    let h = server();
    namespace(&h, "apps", json!({}));
    let class = |name: &str| json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "example.com/disk"});
    created(&h, "/apis/storage.k8s.io/v1/storageclasses", class("standard"));
    let claim = |name: &str, class: Option<&str>| {
        let mut spec = json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}});
        if let Some(c) = class {
            spec["storageClassName"] = json!(c);
        }
        json!({"metadata": {"name": name}, "spec": spec})
    };
    let stored = created(&h, "/api/v1/namespaces/apps/persistentvolumeclaims", claim("data", None));
    assert_eq!(stored["spec"]["storageClassName"], "standard");
    assert_eq!(stored["metadata"]["finalizers"], json!(["kubernetes.io/pvc-protection"]));
    // An empty class name means none, and stays.
    let stored = created(&h, "/api/v1/namespaces/apps/persistentvolumeclaims", claim("bare", Some("")));
    assert_eq!(stored["spec"]["storageClassName"], "");

    created(&h, "/apis/networking.k8s.io/v1/ingressclasses", json!({"metadata": {"name": "nginx", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}}, "spec": {"controller": "example.com/ingress"}}));
    let ingress = json!({"metadata": {"name": "web"}, "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}});
    let stored = created(&h, "/apis/networking.k8s.io/v1/namespaces/apps/ingresses", ingress);
    assert_eq!(stored["spec"]["ingressClassName"], "nginx");

    created(&h, "/apis/node.k8s.io/v1/runtimeclasses", json!({"metadata": {"name": "gvisor"}, "handler": "runsc", "overhead": {"podFixed": {"memory": "64Mi"}}, "scheduling": {"nodeSelector": {"sandbox": "yes"}}}));
    let stored = created(&h, "/api/v1/namespaces/apps/pods", pod("boxed", json!({"runtimeClassName": "gvisor"})));
    assert_eq!((stored["spec"]["overhead"].clone(), stored["spec"]["nodeSelector"].clone()), (json!({"memory": "64Mi"}), json!({"sandbox": "yes"})));
    let missing = call(&h, "POST", "/api/v1/namespaces/apps/pods", Some(&pod("lost", json!({"runtimeClassName": "kata"}))));
    assert_eq!((missing.status, missing.json()["message"].clone()), (403, json!(r#"pods "lost" is forbidden: pod rejected: RuntimeClass "kata" not found"#)));
    let clash = call(&h, "POST", "/api/v1/namespaces/apps/pods", Some(&pod("clash", json!({"runtimeClassName": "gvisor", "nodeSelector": {"sandbox": "no"}}))));
    assert_eq!(
        clash.json()["message"],
        r#"pods "clash" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = yes; pod.spec.nodeSelector[sandbox] = no"#
    );
}

#[test]
fn a_pod_replaced_from_what_the_server_holds_keeps_what_admission_gave_it() {
    let h = server();
    let created = created(&h, "/api/v1/namespaces/default/pods", pod("worker", json!({"restartPolicy": "Never"})));
    let mut changed = created.clone();
    changed["spec"]["containers"][0]["image"] = json!("nginx:2");
    let replaced = call(&h, "PUT", "/api/v1/namespaces/default/pods/worker", Some(&changed));
    assert_eq!(replaced.status, 200, "{}", String::from_utf8_lossy(&replaced.body));
    assert_eq!(replaced.json()["spec"]["volumes"], created["spec"]["volumes"]);
}

#[test]
fn a_pod_replaced_from_its_manifest_is_refused_for_what_admission_gave_it() {
    let h = server();
    let manifest = pod("worker", json!({"restartPolicy": "Never"}));
    let created = created(&h, "/api/v1/namespaces/default/pods", manifest.clone());
    h.reflect();
    let mut changed = manifest;
    changed["spec"]["containers"][0]["image"] = json!("nginx:2");
    let replaced = call(&h, "PUT", "/api/v1/namespaces/default/pods/worker", Some(&changed));
    assert_eq!(replaced.status, 422, "{}", String::from_utf8_lossy(&replaced.body));
    let stored = call(&h, "GET", "/api/v1/namespaces/default/pods/worker", None).json();
    assert_eq!(stored["spec"]["volumes"], created["spec"]["volumes"]);
}

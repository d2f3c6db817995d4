//! Built-in objects get kube-apiserver's defaults on every write of the whole object
//! (create, update, patch, apply, dry runs) and when an object stored without them is
//! read back, as upstream's decoding defaults what it reads from etcd. The defaults
//! themselves are compared with upstream's recordings in `upstream_defaults.rs`; here
//! is where they apply.

use apiary_core::harness::{Harness, Reply};
use apiary_core::storage::{object_key, StorageOp};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const PODS: &str = "/api/v1/namespaces/default/pods";

fn harness() -> Harness<MemoryStore> {
    Harness::new(Config::default(), MemoryStore::new())
}

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, content_type: &str, body: Option<&Value>) -> Reply {
    h.json_call(method, path, content_type, body)
}

fn ok(reply: Reply, status: u16) -> Value {
    assert_eq!(reply.status, status, "{}", String::from_utf8_lossy(&reply.body));
    reply.json()
}

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
           "spec": {"selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
}

/// The defaults upstream gives `deployment(..)`, spec and template.
fn assert_deployment_defaults(d: &Value) {
    let spec = &d["spec"];
    assert_eq!(spec["replicas"], 1, "{d}");
    assert_eq!(spec["strategy"], json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}));
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["securityContext"], json!({}));
    // Only Pods get enableServiceLinks; templates do not.
    assert!(pod.get("enableServiceLinks").is_none(), "{pod}");
    let c = &pod["containers"][0];
    assert_eq!(c["imagePullPolicy"], "Always", "an untagged image is :latest");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");
}

#[test]
fn a_created_deployment_is_stored_and_read_with_its_defaults() {
    let h = harness();
    let created = ok(send(&h, "POST", DEPLOYMENTS, "application/json", Some(&deployment("web"))), 201);
    assert_deployment_defaults(&created);
    let read = ok(send(&h, "GET", &format!("{DEPLOYMENTS}/web"), "application/json", None), 200);
    assert_deployment_defaults(&read);
    // The writer owns the defaults, as upstream records them.
    let fields = &read["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"];
    assert!(fields.get("f:progressDeadlineSeconds").is_some(), "{fields}");
    assert!(fields["f:template"]["f:spec"].get("f:dnsPolicy").is_some(), "{fields}");
}

#[test]
fn a_pod_gets_the_defaults_only_pods_get() {
    let h = harness();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                     "spec": {"hostNetwork": true,
                              "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                              "ports": [{"containerPort": 8080}],
                                              "resources": {"limits": {"cpu": "1"}},
                                              "readinessProbe": {"httpGet": {"port": 8080}}}]}});
    let created = ok(send(&h, "POST", PODS, "application/json", Some(&pod)), 201);
    let spec = &created["spec"];
    assert_eq!(spec["enableServiceLinks"], true);
    let c = &spec["containers"][0];
    assert_eq!(c["imagePullPolicy"], "IfNotPresent", "a tagged image");
    assert_eq!(c["ports"][0], json!({"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}));
    assert_eq!(c["resources"]["requests"], json!({"cpu": "1"}));
    assert_eq!(
        c["readinessProbe"],
        json!({"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"},
               "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
}

#[test]
fn an_update_sent_without_defaults_gets_them_and_changes_no_generation() {
    let h = harness();
    ok(send(&h, "POST", DEPLOYMENTS, "application/json", Some(&deployment("web"))), 201);
    // The object as first sent, with no defaults: the same spec once defaulted.
    let updated = ok(send(&h, "PUT", &format!("{DEPLOYMENTS}/web"), "application/json", Some(&deployment("web"))), 200);
    assert_deployment_defaults(&updated);
    assert_eq!(updated["metadata"]["generation"], 1, "defaults are no spec change");

    // A merge patch that clears a defaulted field gets the default back.
    let patch = json!({"spec": {"revisionHistoryLimit": null, "replicas": 3}});
    let patched = ok(send(&h, "PATCH", &format!("{DEPLOYMENTS}/web"), "application/merge-patch+json", Some(&patch)), 200);
    assert_eq!(patched["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(patched["spec"]["replicas"], 3);
    assert_eq!(patched["metadata"]["generation"], 2);

    // So does a dry run, which stores nothing.
    let dry = ok(send(&h, "PUT", &format!("{DEPLOYMENTS}/web?dryRun=All"), "application/json", Some(&deployment("web"))), 200);
    assert_deployment_defaults(&dry);
}

#[test]
fn an_applied_object_has_the_defaults_but_its_applier_owns_none() {
    let h = harness();
    let applied = ok(
        send(&h, "PATCH", &format!("{DEPLOYMENTS}/web?fieldManager=me"), "application/apply-patch+yaml", Some(&deployment("web"))),
        201,
    );
    assert_deployment_defaults(&applied);
    let entry = &applied["metadata"]["managedFields"][0];
    assert_eq!(entry["manager"], "me");
    assert!(entry["fieldsV1"]["f:spec"].get("f:progressDeadlineSeconds").is_none(), "{entry}");
}

#[test]
fn an_object_stored_without_defaults_is_read_with_them() {
    let h = harness();
    let key = object_key("/registry", "apps", "deployments", Some("default"), "old");
    let mut stored = deployment("old");
    stored["metadata"]["namespace"] = json!("default");
    stored["metadata"]["uid"] = json!("00000000-0000-4000-8000-000000000001");
    stored["metadata"]["generation"] = json!(1);
    let value = serde_json::to_vec(&stored).unwrap().into();
    h.store.apply(StorageOp::Create { key, value }).unwrap();

    let read = ok(send(&h, "GET", &format!("{DEPLOYMENTS}/old"), "application/json", None), 200);
    assert_deployment_defaults(&read);
    // Writing back what was read is no change of spec.
    let written = ok(send(&h, "PUT", &format!("{DEPLOYMENTS}/old"), "application/json", Some(&read)), 200);
    assert_eq!(written["metadata"]["generation"], 1);
}

#[test]
fn objects_stored_before_the_server_started_are_listed_with_their_defaults() {
    let store = MemoryStore::new();
    let mut stored = deployment("old");
    stored["metadata"]["namespace"] = json!("default");
    stored["metadata"]["uid"] = json!("00000000-0000-4000-8000-000000000002");
    let key = object_key("/registry", "apps", "deployments", Some("default"), "old");
    store.apply(StorageOp::Create { key, value: serde_json::to_vec(&stored).unwrap().into() }).unwrap();
    let h = Harness::new(Config::default(), store);

    // A list served from the watch cache, as stored bytes.
    let list = ok(send(&h, "GET", DEPLOYMENTS, "application/json", None), 200);
    assert_deployment_defaults(&list["items"][0]);
    // Watchers that start from the beginning see it defaulted too.
    let watch = h.send(format!("GET {DEPLOYMENTS}?watch=true&resourceVersion=0&timeoutSeconds=1 HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\n\r\n").as_bytes());
    let text = String::from_utf8_lossy(&watch);
    assert!(text.contains("progressDeadlineSeconds"), "{text}");
}

#[test]
fn a_job_gets_its_selector_from_its_uid() {
    let h = harness();
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                     "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                    "containers": [{"name": "c", "image": "busybox:1"}]}}}});
    let created = ok(send(&h, "POST", "/apis/batch/v1/namespaces/default/jobs", "application/json", Some(&job)), 201);
    let uid = created["metadata"]["uid"].as_str().unwrap();
    let spec = &created["spec"];
    assert_eq!(spec["selector"], json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}));
    assert_eq!(spec["template"]["metadata"]["labels"]["job-name"], "j");
    assert_eq!(spec["template"]["metadata"]["labels"]["batch.kubernetes.io/controller-uid"], uid);
    assert_eq!(spec["manualSelector"], false);
    for (field, value) in [("completions", json!(1)), ("parallelism", json!(1)), ("backoffLimit", json!(6)),
                           ("completionMode", json!("NonIndexed")), ("suspend", json!(false)),
                           ("podReplacementPolicy", json!("TerminatingOrFailed"))] {
        assert_eq!(spec[field], value, "{field}");
    }
}

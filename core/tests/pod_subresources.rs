//! The subresources of pods, nodes and services that reach beyond the API (`log`,
//! `exec`, `attach`, `portforward`, `proxy`) and the two that write one part of a pod
//! (`ephemeralcontainers`, `resize`), through the whole server over the memory backend,
//! answered as kube-apiserver v1.33 answers them with no kubelet to reach.
mod support;

use serde_json::{json, Value};
use support::{Harness, Reply};

const PODS: &str = "/api/v1/namespaces/default/pods";

fn create_pod(h: &Harness, name: &str, spec: Value) -> Value {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec});
    let r = h.call("POST", PODS, pod);
    assert_eq!(r.status, 201, "{}", r.message());
    r.json()
}

fn strategic(h: &Harness, uri: &str, patch: Value) -> Reply {
    h.send("PATCH", uri, &[("content-type", "application/strategic-merge-patch+json")], &patch.to_string())
}

fn causes(r: &Reply) -> Vec<(String, String)> {
    let body = r.json();
    let causes = body["details"]["causes"].as_array().cloned().unwrap_or_default();
    causes
        .iter()
        .map(|c| (c["field"].as_str().unwrap_or("").to_owned(), c["message"].as_str().unwrap_or("").to_owned()))
        .collect()
}

fn one_container() -> Value {
    json!({"containers": [{"name": "app", "image": "nginx"}]})
}

#[test]
fn ephemeral_containers_are_added_and_then_stay_as_they_are() {
    let h = Harness::new();
    create_pod(&h, "p", one_container());
    let uri = format!("{PODS}/p/ephemeralcontainers");
    let got = h.call("GET", &uri, Value::Null);
    assert_eq!((got.status, got.json()["kind"].as_str()), (200, Some("Pod")));

    // Only the ephemeral containers change: the label and the image stay as stored.
    let added = strategic(&h, &uri, json!({"metadata": {"labels": {"x": "y"}}, "spec": {
        "containers": [{"name": "app", "image": "busybox"}],
        "ephemeralContainers": [{"name": "debugger", "image": "busybox", "targetContainerName": "app", "stdin": true, "tty": true}]}}));
    assert_eq!(added.status, 200, "{}", added.message());
    let pod = added.json();
    assert_eq!(pod["metadata"].get("labels"), None);
    assert_eq!(pod["metadata"]["generation"], 2);
    assert_eq!(pod["spec"]["containers"][0]["image"], "nginx");
    let debugger = &pod["spec"]["ephemeralContainers"][0];
    assert_eq!(debugger["name"], "debugger");
    assert_eq!(debugger["terminationMessagePath"], "/dev/termination-log", "defaulted as any container");
    assert_eq!(debugger["imagePullPolicy"], "Always");

    // Removed or changed once added: refused.
    let mut removed = pod.clone();
    removed["spec"]["ephemeralContainers"] = json!([]);
    let r = h.call("PUT", &uri, removed);
    assert_eq!(r.status, 422);
    assert_eq!(causes(&r), [("spec.ephemeralContainers".to_owned(), "Forbidden: existing ephemeral containers \"debugger\" may not be removed\n".to_owned())]);
    let r = strategic(&h, &uri, json!({"spec": {"ephemeralContainers": [{"name": "debugger", "image": "alpine"}]}}));
    assert_eq!(r.status, 422);
    assert!(r.message().contains("existing ephemeral containers \"debugger\" may not be changed"), "{}", r.message());
}

#[test]
fn ephemeral_containers_may_not_carry_what_serves_the_pod() {
    let h = Harness::new();
    create_pod(&h, "p", one_container());
    let r = strategic(&h, &format!("{PODS}/p/ephemeralcontainers"), json!({"spec": {"ephemeralContainers": [{
        "name": "app", "image": "busybox", "targetContainerName": "nope",
        "ports": [{"containerPort": 80}], "resources": {"limits": {"cpu": "1"}},
        "readinessProbe": {"exec": {"command": ["true"]}},
        "volumeMounts": [{"name": "v", "mountPath": "/v", "subPath": "x"}]}],
        "volumes": [{"name": "v", "emptyDir": {}}]}}));
    assert_eq!(r.status, 422, "{}", r.message());
    let fields: Vec<String> = causes(&r).into_iter().map(|(f, m)| format!("{f}: {m}")).collect();
    assert_eq!(
        fields,
        [
            "spec.ephemeralContainers[0].volumeMounts[0].name: Not found: \"v\"",
            "spec.ephemeralContainers[0].name: Duplicate value: \"app\"",
            "spec.ephemeralContainers[0].targetContainerName: Not found: \"nope\"",
            "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
            "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container",
            "spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container",
            "spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container",
        ]
    );
}

fn resources(cpu_request: &str, cpu_limit: &str, memory_limit: &str) -> Value {
    json!({"requests": {"cpu": cpu_request, "memory": "64Mi"}, "limits": {"cpu": cpu_limit, "memory": memory_limit}})
}

#[test]
fn resize_changes_cpu_and_memory_only() {
    let h = Harness::new();
    create_pod(&h, "p", json!({"containers": [{"name": "app", "image": "nginx", "resources": resources("100m", "200m", "128Mi")}]}));
    let uri = format!("{PODS}/p/resize");
    let r = strategic(&h, &uri, json!({"spec": {"containers": [{"name": "app", "image": "other",
        "resources": resources("150m", "300m", "256Mi")}]}}));
    assert_eq!(r.status, 200, "{}", r.message());
    let pod = r.json();
    assert_eq!(pod["spec"]["containers"][0]["resources"]["requests"]["cpu"], "150m");
    assert_eq!(pod["spec"]["containers"][0]["resources"]["limits"]["memory"], "256Mi");
    assert_eq!(pod["spec"]["containers"][0]["image"], "nginx", "only resources change");
    assert_eq!(pod["metadata"]["generation"], 2);

    let refused = |patch: Value| {
        let r = strategic(&h, &uri, json!({"spec": {"containers": [{"name": "app", "resources": patch}]}}));
        assert_eq!(r.status, 422, "{}", r.message());
        causes(&r)
    };
    assert_eq!(
        refused(json!({"limits": {"memory": "128Mi"}})),
        [("spec.containers[0].resources.limits[memory]".to_owned(), "Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer".to_owned())]
    );
    // A request removed is defaulted back from its limit, as upstream decodes pods.
    assert_eq!(
        refused(json!({"limits": {"cpu": null}})),
        [("spec.containers[0].resources.limits".to_owned(), "Forbidden: resource limits cannot be removed".to_owned())]
    );
    assert_eq!(
        refused(json!({"requests": {"ephemeral-storage": "1Gi"}})),
        [("spec".to_owned(), "Forbidden: only cpu and memory resources are mutable".to_owned())]
    );
    // Requests equal to the limits would make the pod Guaranteed.
    assert_eq!(
        refused(json!({"requests": {"cpu": "300m", "memory": "256Mi"}})),
        [("spec".to_owned(), "Invalid value: \"Burstable\": Pod QOS Class may not change as a result of resizing".to_owned())]
    );
}

#[test]
fn logs_of_a_pod_on_no_node_are_empty() {
    let h = Harness::new();
    create_pod(&h, "p", one_container());
    let r = h.call("GET", &format!("{PODS}/p/log"), Value::Null);
    assert_eq!((r.status, r.content_type.as_str(), r.body.len()), (200, "text/plain", 0));
    let r = h.call("GET", &format!("{PODS}/p/log?container=app&tailLines=3&follow=true"), Value::Null);
    assert_eq!((r.status, r.body.len()), (200, 0));
}

#[test]
fn logs_name_one_of_the_pods_containers() {
    let h = Harness::new();
    create_pod(&h, "p", json!({"initContainers": [{"name": "init", "image": "busybox"}],
        "containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx"}]}));
    let r = h.call("GET", &format!("{PODS}/p/log"), Value::Null);
    assert_eq!((r.status, r.message()), (400, "a container name must be specified for pod p, choose one of: [init a b]".to_owned()));
    assert_eq!(r.json()["reason"], "BadRequest");
    let r = h.call("GET", &format!("{PODS}/p/log?container=c"), Value::Null);
    assert_eq!((r.status, r.message()), (400, "container c is not valid for pod p".to_owned()));
    let r = h.call("GET", &format!("{PODS}/p/log?container=init"), Value::Null);
    assert_eq!(r.status, 200);
    let r = h.call("GET", &format!("{PODS}/missing/log"), Value::Null);
    assert_eq!((r.status, r.message()), (404, "pods \"missing\" not found".to_owned()));
}

#[test]
fn log_options_are_checked_as_upstream_checks_them() {
    let h = Harness::new();
    create_pod(&h, "p", one_container());
    let log = |query: &str| h.call("GET", &format!("{PODS}/p/log?{query}"), Value::Null);
    let r = log("tailLines=-1");
    assert_eq!(
        (r.status, r.message()),
        (422, "PodLogOptions \"p\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0".to_owned())
    );
    let r = log("sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z");
    assert_eq!(r.message(), "PodLogOptions \"p\" is invalid: []: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified");
    let r = log("limitBytes=0");
    assert_eq!(r.message(), "PodLogOptions \"p\" is invalid: limitBytes: Invalid value: 0: must be greater than 0");
    let r = log("tailLines=abc");
    assert_eq!((r.status, r.message()), (400, "strconv.ParseInt: parsing \"abc\": invalid syntax".to_owned()));
}

/// A node with `addresses` in its status.
fn create_node(h: &Harness, name: &str, addresses: Value) {
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}});
    let r = h.call("POST", "/api/v1/nodes", node);
    assert_eq!(r.status, 201, "{}", r.message());
    let mut node = r.json();
    node["status"]["addresses"] = addresses;
    let r = h.call("PUT", &format!("/api/v1/nodes/{name}/status"), node);
    assert_eq!(r.status, 200, "{}", r.message());
}

#[test]
fn a_pods_node_is_looked_up_for_its_kubelet() {
    let h = Harness::new();
    create_pod(&h, "gone", json!({"nodeName": "n0", "containers": [{"name": "app", "image": "nginx"}]}));
    create_node(&h, "n1", json!([]));
    create_pod(&h, "bare", json!({"nodeName": "n1", "containers": [{"name": "app", "image": "nginx"}]}));
    create_node(&h, "n2", json!([{"type": "InternalIP", "address": "10.0.0.2"}]));
    create_pod(&h, "p", json!({"nodeName": "n2", "containers": [{"name": "app", "image": "nginx"}]}));

    let r = h.call("GET", &format!("{PODS}/gone/log"), Value::Null);
    assert_eq!((r.status, r.message()), (404, "nodes \"n0\" not found".to_owned()));
    let r = h.call("GET", &format!("{PODS}/bare/log"), Value::Null);
    assert_eq!((r.status, r.message()), (500, "no preferred addresses found; known addresses: []".to_owned()));
    assert_eq!(r.json()["reason"], Value::Null, "passed on without a reason, as upstream does");
    // The kubelet is asked; the harness answers no outbound request.
    let r = h.call("GET", &format!("{PODS}/p/log?tailLines=2"), Value::Null);
    assert_eq!(
        (r.status, r.message()),
        (500, "Get \"https://10.0.0.2:10250/containerLogs/default/p/app?tailLines=2\": the harness answers no outbound request".to_owned())
    );
    let r = h.call("POST", &format!("{PODS}/bare/exec?command=ls&stdout=true"), Value::Null);
    assert_eq!((r.status, r.message()), (500, "no preferred addresses found; known addresses: []".to_owned()));
}

#[test]
fn exec_attach_and_portforward_need_a_node() {
    let h = Harness::new();
    create_pod(&h, "p", one_container());
    for (method, sub) in [("POST", "exec"), ("GET", "exec"), ("POST", "attach"), ("GET", "portforward")] {
        let r = h.call(method, &format!("{PODS}/p/{sub}?command=ls&stdout=true"), Value::Null);
        assert_eq!((r.status, r.message()), (400, "pod p does not have a host assigned".to_owned()), "{method} {sub}");
    }
    let r = h.call("POST", &format!("{PODS}/p/exec?container=nope&command=ls"), Value::Null);
    assert_eq!((r.status, r.message()), (400, "container nope is not valid for pod p".to_owned()));
    let r = h.call("POST", &format!("{PODS}/missing/exec?command=ls"), Value::Null);
    assert_eq!((r.status, r.message()), (404, "pods \"missing\" not found".to_owned()));
    let r = h.call("PUT", &format!("{PODS}/p/exec"), Value::Null);
    assert_eq!(r.status, 405);
}

#[test]
fn proxies_answer_where_nothing_can_be_reached() {
    let h = Harness::new();
    create_pod(&h, "p", one_container());
    let r = h.call("GET", &format!("{PODS}/p/proxy/healthz"), Value::Null);
    assert_eq!((r.status, r.message()), (400, "address not allowed".to_owned()));
    let r = h.call("GET", &format!("{PODS}/missing:8080/proxy"), Value::Null);
    assert_eq!((r.status, r.message()), (404, "pods \"missing\" not found".to_owned()));
    let r = h.call("GET", &format!("{PODS}/a:b:c:d/proxy"), Value::Null);
    assert_eq!((r.status, r.message()), (400, "invalid pod request \"a:b:c:d\"".to_owned()));

    let r = h.call("GET", "/api/v1/nodes/n9/proxy/metrics", Value::Null);
    assert_eq!((r.status, r.message()), (404, "nodes \"n9\" not found".to_owned()));
    create_node(&h, "n1", json!([{"type": "InternalIP", "address": "10.0.0.1"}]));
    let r = h.call("GET", "/api/v1/nodes/n1/proxy/metrics", Value::Null);
    assert_eq!((r.status, r.message()), (503, "error trying to reach service: the harness answers no outbound request".to_owned()));

    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"name": "http", "port": 80}]}});
    assert_eq!(h.call("POST", "/api/v1/namespaces/default/services", svc).status, 201);
    let services = "/api/v1/namespaces/default/services";
    let r = h.call("GET", &format!("{services}/web/proxy/"), Value::Null);
    assert_eq!((r.status, r.message()), (404, "endpoints \"web\" not found".to_owned()));
    let r = h.call("GET", &format!("{services}/web:81/proxy/"), Value::Null);
    assert_eq!((r.status, r.message()), (503, "no service port 81 found for service \"web\"".to_owned()));
    let eps = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web"}});
    assert_eq!(h.call("POST", "/api/v1/namespaces/default/endpoints", eps).status, 201);
    let r = h.call("GET", &format!("{services}/web:80/proxy/"), Value::Null);
    assert_eq!((r.status, r.message()), (503, "no endpoints available for service \"web\"".to_owned()));
    let r = h.call("GET", &format!("{services}/missing:80/proxy/"), Value::Null);
    assert_eq!((r.status, r.message()), (404, "services \"missing\" not found".to_owned()));
}

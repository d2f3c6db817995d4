//! Pod spec defaults, as kube-apiserver v1.33 applies them when it decodes a Pod or
//! any object embedding a pod template.
//!
//! Upstream splits them in two, and so does this module: what every pod spec gets
//! ([`default_spec`]: DNS and restart policy, scheduler, grace period, security
//! context, containers, probes, ports, volumes), and what only a Pod gets
//! ([`default_pod`]: service links, requests from limits, host ports under host
//! networking), which a template must not get because its pods get it when they are
//! created. The deprecated `serviceAccount` is kept equal to `serviceAccountName`, as
//! the v1 conversion keeps it.

use super::{image, volumes};
use crate::resources::defaults::{
    fill_missing, object, object_or_new, objects, or_insert, or_insert_int, or_insert_str, str_of, unset_int,
    unset_str,
};
use serde_json::{json, Map, Value};

/// The containers lists of a pod spec.
const CONTAINER_LISTS: [&str; 3] = ["containers", "initContainers", "ephemeralContainers"];
const PROBES: [&str; 3] = ["livenessProbe", "readinessProbe", "startupProbe"];

/// A Pod: its spec's defaults and those only a Pod gets.
pub fn default_pod(pod: &mut Map<String, Value>) {
    let Some(spec) = object(pod, "spec") else {
        return;
    };
    default_spec(spec);
    or_insert(spec, "enableServiceLinks", || json!(true));
    for list in ["containers", "initContainers"] {
        for container in objects(spec, list) {
            if let Some(resources) = object(container, "resources") {
                fill_missing(resources, "limits", "requests");
            }
        }
    }
    if spec.get("hostNetwork").and_then(Value::as_bool) == Some(true) {
        for list in ["containers", "initContainers"] {
            for container in objects(spec, list) {
                for port in objects(container, "ports") {
                    let container_port = port.get("containerPort").filter(|p| p.as_i64() != Some(0)).cloned();
                    if let (true, Some(container_port)) = (unset_int(port, "hostPort"), container_port) {
                        port.insert("hostPort".into(), container_port);
                    }
                }
            }
        }
    }
}

/// A pod template (`{metadata, spec}`): its spec's defaults.
pub fn default_template(template: &mut Map<String, Value>) {
    if let Some(spec) = object(template, "spec") {
        default_spec(spec);
    }
}

/// What every pod spec gets.
pub fn default_spec(spec: &mut Map<String, Value>) {
    or_insert_str(spec, "dnsPolicy", "ClusterFirst");
    or_insert_str(spec, "restartPolicy", "Always");
    object_or_new(spec, "securityContext");
    or_insert(spec, "terminationGracePeriodSeconds", || json!(30));
    or_insert_str(spec, "schedulerName", "default-scheduler");
    service_account_alias(spec);
    for list in CONTAINER_LISTS {
        for container in objects(spec, list) {
            default_container(container);
        }
    }
    for volume in objects(spec, "volumes") {
        volumes::default_volume(volume);
    }
}

/// `serviceAccount` is the deprecated name of `serviceAccountName`: read when the new
/// name is missing, and always written back equal to it.
fn service_account_alias(spec: &mut Map<String, Value>) {
    let name = match (str_of(spec, "serviceAccountName"), str_of(spec, "serviceAccount")) {
        ("", "") => {
            if spec.get("serviceAccount").is_some() {
                spec.remove("serviceAccount");
            }
            return;
        }
        ("", old) => old,
        (name, old) if name == old => return,
        (name, _) => name,
    }
    .to_owned();
    spec.insert("serviceAccountName".into(), Value::String(name.clone()));
    spec.insert("serviceAccount".into(), Value::String(name));
}

/// One container (regular, init or ephemeral).
fn default_container(container: &mut Map<String, Value>) {
    if unset_str(container, "imagePullPolicy") {
        let policy = match image::tag(str_of(container, "image")) {
            Some("latest") => "Always",
            _ => "IfNotPresent",
        };
        container.insert("imagePullPolicy".into(), json!(policy));
    }
    or_insert_str(container, "terminationMessagePath", "/dev/termination-log");
    or_insert_str(container, "terminationMessagePolicy", "File");
    for probe in PROBES {
        if let Some(probe) = object(container, probe) {
            default_probe(probe);
        }
    }
    if let Some(lifecycle) = object(container, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(get) = object(lifecycle, hook).and_then(|h| object(h, "httpGet")) {
                default_http_get(get);
            }
        }
    }
    for port in objects(container, "ports") {
        or_insert_str(port, "protocol", "TCP");
    }
    for env in objects(container, "env") {
        if let Some(field_ref) = object(env, "valueFrom").and_then(|v| object(v, "fieldRef")) {
            or_insert_str(field_ref, "apiVersion", "v1");
        }
    }
}

fn default_probe(probe: &mut Map<String, Value>) {
    or_insert_int(probe, "timeoutSeconds", 1);
    or_insert_int(probe, "periodSeconds", 10);
    or_insert_int(probe, "successThreshold", 1);
    or_insert_int(probe, "failureThreshold", 3);
    if let Some(get) = object(probe, "httpGet") {
        default_http_get(get);
    }
    if let Some(grpc) = object(probe, "grpc") {
        or_insert(grpc, "service", || json!(""));
    }
}

fn default_http_get(get: &mut Map<String, Value>) {
    or_insert_str(get, "path", "/");
    or_insert_str(get, "scheme", "HTTP");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(spec: Value) -> Map<String, Value> {
        json!({"spec": spec}).as_object().unwrap().clone()
    }

    #[test]
    fn a_bare_pod_gets_upstreams_defaults() {
        let mut p = pod(json!({"containers": [{"name": "c", "image": "nginx"}]}));
        default_pod(&mut p);
        assert_eq!(
            p["spec"],
            json!({"containers": [{"name": "c", "image": "nginx", "imagePullPolicy": "Always",
                                   "terminationMessagePath": "/dev/termination-log",
                                   "terminationMessagePolicy": "File"}],
                   "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "securityContext": {},
                   "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler",
                   "enableServiceLinks": true})
        );
    }

    #[test]
    fn templates_get_no_pod_only_defaults() {
        let mut t = pod(json!({"hostNetwork": true, "containers": [{"name": "c", "image": "x:1",
            "ports": [{"containerPort": 80}], "resources": {"limits": {"cpu": "1"}}}]}));
        default_template(&mut t);
        let c = &t["spec"]["containers"][0];
        assert_eq!(c["ports"][0], json!({"containerPort": 80, "protocol": "TCP"}));
        assert_eq!(c["resources"], json!({"limits": {"cpu": "1"}}));
        assert!(t["spec"].get("enableServiceLinks").is_none());

        let mut p = t.clone();
        default_pod(&mut p);
        let c = &p["spec"]["containers"][0];
        assert_eq!(c["ports"][0]["hostPort"], 80);
        assert_eq!(c["resources"]["requests"], json!({"cpu": "1"}));
    }

    #[test]
    fn the_deprecated_service_account_follows_the_new_name() {
        for (given, want) in [
            (json!({"serviceAccount": "a"}), json!({"serviceAccount": "a", "serviceAccountName": "a"})),
            (json!({"serviceAccountName": "b"}), json!({"serviceAccount": "b", "serviceAccountName": "b"})),
            (json!({"serviceAccount": "a", "serviceAccountName": "b"}), json!({"serviceAccount": "b", "serviceAccountName": "b"})),
            (json!({"serviceAccount": ""}), json!({})),
        ] {
            let mut spec = given.as_object().unwrap().clone();
            service_account_alias(&mut spec);
            assert_eq!(Value::Object(spec), want);
        }
    }
}

//! What kubectl 1.33 and 1.27 create comes back from the real binary with
//! kube-apiserver v1.33's defaults: `kubectl create deployment` and `kubectl run`,
//! read back with `kubectl get -o json`. Each expected field is what upstream answers;
//! the zero values Go's typed encoding adds are not compared here.

use apiary_conformance::harness::{ok, Apiary};
use serde_json::{json, Value};

/// Every field of `expected` is in `actual` with the same value (lists item by item).
fn assert_has(actual: &Value, expected: &Value, path: &str) {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => {
            for (k, ev) in e {
                let av = a.get(k).unwrap_or_else(|| panic!("{path}.{k} missing in {actual}"));
                assert_has(av, ev, &format!("{path}.{k}"));
            }
        }
        (Value::Array(a), Value::Array(e)) => {
            assert_eq!(a.len(), e.len(), "{path}: {actual}");
            for (i, (av, ev)) in a.iter().zip(e).enumerate() {
                assert_has(av, ev, &format!("{path}[{i}]"));
            }
        }
        _ => assert_eq!(actual, expected, "{path}"),
    }
}

fn get(apiary: &Apiary, version: &str, kind: &str, name: &str) -> Value {
    serde_json::from_str(&ok(&apiary.kubectl(version, &["get", kind, name, "-o", "json"]))).unwrap()
}

/// What every pod template and pod gets.
fn pod_spec_defaults(container: &str, image: &str, pull: &str) -> Value {
    json!({
        "containers": [{"name": container, "image": image, "imagePullPolicy": pull,
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File"}],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30
    })
}

#[test]
fn kubectl_create_deployment_gets_upstreams_defaults() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let name = format!("web-{}", version.replace('.', "-"));
        ok(&apiary.kubectl(version, &["create", "deployment", &name, "--image=nginx:1.25"]));
        let d = get(&apiary, version, "deployment", &name);
        let expected = json!({
            "replicas": 1,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {"spec": pod_spec_defaults("nginx", "nginx:1.25", "IfNotPresent")}
        });
        assert_has(&d["spec"], &expected, &format!("{version} deployment spec"));
        assert!(d["spec"]["template"]["spec"].get("enableServiceLinks").is_none(), "only pods get service links");
        assert_eq!(d["metadata"]["generation"], 1);
    }
}

#[test]
fn kubectl_run_gets_upstreams_pod_defaults() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let name = format!("p-{}", version.replace('.', "-"));
        ok(&apiary.kubectl(version, &["run", &name, "--image=nginx", "--port=80"]));
        let p = get(&apiary, version, "pod", &name);
        let mut expected = pod_spec_defaults(&name, "nginx", "Always");
        expected["enableServiceLinks"] = json!(true);
        expected["containers"][0]["ports"] = json!([{"containerPort": 80, "protocol": "TCP"}]);
        assert_has(&p["spec"], &expected, &format!("{version} pod spec"));
        assert_eq!(p["status"]["phase"], "Pending");
    }
}

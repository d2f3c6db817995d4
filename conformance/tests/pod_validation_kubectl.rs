//! Pods and Deployments validated as kube-apiserver validates them, through the real
//! binary with kubectl 1.33 and 1.27: an invalid pod and an invalid deployment are
//! refused with upstream's message as kubectl prints it, nothing is stored, and a
//! Deployment's selector cannot change.

use apiary_conformance::harness::{ok, Apiary};
use serde_json::{json, Value};
use std::process::Output;

const VERSIONS: [&str; 2] = ["1.33", "1.27"];

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Write `value` to a file in the server's data dir and return its path.
fn file(apiary: &Apiary, name: &str, value: &Value) -> String {
    let path = apiary.data_dir.join(name);
    std::fs::write(&path, value.to_string()).unwrap();
    path.display().to_string()
}

/// `kubectl create -f` of `object`, which must be refused; what kubectl printed.
fn refused(apiary: &Apiary, version: &str, object: &Value) -> String {
    let name = object["metadata"]["name"].as_str().unwrap();
    let path = file(apiary, &format!("{name}.json"), object);
    let out = apiary.kubectl(version, &["create", "-f", &path]);
    assert!(!out.status.success(), "{name} was accepted");
    stderr(&out)
}

#[test]
fn invalid_pods_and_deployments_are_refused_with_upstreams_words() {
    let apiary = Apiary::start();
    for version in VERSIONS {
        let pod_name = format!("bad-pod-{}", version.replace('.', "-"));
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod_name},
                         "spec": {"containers": [{"name": "c"}, {"name": "c", "image": "nginx:1",
                                  "ports": [{"containerPort": 70000}]}]}});
        let printed = refused(&apiary, version, &pod);
        // kubectl lists several causes one a line, in the server's order.
        let expected = format!(
            "The Pod \"{pod_name}\" is invalid: \n* spec.containers[0].image: Required value\n* spec.containers[1].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive\n* spec.containers[1].name: Duplicate value: \"c\"\n"
        );
        assert!(printed.contains(&expected), "{version}: {printed}");
        assert!(!apiary.kubectl(version, &["get", "pod", &pod_name]).status.success(), "nothing is stored");

        let deploy_name = format!("bad-deploy-{}", version.replace('.', "-"));
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": deploy_name},
                                "spec": {"selector": {"matchLabels": {"app": "y"}},
                                         "template": {"metadata": {"labels": {"app": "x"}},
                                                      "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}});
        let printed = refused(&apiary, version, &deployment);
        let expected = format!(
            "The Deployment \"{deploy_name}\" is invalid: spec.template.metadata.labels: Invalid value: {{\"app\":\"x\"}}: `selector` does not match template `labels`"
        );
        assert!(printed.contains(&expected), "{version}: {printed}");
    }
}

#[test]
fn a_deployments_selector_cannot_change() {
    let apiary = Apiary::start();
    for version in VERSIONS {
        let name = format!("web-{}", version.replace('.', "-"));
        ok(&apiary.kubectl(version, &["create", "deployment", &name, "--image=nginx:1"]));
        let patch = r#"{"spec":{"selector":{"matchLabels":{"app":"other"}},"template":{"metadata":{"labels":{"app":"other"}}}}}"#;
        let out = apiary.kubectl(version, &["patch", "deployment", &name, "--type=merge", "-p", patch]);
        assert!(!out.status.success(), "{version}: the selector changed");
        let expected = format!(
            "The Deployment \"{name}\" is invalid: spec.selector: Invalid value: {{\"matchLabels\":{{\"app\":\"other\"}}}}: field is immutable"
        );
        assert!(stderr(&out).contains(&expected), "{version}: {}", stderr(&out));
        let selector = ok(&apiary.kubectl(version, &["get", "deployment", &name, "-o", "jsonpath={.spec.selector.matchLabels.app}"]));
        assert_eq!(selector, name, "the stored selector is the old one");
    }
}

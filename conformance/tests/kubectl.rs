//! The acceptance path of the foundation, driven by real kubectl binaries against the
//! real `apiary` binary on a free loopback port.

use apiary_conformance::harness::{fixture, ok, Apiary};
use serde_json::Value;

/// Write a copy of the Deployment fixture with another replica count and image.
fn changed_deployment(dir: &std::path::Path) -> String {
    let text = std::fs::read_to_string(fixture("deployment.yaml")).unwrap();
    let text = text
        .replace("replicas: 2", "replicas: 3")
        .replace("nginx:1.27", "nginx:1.28");
    let path = dir.join("deployment-changed.yaml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn acceptance(version: &str) {
    let apiary = Apiary::start();
    let k = |args: &[&str]| apiary.kubectl(version, args);

    let namespaces = ok(&k(&["get", "ns"]));
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(namespaces.contains(ns), "{ns} missing from:\n{namespaces}");
    }
    assert!(
        namespaces.contains("Active"),
        "namespace STATUS column:\n{namespaces}"
    );

    ok(&k(&["create", "ns", "x"]));
    ok(&k(&[
        "create",
        "configmap",
        "a",
        "--from-literal=k=v",
        "-n",
        "x",
    ]));
    let cm = ok(&k(&["get", "cm", "a", "-n", "x", "-o", "yaml"]));
    assert!(cm.contains("k: v"), "data did not round-trip:\n{cm}");
    assert!(cm.contains("resourceVersion:"), "{cm}");
    assert!(cm.contains("uid:"), "{cm}");

    ok(&k(&[
        "create",
        "-f",
        &fixture("deployment.yaml"),
        "-n",
        "x",
    ]));
    let changed = changed_deployment(&apiary.data_dir);
    ok(&k(&["replace", "-f", &changed, "-n", "x"]));
    let deploy: Value =
        serde_json::from_str(&ok(&k(&["get", "deploy", "web", "-n", "x", "-o", "json"]))).unwrap();
    assert_eq!(deploy["metadata"]["generation"], 2, "{deploy}");
    assert_eq!(deploy["spec"]["replicas"], 3);
    assert_eq!(
        deploy["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.28"
    );

    let listed = ok(&k(&["get", "deploy", "-n", "x"]));
    assert!(listed.contains("web"), "{listed}");

    ok(&k(&["delete", "cm", "a", "-n", "x"]));
    let gone = k(&["get", "cm", "a", "-n", "x"]);
    assert_eq!(gone.status.code(), Some(1));
    let err = String::from_utf8_lossy(&gone.stderr);
    assert!(
        err.contains("NotFound") && err.contains("configmaps \"a\" not found"),
        "{err}"
    );

    let resources = ok(&k(&["api-resources"]));
    let line = |name: &str| {
        resources
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} missing from api-resources:\n{resources}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(line("pods"), ["pods", "po", "v1", "true", "Pod"]);
    assert_eq!(
        line("deployments"),
        ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    );
    assert_eq!(
        line("namespaces"),
        ["namespaces", "ns", "v1", "false", "Namespace"]
    );
    assert_eq!(
        line("clusterroles"),
        [
            "clusterroles",
            "rbac.authorization.k8s.io/v1",
            "false",
            "ClusterRole"
        ]
    );

    let versions = ok(&k(&["api-versions"]));
    for gv in [
        "v1",
        "apps/v1",
        "batch/v1",
        "rbac.authorization.k8s.io/v1",
        "apiextensions.k8s.io/v1",
    ] {
        assert!(
            versions.lines().any(|l| l == gv),
            "{gv} missing from api-versions:\n{versions}"
        );
    }
}

#[test]
fn kubectl_1_33_acceptance() {
    acceptance("1.33");
}

#[test]
fn kubectl_1_27_acceptance() {
    acceptance("1.27");
}

#[test]
fn errors_reach_kubectl_as_statuses() {
    let apiary = Apiary::start();
    let k = |args: &[&str]| apiary.kubectl("1.33", args);
    // A namespace that does not exist.
    let out = k(&[
        "create",
        "configmap",
        "a",
        "--from-literal=k=v",
        "-n",
        "nowhere",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("namespaces \"nowhere\" not found"));
    // AlreadyExists.
    ok(&k(&["create", "ns", "dup"]));
    let out = k(&["create", "ns", "dup"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("AlreadyExists"),
        "{out:?}"
    );
    // An invalid name.
    let out = k(&["create", "ns", "Not_Valid"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is invalid") && err.contains("RFC 1123"),
        "{err}"
    );
}

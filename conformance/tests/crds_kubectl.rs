//! A CustomResourceDefinition on the real binary, through kubectl 1.33 and 1.27: it
//! becomes Established, its resources are served (by plural and short name, in
//! discovery, scaled, explained), and deleting it deletes its objects first (one held
//! by a finalizer keeps it Terminating) and then takes its resources away.

use apiary_conformance::harness::{ok, Apiary};
use std::time::{Duration, Instant};

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    kind: Widget
    shortNames: [wd]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, description: How big the widget is.}
              replicas: {type: integer}
          status:
            type: object
            properties:
              replicas: {type: integer}
";

#[test]
fn a_crd_is_established_served_and_removed() {
    let apiary = Apiary::start();
    let crd = apiary.data_dir.join("crd.yaml");
    std::fs::write(&crd, CRD).unwrap();
    ok(&apiary.kubectl("1.33", &["apply", "-f", crd.to_str().unwrap()]));
    ok(&apiary.kubectl("1.33", &["wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=30s"]));
    for version in ["1.33", "1.27"] {
        let name = format!("w-{}", version.replace('.', "-"));
        let widget = apiary.data_dir.join(format!("{name}.yaml"));
        std::fs::write(&widget, format!("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: {name}\nspec:\n  size: 3\n")).unwrap();
        apiary.kubectl_until_served(version, &["apply", "-f", widget.to_str().unwrap()]);
        let listed = ok(&apiary.kubectl(version, &["get", "wd", "-o", "name"]));
        assert!(listed.contains(&format!("widget.example.com/{name}")), "{version}: {listed}");
        let size = ok(&apiary.kubectl(version, &["get", "widgets", &name, "-o", "jsonpath={.spec.size}"]));
        assert_eq!(size, "3", "{version}");
    }
    let resources = ok(&apiary.kubectl("1.33", &["api-resources", "--api-group=example.com", "-o", "name"]));
    assert!(resources.contains("widgets.example.com"), "{resources}");
    for version in ["1.33", "1.27"] {
        ok(&apiary.kubectl(version, &["scale", "widget/w-1-33", "--replicas=4"]));
        let replicas = ok(&apiary.kubectl(version, &["get", "widget", "w-1-33", "-o", "jsonpath={.spec.replicas}"]));
        assert_eq!(replicas, "4", "{version}");
        let explained = ok(&apiary.kubectl(version, &["explain", "widgets.spec.size"]));
        assert!(explained.contains("How big the widget is."), "{version}: {explained}");
    }

    // An object held by a finalizer keeps the CRD Terminating; new objects are refused.
    let held = apiary.data_dir.join("held.yaml");
    std::fs::write(&held, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: held\n  finalizers: [example.com/hold]\n").unwrap();
    ok(&apiary.kubectl("1.33", &["apply", "-f", held.to_str().unwrap()]));
    ok(&apiary.kubectl("1.33", &["delete", "crd", "widgets.example.com", "--wait=false"]));
    let terminating = "jsonpath={.status.conditions[?(@.type==\"Terminating\")].reason}";
    let deadline = Instant::now() + Duration::from_secs(20);
    while ok(&apiary.kubectl("1.33", &["get", "crd", "widgets.example.com", "-o", terminating])) != "InstanceDeletionInProgress" {
        assert!(Instant::now() < deadline, "the CRD never showed its cleanup");
        std::thread::sleep(Duration::from_millis(100));
    }
    let gone = apiary.kubectl("1.33", &["get", "widget", "w-1-27"]);
    assert!(!gone.status.success(), "the objects without finalizers are deleted");
    let late = apiary.data_dir.join("late.yaml");
    std::fs::write(&late, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: late\n").unwrap();
    let refused = apiary.kubectl("1.33", &["create", "-f", late.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("create not allowed while custom resource definition is terminating"), "{stderr}");
    ok(&apiary.kubectl("1.33", &["patch", "widget", "held", "--type=merge", "-p", "{\"metadata\":{\"finalizers\":null}}"]));
    ok(&apiary.kubectl("1.33", &["wait", "--for=delete", "crd/widgets.example.com", "--timeout=30s"]));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = apiary.kubectl("1.33", &["get", "--raw", "/apis/example.com/v1/namespaces/default/widgets"]);
        if !out.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "the widgets are still served");
        std::thread::sleep(Duration::from_millis(100));
    }
}

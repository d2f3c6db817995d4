//! A CustomResourceDefinition on the real binary, through kubectl 1.33 and 1.27: it
//! becomes Established, its resources are served (by plural and short name, in
//! discovery), and deleting it takes them away.

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
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
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
    ok(&apiary.kubectl("1.33", &["delete", "crd", "widgets.example.com"]));
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

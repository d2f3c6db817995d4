//! A malformed CustomResourceDefinition applied with kubectl 1.33 and 1.27 on the real
//! binary is refused with kube-apiserver's words (the causes recorded from a real
//! v1.33 server), and nothing of it is served; the CRD put right is applied and becomes
//! Established.

use apiary_conformance::harness::{ok, Apiary};

/// Upstream's recorded case `schema-not-structural`: a lower-case kind is fine, the
/// rest is not.
const MALFORMED: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.refa.example.com
spec:
  group: refa.example.com
  names: {kind: widget, plural: widgets}
  scope: Bogus
  versions:
  - name: V1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        properties:
          spec:
            properties:
              a: {type: string, default: 5}
";

const GOOD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.refa.example.com
spec:
  group: refa.example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
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
              a: {type: string, default: five}
";

/// The causes upstream gave for `MALFORMED`, in its order.
const CAUSES: [&str; 5] = [
    "spec.scope: Unsupported value: \"Bogus\": supported values: \"Cluster\", \"Namespaced\"",
    "spec.versions[0].name: Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    "spec.version: Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
    "spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root",
];

#[test]
fn a_malformed_crd_gets_upstreams_causes_and_a_good_one_establishes() {
    let apiary = Apiary::start();
    let malformed = apiary.data_dir.join("malformed.yaml");
    std::fs::write(&malformed, MALFORMED).unwrap();
    for version in ["1.33", "1.27"] {
        let out = apiary.kubectl(version, &["apply", "-f", malformed.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{version}: applied");
        assert!(
            stderr.contains("The CustomResourceDefinition \"widgets.refa.example.com\" is invalid"),
            "{version}: {stderr}"
        );
        let mut at = 0;
        for cause in CAUSES {
            let found = stderr[at..].find(cause).unwrap_or_else(|| panic!("{version}: no {cause:?} in order in {stderr}"));
            at += found + cause.len();
        }
    }
    let listed = ok(&apiary.kubectl("1.33", &["get", "crds", "-o", "name"]));
    assert!(!listed.contains("widgets.refa.example.com"), "{listed}");

    let good = apiary.data_dir.join("good.yaml");
    std::fs::write(&good, GOOD).unwrap();
    ok(&apiary.kubectl("1.33", &["apply", "-f", good.to_str().unwrap()]));
    ok(&apiary.kubectl("1.33", &["wait", "--for=condition=Established", "crd/widgets.refa.example.com", "--timeout=30s"]));
    let defaulted = ok(&apiary.kubectl(
        "1.33",
        &["get", "crd", "widgets.refa.example.com", "-o", "jsonpath={.spec.names.listKind} {.spec.conversion.strategy} {.status.storedVersions}"],
    ));
    assert_eq!(defaulted, "WidgetList None [\"v1\"]");
}

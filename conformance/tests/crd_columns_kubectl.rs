//! A CRD's printer columns and selectable fields on the real binary, through kubectl
//! 1.33 and 1.27: `kubectl get` shows the declared columns (the priority ones with
//! `-o wide`), and `--field-selector` filters by a declared field and is refused for
//! any other.

use apiary_conformance::harness::{ok, Apiary};

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: gadgets
    kind: Gadget
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Owner, type: string, jsonPath: .spec.owner, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    selectableFields:
    - jsonPath: .spec.color
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string}
              size: {type: integer}
              owner: {type: string}
          status:
            type: object
            properties:
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
"#;

const GADGETS: &str = "apiVersion: example.com/v1
kind: Gadget
metadata: {name: g-red}
spec: {color: red, size: 3, owner: ops}
status:
  conditions: [{type: Scheduled, status: 'True'}, {type: Ready, status: 'True'}]
---
apiVersion: example.com/v1
kind: Gadget
metadata: {name: g-blue}
spec: {color: blue, size: 12, owner: dev}
status:
  conditions: [{type: Ready, status: 'False'}]
";

/// The lines of a `kubectl get` table, each split into its words.
fn rows(out: &str) -> Vec<Vec<&str>> {
    out.lines().map(|line| line.split_whitespace().collect()).collect()
}

#[test]
fn kubectl_shows_declared_columns_and_selects_by_declared_fields() {
    let apiary = Apiary::start();
    let crd = apiary.data_dir.join("crd.yaml");
    std::fs::write(&crd, CRD).unwrap();
    ok(&apiary.kubectl("1.33", &["apply", "-f", crd.to_str().unwrap()]));
    ok(&apiary.kubectl("1.33", &["wait", "--for=condition=Established", "crd/gadgets.example.com", "--timeout=30s"]));
    let gadgets = apiary.data_dir.join("gadgets.yaml");
    std::fs::write(&gadgets, GADGETS).unwrap();
    apiary.kubectl_until_served("1.33", &["apply", "-f", gadgets.to_str().unwrap()]);

    for version in ["1.33", "1.27"] {
        let plain = ok(&apiary.kubectl(version, &["get", "gadgets"]));
        let plain = rows(&plain);
        assert_eq!(plain[0], ["NAME", "COLOR", "SIZE", "READY", "AGE"], "{version}");
        assert_eq!(plain[1][..4], ["g-blue", "blue", "12", "False"], "{version}");
        assert_eq!(plain[2][..4], ["g-red", "red", "3", "True"], "{version}");
        assert!(plain[2][4].chars().all(|c| c.is_ascii_digit() || c == 'm' || c == 's'), "{version}: an age: {:?}", plain[2]);

        let wide = ok(&apiary.kubectl(version, &["get", "gadgets", "-o", "wide"]));
        let wide = rows(&wide);
        assert_eq!(wide[0], ["NAME", "COLOR", "SIZE", "READY", "OWNER", "AGE"], "{version}");
        assert_eq!(wide[2][4], "ops", "{version}");

        let red = ok(&apiary.kubectl(version, &["get", "gadgets", "--field-selector", "spec.color=red", "-o", "name"]));
        assert_eq!(red.trim(), "gadget.example.com/g-red", "{version}");
        let not_red = ok(&apiary.kubectl(version, &["get", "gadgets", "--field-selector", "spec.color!=red", "-o", "name"]));
        assert_eq!(not_red.trim(), "gadget.example.com/g-blue", "{version}");

        let refused = apiary.kubectl(version, &["get", "gadgets", "--field-selector", "spec.size=3"]);
        assert!(!refused.status.success(), "{version}");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("BadRequest") && stderr.contains("field label not supported: spec.size"), "{version}: {stderr}");
    }
}

//! A CRD with an OpenAPI v3 schema on the real binary, through kubectl 1.33: an invalid
//! custom resource is refused with kube-apiserver's words on stderr, an unknown field
//! too (kubectl asks for strict field validation), and a valid one is stored with its
//! defaults filled in.

use apiary_conformance::harness::{ok, widget_crd, Apiary};
use std::time::{Duration, Instant};

/// Widgets: a required name, defaults, an enum and a set.
fn crd() -> String {
    widget_crd(
        "{type: object, required: [name], properties: {name: {type: string, maxLength: 10}, \
         size: {type: integer, minimum: 1, default: 3}, color: {type: string, enum: [red, blue], default: red}, \
         tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}}}",
    )
}

#[test]
fn kubectl_sees_schema_errors_and_defaults() {
    let apiary = Apiary::start();
    let write = |name: &str, text: &str| {
        let path = apiary.data_dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let crd = write("crd.yaml", &crd());
    ok(&apiary.kubectl("1.33", &["apply", "-f", &crd]));
    ok(&apiary.kubectl("1.33", &["wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=30s"]));

    let bad = write(
        "bad.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: bad\nspec:\n  name: a-name-far-too-long\n  size: big\n  color: green\n  tags: [a, a]\n",
    );
    // Discovery may lag a moment behind in kubectl's cache: retry while the kind is unknown.
    let deadline = Instant::now() + Duration::from_secs(20);
    let refused = loop {
        let out = apiary.kubectl("1.33", &["apply", "-f", &bad]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if !stderr.contains("no matches for kind") || Instant::now() > deadline {
            assert!(!out.status.success(), "an invalid widget was accepted");
            break stderr;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    for expected in [
        r#"The Widget "bad" is invalid"#,
        r#"spec.size: Invalid value: "string": spec.size in body must be of type integer: "string""#,
        r#"spec.color: Unsupported value: "green": supported values: "red", "blue""#,
        "spec.name: Too long: may not be more than 10 bytes",
        r#"spec.tags[1]: Duplicate value: "a""#,
    ] {
        assert!(refused.contains(expected), "missing {expected:?} in:\n{refused}");
    }

    let unknown = write("unknown.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: odd\nspec:\n  name: odd\n  bogus: 1\n");
    let out = apiary.kubectl("1.33", &["apply", "-f", &unknown]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains(r#"strict decoding error: unknown field "spec.bogus""#), "{stderr}");

    let good = write("good.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: good\nspec:\n  name: fine\n");
    ok(&apiary.kubectl("1.33", &["apply", "-f", &good]));
    let defaulted = ok(&apiary.kubectl("1.33", &["get", "widget", "good", "-o", "jsonpath={.spec.size} {.spec.color}"]));
    assert_eq!(defaulted, "3 red");
    assert!(!ok(&apiary.kubectl("1.33", &["get", "widgets", "-o", "name"])).contains("bad"));
}

//! Label and field selectors as kubectl 1.33 sends them (`-l`, `--field-selector`,
//! `--chunk-size`, `delete -l`), against the real binary.

use apiary_conformance::harness::{ok, Apiary};
use std::path::Path;

const VERSION: &str = "1.33";

const CONFIGMAPS: &str = "\
apiVersion: v1
kind: ConfigMap
metadata: {name: foo, labels: {app: x, env: a}}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: bar, labels: {app: x, env: b}}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: baz, labels: {app: db, env: c}}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: qux}
data: {k: v}
";

fn pod(name: &str, node: &str) -> String {
    format!(
        "\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{app: web}}}}
spec:
  nodeName: {node}
  restartPolicy: Never
  containers:
    - name: main
      image: busybox:1.36
      command: [sh, -c, echo hello]
"
    )
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// The sorted names `kubectl get -o name` prints, without the resource prefix.
fn names(out: &str) -> Vec<String> {
    let mut names: Vec<String> = out
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.rsplit('/').next().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn kubectl_selects_with_labels_and_fields() {
    let apiary = Apiary::start();
    let k = |args: &[&str]| apiary.kubectl(VERSION, args);
    let get = |args: &[&str]| names(&ok(&k(&[&["get", "-o", "name"], args].concat())));

    ok(&k(&[
        "create",
        "-f",
        &write(&apiary.data_dir, "cms.yaml", CONFIGMAPS),
    ]));
    assert_eq!(get(&["cm", "-l", "app=x"]), ["bar", "foo"]);
    assert_eq!(get(&["cm", "-l", "env in (a,b)"]), ["bar", "foo"]);
    assert_eq!(get(&["cm", "-l", "env notin (a,b),app"]), ["baz"]);
    // kube-root-ca.crt has no app label either.
    assert_eq!(get(&["cm", "-l", "!app"]), ["kube-root-ca.crt", "qux"]);
    assert_eq!(
        get(&[
            "cm",
            "-l",
            "app!=x",
            "--field-selector",
            "metadata.name!=baz"
        ]),
        ["kube-root-ca.crt", "qux"]
    );
    assert_eq!(
        get(&["cm", "--field-selector", "metadata.name=foo"]),
        ["foo"]
    );
    assert_eq!(
        get(&[
            "cm",
            "-A",
            "--field-selector",
            "metadata.namespace=default,metadata.name==bar"
        ]),
        ["bar"]
    );
    // Pages of one, each filled with a match, followed by continue tokens.
    assert_eq!(
        get(&["cm", "-l", "app", "--chunk-size=1"]),
        ["bar", "baz", "foo"]
    );

    // The default output is a server-side Table of the matches.
    let table = ok(&k(&["get", "cm", "-l", "app=x"]));
    let rows: Vec<&str> = table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(rows, ["bar", "foo"], "{table}");
    let none = k(&["get", "cm", "-l", "app=nope"]);
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("No resources found"),
        "{none:?}"
    );

    ok(&k(&[
        "create",
        "-f",
        &write(&apiary.data_dir, "p1.yaml", &pod("p1", "n1")),
    ]));
    ok(&k(&[
        "create",
        "-f",
        &write(&apiary.data_dir, "p2.yaml", &pod("p2", "n2")),
    ]));
    ok(&k(&[
        "create",
        "-f",
        &write(&apiary.data_dir, "p3.yaml", &pod("p3", "n1")),
    ]));
    assert_eq!(
        get(&["pods", "--field-selector", "spec.nodeName=n1"]),
        ["p1", "p3"]
    );
    assert_eq!(
        get(&[
            "pods",
            "--field-selector",
            "spec.nodeName!=n1",
            "-l",
            "app=web"
        ]),
        ["p2"]
    );
    assert_eq!(
        get(&["pods", "-A", "--field-selector", "spec.nodeName=n2"]),
        ["p2"]
    );

    let bogus = k(&["get", "pods", "--field-selector", "spec.bogus=1"]);
    assert_eq!(bogus.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bogus.stderr);
    assert!(
        err.contains("Error from server (BadRequest)")
            && err.contains("field label not supported: spec.bogus"),
        "{err}"
    );
    let bogus = k(&["get", "cm", "--field-selector", "data.k=v"]);
    let err = String::from_utf8_lossy(&bogus.stderr);
    assert!(
        err.contains(
            r#""data.k" is not a known field selector: only "metadata.name", "metadata.namespace""#
        ),
        "{err}"
    );
    let bad_label = k(&["get", "cm", "-l", "app in (x"]);
    let err = String::from_utf8_lossy(&bad_label.stderr);
    assert!(
        err.contains("(BadRequest)")
            && err.contains("unable to parse requirement: found '', expected: ',' or ')'"),
        "{err}"
    );

    let deleted = ok(&k(&["delete", "cm", "-l", "app=x"]));
    assert!(
        deleted.contains("\"foo\" deleted") && deleted.contains("\"bar\" deleted"),
        "{deleted}"
    );
    assert_eq!(get(&["cm"]), ["baz", "kube-root-ca.crt", "qux"]);
    // Pods on a node wait for their kubelet: the delete is forced.
    let deleted = ok(&k(&[
        "delete",
        "pods",
        "--field-selector",
        "spec.nodeName=n1",
        "--grace-period=0",
        "--force",
    ]));
    assert!(
        deleted.contains("\"p1\" force deleted") && deleted.contains("\"p3\" force deleted"),
        "{deleted}"
    );
    assert_eq!(get(&["pods"]), ["p2"]);
}

/// kubectl 1.33 carries apimachinery's own selector parsers and runs them locally for
/// `kubectl top pod -l/--field-selector` before it asks the server anything: its
/// verdict on each selector, and its exact message, must be ours.
#[test]
fn our_parsers_agree_with_kubectls() {
    use apiary_core::selection::{FieldSelector, LabelSelector};
    let apiary = Apiary::start();
    let label_cases = [
        "",
        "a",
        "!a",
        "a=b",
        "a==b",
        "a!=b",
        "a in (c,b)",
        "a notin (b)",
        "a>5",
        "a<5",
        "a=",
        "a in ()",
        "a in (,b)",
        "a in (b,)",
        "a in (b,,c)",
        "a in (b,,)",
        "a in (,,)",
        "a in (b,,,)",
        "in in (in,notin)",
        "notin=in",
        ",",
        "=a",
        "a,",
        "a,,b",
        "a=b c",
        "!a=b",
        "a b",
        "a (",
        "!!a",
        "a in b",
        "a in (b",
        "a in (b c)",
        "a in (=)",
        "a in (,=)",
        "a in (",
        "a=(",
        "a===b",
        "-a=b",
        "/a",
        "A.com/",
        "a/b/c",
        "app=a/b",
        "app in (ok,-x,_y)",
        "n>x",
        "n<",
        "n>-1",
        "a\"b",
        "a<=b",
        "a=>b",
        "a in ((b)",
        "a notin",
        "!",
        "x.y/z=1",
        "é=1",
        "a=é",
        "a>1,a<3",
        "a>1.5",
        "a>+1",
        "a=b,c in (d, e), !f, g notin (h)",
        "a\tin\t(b)",
        "a.com/-b",
        "A/b",
    ];
    let long_key = "k".repeat(64);
    let long_value = format!("v={}", "v".repeat(64));
    let field_cases = [
        "a",
        "a=1",
        "a==1",
        "a!=1",
        "=x",
        "z=1,a!=2,,m==3",
        ",,",
        r"a=x\,y",
        r"a=x\=y",
        r"a=x\\y",
        "b=1,a",
        "a<1",
        "a=b=c",
        r"a=\x",
        r"a=x\",
        r"b,a=\q",
        "a=!=b",
        "a!==b",
        r"a\,b=c",
        "é=é\\é",
        "=",
        "!=",
    ];
    let check = |flag: &str, case: &str, ours: Result<(), String>| {
        let out = apiary.kubectl(VERSION, &["top", "pod", &format!("{flag}={case}")]);
        let err = String::from_utf8_lossy(&out.stderr);
        match ours {
            Err(message) => assert_eq!(err, format!("error: {message}\n"), "{flag}={case:?}"),
            Ok(()) => assert!(
                !err.contains("unable to parse")
                    && !err.contains("found '")
                    && !err.contains("selector"),
                "{flag}={case:?}: kubectl rejects what we accept: {err}"
            ),
        }
    };
    for case in label_cases
        .iter()
        .copied()
        .chain([long_key.as_str(), long_value.as_str()])
    {
        check("--selector", case, LabelSelector::parse(case).map(drop));
    }
    for case in field_cases {
        check(
            "--field-selector",
            case,
            FieldSelector::parse(case).map(drop),
        );
    }
}

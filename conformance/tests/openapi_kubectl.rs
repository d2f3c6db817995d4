//! kubectl's default validation against Apiary's OpenAPI documents and server-side
//! field validation: manifests apply without `--validate=false`, unknown fields are
//! refused or warned about, and `kubectl explain` reads the schemas.

use apiary_conformance::harness::{fixture, ok, Apiary};
use std::path::Path;

/// A copy of a fixture with one text replaced, for `replace -f`.
fn changed(dir: &Path, name: &str, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    assert!(text.contains(from), "{name} lacks {from}");
    let path = dir.join(format!("changed-{name}"));
    std::fs::write(&path, text.replace(from, to)).unwrap();
    path.display().to_string()
}

fn manifests_apply_with_default_validation(version: &str) {
    let apiary = Apiary::start();
    let k = |args: &[&str]| apiary.kubectl(version, args);
    let edits = [
        ("deployment.yaml", "replicas: 2", "replicas: 4"),
        ("service.yaml", "port: 80", "port: 81"),
        ("configmap.yaml", "mode: fast", "mode: slow"),
    ];
    // (A Job is not replaced from its manifest: the manifest lacks the selector the
    // server generated, and upstream refuses that as a change of an immutable field.)
    for (name, from, to) in edits {
        ok(&k(&["create", "-f", &fixture(name)]));
        ok(&k(&[
            "replace",
            "-f",
            &changed(&apiary.data_dir, name, from, to),
        ]));
    }
    // A pod may change little once created: its image is one thing it may. It is
    // replaced from what the server holds, as upstream requires: the manifest lacks
    // what admission gave it (its ServiceAccount and token volume), and a replace
    // from the manifest is refused as a change of those fields.
    ok(&k(&["create", "-f", &fixture("pod.yaml")]));
    let live = ok(&k(&["get", "pod", "worker", "-o", "yaml"]));
    assert!(live.contains("busybox:1.36"), "{live}");
    let replaced = apiary.data_dir.join("live-pod.yaml");
    std::fs::write(&replaced, live.replace("busybox:1.36", "busybox:1.37")).unwrap();
    let from_manifest = k(&["replace", "-f", &changed(&apiary.data_dir, "pod.yaml", "busybox:1.36", "busybox:1.37")]);
    assert!(!from_manifest.status.success());
    ok(&k(&["replace", "-f", replaced.to_str().unwrap()]));
    let cm = ok(&k(&[
        "get",
        "cm",
        "settings",
        "-o",
        "jsonpath={.data.mode}",
    ]));
    assert_eq!(cm, "slow");

    let strict = k(&["create", "-f", &fixture("deployment-unknown-field.yaml")]);
    assert_eq!(strict.status.code(), Some(1), "{strict:?}");
    let err = String::from_utf8_lossy(&strict.stderr);
    assert!(err.contains("unknown field \"spec.foo\""), "{err}");
    assert_eq!(
        k(&["get", "deploy", "odd"]).status.code(),
        Some(1),
        "nothing was created"
    );

    let warn = k(&[
        "create",
        "--validate=warn",
        "-f",
        &fixture("deployment-unknown-field.yaml"),
    ]);
    let err = String::from_utf8_lossy(&warn.stderr);
    assert!(warn.status.success(), "{err}");
    assert!(err.contains("unknown field \"spec.foo\""), "{err}");
    let stored = ok(&k(&["get", "deploy", "odd", "-o", "json"]));
    assert!(
        !stored.contains("\"foo\""),
        "unknown fields are dropped: {stored}"
    );

    let explained = ok(&k(&["explain", "deployment.spec.template.spec.containers"]));
    assert!(explained.contains("image"), "{explained}");
    assert!(explained.contains("FIELD"), "{explained}");
    let recursive = ok(&k(&["explain", "pods", "--recursive"]));
    for field in ["containers", "restartPolicy", "nodeName"] {
        assert!(recursive.contains(field), "{field} missing:\n{recursive}");
    }
}

#[test]
fn kubectl_1_33_validates_against_apiary() {
    manifests_apply_with_default_validation("1.33");
}

#[test]
fn kubectl_1_27_validates_against_apiary() {
    manifests_apply_with_default_validation("1.27");
}

//! kubectl patch (merge, json and strategic), label, annotate, apply and edit against the real
//! binary, 1.33 and 1.27.

use apiary_conformance::harness::{kubectl_command, ok, Apiary};

#[test]
fn kubectl_patch_with_merge_and_json_patches() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let name = format!("patched-{}", version.replace('.', "-"));
        ok(&apiary.kubectl(version, &["create", "configmap", &name, "--from-literal=k=v", "--from-literal=gone=x"]));
        ok(&apiary.kubectl(
            version,
            &["patch", "configmap", &name, "--type=merge", "-p", r#"{"data":{"k":"w","gone":null}}"#],
        ));
        ok(&apiary.kubectl(
            version,
            &["patch", "configmap", &name, "--type=json", "-p", r#"[{"op":"add","path":"/data/n","value":"1"}]"#],
        ));
        let data = ok(&apiary.kubectl(version, &["get", "configmap", &name, "-o", "jsonpath={.data}"]));
        let data: serde_json::Value = serde_json::from_str(&data).unwrap();
        assert_eq!(data, serde_json::json!({"k": "w", "n": "1"}));
        // A failing test operation: kubectl reports the server's refusal.
        let out = apiary.kubectl(
            version,
            &["patch", "configmap", &name, "--type=json", "-p", r#"[{"op":"test","path":"/data/k","value":"nope"}]"#],
        );
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("testing value /data/k failed"));
    }
}

fn jsonpath(apiary: &Apiary, version: &str, object: &str, path: &str) -> String {
    ok(&apiary.kubectl(version, &["get", object, "-o", &format!("jsonpath={path}")]))
}

fn json_at(apiary: &Apiary, version: &str, object: &str, path: &str) -> serde_json::Value {
    let text = jsonpath(apiary, version, object, path);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} of {object}: {e}: {text:?}"))
}

/// A Deployment manifest for `kubectl apply`.
fn deployment_manifest(name: &str, image: &str, labels: &str, env: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels:
    app: {name}
{labels}
spec:
  replicas: 2
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      containers:
        - name: web
          image: {image}
          env:
{env}
"
    )
}

#[test]
fn kubectl_patch_with_strategic_merge_patch_merges_containers_by_name() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let name = format!("smp-{}", version.replace('.', "-"));
        let object = format!("deployment/{name}");
        ok(&apiary.kubectl(version, &["create", "deployment", &name, "--image=nginx:1.27"]));
        let out = ok(&apiary.kubectl(
            version,
            &[
                "patch",
                "deployment",
                &name,
                "--type=strategic",
                "-p",
                r#"{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"},{"name":"log","image":"busybox:1.36"}]}}}}"#,
            ],
        ));
        assert_eq!(out.trim(), format!("deployment.apps/{name} patched"));
        // The named container changed in place, the new one joined it.
        let containers = json_at(&apiary, version, &object, "{.spec.template.spec.containers}");
        let pairs: Vec<(&str, &str)> = containers
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["name"].as_str().unwrap(), c["image"].as_str().unwrap()))
            .collect();
        assert_eq!(pairs, [("nginx", "nginx:1.28"), ("log", "busybox:1.36")]);
        // Deleting one container by name leaves the other.
        ok(&apiary.kubectl(
            version,
            &["patch", &object, "-p", r#"{"spec":{"template":{"spec":{"containers":[{"name":"log","$patch":"delete"}]}}}}"#],
        ));
        assert_eq!(jsonpath(&apiary, version, &object, "{.spec.template.spec.containers[*].name}"), "nginx");
        // An item without its merge key: upstream's error, as kubectl shows it.
        let out = apiary.kubectl(
            version,
            &["patch", &object, "-p", r#"{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}"#],
        );
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("Error from server: map: map[image:x] does not contain declared merge key: name"),
            "{stderr}"
        );
    }
}

#[test]
fn kubectl_label_and_annotate_add_overwrite_and_remove() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let name = format!("marked-{}", version.replace('.', "-"));
        let object = format!("deployment/{name}");
        ok(&apiary.kubectl(version, &["create", "deployment", &name, "--image=nginx:1.27"]));

        let out = ok(&apiary.kubectl(version, &["label", &object, "tier=web"]));
        assert_eq!(out.trim(), format!("deployment.apps/{name} labeled"));
        assert_eq!(jsonpath(&apiary, version, &object, "{.metadata.labels.tier}"), "web");
        // Changing a label needs --overwrite.
        let out = apiary.kubectl(version, &["label", &object, "tier=api"]);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("already has a value (web)"));
        ok(&apiary.kubectl(version, &["label", "--overwrite", &object, "tier=api"]));
        assert_eq!(jsonpath(&apiary, version, &object, "{.metadata.labels.tier}"), "api");
        let out = ok(&apiary.kubectl(version, &["label", &object, "tier-"]));
        assert_eq!(out.trim(), format!("deployment.apps/{name} unlabeled"));
        let labels = json_at(&apiary, version, &object, "{.metadata.labels}");
        assert_eq!(labels, serde_json::json!({"app": name}));

        let out = ok(&apiary.kubectl(version, &["annotate", &object, "owner=team-a"]));
        // kubectl 1.27 words its own message without the "d".
        let done = if version == "1.27" { "annotate" } else { "annotated" };
        assert_eq!(out.trim(), format!("deployment.apps/{name} {done}"));
        ok(&apiary.kubectl(version, &["annotate", "--overwrite", &object, "owner=team-b"]));
        assert_eq!(jsonpath(&apiary, version, &object, "{.metadata.annotations.owner}"), "team-b");
        ok(&apiary.kubectl(version, &["annotate", &object, "owner-"]));
        let annotations = jsonpath(&apiary, version, &object, "{.metadata.annotations}");
        assert!(!annotations.contains("owner"), "{annotations}");
    }
}

#[test]
fn kubectl_apply_twice_changes_and_removes_fields() {
    let apiary = Apiary::start();
    let dir = tempfile::tempdir().unwrap();
    for version in ["1.33", "1.27"] {
        let name = format!("applied-{}", version.replace('.', "-"));
        let object = format!("deployment/{name}");
        let file = dir.path().join(format!("{name}.yaml"));
        let first = deployment_manifest(
            &name,
            "nginx:1.27",
            "    stage: beta",
            "            - name: MODE\n              value: fast\n            - name: LEVEL\n              value: debug",
        );
        std::fs::write(&file, first).unwrap();
        let out = ok(&apiary.kubectl(version, &["apply", "-f", file.to_str().unwrap()]));
        assert_eq!(out.trim(), format!("deployment.apps/{name} created"));
        assert_eq!(jsonpath(&apiary, version, &object, "{.metadata.labels.stage}"), "beta");

        // The image changes, the label and one variable go: a three-way strategic merge
        // patch against the last applied configuration.
        let second = deployment_manifest(&name, "nginx:1.28", "", "            - name: MODE\n              value: fast");
        std::fs::write(&file, second).unwrap();
        let out = ok(&apiary.kubectl(version, &["apply", "-f", file.to_str().unwrap()]));
        assert_eq!(out.trim(), format!("deployment.apps/{name} configured"));
        assert_eq!(jsonpath(&apiary, version, &object, "{.spec.template.spec.containers[0].image}"), "nginx:1.28");
        let env = json_at(&apiary, version, &object, "{.spec.template.spec.containers[0].env}");
        assert_eq!(env, serde_json::json!([{"name": "MODE", "value": "fast"}]));
        let labels = json_at(&apiary, version, &object, "{.metadata.labels}");
        assert_eq!(labels, serde_json::json!({"app": name}));
        // Applying the same file again changes nothing.
        let out = ok(&apiary.kubectl(version, &["apply", "-f", file.to_str().unwrap()]));
        assert_eq!(out.trim(), format!("deployment.apps/{name} unchanged"));
    }
}

#[test]
fn kubectl_edit_saves_what_the_editor_changed() {
    let apiary = Apiary::start();
    let dir = tempfile::tempdir().unwrap();
    // The "editor": change the colour in the file kubectl hands it.
    let editor = dir.path().join("edit.sh");
    std::fs::write(&editor, "#!/bin/sh\nsed -i 's/color: blue/color: green/' \"$1\"\n").unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for version in ["1.33", "1.27"] {
        let name = format!("edited-{}", version.replace('.', "-"));
        ok(&apiary.kubectl(version, &["create", "configmap", &name, "--from-literal=color=blue", "--from-literal=size=m"]));
        let out = kubectl_command(version, &apiary.kubeconfig)
            .args(["edit", "configmap", &name])
            .env("KUBE_EDITOR", &editor)
            .output()
            .expect("kubectl runs");
        let out = ok(&out);
        assert_eq!(out.trim(), format!("configmap/{name} edited"));
        let data = json_at(&apiary, version, &format!("configmap/{name}"), "{.data}");
        assert_eq!(data, serde_json::json!({"color": "green", "size": "m"}));
    }
}

//! Server-side apply against the real binary: kubectl 1.33 and 1.27 (`apply
//! --server-side`, conflicts, `--force-conflicts`, fields dropped from the
//! configuration), and kube-rs `Patch::Apply` from two field managers.

mod kube_support;

use apiary_conformance::harness::{ok, Apiary};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use kube_support::client;
use serde_json::{json, Value};
use std::path::PathBuf;

fn manifest(dir: &PathBuf, name: &str, image: &str, labels: &[(&str, &str)]) -> PathBuf {
    let labels: String = labels
        .iter()
        .map(|(k, v)| format!("    {k}: {v}\n"))
        .collect();
    let yaml = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  labels:\n{labels}spec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      labels:\n        app: {name}\n    spec:\n      containers:\n      - name: nginx\n        image: {image}\n"
    );
    let path = dir.join(format!("{name}-{}.yaml", image.replace([':', '/'], "-")));
    std::fs::write(&path, yaml).unwrap();
    path
}

fn get(apiary: &Apiary, version: &str, name: &str) -> Value {
    let out = ok(&apiary.kubectl(version, &["get", "deployment", name, "-o", "json", "--show-managed-fields"]));
    serde_json::from_str(&out).unwrap()
}

#[test]
fn kubectl_apply_server_side_conflicts_forces_and_prunes() {
    let apiary = Apiary::start();
    let dir = std::env::temp_dir().join(format!("apiary-apply-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for version in ["1.33", "1.27"] {
        let name = format!("web-{}", version.replace('.', "-"));
        ok(&apiary.kubectl(version, &["create", "deployment", &name, "--image=nginx:1"]));

        // Another manager (kubectl-create) owns the image: a different one conflicts.
        let v2 = manifest(&dir, &name, "nginx:2", &[("tier", "web"), ("team", "a")]);
        let out = apiary.kubectl(
            version,
            &["apply", "--server-side", "-f", v2.to_str().unwrap()],
        );
        assert!(!out.status.success(), "a conflicting apply fails");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("conflict with \"kubectl-create\""),
            "{stderr}"
        );
        assert!(
            stderr.contains(".spec.template.spec.containers[name=\"nginx\"].image"),
            "{stderr}"
        );
        assert_eq!(
            get(&apiary, version, &name)["spec"]["template"]["spec"]["containers"][0]["image"],
            "nginx:1"
        );

        let out = ok(&apiary.kubectl(
            version,
            &[
                "apply",
                "--server-side",
                "--force-conflicts",
                "-f",
                v2.to_str().unwrap(),
            ],
        ));
        assert!(out.contains("serverside-applied"), "{out}");
        let deployment = get(&apiary, version, &name);
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"][0]["image"],
            "nginx:2"
        );
        assert_eq!(deployment["metadata"]["labels"]["team"], "a");
        let managers: Vec<(String, String)> = deployment["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["manager"].as_str().unwrap().to_owned(),
                    e["operation"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert!(
            managers.contains(&("kubectl".into(), "Apply".into())),
            "{managers:?}"
        );
        assert!(
            managers.contains(&("kubectl-create".into(), "Update".into())),
            "{managers:?}"
        );

        // Applying again without the `team` label removes it: kubectl alone owned it.
        let v3 = manifest(&dir, &name, "nginx:2", &[("tier", "web")]);
        ok(&apiary.kubectl(
            version,
            &["apply", "--server-side", "-f", v3.to_str().unwrap()],
        ));
        let labels = &get(&apiary, version, &name)["metadata"]["labels"];
        assert!(labels.get("team").is_none(), "{labels}");
        assert_eq!(labels["tier"], "web");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "current_thread")]
async fn kube_rs_apply_from_two_managers() {
    let apiary = Apiary::start();
    let api: Api<ConfigMap> = Api::namespaced(client(&apiary).await, "default");
    let config = |data: Value| -> ConfigMap {
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "shared"},
            "data": data
        }))
        .unwrap()
    };
    // Apply creates the object.
    let alice = PatchParams::apply("alice");
    let created = api
        .patch(
            "shared",
            &alice,
            &Patch::Apply(config(json!({"owner": "alice", "color": "red"}))),
        )
        .await
        .expect("the first apply creates");
    assert_eq!(created.data.as_ref().unwrap()["color"], "red");

    // Bob sets the same colour: shared ownership, no conflict.
    let bob = PatchParams::apply("bob");
    api.patch(
        "shared",
        &bob,
        &Patch::Apply(config(json!({"color": "red"}))),
    )
    .await
    .expect("the same value does not conflict");
    // Bob changes it: Alice owns it too, so this conflicts.
    let err = api
        .patch(
            "shared",
            &bob,
            &Patch::Apply(config(json!({"color": "blue"}))),
        )
        .await
        .expect_err("a different value conflicts");
    match err {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 409);
            assert_eq!(status.reason, "Conflict");
            assert_eq!(
                status.message,
                "Apply failed with 1 conflict: conflict with \"alice\": .data.color"
            );
        }
        other => panic!("expected a 409, got {other:?}"),
    }
    // With force, Bob takes the field.
    let forced = api
        .patch(
            "shared",
            &bob.clone().force(),
            &Patch::Apply(config(json!({"color": "blue"}))),
        )
        .await
        .expect("a forced apply succeeds");
    assert_eq!(forced.data.as_ref().unwrap()["color"], "blue");
    // Alice re-applies without the colour: it is Bob's now and stays.
    let after = api
        .patch(
            "shared",
            &alice,
            &Patch::Apply(config(json!({"owner": "alice"}))),
        )
        .await
        .expect("alice applies again");
    let data = after.data.unwrap();
    assert_eq!(data["color"], "blue");
    assert_eq!(data["owner"], "alice");
    let managers: Vec<String> = after
        .metadata
        .managed_fields
        .unwrap()
        .into_iter()
        .map(|e| format!("{}/{}", e.manager.unwrap(), e.operation.unwrap()))
        .collect();
    assert_eq!(managers, ["alice/Apply", "bob/Apply"]);
}

/// Appliers racing to create the same object all succeed, as upstream's do: the ones
/// whose create loses apply to the winner's object instead of answering 409
/// AlreadyExists (the simulation found that answer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_appliers_racing_to_create_one_object_all_succeed() {
    let apiary = Apiary::start();
    let api: Api<ConfigMap> = Api::namespaced(client(&apiary).await, "default");
    for round in 0..10 {
        let name = format!("raced-{round}");
        let appliers = (0..6).map(|i| {
            let (api, name) = (api.clone(), name.clone());
            tokio::spawn(async move {
                let config: ConfigMap = serde_json::from_value(json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name}, "data": {format!("k{i}"): "v"}
                }))
                .unwrap();
                api.patch(&name, &PatchParams::apply(&format!("applier-{i}")), &Patch::Apply(config)).await
            })
        });
        let answers = futures::future::join_all(appliers).await;
        for (i, answer) in answers.into_iter().enumerate() {
            if let Err(e) = answer.unwrap() {
                panic!("round {round}: applier {i} was refused: {e}");
            }
        }
        let stored = api.get(&name).await.unwrap();
        assert_eq!(stored.data.unwrap().len(), 6, "every applier's field is kept");
    }
}

/// An apply to the status of an object that does not exist is refused 404, as upstream's
/// subresources never create: it used to make the object.
#[tokio::test(flavor = "current_thread")]
async fn kube_rs_apply_to_a_missing_objects_status_is_not_found() {
    let apiary = Apiary::start();
    let api: Api<k8s_openapi::api::core::v1::Service> = Api::namespaced(client(&apiary).await, "default");
    let service = json!({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "nowhere"},
        "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}
    });
    match api.patch_status("nowhere", &PatchParams::apply("status-writer"), &Patch::Apply(&service)).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"), "{status:?}");
        }
        other => panic!("expected 404, got {other:?}"),
    }
    assert!(api.get_opt("nowhere").await.unwrap().is_none(), "nothing was made");
}

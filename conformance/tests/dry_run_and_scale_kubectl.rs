//! Server-side dry runs (`--dry-run=server`) and the scale subresource (`kubectl scale`,
//! `--subresource=scale`, `get --raw .../scale`) through the real binary, with kubectl
//! 1.33 and 1.27.

use apiary_conformance::harness::{ok, Apiary};
use serde_json::{json, Value};
use std::process::Output;

const VERSIONS: [&str; 2] = ["1.33", "1.27"];

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn get_json(apiary: &Apiary, version: &str, args: &[&str]) -> Value {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    serde_json::from_str(&ok(&apiary.kubectl(version, &all))).unwrap()
}

/// Write `value` to a file in the server's data dir and return its path.
fn file(apiary: &Apiary, name: &str, value: &Value) -> String {
    let path = apiary.data_dir.join(name);
    std::fs::write(&path, value.to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn kubectl_server_dry_runs_check_but_change_nothing() {
    let apiary = Apiary::start();
    for version in VERSIONS {
        let name = format!("dry-{}", version.replace('.', "-"));

        // create: the answer has a uid and no resourceVersion; nothing is stored.
        let out = ok(&apiary.kubectl(
            version,
            &[
                "create",
                "configmap",
                &name,
                "--from-literal=k=v",
                "--dry-run=server",
                "-o",
                "json",
            ],
        ));
        let answered: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(answered["data"]["k"], "v");
        assert!(answered["metadata"]["uid"].is_string(), "{answered}");
        assert!(
            answered["metadata"].get("resourceVersion").is_none(),
            "{answered}"
        );
        let missing = apiary.kubectl(version, &["get", "configmap", &name]);
        assert!(!missing.status.success());
        assert!(
            stderr(&missing).contains("NotFound"),
            "{}",
            stderr(&missing)
        );

        // Now for real; a dry-run create of the same name is still refused.
        ok(&apiary.kubectl(
            version,
            &["create", "configmap", &name, "--from-literal=k=v"],
        ));
        let stored = get_json(&apiary, version, &["configmap", &name]);
        let again = apiary.kubectl(
            version,
            &[
                "create",
                "configmap",
                &name,
                "--from-literal=k=v",
                "--dry-run=server",
            ],
        );
        assert!(!again.status.success());
        assert!(
            stderr(&again).contains("already exists"),
            "{}",
            stderr(&again)
        );

        // replace: answered with the new data at the stored resourceVersion.
        let mut changed = stored.clone();
        changed["data"]["k"] = json!("replaced");
        let path = file(&apiary, &format!("{name}.json"), &changed);
        let out = ok(&apiary.kubectl(
            version,
            &["replace", "-f", &path, "--dry-run=server", "-o", "json"],
        ));
        let answered: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(answered["data"]["k"], "replaced");
        assert_eq!(
            answered["metadata"]["resourceVersion"],
            stored["metadata"]["resourceVersion"]
        );

        // patch: answered patched.
        let out = ok(&apiary.kubectl(
            version,
            &[
                "patch",
                "configmap",
                &name,
                "--type=merge",
                "-p",
                r#"{"data":{"k":"patched"}}"#,
                "--dry-run=server",
                "-o",
                "json",
            ],
        ));
        let answered: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(answered["data"]["k"], "patched");

        // delete: reported as deleted, still there.
        let out = ok(&apiary.kubectl(version, &["delete", "configmap", &name, "--dry-run=server"]));
        assert!(out.contains("deleted (server dry run)"), "{out}");

        // None of it changed the stored object.
        assert_eq!(get_json(&apiary, version, &["configmap", &name]), stored);

        // A stale resourceVersion still conflicts, a missing object is still not found.
        ok(&apiary.kubectl(version, &["replace", "-f", &path]));
        let stale = apiary.kubectl(version, &["replace", "-f", &path, "--dry-run=server"]);
        assert!(!stale.status.success());
        assert!(
            stderr(&stale).contains("the object has been modified"),
            "{}",
            stderr(&stale)
        );
        let gone = apiary.kubectl(
            version,
            &["delete", "configmap", "no-such-map", "--dry-run=server"],
        );
        assert!(!gone.status.success());
        assert!(stderr(&gone).contains("NotFound"), "{}", stderr(&gone));
    }
}

#[test]
fn kubectl_scale_writes_the_deployments_replicas() {
    let apiary = Apiary::start();
    for version in VERSIONS {
        let name = format!("web-{}", version.replace('.', "-"));
        let deployment = format!("deployment/{name}");
        let replicas = |apiary: &Apiary| -> i64 {
            let d = get_json(apiary, version, &[&deployment]);
            d["spec"]["replicas"].as_i64().unwrap()
        };
        ok(&apiary.kubectl(
            version,
            &[
                "create",
                "deployment",
                &name,
                "--image=nginx",
                "--replicas=1",
            ],
        ));

        // kubectl scale: a merge patch of the Scale.
        let out = ok(&apiary.kubectl(version, &["scale", &deployment, "--replicas=3"]));
        assert!(out.contains("scaled"), "{out}");
        assert_eq!(replicas(&apiary), 3);

        // The Scale as upstream builds it.
        let uri = format!("/apis/apps/v1/namespaces/default/deployments/{name}/scale");
        let scale: Value =
            serde_json::from_str(&ok(&apiary.kubectl(version, &["get", "--raw", &uri]))).unwrap();
        let parent = get_json(&apiary, version, &[&deployment]);
        assert_eq!(scale["kind"], "Scale");
        assert_eq!(scale["apiVersion"], "autoscaling/v1");
        assert_eq!(scale["metadata"]["name"], name.as_str());
        assert_eq!(scale["metadata"]["uid"], parent["metadata"]["uid"]);
        assert_eq!(
            scale["metadata"]["resourceVersion"],
            parent["metadata"]["resourceVersion"]
        );
        assert_eq!(scale["spec"]["replicas"], 3);
        assert_eq!(scale["status"]["replicas"], 0);
        assert_eq!(scale["status"]["selector"], format!("app={name}"));

        // kubectl get --subresource=scale prints the server's Table of the Scale.
        let out = ok(&apiary.kubectl(version, &["get", &deployment, "--subresource=scale"]));
        let lines: Vec<Vec<&str>> = out
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(lines[0], ["NAME", "DESIRED", "AVAILABLE", "AGE"], "{out}");
        assert_eq!(lines[1][..3], [name.as_str(), "3", "0"], "{out}");

        // With --current-replicas, kubectl reads the Scale and PUTs it back.
        ok(&apiary.kubectl(
            version,
            &["scale", &deployment, "--current-replicas=3", "--replicas=5"],
        ));
        assert_eq!(replicas(&apiary), 5);
        let wrong = apiary.kubectl(
            version,
            &["scale", &deployment, "--current-replicas=1", "--replicas=6"],
        );
        assert!(!wrong.status.success());
        assert_eq!(replicas(&apiary), 5);

        // A server dry run leaves the replicas.
        let out = ok(&apiary.kubectl(
            version,
            &["scale", &deployment, "--replicas=9", "--dry-run=server"],
        ));
        assert!(out.contains("(server dry run)"), "{out}");
        assert_eq!(replicas(&apiary), 5);

        // PATCH of the scale subresource, merge and JSON patch.
        ok(&apiary.kubectl(
            version,
            &[
                "patch",
                &deployment,
                "--subresource=scale",
                "--type=merge",
                "-p",
                r#"{"spec":{"replicas":2}}"#,
            ],
        ));
        assert_eq!(replicas(&apiary), 2);
        ok(&apiary.kubectl(
            version,
            &[
                "patch",
                &deployment,
                "--subresource=scale",
                "--type=json",
                "-p",
                r#"[{"op":"replace","path":"/spec/replicas","value":4}]"#,
            ],
        ));
        assert_eq!(replicas(&apiary), 4);

        // A PUT of the Scale with a stale resourceVersion conflicts; a current one goes.
        let mut stale = scale.clone();
        stale["spec"]["replicas"] = json!(7);
        let path = file(&apiary, &format!("{name}-scale.json"), &stale);
        let out = apiary.kubectl(version, &["replace", "--raw", &uri, "-f", &path]);
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains("the object has been modified"),
            "{}",
            stderr(&out)
        );
        assert_eq!(replicas(&apiary), 4);
        let current: Value =
            serde_json::from_str(&ok(&apiary.kubectl(version, &["get", "--raw", &uri]))).unwrap();
        let mut fresh = current.clone();
        fresh["spec"]["replicas"] = json!(7);
        let path = file(&apiary, &format!("{name}-scale.json"), &fresh);
        let answered: Value = serde_json::from_str(&ok(
            &apiary.kubectl(version, &["replace", "--raw", &uri, "-f", &path])
        ))
        .unwrap();
        assert_eq!(answered["spec"]["replicas"], 7);
        assert_eq!(replicas(&apiary), 7);
    }
}

#[test]
fn kubectl_scale_works_on_every_scalable_kind() {
    let apiary = Apiary::start();
    let template = json!({"metadata": {"labels": {"app": "s"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let objects = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "s"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "s"}}, "template": template}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
         "spec": {"replicas": 1, "serviceName": "s", "selector": {"matchLabels": {"app": "s"}}, "template": template}},
        {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "s"},
         "spec": {"replicas": 1, "selector": {"app": "s"}, "template": template}}
    ]});
    let path = file(&apiary, "scalables.json", &objects);
    ok(&apiary.kubectl("1.33", &["create", "-f", &path]));
    for (version, replicas) in [("1.33", 2), ("1.27", 3)] {
        for kind in ["replicaset/s", "statefulset/s", "replicationcontroller/s"] {
            let flag = format!("--replicas={replicas}");
            ok(&apiary.kubectl(version, &["scale", kind, &flag]));
            let got =
                ok(&apiary.kubectl(version, &["get", kind, "-o", "jsonpath={.spec.replicas}"]));
            assert_eq!(got, replicas.to_string(), "{version} {kind}");
        }
    }
}

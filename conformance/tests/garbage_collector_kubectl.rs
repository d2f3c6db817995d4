//! The built-in garbage collector on the real binary, through kubectl 1.33 and 1.27: a
//! Deployment that owns a ReplicaSet that owns Pods (the ownership written by the test,
//! as the controllers would) is deleted with `--cascade=background`, `orphan` and
//! `foreground`, with upstream's results.

use apiary_conformance::harness::{eventually, ok, Apiary};
use std::time::Duration;

fn write(apiary: &Apiary, name: &str, text: &str) -> String {
    let path = apiary.data_dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

fn uid(apiary: &Apiary, version: &str, what: &str) -> String {
    ok(&apiary.kubectl(version, &["get", what, "-o", "jsonpath={.metadata.uid}"]))
}

const TEMPLATE: &str = "  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - {name: app, image: nginx}\n";

/// Deployment `name` ← ReplicaSet `name-rs` ← Pods `name-rs-0`, `name-rs-1`.
fn family(apiary: &Apiary, version: &str, name: &str) {
    let deployment = format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n{TEMPLATE}");
    ok(&apiary.kubectl(version, &["apply", "-f", &write(apiary, &format!("{name}.yaml"), &deployment)]));
    let owner = |kind: &str, api: &str, owner: &str, uid: &str| {
        format!("  ownerReferences:\n  - {{apiVersion: {api}, kind: {kind}, name: {owner}, uid: {uid}, controller: true, blockOwnerDeletion: true}}\n")
    };
    let d_uid = uid(apiary, version, &format!("deployment/{name}"));
    let rs = format!(
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: {name}-rs\n{}spec:\n{TEMPLATE}",
        owner("Deployment", "apps/v1", name, &d_uid)
    );
    ok(&apiary.kubectl(version, &["apply", "-f", &write(apiary, &format!("{name}-rs.yaml"), &rs)]));
    let rs_uid = uid(apiary, version, &format!("replicaset/{name}-rs"));
    for i in 0..2 {
        let pod = format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}-rs-{i}\n  labels: {{app: web}}\n{}spec:\n  containers:\n  - {{name: app, image: nginx}}\n",
            owner("ReplicaSet", "apps/v1", &format!("{name}-rs"), &rs_uid)
        );
        ok(&apiary.kubectl(version, &["apply", "-f", &write(apiary, &format!("{name}-pod-{i}.yaml"), &pod)]));
    }
}

fn exists(apiary: &Apiary, version: &str, what: &str) -> bool {
    apiary.kubectl(version, &["get", what]).status.success()
}

fn eventually_gone(apiary: &Apiary, version: &str, what: &str) {
    eventually(&format!("{version}: {what} to be collected"), || !exists(apiary, version, what));
}

#[test]
fn kubectl_delete_cascades_as_upstream() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let tag = version.replace('.', "-");

        let name = format!("bg-{tag}");
        family(&apiary, version, &name);
        ok(&apiary.kubectl(version, &["delete", "deployment", &name, "--cascade=background"]));
        eventually_gone(&apiary, version, &format!("replicaset/{name}-rs"));
        eventually_gone(&apiary, version, &format!("pod/{name}-rs-0"));
        eventually_gone(&apiary, version, &format!("pod/{name}-rs-1"));

        let name = format!("orphan-{tag}");
        family(&apiary, version, &name);
        ok(&apiary.kubectl(version, &["delete", "deployment", &name, "--cascade=orphan"]));
        eventually_gone(&apiary, version, &format!("deployment/{name}"));
        let refs = ok(&apiary.kubectl(version, &["get", "replicaset", &format!("{name}-rs"), "-o", "jsonpath={.metadata.ownerReferences}"]));
        assert_eq!(refs, "", "{version}: the ReplicaSet is orphaned");
        assert!(exists(&apiary, version, &format!("pod/{name}-rs-0")), "{version}: its pods stay");

        // Foreground: kubectl waits; the Deployment goes last, after what it owns.
        let name = format!("fg-{tag}");
        family(&apiary, version, &name);
        let hold = r#"{"metadata":{"finalizers":["example.com/hold"]}}"#;
        ok(&apiary.kubectl(version, &["patch", "pod", &format!("{name}-rs-0"), "--type=merge", "-p", hold]));
        ok(&apiary.kubectl(version, &["delete", "deployment", &name, "--cascade=foreground", "--wait=false"]));
        let finalizers = ok(&apiary.kubectl(version, &["get", "deployment", &name, "-o", "jsonpath={.metadata.finalizers}"]));
        assert_eq!(finalizers, r#"["foregroundDeletion"]"#, "{version}");
        std::thread::sleep(Duration::from_millis(300));
        assert!(exists(&apiary, version, &format!("deployment/{name}")), "{version}: the owner waits for its dependents");
        assert!(exists(&apiary, version, &format!("replicaset/{name}-rs")), "{version}: the ReplicaSet waits for its held pod");
        assert!(!exists(&apiary, version, &format!("pod/{name}-rs-1")), "{version}: the free pod is gone");
        ok(&apiary.kubectl(version, &["patch", "pod", &format!("{name}-rs-0"), "--type=merge", "-p", r#"{"metadata":{"finalizers":null}}"#]));
        eventually_gone(&apiary, version, &format!("deployment/{name}"));
        assert!(!exists(&apiary, version, &format!("replicaset/{name}-rs")));
    }
}

/// A dependent whose owner lives in another namespace is collected (the owner is
/// looked up in the dependent's namespace), and `kubectl get events -A
/// --field-selector=reason=OwnerRefInvalidNamespace` shows upstream's warning.
#[test]
fn an_owner_in_another_namespace_is_reported_to_kubectl() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let tag = version.replace('.', "-");
        let (home, away) = (format!("home-{tag}"), format!("away-{tag}"));
        ok(&apiary.kubectl(version, &["create", "namespace", &home]));
        ok(&apiary.kubectl(version, &["create", "namespace", &away]));
        ok(&apiary.kubectl(version, &["create", "configmap", "owner", "-n", &away]));
        let owner_uid = ok(&apiary.kubectl(version, &["get", "configmap", "owner", "-n", &away, "-o", "jsonpath={.metadata.uid}"]));
        let dependent = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dependent\n  namespace: {home}\n  ownerReferences:\n  - {{apiVersion: v1, kind: ConfigMap, name: owner, uid: {owner_uid}}}\n"
        );
        ok(&apiary.kubectl(version, &["apply", "-f", &write(&apiary, &format!("dependent-{tag}.yaml"), &dependent)]));
        let in_home = |name: &str| apiary.kubectl(version, &["get", "configmap", name, "-n", &home]).status.success();
        eventually(&format!("{version}: the dependent to be collected"), || !in_home("dependent"));
        assert!(apiary.kubectl(version, &["get", "configmap", "owner", "-n", &away]).status.success(), "{version}: the owner stays");

        let columns = "custom-columns=NS:.metadata.namespace,TYPE:.type,OBJECT:.involvedObject.name,MESSAGE:.message";
        let selector = "--field-selector=reason=OwnerRefInvalidNamespace";
        let events = ok(&apiary.kubectl(version, &["get", "events", "-A", selector, "-o", columns, "--no-headers"]));
        let message = format!("ownerRef [v1/ConfigMap, namespace: {home}, name: owner, uid: {owner_uid}] does not exist in namespace \"{home}\"");
        let reported = events.lines().filter(|l| l.starts_with(&home) && l.contains("Warning") && l.contains("dependent") && l.contains(&message));
        assert_eq!(reported.count(), 1, "{version}: {events}");
    }
}

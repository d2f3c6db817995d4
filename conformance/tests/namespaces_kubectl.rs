//! Namespaces on the real binary, through kubectl 1.33 and 1.27: a new namespace has
//! its `default` ServiceAccount and `kube-root-ca.crt`; `kubectl delete ns` waits
//! while the namespace is Terminating (upstream's conditions, creates refused with
//! upstream's message) and returns once it and its content are gone, a finalizer
//! released by the test included; with `--disable-controllers` the namespace stays
//! Terminating until a client finishes the controller's work.

use apiary_conformance::harness::{eventually, ok, Apiary};
use std::time::Duration;

#[test]
fn kubectl_delete_ns_waits_for_the_namespace_controller() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let ns = format!("team-{}", version.replace('.', "-"));
        ok(&apiary.kubectl(version, &["create", "namespace", &ns]));
        eventually("the default ServiceAccount", || apiary.kubectl(version, &["get", "serviceaccount", "default", "-n", &ns]).status.success());
        let ca = ok(&apiary.kubectl(version, &["get", "configmap", "kube-root-ca.crt", "-n", &ns, "-o", "jsonpath={.data.ca\\.crt}"]));
        assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"), "{version}: {ca}");

        ok(&apiary.kubectl(version, &["create", "configmap", "loose", "-n", &ns, "--from-literal=k=v"]));
        let held = apiary.data_dir.join(format!("held-{ns}.yaml"));
        std::fs::write(&held, format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: {ns}\n  finalizers: [example.com/hold]\n")).unwrap();
        ok(&apiary.kubectl(version, &["apply", "-f", held.to_str().unwrap()]));

        // kubectl delete waits (as it does by default) until the namespace is gone.
        let mut deleting = apiary_conformance::harness::kubectl_command(version, &apiary.kubeconfig)
            .args(["delete", "namespace", &ns, "--timeout=60s"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let remaining = "jsonpath={.status.conditions[?(@.type==\"NamespaceFinalizersRemaining\")].message}";
        eventually("the finalizers-remaining condition", || {
            let out = apiary.kubectl(version, &["get", "namespace", &ns, "-o", remaining]);
            String::from_utf8_lossy(&out.stdout) == "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
        });
        assert_eq!(ok(&apiary.kubectl(version, &["get", "namespace", &ns, "-o", "jsonpath={.status.phase}"])), "Terminating");
        assert!(!apiary.kubectl(version, &["get", "configmap", "loose", "-n", &ns]).status.success(), "{version}: loose content is deleted");
        let late = apiary.kubectl(version, &["create", "configmap", "late", "-n", &ns]);
        assert!(!late.status.success());
        let stderr = String::from_utf8_lossy(&late.stderr);
        assert!(
            stderr.contains(&format!("configmaps \"late\" is forbidden: unable to create new content in namespace {ns} because it is being terminated")),
            "{version}: {stderr}"
        );
        assert!(deleting.try_wait().unwrap().is_none(), "{version}: kubectl delete still waits");

        ok(&apiary.kubectl(version, &["patch", "configmap", "held", "-n", &ns, "--type=merge", "-p", r#"{"metadata":{"finalizers":null}}"#]));
        let out = deleting.wait_with_output().unwrap();
        assert!(out.status.success(), "{version}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("namespace \"{ns}\" deleted")));
        assert!(!apiary.kubectl(version, &["get", "namespace", &ns]).status.success(), "{version}: the namespace is gone");
    }
}

#[test]
fn with_its_controllers_disabled_a_namespace_waits_for_another_controller() {
    let apiary = Apiary::start_with(&["--disable-controllers=namespace,serviceaccount,root-ca-cert-publisher"]);
    ok(&apiary.kubectl("1.33", &["create", "namespace", "solo"]));
    ok(&apiary.kubectl("1.33", &["create", "configmap", "a", "-n", "solo"]));
    ok(&apiary.kubectl("1.33", &["delete", "namespace", "solo", "--wait=false"]));
    std::thread::sleep(Duration::from_millis(500));
    assert!(!apiary.kubectl("1.33", &["get", "serviceaccount", "default", "-n", "solo"]).status.success());
    assert_eq!(ok(&apiary.kubectl("1.33", &["get", "namespace", "solo", "-o", "jsonpath={.status.phase}"])), "Terminating");
    assert_eq!(ok(&apiary.kubectl("1.33", &["get", "configmap", "a", "-n", "solo", "-o", "name"])).trim(), "configmap/a");

    // What kube-controller-manager's namespace controller would do: empty, finalize.
    ok(&apiary.kubectl("1.33", &["delete", "configmap", "a", "-n", "solo"]));
    let ns = ok(&apiary.kubectl("1.33", &["get", "namespace", "solo", "-o", "json"]));
    let finalized = ns.replace("\"kubernetes\"", "");
    let file = apiary.data_dir.join("finalized.json");
    std::fs::write(&file, finalized).unwrap();
    ok(&apiary.kubectl("1.33", &["replace", "--raw", "/api/v1/namespaces/solo/finalize", "-f", file.to_str().unwrap()]));
    assert!(!apiary.kubectl("1.33", &["get", "namespace", "solo"]).status.success(), "finalized, the namespace is gone");
}

/// `--disable-admission-plugins=NamespaceLifecycle`, as on kube-apiserver: kubectl
/// creates in a namespace that does not exist; an unknown plugin name stops the start.
#[test]
fn namespace_lifecycle_admission_can_be_disabled() {
    let apiary = Apiary::start();
    let refused = apiary.kubectl("1.33", &["create", "configmap", "c", "-n", "nowhere"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("namespaces \"nowhere\" not found"));
    drop(apiary);

    let apiary = Apiary::start_with(&["--disable-admission-plugins=NamespaceLifecycle"]);
    for version in ["1.33", "1.27"] {
        let name = format!("c{}", version.replace('.', ""));
        ok(&apiary.kubectl(version, &["create", "configmap", &name, "-n", "nowhere"]));
        assert_eq!(ok(&apiary.kubectl(version, &["get", "configmap", &name, "-n", "nowhere", "-o", "name"])).trim(), format!("configmap/{name}"));
    }
    drop(apiary);

    let dir = std::env::temp_dir().join(format!("apiary-admission-flags-{}", std::process::id()));
    let out = apiary_conformance::harness::apiary_command(&dir, &["--enable-admission-plugins=Magic"])
        .output()
        .expect("apiary runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("enable-admission-plugins plugin \"Magic\" is unknown"), "{}", String::from_utf8_lossy(&out.stderr));
}

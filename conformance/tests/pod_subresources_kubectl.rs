//! kubectl's commands that use the pod subresources beyond the object, against the real
//! binary with no kubelet: `logs` of a pod on no node (empty, success) and of a
//! container it lacks, `exec` into an unscheduled pod, `debug` adding an ephemeral
//! container (kubectl 1.33 and 1.27), and `patch --subresource=resize` (1.33; 1.27
//! lacks `resize`).

use apiary_conformance::harness::{ok, Apiary};

fn create(apiary: &Apiary, manifest: &str) {
    ok(&apiary.kubectl_with_input("1.33", &["create", "-f", "-"], manifest));
}

fn pod(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}"}},
            "spec":{{"containers":[{{"name":"c","image":"busybox",
            "resources":{{"requests":{{"cpu":"100m","memory":"64Mi"}},"limits":{{"cpu":"200m","memory":"128Mi"}}}}}}]}}}}"#
    )
}

fn failed(out: &std::process::Output) -> String {
    assert!(!out.status.success(), "expected a failure: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn logs_and_exec_of_a_pod_on_no_node() {
    let apiary = Apiary::start();
    create(&apiary, &pod("p"));
    for version in ["1.33", "1.27"] {
        assert_eq!(ok(&apiary.kubectl(version, &["logs", "p"])), "", "kubectl {version}");
        let stderr = failed(&apiary.kubectl(version, &["logs", "p", "-c", "wrong"]));
        assert!(stderr.contains("container wrong is not valid for pod p"), "kubectl {version}: {stderr}");
        let stderr = failed(&apiary.kubectl(version, &["exec", "p", "--", "ls"]));
        assert!(stderr.contains("pod p does not have a host assigned"), "kubectl {version}: {stderr}");
    }
}

#[test]
fn debug_adds_an_ephemeral_container() {
    let apiary = Apiary::start();
    for (version, name) in [("1.33", "p33"), ("1.27", "p27")] {
        create(&apiary, &pod(name));
        ok(&apiary.kubectl(version, &["debug", name, "--image=busybox", "--container=debugger"]));
        let added = ok(&apiary.kubectl(
            version,
            &["get", "pod", name, "-o", "jsonpath={.spec.ephemeralContainers[0].name}"],
        ));
        assert_eq!(added, "debugger", "kubectl {version}");
    }
}

#[test]
fn resize_patches_a_containers_resources() {
    let apiary = Apiary::start();
    create(&apiary, &pod("p"));
    let patch = r#"{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"150m"}}}]}}"#;
    ok(&apiary.kubectl("1.33", &["patch", "pod", "p", "--subresource=resize", "--patch", patch]));
    let cpu = ok(&apiary.kubectl(
        "1.33",
        &["get", "pod", "p", "-o", "jsonpath={.spec.containers[0].resources.requests.cpu}"],
    ));
    assert_eq!(cpu, "150m");
    // QoS may not change: requests equal to the limits would make the pod Guaranteed.
    let patch = r#"{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"200m","memory":"128Mi"}}}]}}"#;
    let stderr = failed(&apiary.kubectl("1.33", &["patch", "pod", "p", "--subresource=resize", "--patch", patch]));
    assert!(stderr.contains("Pod QOS Class may not change as a result of resizing"), "{stderr}");
}

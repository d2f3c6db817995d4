//! A new pod's status as kube-apiserver's pod strategy sets it, seen through kubectl:
//! Pending, its QoS class, and the SchedulingGated condition of a gated pod.

use apiary_conformance::harness::{ok, Apiary};

fn create(apiary: &Apiary, manifest: &str) {
    ok(&apiary.kubectl_with_input("1.33", &["create", "-f", "-"], manifest));
}

fn pod(name: &str, resources: &str, extra: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}"}},
            "spec":{{"containers":[{{"name":"c","image":"busybox","resources":{resources}}}]{extra}}},
            "status":{{"phase":"Running"}}}}"#
    )
}

#[test]
fn new_pods_are_pending_with_their_qos_class() {
    let apiary = Apiary::start();
    create(&apiary, &pod("best", "{}", ""));
    create(
        &apiary,
        &pod("limited", r#"{"limits":{"cpu":"500m","memory":"128Mi"}}"#, ""),
    );
    create(&apiary, &pod("burst", r#"{"requests":{"cpu":"100m"}}"#, ""));
    create(
        &apiary,
        &pod("gated", "{}", r#","schedulingGates":[{"name":"example.com/wait"}]"#),
    );
    let status = |name: &str, path: &str| {
        ok(&apiary.kubectl(
            "1.33",
            &["get", "pod", name, "-o", &format!("jsonpath={path}")],
        ))
    };
    for (name, qos) in [
        ("best", "BestEffort"),
        ("limited", "Guaranteed"),
        ("burst", "Burstable"),
        ("gated", "BestEffort"),
    ] {
        assert_eq!(status(name, "{.status.phase}"), "Pending", "{name}");
        assert_eq!(status(name, "{.status.qosClass}"), qos, "{name}");
    }
    assert_eq!(
        status("gated", "{.status.conditions[0].reason}"),
        "SchedulingGated"
    );
    // kubectl's STATUS column, from the server's table.
    let table = ok(&apiary.kubectl("1.33", &["get", "pods", "--no-headers"]));
    for line in table.lines() {
        let expected = if line.starts_with("gated ") { "SchedulingGated" } else { "Pending" };
        assert_eq!(line.split_whitespace().nth(2), Some(expected), "{table}");
    }
}

//! `kubectl get -w` against the real binary: it sees ADDED, then MODIFIED and DELETED
//! as other clients change the object; and watching pods (plain and `-o wide`) and
//! deployments (`-o wide`) as Tables, it prints the header once and a row in
//! upstream's columns for every change.

use apiary_conformance::harness::{fixture, ok, Apiary};
use apiary_conformance::kubectl_watch::Watcher;

fn watch_sees_changes(version: &str) {
    let apiary = Apiary::start();
    let k = |args: &[&str]| apiary.kubectl(version, args);
    ok(&k(&["create", "configmap", "a", "--from-literal=k=v1"]));

    let mut watcher = Watcher::start(&apiary, version, &["get", "configmap", "-w", "--output-watch-events"]);
    let mut next_event = |want: &str| {
        watcher.wait_for(&format!("{want} a"), |row| row.first().is_some_and(|w| w == want) && row.get(1).is_some_and(|n| n == "a"));
    };
    next_event("ADDED");

    let changed = apiary.data_dir.join("cm-a.yaml");
    std::fs::write(
        &changed,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v2\n  j: w\n",
    )
    .unwrap();
    ok(&k(&["replace", "-f", &changed.display().to_string()]));
    next_event("MODIFIED");
    ok(&k(&["delete", "configmap", "a"]));
    next_event("DELETED");

    // Each change once, in order (the header and kube-root-ca.crt aside).
    let printed = watcher.stop();
    let of_a: Vec<&str> = printed.iter().filter(|row| row.get(1).is_some_and(|n| n == "a")).map(|row| row[0].as_str()).collect();
    assert_eq!(of_a, ["ADDED", "MODIFIED", "DELETED"], "{printed:?}");
}

#[test]
fn kubectl_1_33_get_watch() {
    watch_sees_changes("1.33");
}

#[test]
fn kubectl_1_27_get_watch() {
    watch_sees_changes("1.27");
}

fn is_age(cell: &str) -> bool {
    !cell.is_empty() && cell.chars().all(|c| c.is_ascii_digit() || "smhdy".contains(c))
}

/// The one header of a watch's output, however many events it printed.
fn header(printed: &[Vec<String>]) -> Vec<String> {
    let headers: Vec<&Vec<String>> = printed.iter().filter(|l| l.first().map(String::as_str) == Some("NAME")).collect();
    assert_eq!(headers.len(), 1, "one header: {printed:?}");
    headers[0].clone()
}


/// `kubectl get pods -w`, plain and `-o wide`: the header once, then a row in
/// upstream's columns for the pod listed, and for each pod added, changed and deleted.
fn pods_watch(version: &str) {
    let apiary = Apiary::start();
    let k = |args: &[&str]| apiary.kubectl(version, args);
    ok(&apiary.kubectl(version, &["apply", "-f", &fixture("pod-worker.yaml")]));

    let mut plain = Watcher::start(&apiary, version, &["get", "pods", "-w"]);
    let mut wide = Watcher::start(&apiary, version, &["get", "pods", "-w", "-o", "wide"]);
    let pending = |row: &[String]| {
        assert_eq!(row[1..4], ["0/1", "Pending", "0"], "{version}: {row:?}");
        assert!(is_age(&row[4]), "{version}: an age: {row:?}");
    };
    for watcher in [&mut plain, &mut wide] {
        pending(&watcher.row("worker", 1));
    }
    assert_eq!(wide.row("worker", 1)[5..], ["<none>", "node-a", "<none>", "0/1"], "{version}");
    assert_eq!(plain.row("worker", 1).len(), 5, "{version}");

    ok(&k(&["run", "second", "--image=busybox:1.36", "--restart=Never"]));
    for watcher in [&mut plain, &mut wide] {
        pending(&watcher.row("second", 1));
    }
    assert_eq!(wide.row("second", 1)[5..], ["<none>", "<none>", "<none>", "<none>"], "{version}");

    ok(&k(&["label", "pod", "worker", "stage=two"]));
    for watcher in [&mut plain, &mut wide] {
        pending(&watcher.row("worker", 2));
    }

    ok(&k(&["delete", "pod", "second", "--wait=false"]));
    for watcher in [&mut plain, &mut wide] {
        let row = watcher.row("second", 2);
        assert!(["Pending", "Terminating"].contains(&row[2].as_str()), "{version}: {row:?}");
    }

    let columns = ["NAME", "READY", "STATUS", "RESTARTS", "AGE"];
    assert_eq!(header(&plain.stop()), columns, "{version}");
    let wide_columns = [&columns[..], &["IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"]].concat();
    assert_eq!(header(&wide.stop()), wide_columns, "{version}");
}


/// `kubectl get deployments -w -o wide`: the header once, then a row in upstream's
/// columns for the deployment listed, scaled, and one added and deleted.
fn deployments_watch(version: &str) {
    let apiary = Apiary::start();
    let k = |args: &[&str]| apiary.kubectl(version, args);
    ok(&apiary.kubectl(version, &["apply", "-f", &fixture("deployment-web.yaml")]));

    let mut watcher = Watcher::start(&apiary, version, &["get", "deployments", "-w", "-o", "wide"]);
    let web = ["nginx,sidecar", "nginx:1.27,busybox:1.36", "app=web,tier"];
    let row = watcher.row("web", 1);
    assert_eq!(row[1..4], ["0/2", "0", "0"], "{version}: {row:?}");
    assert!(is_age(&row[4]), "{version}: an age: {row:?}");
    assert_eq!(row[5..], web, "{version}");

    ok(&k(&["scale", "deployment", "web", "--replicas=3"]));
    let row = watcher.row("web", 2);
    assert_eq!(row[1..4], ["0/3", "0", "0"], "{version}: {row:?}");
    assert_eq!(row[5..], web, "{version}");

    ok(&k(&["create", "deployment", "api", "--image=nginx:1.27"]));
    let row = watcher.row("api", 1);
    assert_eq!(row[1..4], ["0/1", "0", "0"], "{version}: {row:?}");
    assert!(is_age(&row[4]), "{version}: an age: {row:?}");
    assert_eq!(row[5..], ["nginx", "nginx:1.27", "app=api"], "{version}");

    ok(&k(&["delete", "deployment", "api", "--wait=false"]));
    assert_eq!(watcher.row("api", 2)[0], "api", "{version}");

    let columns = ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"];
    assert_eq!(header(&watcher.stop()), columns, "{version}");
}

#[test]
fn kubectl_1_33_get_pods_watch() {
    pods_watch("1.33");
}

#[test]
fn kubectl_1_27_get_pods_watch() {
    pods_watch("1.27");
}

#[test]
fn kubectl_1_33_get_deployments_watch_wide() {
    deployments_watch("1.33");
}

#[test]
fn kubectl_1_27_get_deployments_watch_wide() {
    deployments_watch("1.27");
}

//! `kubectl get -w` against the real binary: it sees ADDED, then MODIFIED and DELETED
//! as other clients change the object.

use apiary_conformance::harness::{kubectl_command, ok, Apiary};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

fn watch_sees_changes(version: &str) {
    let apiary = Apiary::start();
    let k = |args: &[&str]| apiary.kubectl(version, args);
    ok(&k(&["create", "configmap", "a", "--from-literal=k=v1"]));

    let mut watcher = kubectl_command(version, &apiary.kubeconfig)
        .args(["get", "configmap", "-w", "--output-watch-events"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl get -w starts");
    let (tx, rx) = mpsc::channel();
    let stdout = watcher.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let next_event = |want: &str| loop {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no {want} event within 30 s"));
        let fields: Vec<&str> = line.split_whitespace().collect();
        // The header, and the namespace's kube-root-ca.crt.
        if fields.first() == Some(&"EVENT") || fields.get(1) == Some(&"kube-root-ca.crt") {
            continue;
        }
        assert_eq!(fields.first(), Some(&want), "{line}");
        assert_eq!(fields.get(1), Some(&"a"), "{line}");
        break;
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

    let _ = watcher.kill();
    let _ = watcher.wait();
}

#[test]
fn kubectl_1_33_get_watch() {
    watch_sees_changes("1.33");
}

#[test]
fn kubectl_1_27_get_watch() {
    watch_sees_changes("1.27");
}

//! Built-in kinds' printer columns on the real binary, through kubectl 1.33 and 1.27:
//! `kubectl get deployments -o wide` and `kubectl get pods -o wide` show upstream
//! v1.33's headers (the `-o wide` columns after AGE) and its cells.

use apiary_conformance::harness::{ok, Apiary};

const OBJECTS: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
    matchExpressions: [{key: tier, operator: Exists}]
  template:
    metadata:
      labels: {app: web, tier: front}
    spec:
      containers:
      - {name: nginx, image: 'nginx:1.27'}
      - {name: sidecar, image: 'busybox:1.36'}
---
apiVersion: v1
kind: Pod
metadata: {name: worker}
spec:
  nodeName: node-a
  readinessGates: [{conditionType: example.com/ready}]
  containers:
  - {name: main, image: 'busybox:1.36'}
";

/// The lines of a `kubectl get` table, each split into its words.
fn rows(out: &str) -> Vec<Vec<&str>> {
    out.lines().map(|line| line.split_whitespace().collect()).collect()
}

fn is_age(cell: &str) -> bool {
    !cell.is_empty() && cell.chars().all(|c| c.is_ascii_digit() || "smhdy".contains(c))
}

#[test]
fn kubectl_get_wide_shows_upstreams_columns() {
    let apiary = Apiary::start();
    let file = apiary.data_dir.join("objects.yaml");
    std::fs::write(&file, OBJECTS).unwrap();
    ok(&apiary.kubectl("1.33", &["apply", "-f", file.to_str().unwrap()]));

    for version in ["1.33", "1.27"] {
        let deployments = ok(&apiary.kubectl(version, &["get", "deployments", "-o", "wide"]));
        let deployments = rows(&deployments);
        assert_eq!(deployments[0], ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"], "{version}");
        assert_eq!(deployments[1][..4], ["web", "0/2", "0", "0"], "{version}");
        assert!(is_age(deployments[1][4]), "{version}: an age: {:?}", deployments[1]);
        assert_eq!(deployments[1][5..], ["nginx,sidecar", "nginx:1.27,busybox:1.36", "app=web,tier"], "{version}");

        let plain = ok(&apiary.kubectl(version, &["get", "deployments"]));
        assert_eq!(rows(&plain)[0], ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], "{version}");

        let pods = ok(&apiary.kubectl(version, &["get", "pods", "-o", "wide"]));
        let pods = rows(&pods);
        assert_eq!(
            pods[0],
            ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"],
            "{version}"
        );
        assert_eq!(pods[1][..4], ["worker", "0/1", "Pending", "0"], "{version}");
        assert!(is_age(pods[1][4]), "{version}: an age: {:?}", pods[1]);
        assert_eq!(pods[1][5..], ["<none>", "node-a", "<none>", "0/1"], "{version}");
    }
}

//! Events on the real binary through kubectl: core/v1 and events.k8s.io/v1 serve one
//! resource stored once, as in kube-apiserver. An Event created as core/v1 shows in
//! `kubectl get events.v1.events.k8s.io` converted (`regarding`, `note`,
//! `deprecatedSource`, ...); one created as events.k8s.io/v1 shows in `kubectl get
//! events`; a delete through either removes it from both.

use apiary_conformance::harness::{ok, Apiary};
use serde_json::Value;

const CORE_EVENT: &str = "apiVersion: v1
kind: Event
metadata: {name: web-0.started, namespace: default}
involvedObject: {kind: Pod, namespace: default, name: web-0, apiVersion: v1}
reason: Started
message: Started container app
type: Normal
source: {component: kubelet, host: node-a}
firstTimestamp: '2026-11-24T05:00:00Z'
lastTimestamp: '2026-11-24T05:10:00Z'
count: 3
";

const NEW_EVENT: &str = "apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web-1.scheduling, namespace: default}
eventTime: '2026-11-24T06:01:33.123456Z'
reportingController: default-scheduler
reportingInstance: scheduler-1
action: Scheduling
reason: FailedScheduling
regarding: {kind: Pod, namespace: default, name: web-1, apiVersion: v1}
note: 0/3 nodes are available
type: Warning
";

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn events_written_through_either_api_are_read_through_the_other() {
    let apiary = Apiary::start();
    let core_file = apiary.data_dir.join("core-event.yaml");
    std::fs::write(&core_file, CORE_EVENT).unwrap();
    let new_file = apiary.data_dir.join("new-event.yaml");
    std::fs::write(&new_file, NEW_EVENT).unwrap();
    ok(&apiary.kubectl("1.33", &["create", "-f", core_file.to_str().unwrap()]));
    ok(&apiary.kubectl("1.33", &["create", "-f", new_file.to_str().unwrap()]));

    for version in ["1.33", "1.27"] {
        // The core Event through events.k8s.io/v1.
        let yaml = ok(&apiary.kubectl(version, &["get", "events.v1.events.k8s.io", "web-0.started", "-o", "yaml"]));
        for line in [
            "apiVersion: events.k8s.io/v1",
            "note: Started container app",
            "regarding:",
            "deprecatedSource:",
            "deprecatedCount: 3",
            "deprecatedFirstTimestamp: \"2026-11-24T05:00:00Z\"",
        ] {
            assert!(yaml.lines().any(|l| l.trim_start() == line), "{version}: no {line:?} in\n{yaml}");
        }
        for core_name in ["involvedObject:", "message:", "source:", "firstTimestamp:", "count:"] {
            assert!(!yaml.lines().any(|l| l.starts_with(core_name)), "{version}: {core_name} in\n{yaml}");
        }
        let got = json(&ok(&apiary.kubectl(version, &["get", "events.v1.events.k8s.io", "web-0.started", "-o", "json"])));
        assert_eq!(got["regarding"]["name"], "web-0", "{version}");
        assert_eq!(got["deprecatedSource"]["host"], "node-a", "{version}");

        // The events.k8s.io Event through core/v1, and both in each list.
        let core = json(&ok(&apiary.kubectl(version, &["get", "events", "web-1.scheduling", "-o", "json"])));
        assert_eq!(core["apiVersion"], "v1", "{version}");
        assert_eq!(core["involvedObject"]["name"], "web-1", "{version}");
        assert_eq!(core["message"], "0/3 nodes are available", "{version}");
        assert_eq!(core["reportingComponent"], "default-scheduler", "{version}");
        assert!(core.get("note").is_none(), "{version}: {core}");
        let table = ok(&apiary.kubectl(version, &["get", "events"]));
        assert!(table.contains("pod/web-0") && table.contains("pod/web-1"), "{version}:\n{table}");
        assert!(table.contains("0/3 nodes are available"), "{version}:\n{table}");
        let names = ok(&apiary.kubectl(version, &["get", "events.v1.events.k8s.io", "-o", "name"]));
        assert_eq!(
            names.lines().collect::<Vec<_>>(),
            ["event.events.k8s.io/web-0.started", "event.events.k8s.io/web-1.scheduling"],
            "{version}"
        );
        // Each API's field selector names.
        let selected = ok(&apiary.kubectl(version, &["get", "events.v1.events.k8s.io", "--field-selector", "regarding.name=web-1", "-o", "name"]));
        assert_eq!(selected.trim(), "event.events.k8s.io/web-1.scheduling", "{version}");
        let selected = ok(&apiary.kubectl(version, &["get", "events", "--field-selector", "involvedObject.name=web-0", "-o", "name"]));
        assert_eq!(selected.trim(), "event/web-0.started", "{version}");
    }

    // Deleted through events.k8s.io: gone from core/v1 too.
    ok(&apiary.kubectl("1.33", &["delete", "events.v1.events.k8s.io", "web-0.started"]));
    let left = ok(&apiary.kubectl("1.33", &["get", "events", "-o", "name"]));
    assert_eq!(left.trim(), "event/web-1.scheduling");
}

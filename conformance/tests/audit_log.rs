//! Audit logging as kube-apiserver does it (`--audit-policy-file`, `--audit-log-path`):
//! kubectl 1.33 runs creates, a get of a Secret and a watch against the real binary,
//! and every line of the log is an `audit.k8s.io/v1` `Event` at the level and stages
//! the policy says, with a Secret's data nowhere in it.

use apiary_conformance::harness::{apiary_command, ok, Apiary};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const VERSION: &str = "1.33";

const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
# Discovery, OpenAPI and health checks: not recorded.
- level: None
  nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/openapi/*", "/healthz*", "/readyz*", "/livez*", "/version"]
- level: None
  resources: [{group: "", resources: [namespaces]}]
- level: Metadata
  resources: [{group: "", resources: [secrets]}]
- level: RequestResponse
  omitStages: [RequestReceived]
  resources: [{group: "", resources: [configmaps]}]
- level: Metadata
"#;

const SECRET_VALUE: &str = "hunter2-audit-literal";

fn events(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

/// The events once `done` holds for them (the log is written off the request path).
fn events_when(log: &Path, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let events = events(log);
        if done(&events) {
            return events;
        }
        assert!(
            Instant::now() < deadline,
            "audit log never showed {what}:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn is(event: &Value, stage: &str, verb: &str, resource: &str) -> bool {
    event["stage"] == stage && event["verb"] == verb && event["objectRef"]["resource"] == resource
}

#[test]
fn audit_log_follows_the_policy() {
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let log = dir.path().join("audit").join("audit.log");
    let mut apiary = Apiary::start_with(&[
        "--storage",
        "memory",
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-log-path",
        log.to_str().unwrap(),
        "--audit-log-maxsize",
        "10",
        "--audit-log-maxbackup",
        "2",
    ]);
    let k = |args: &[&str]| apiary.kubectl(VERSION, args);

    ok(&k(&[
        "create",
        "configmap",
        "c1",
        "--from-literal=k=v-audit",
    ]));
    ok(&k(&[
        "create",
        "secret",
        "generic",
        "s1",
        &format!("--from-literal=password={SECRET_VALUE}"),
    ]));
    let secret = ok(&k(&["get", "secret", "s1", "-o", "yaml"]));
    let encoded = "aHVudGVyMi1hdWRpdC1saXRlcmFs"; // base64 of SECRET_VALUE
    assert!(secret.contains(encoded), "{secret}");
    ok(&k(&["get", "namespaces"]));
    assert!(!k(&["get", "configmap", "missing"]).status.success());
    // A watch the server ends after a second.
    let watch = k(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
    ]);
    ok(&watch);
    // The Audit-Id response header names the request's events.
    let verbose = k(&["get", "configmap", "c1", "-v=8"]);
    ok(&verbose);
    let stderr = String::from_utf8_lossy(&verbose.stderr);
    let audit_id = stderr
        .lines()
        .find_map(|l| {
            let at = l.to_ascii_lowercase().find("audit-id: ")?;
            Some(l[at + "audit-id: ".len()..].trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no Audit-Id response header in:\n{stderr}"));

    let events = events_when(&log, "the watch's end and the last get", |events| {
        events
            .iter()
            .any(|e| is(e, "ResponseComplete", "watch", "configmaps"))
            && events.iter().any(|e| e["auditID"] == audit_id.as_str())
    });
    let text = std::fs::read_to_string(&log).unwrap();
    apiary.stop();

    // Every line is an Event of the policy's shape.
    for e in &events {
        assert_eq!(e["kind"], "Event", "{e}");
        assert_eq!(e["apiVersion"], "audit.k8s.io/v1", "{e}");
        assert!(
            e["auditID"].as_str().is_some_and(|id| !id.is_empty()),
            "{e}"
        );
        assert!(
            e["requestURI"].as_str().is_some_and(|u| u.starts_with('/')),
            "{e}"
        );
        for stamp in ["requestReceivedTimestamp", "stageTimestamp"] {
            let t = e[stamp]
                .as_str()
                .unwrap_or_else(|| panic!("no {stamp}: {e}"));
            // 2006-01-02T15:04:05.000000Z
            assert!(
                t.len() == 27 && t.ends_with('Z') && t.as_bytes()[19] == b'.',
                "{e}"
            );
        }
        assert_eq!(e["user"]["username"], "apiary-admin", "{e}");
        let groups = e["user"]["groups"].as_array().expect("groups");
        assert!(groups.contains(&"system:masters".into()), "{e}");
        assert!(groups.contains(&"system:authenticated".into()), "{e}");
        assert_eq!(e["sourceIPs"], serde_json::json!(["127.0.0.1"]), "{e}");
        assert!(
            e["userAgent"]
                .as_str()
                .is_some_and(|ua| ua.starts_with("kubectl")),
            "{e}"
        );
        // Authorization runs after the RequestReceived event is written, as upstream's
        // audit filter sits outside its authorization filter: only later stages carry
        // the decision.
        if e["stage"] == "RequestReceived" {
            assert!(e.get("annotations").is_none(), "{e}");
        } else {
            assert_eq!(e["annotations"]["authorization.k8s.io/decision"], "allow", "{e}");
        }
        // None-level requests are absent: discovery, OpenAPI, namespaces.
        assert!(
            e.get("objectRef").is_some(),
            "a non-resource request was logged: {e}"
        );
        assert_ne!(e["objectRef"]["resource"], "namespaces", "{e}");
        let level = e["level"].as_str().unwrap();
        match e["objectRef"]["resource"].as_str().unwrap() {
            "secrets" => {
                assert_eq!(level, "Metadata", "{e}");
                assert!(e.get("requestObject").is_none() && e.get("responseObject").is_none());
            }
            "configmaps" => {
                assert_eq!(level, "RequestResponse", "{e}");
                assert_ne!(e["stage"], "RequestReceived", "omitted by the rule: {e}");
            }
            other => panic!("unexpected resource {other}: {e}"),
        }
    }
    // A Secret's data appears nowhere.
    assert!(!text.contains(SECRET_VALUE) && !text.contains(encoded));

    let find = |stage: &str, verb: &str, resource: &str| -> &Value {
        events
            .iter()
            .find(|e| is(e, stage, verb, resource))
            .unwrap_or_else(|| panic!("no {stage} {verb} {resource} event in:\n{text}"))
    };
    // The configmap's create: both bodies, at RequestResponse.
    let create = find("ResponseComplete", "create", "configmaps");
    assert_eq!(
        create["objectRef"],
        serde_json::json!({"resource": "configmaps", "namespace": "default", "name": "c1", "apiVersion": "v1"})
    );
    assert_eq!(create["requestObject"]["data"]["k"], "v-audit", "{create}");
    assert_eq!(
        create["responseObject"]["metadata"]["name"], "c1",
        "{create}"
    );
    assert!(
        create["responseObject"]["metadata"]["uid"].is_string(),
        "{create}"
    );
    assert_eq!(create["responseStatus"]["code"], 201, "{create}");

    // The secret's create and get, at Metadata, at both stages.
    let received = find("RequestReceived", "create", "secrets");
    assert!(received.get("responseStatus").is_none());
    let created = find("ResponseComplete", "create", "secrets");
    assert_eq!(created["objectRef"]["name"], "s1");
    assert_eq!(created["auditID"], received["auditID"]);
    let get = find("ResponseComplete", "get", "secrets");
    assert_eq!(
        get["objectRef"],
        serde_json::json!({"resource": "secrets", "namespace": "default", "name": "s1", "apiVersion": "v1"})
    );
    assert_eq!(
        get["responseStatus"],
        serde_json::json!({"metadata": {}, "code": 200})
    );
    find("RequestReceived", "get", "secrets");

    // A failure carries the Status' fields.
    let missing = events
        .iter()
        .find(|e| e["objectRef"]["name"] == "missing" && e["stage"] == "ResponseComplete")
        .expect("the failed get is logged");
    assert_eq!(missing["responseStatus"]["code"], 404, "{missing}");
    assert_eq!(missing["responseStatus"]["reason"], "NotFound", "{missing}");
    assert_eq!(missing["responseStatus"]["status"], "Failure", "{missing}");

    // The watch: ResponseStarted, then ResponseComplete, with one audit ID.
    let started = find("ResponseStarted", "watch", "configmaps");
    let ended = find("ResponseComplete", "watch", "configmaps");
    assert_eq!(started["auditID"], ended["auditID"]);
    assert_eq!(started["responseStatus"]["code"], 200);
    assert!(ended.get("responseObject").is_none());
    // Only long-running requests have ResponseStarted.
    assert!(events
        .iter()
        .all(|e| e["stage"] != "ResponseStarted" || e["verb"] == "watch"));
    // Each request's events share its ID: the one answered in Audit-Id.
    assert!(events.iter().any(
        |e| e["auditID"] == audit_id.as_str() && is(e, "ResponseComplete", "get", "configmaps")
    ));
}

#[test]
fn a_bad_policy_file_stops_apiary_before_it_serves() {
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n  omitStages: [Whenever]\n",
    )
    .unwrap();
    let mut child = apiary_command(
        &dir.path().join("data"),
        &[
            "--audit-policy-file",
            policy.to_str().unwrap(),
            "--audit-log-path",
            dir.path().join("audit.log").to_str().unwrap(),
            "--audit-log-format",
            "legacy",
        ],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("apiary runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("apiary did not exit on a bad audit policy");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    for problem in ["Loud", "Whenever", "legacy", policy.to_str().unwrap()] {
        assert!(
            stderr.contains(problem),
            "{problem} not named in:\n{stderr}"
        );
    }
    assert!(!dir.path().join("audit.log").exists());
}

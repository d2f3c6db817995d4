//! Admission webhooks and ValidatingAdmissionPolicies on the real binary, through
//! kubectl 1.33 and 1.27, with webhook servers written here (HTTPS, a CA of their own):
//! a mutating webhook labels what it admits, a validating one refuses with its
//! message, `failurePolicy` decides for a webhook that is down or slower than its
//! `timeoutSeconds`, selectors skip what they should, an `IfNeeded` webhook is called
//! again after a later one changed the object, a dry run reaches a webhook as one, and
//! a policy with a param denies, warns and audits as its bindings say.

mod https_service;

use apiary_conformance::harness::{ok, Apiary};
use base64::Engine;
use serde_json::{json, Value};
use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn apply(apiary: &Apiary, name: &str, yaml: &str) {
    let file = apiary.data_dir.join(format!("{name}.yaml"));
    std::fs::write(&file, yaml).unwrap();
    ok(&apiary.kubectl("1.33", &["apply", "-f", file.to_str().unwrap()]));
}

fn patch(ops: Value) -> Value {
    json!({"allowed": true, "patchType": "JSONPatch", "patch": base64::engine::general_purpose::STANDARD.encode(ops.to_string())})
}

/// The webhooks, one per path.
fn webhooks(path: &str, review: &Value) -> Value {
    let request = &review["request"];
    let object = &request["object"];
    let labels = &object["metadata"]["labels"];
    let annotations = &object["metadata"]["annotations"];
    let response = match path.split('?').next().unwrap_or("") {
        "/label" if labels.is_null() => patch(json!([{"op": "add", "path": "/metadata/labels", "value": {"webhooked": "yes"}}])),
        "/label" => patch(json!([{"op": "add", "path": "/metadata/labels/webhooked", "value": "yes"}])),
        "/deny" => match labels["allowed"] == "true" {
            true => json!({"allowed": true, "warnings": ["allowed by the deny webhook"]}),
            false => json!({"allowed": false, "status": {"code": 403, "message": "ConfigMaps here need allowed=true"}}),
        },
        // Counts its calls in an annotation: called again when the next one changes it.
        "/count" => {
            let calls = annotations["count"].as_str().and_then(|c| c.parse::<u32>().ok()).unwrap_or(0) + 1;
            match annotations.is_null() {
                true => patch(json!([{"op": "add", "path": "/metadata/annotations", "value": {"count": calls.to_string()}}])),
                false => patch(json!([{"op": "add", "path": "/metadata/annotations/count", "value": calls.to_string()}])),
            }
        }
        "/stamp" if labels["stamped"].is_null() && labels.is_null() => patch(json!([{"op": "add", "path": "/metadata/labels", "value": {"stamped": "yes"}}])),
        "/stamp" if labels["stamped"].is_null() => patch(json!([{"op": "add", "path": "/metadata/labels/stamped", "value": "yes"}])),
        "/dry" => match request["dryRun"] == true {
            true => json!({"allowed": true}),
            false => json!({"allowed": false, "status": {"message": "only dry runs here"}}),
        },
        _ => json!({"allowed": true}),
    };
    let mut response = response;
    response["uid"] = request["uid"].clone();
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

/// A webhook that answers after three seconds.
fn slow(path: &str, review: &Value) -> Value {
    std::thread::sleep(std::time::Duration::from_secs(3));
    webhooks(path, review)
}

/// A configuration of one webhook on ConfigMap creates in namespaces labelled
/// `scenario: <scenario>`.
fn configuration(kind: &str, name: &str, scenario: &str, client: &str, extra: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: {kind}\nmetadata:\n  name: {name}\nwebhooks:\n- name: {name}.example.com\n  clientConfig:\n{client}  rules:\n  - operations: [CREATE]\n    apiGroups: [\"\"]\n    apiVersions: [v1]\n    resources: [configmaps]\n  namespaceSelector:\n    matchLabels:\n      scenario: {scenario}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n{extra}"
    )
}

fn namespace(apiary: &Apiary, name: &str, scenario: &str) {
    ok(&apiary.kubectl("1.33", &["create", "namespace", name]));
    ok(&apiary.kubectl("1.33", &["label", "namespace", name, &format!("scenario={scenario}")]));
}

/// Create ConfigMap `name` in `ns`, retrying while a configuration just written has
/// not reached the server's cache (it takes effect within a second).
fn create_until(apiary: &Apiary, version: &str, ns: &str, name: &str, extra: &[&str], done: impl Fn(&Output) -> bool) -> Output {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let mut args = vec!["create", "configmap", name, "-n", ns, "--from-literal=k=v"];
        args.extend_from_slice(extra);
        let out = apiary.kubectl(version, &args);
        if done(&out) || std::time::Instant::now() > deadline {
            return out;
        }
        if out.status.success() {
            ok(&apiary.kubectl(version, &["delete", "configmap", name, "-n", ns]));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn webhooks_mutate_refuse_fail_skip_and_reinvoke() {
    let (addr, ca_pem, answered) = https_service::serve(&["127.0.0.1", "hooks.default.svc"], webhooks);
    let ca = base64::engine::general_purpose::STANDARD.encode(&ca_pem);
    let url = |path: &str| format!("    url: https://{addr}{path}\n    caBundle: {ca}\n");
    let apiary = Apiary::start_with(&["--storage", "memory"]);

    // A mutating webhook labels; a validating one refuses without allowed=true.
    namespace(&apiary, "mutated", "mutated");
    apply(&apiary, "label", &configuration("MutatingWebhookConfiguration", "label", "mutated", &url("/label"), ""));
    namespace(&apiary, "guarded", "guarded");
    apply(&apiary, "deny", &configuration("ValidatingWebhookConfiguration", "deny", "guarded", &url("/deny"), ""));
    for version in ["1.33", "1.27"] {
        let name = format!("cm-{}", version.replace('.', "-"));
        let created = create_until(&apiary, version, "mutated", &name, &[], |_| true);
        assert!(created.status.success(), "{version}: {}", stderr(&created));
        let label = ok(&apiary.kubectl(version, &["get", "configmap", &name, "-n", "mutated", "-o", "jsonpath={.metadata.labels.webhooked}"]));
        assert_eq!(label, "yes", "{version}");

        let refused = create_until(&apiary, version, "guarded", &name, &[], |o| !o.status.success());
        assert!(!refused.status.success(), "{version}");
        assert!(
            stderr(&refused).contains(r#"admission webhook "deny.example.com" denied the request: ConfigMaps here need allowed=true"#),
            "{version}: {}",
            stderr(&refused)
        );
        let file = apiary.data_dir.join(format!("allowed-{version}.yaml"));
        std::fs::write(&file, format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: guarded\n  labels:\n    allowed: \"true\"\n")).unwrap();
        let allowed = apiary.kubectl(version, &["create", "-f", file.to_str().unwrap()]);
        assert!(allowed.status.success(), "{version}: {}", stderr(&allowed));
        assert!(stderr(&allowed).contains("Warning: allowed by the deny webhook"), "{version}: {}", stderr(&allowed));
    }

    // Selectors: another namespace, or an object the objectSelector excludes, is not
    // the webhook's business.
    ok(&apiary.kubectl("1.33", &["create", "configmap", "elsewhere", "-n", "default", "--from-literal=k=v"]));
    apply(
        &apiary,
        "selective",
        &configuration("ValidatingWebhookConfiguration", "selective", "selective", &url("/deny"), "  objectSelector:\n    matchExpressions:\n    - {key: skip, operator: DoesNotExist}\n"),
    );
    namespace(&apiary, "selective", "selective");
    let refused = create_until(&apiary, "1.33", "selective", "plain", &[], |o| !o.status.success());
    assert!(!refused.status.success());
    let skipped = apiary.data_dir.join("skipped.yaml");
    std::fs::write(&skipped, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: skipped\n  namespace: selective\n  labels:\n    skip: \"1\"\n").unwrap();
    ok(&apiary.kubectl("1.33", &["create", "-f", skipped.to_str().unwrap()]));

    // Reinvocation: count (IfNeeded) then stamp, which changes the object, so count is
    // called again.
    namespace(&apiary, "reinvoked", "reinvoked");
    apply(&apiary, "count", &configuration("MutatingWebhookConfiguration", "a-count", "reinvoked", &url("/count"), "  reinvocationPolicy: IfNeeded\n"));
    apply(&apiary, "stamp", &configuration("MutatingWebhookConfiguration", "b-stamp", "reinvoked", &url("/stamp"), ""));
    let created = create_until(&apiary, "1.33", "reinvoked", "twice", &[], |o| {
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains("created")
    });
    assert!(created.status.success(), "{}", stderr(&created));
    let seen = ok(&apiary.kubectl("1.33", &["get", "configmap", "twice", "-n", "reinvoked", "-o", "jsonpath={.metadata.annotations.count} {.metadata.labels.stamped}"]));
    assert_eq!(seen, "2 yes");

    // Through a Service: an ExternalName one (endpoints may not be loopback addresses),
    // the certificate checked for the Service's in-cluster name.
    let port = addr.rsplit(':').next().unwrap();
    apply(&apiary, "hooks-service", "apiVersion: v1\nkind: Service\nmetadata:\n  name: hooks\n  namespace: default\nspec:\n  type: ExternalName\n  externalName: 127.0.0.1\n");
    namespace(&apiary, "by-service", "by-service");
    let by_service = format!("    service:\n      namespace: default\n      name: hooks\n      path: /label\n      port: {port}\n    caBundle: {ca}\n");
    apply(&apiary, "by-service", &configuration("MutatingWebhookConfiguration", "by-service", "by-service", &by_service, ""));
    let labelled = |name: &str| ok(&apiary.kubectl("1.33", &["get", "configmap", name, "-n", "by-service", "-o", "jsonpath={.metadata.labels.webhooked}"]));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut attempt = 0;
    let label = loop {
        let name = format!("s-{attempt}");
        ok(&apiary.kubectl("1.33", &["create", "configmap", &name, "-n", "by-service", "--from-literal=k=v"]));
        let label = labelled(&name);
        if label == "yes" || std::time::Instant::now() > deadline {
            break label;
        }
        attempt += 1;
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert_eq!(label, "yes");

    // A dry run reaches the webhook as one; the same create for real is refused.
    namespace(&apiary, "dry", "dry");
    apply(&apiary, "dry", &configuration("ValidatingWebhookConfiguration", "dry", "dry", &url("/dry"), "").replace("sideEffects: None", "sideEffects: NoneOnDryRun"));
    let real = create_until(&apiary, "1.33", "dry", "d", &[], |o| !o.status.success());
    assert!(stderr(&real).contains("only dry runs here"), "{}", stderr(&real));
    ok(&apiary.kubectl("1.33", &["create", "configmap", "d", "-n", "dry", "--dry-run=server", "--from-literal=k=v"]));
    assert!(!apiary.kubectl("1.33", &["get", "configmap", "d", "-n", "dry"]).status.success());

    assert!(answered.load(std::sync::atomic::Ordering::SeqCst) > 0);
}

#[test]
fn failure_policy_decides_for_webhooks_that_are_down_or_slow() {
    let (slow_addr, slow_ca, _) = https_service::serve(&["127.0.0.1"], slow);
    let ca = base64::engine::general_purpose::STANDARD.encode(&slow_ca);
    let apiary = Apiary::start_with(&["--storage", "memory"]);
    // Nothing listens on port 1.
    let down = format!("    url: https://127.0.0.1:1/deny\n    caBundle: {ca}\n");
    let slow_url = format!("    url: https://{slow_addr}/any\n    caBundle: {ca}\n");
    for (scenario, client, policy, timeout) in [
        ("down-ignore", &down, "Ignore", 10),
        ("down-fail", &down, "Fail", 10),
        ("slow-ignore", &slow_url, "Ignore", 1),
        ("slow-fail", &slow_url, "Fail", 1),
    ] {
        namespace(&apiary, scenario, scenario);
        let extra = format!("  failurePolicy: {policy}\n  timeoutSeconds: {timeout}\n");
        apply(&apiary, scenario, &configuration("ValidatingWebhookConfiguration", scenario, scenario, client, &extra));
    }
    for version in ["1.33", "1.27"] {
        let name = format!("cm-{}", version.replace('.', "-"));
        for scenario in ["down-ignore", "slow-ignore"] {
            let out = apiary.kubectl(version, &["create", "configmap", &name, "-n", scenario, "--from-literal=k=v"]);
            assert!(out.status.success(), "{version} {scenario}: {}", stderr(&out));
        }
        let failed = create_until(&apiary, version, "down-fail", &name, &[], |o| !o.status.success());
        assert!(
            stderr(&failed).contains(r#"Internal error occurred: failed calling webhook "down-fail.example.com": failed to call webhook: Post "https://127.0.0.1:1/deny?timeout=10s""#),
            "{version}: {}",
            stderr(&failed)
        );
        let timed_out = create_until(&apiary, version, "slow-fail", &name, &[], |o| !o.status.success());
        assert!(
            stderr(&timed_out).contains(&format!(r#"failed calling webhook "slow-fail.example.com": failed to call webhook: Post "https://{slow_addr}/any?timeout=1s": context deadline exceeded"#)),
            "{version}: {}",
            stderr(&timed_out)
        );
    }
}

const POLICY: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replica-limit
spec:
  failurePolicy: Fail
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: object.spec.replicas <= int(params.data.maxReplicas)
    messageExpression: "'replicas must be at most ' + params.data.maxReplicas"
    reason: Invalid
---
apiVersion: v1
kind: Namespace
metadata:
  name: policy-params
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: limits
  namespace: policy-params
data:
  maxReplicas: "3"
"#;

fn policy_binding(name: &str, actions: &str, scenario: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata:\n  name: {name}\nspec:\n  policyName: replica-limit\n  validationActions: {actions}\n  paramRef:\n    name: limits\n    namespace: policy-params\n    parameterNotFoundAction: Deny\n  matchResources:\n    namespaceSelector:\n      matchLabels:\n        scenario: {scenario}\n"
    )
}

#[test]
fn a_validating_admission_policy_with_a_param_denies_warns_and_audits() {
    let dir = tempfile::tempdir().unwrap();
    let policy_file = dir.path().join("audit-policy.yaml");
    std::fs::write(&policy_file, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources:\n  - group: apps\n    resources: [deployments]\n- level: None\n").unwrap();
    let log = dir.path().join("audit.log");
    let apiary = Apiary::start_with(&["--storage", "memory", "--audit-policy-file", policy_file.to_str().unwrap(), "--audit-log-path", log.to_str().unwrap()]);
    apply(&apiary, "policy", POLICY);
    for (scenario, actions) in [("denied", "[Deny]"), ("warned", "[Warn, Audit]")] {
        namespace(&apiary, scenario, scenario);
        apply(&apiary, &format!("binding-{scenario}"), &policy_binding(scenario, actions, scenario));
    }
    for version in ["1.33", "1.27"] {
        let name = format!("web-{}", version.replace('.', "-"));
        let deploy = |ns: &str, replicas: &str| apiary.kubectl(version, &["create", "deployment", &name, "-n", ns, "--image=nginx", &format!("--replicas={replicas}")]);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let refused = loop {
            let out = deploy("denied", "5");
            if !out.status.success() || std::time::Instant::now() > deadline {
                break out;
            }
            ok(&apiary.kubectl(version, &["delete", "deployment", &name, "-n", "denied"]));
            std::thread::sleep(std::time::Duration::from_millis(200));
        };
        assert!(
            stderr(&refused).contains(&format!(
                r#"deployments.apps "{name}" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'denied' denied request: replicas must be at most 3"#
            )),
            "{version}: {}",
            stderr(&refused)
        );
        ok(&deploy("denied", "2"));
        let warned = deploy("warned", "5");
        assert!(warned.status.success(), "{version}: {}", stderr(&warned));
        assert!(
            stderr(&warned).contains("Warning: Validation failed for ValidatingAdmissionPolicy 'replica-limit' with binding 'warned': replicas must be at most 3"),
            "{version}: {}",
            stderr(&warned)
        );
    }
    // The Audit action's annotation is in the create's audit event.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let annotated = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let found = text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find(|e| {
            e["verb"] == "create" && e["objectRef"]["namespace"] == "warned" && e["stage"] == "ResponseComplete"
        });
        if found.is_some() || std::time::Instant::now() > deadline {
            break found;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let annotations = &annotated.expect("the warned create is audited")["annotations"];
    let failure: Value = serde_json::from_str(annotations["validation.policy.admission.k8s.io/validation_failure"].as_str().unwrap()).unwrap();
    assert_eq!(failure[0]["message"], "replicas must be at most 3");
    assert_eq!(failure[0]["binding"], "warned");
    assert_eq!(failure[0]["validationActions"], json!(["Warn", "Audit"]));
}

//! Admission webhooks and ValidatingAdmissionPolicies over the whole server: the
//! configurations written through the API take effect on the next request, the
//! webhooks are called through the outbound-call effect (answered here), and
//! policies are judged in the core, with upstream's messages.

use apiary_core::effect::{CallError, CallOutcome, Outbound};
use apiary_core::harness::{Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use base64::Engine;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::rc::Rc;

const ADMISSION: &str = "/apis/admissionregistration.k8s.io/v1";

fn server() -> Harness<MemoryStore> {
    Harness::new(Config::default(), MemoryStore::new())
}

fn call(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    h.json_call(method, path, "application/json", body)
}

fn created(h: &Harness<MemoryStore>, path: &str, body: Value) -> Value {
    let reply = call(h, "POST", path, Some(&body));
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.body));
    reply.json()
}

fn configmap(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})
}

/// A webhook on ConfigMap creates, reached at `https://hooks.example/<name>`.
fn webhook(name: &str, extra: Value) -> Value {
    let mut hook = json!({
        "name": name,
        "clientConfig": {"url": format!("https://hooks.example/{name}"), "caBundle": base64::engine::general_purpose::STANDARD.encode("CA")},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    });
    for (k, v) in extra.as_object().unwrap() {
        hook[k] = v.clone();
    }
    hook
}

fn configuration(h: &Harness<MemoryStore>, mutating: bool, name: &str, webhooks: Vec<Value>) {
    let (plural, kind) = match mutating {
        true => ("mutatingwebhookconfigurations", "MutatingWebhookConfiguration"),
        false => ("validatingwebhookconfigurations", "ValidatingWebhookConfiguration"),
    };
    created(h, &format!("{ADMISSION}/{plural}"), json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name}, "webhooks": webhooks}));
    h.reflect();
}

/// The review a webhook was sent.
fn review(call: &Outbound) -> Value {
    serde_json::from_slice(call.request.body()).unwrap()
}

/// A webhook's answer to `review`.
fn answer(review: &Value, response: Value) -> CallOutcome {
    let mut response = response;
    response["uid"] = review["request"]["uid"].clone();
    let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response});
    Ok(http::Response::builder().status(200).body(bytes::Bytes::from(body.to_string())).unwrap())
}

fn json_patch(ops: Value) -> Value {
    json!({"allowed": true, "patchType": "JSONPatch", "patch": base64::engine::general_purpose::STANDARD.encode(ops.to_string())})
}

/// Every call made, by webhook name (the URL's path).
type Calls = Rc<RefCell<Vec<(String, Value)>>>;

fn answering(h: &Harness<MemoryStore>, reply: impl Fn(&str, &Value) -> CallOutcome + 'static) -> Calls {
    let calls: Calls = Rc::default();
    let log = calls.clone();
    h.answer_calls(move |call: &Outbound| {
        let path = call.request.uri().path().trim_start_matches('/').to_owned();
        assert_eq!(call.tls.as_ref().unwrap().ca_pem, b"CA");
        assert!(call.request.uri().query().unwrap_or("").contains("timeout="), "{}", call.request.uri());
        let review = review(call);
        log.borrow_mut().push((path.clone(), review.clone()));
        reply(&path, &review)
    });
    calls
}

#[test]
fn a_mutating_webhook_labels_what_it_matches_and_is_called_again_if_needed() {
    let h = server();
    let calls = answering(&h, |name, review| match name {
        "label.example.com" => answer(review, json_patch(json!([{"op": "add", "path": "/metadata/labels/labelled", "value": "yes"}]))),
        // Adds an annotation once, so the IfNeeded webhook before it is called again.
        "annotate.example.com" if review["request"]["object"]["metadata"]["annotations"].is_null() => {
            answer(review, json_patch(json!([{"op": "add", "path": "/metadata/annotations", "value": {"seen": "1"}}])))
        }
        _ => answer(review, json!({"allowed": true, "warnings": ["looked at it"]})),
    });
    configuration(&h, true, "a-labels", vec![webhook("label.example.com", json!({"reinvocationPolicy": "IfNeeded"}))]);
    configuration(&h, true, "b-annotates", vec![webhook("annotate.example.com", json!({}))]);

    let reply = call(&h, "POST", "/api/v1/namespaces/default/configmaps", Some(&configmap("cm", json!({"app": "a"}))));
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.body));
    let stored = call(&h, "GET", "/api/v1/namespaces/default/configmaps/cm", None).json();
    assert_eq!(stored["metadata"]["labels"], json!({"app": "a", "labelled": "yes"}));
    assert_eq!(stored["metadata"]["annotations"], json!({"seen": "1"}));
    let names: Vec<String> = calls.borrow().iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(names, ["label.example.com", "annotate.example.com", "label.example.com"]);
    let first = calls.borrow()[0].1.clone();
    assert_eq!(first["kind"], "AdmissionReview");
    assert_eq!(first["request"]["operation"], "CREATE");
    assert_eq!(first["request"]["resource"], json!({"group": "", "version": "v1", "resource": "configmaps"}));
    assert_eq!(first["request"]["namespace"], "default");
    assert_eq!(first["request"]["userInfo"]["username"], "apiary-admin");

    // Other resources and operations are not the webhooks' business.
    calls.borrow_mut().clear();
    created(&h, "/api/v1/namespaces/default/secrets", json!({"metadata": {"name": "s"}}));
    let reply = call(&h, "PUT", "/api/v1/namespaces/default/configmaps/cm", Some(&stored));
    assert_eq!(reply.status, 200);
    assert!(calls.borrow().is_empty());
}

#[test]
fn a_validating_webhook_refuses_with_its_message_and_warns() {
    let h = server();
    answering(&h, |_, review| {
        let allowed = review["request"]["object"]["metadata"]["labels"]["ok"] == "yes";
        answer(review, json!({"allowed": allowed, "status": {"message": "ConfigMaps need ok=yes", "code": 403}, "warnings": ["checked by the test"]}))
    });
    configuration(&h, false, "checks", vec![webhook("check.example.com", json!({}))]);

    let refused = call(&h, "POST", "/api/v1/namespaces/default/configmaps", Some(&configmap("bad", json!({}))));
    assert_eq!(refused.status, 403);
    let status = refused.json();
    assert_eq!(status["message"], "admission webhook \"check.example.com\" denied the request: ConfigMaps need ok=yes");
    assert_eq!(status["kind"], "Status");
    assert_eq!(refused.header("warning"), Some("299 - \"checked by the test\""));
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/default/configmaps/bad", None).status, 404);

    let reply = call(&h, "POST", "/api/v1/namespaces/default/configmaps", Some(&configmap("good", json!({"ok": "yes"}))));
    assert_eq!(reply.status, 201);
}

#[test]
fn failure_policy_decides_what_a_webhook_that_is_down_or_slow_means() {
    let h = server();
    answering(&h, |name, _| match name {
        "down.example.com" => Err(CallError::Unreachable("dial tcp 127.0.0.1:1: connect: connection refused".into())),
        _ => Err(CallError::TimedOut),
    });
    configuration(&h, false, "ignored", vec![webhook("down.example.com", json!({"failurePolicy": "Ignore"}))]);
    let reply = call(&h, "POST", "/api/v1/namespaces/default/configmaps", Some(&configmap("a", json!({}))));
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.body));

    configuration(&h, false, "failing", vec![webhook("slow.example.com", json!({"failurePolicy": "Fail", "timeoutSeconds": 2}))]);
    let reply = call(&h, "POST", "/api/v1/namespaces/default/configmaps", Some(&configmap("b", json!({}))));
    assert_eq!(reply.status, 500);
    assert_eq!(
        reply.json()["message"],
        "Internal error occurred: failed calling webhook \"slow.example.com\": failed to call webhook: Post \"https://hooks.example/slow.example.com?timeout=2s\": context deadline exceeded"
    );
}

#[test]
fn selectors_and_match_conditions_skip_what_they_should() {
    let h = server();
    let calls = answering(&h, |_, review| answer(review, json!({"allowed": false, "status": {"message": "no"}})));
    created(&h, "/api/v1/namespaces", json!({"metadata": {"name": "watched", "labels": {"hooks": "on"}}}));
    configuration(
        &h,
        false,
        "selective",
        vec![webhook(
            "selective.example.com",
            json!({
                "namespaceSelector": {"matchLabels": {"hooks": "on"}},
                "objectSelector": {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]},
                "matchConditions": [{"name": "not-system", "expression": "!request.userInfo.username.startsWith('system:')"}],
            }),
        )],
    );
    // Another namespace, or a skip label: not called, admitted.
    assert_eq!(call(&h, "POST", "/api/v1/namespaces/default/configmaps", Some(&configmap("a", json!({})))).status, 201);
    assert_eq!(call(&h, "POST", "/api/v1/namespaces/watched/configmaps", Some(&configmap("b", json!({"skip": "1"})))).status, 201);
    assert!(calls.borrow().is_empty());
    // Matched: called and refused.
    assert_eq!(call(&h, "POST", "/api/v1/namespaces/watched/configmaps", Some(&configmap("c", json!({})))).status, 400);
    assert_eq!(calls.borrow().len(), 1);
    // The match condition leaves system users alone.
    h.act_as(Some("system:operator"), &["system:masters"]);
    assert_eq!(call(&h, "POST", "/api/v1/namespaces/watched/configmaps", Some(&configmap("d", json!({})))).status, 201);
    assert_eq!(calls.borrow().len(), 1);
}

#[test]
fn a_dry_run_reaches_a_webhook_as_one_and_stores_nothing() {
    let h = server();
    let calls = answering(&h, |_, review| answer(review, json!({"allowed": true})));
    configuration(&h, false, "effects", vec![webhook("effects.example.com", json!({"sideEffects": "NoneOnDryRun"}))]);
    let reply = call(&h, "POST", "/api/v1/namespaces/default/configmaps?dryRun=All", Some(&configmap("a", json!({}))));
    assert_eq!(reply.status, 201);
    assert_eq!(calls.borrow()[0].1["request"]["dryRun"], true);
    assert_eq!(calls.borrow()[0].1["request"]["options"]["dryRun"], json!(["All"]));
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/default/configmaps/a", None).status, 404);
}

#[test]
fn validating_webhooks_are_all_asked_and_the_first_refusal_answers() {
    let h = server();
    let calls = answering(&h, |name, review| {
        answer(review, json!({"allowed": name == "yes.example.com", "status": {"message": format!("{name} says no")}}))
    });
    let hooks = ["no-1.example.com", "yes.example.com", "no-2.example.com"].map(|n| webhook(n, json!({})));
    configuration(&h, false, "three", hooks.to_vec());
    let refused = call(&h, "POST", "/api/v1/namespaces/default/configmaps", Some(&configmap("a", json!({}))));
    assert_eq!(refused.status, 400);
    assert_eq!(refused.json()["message"], "admission webhook \"no-1.example.com\" denied the request: no-1.example.com says no");
    let names: Vec<String> = calls.borrow().iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(names, ["no-1.example.com", "yes.example.com", "no-2.example.com"]);
}

#[test]
fn a_connect_reaches_the_webhooks_that_ask_for_it_before_the_pod_is_read() {
    let h = server();
    let calls = answering(&h, |_, review| answer(review, json!({"allowed": false, "status": {"message": "no exec here", "code": 403}})));
    let mut hook = webhook("no-exec.example.com", json!({}));
    hook["rules"] = json!([{"operations": ["CONNECT"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/exec"]}]);
    configuration(&h, false, "no-exec", vec![hook]);
    let refused = call(&h, "POST", "/api/v1/namespaces/default/pods/missing/exec?command=ls&command=-l&stdout=true&stdin=yes&tty=0&container=c", None);
    assert_eq!(refused.status, 403, "{}", String::from_utf8_lossy(&refused.body));
    assert_eq!(refused.json()["message"], "admission webhook \"no-exec.example.com\" denied the request: no exec here");
    let sent = &calls.borrow()[0].1["request"];
    assert_eq!(sent["operation"], "CONNECT");
    assert_eq!(sent["kind"], json!({"group": "", "version": "v1", "kind": "PodExecOptions"}));
    assert_eq!(sent["subResource"], "exec");
    assert_eq!(sent["object"], json!({"kind": "PodExecOptions", "apiVersion": "v1", "stdin": true, "stdout": true, "container": "c", "command": ["ls", "-l"]}));
    // Attach is not the webhook's business: on to the pod, which is not there.
    assert_eq!(call(&h, "POST", "/api/v1/namespaces/default/pods/missing/attach?stdout=true", None).status, 404);
    assert_eq!(calls.borrow().len(), 1);
}

#[test]
fn a_webhook_named_by_service_is_called_at_an_endpoint_checked_for_its_service_name() {
    let h = server();
    // Each call's URL and the name its certificate must have.
    type Seen = Rc<RefCell<Vec<(String, Option<String>)>>>;
    let seen: Seen = Rc::default();
    let log = seen.clone();
    h.answer_calls(move |call: &Outbound| {
        let tls = call.tls.as_ref().unwrap();
        log.borrow_mut().push((call.request.uri().to_string(), tls.server_name.clone()));
        answer(&review(call), json!({"allowed": false, "status": {"message": "by service"}}))
    });
    created(&h, "/api/v1/namespaces/default/services", json!({"metadata": {"name": "hooks"}, "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 8443}]}}));
    created(
        &h,
        "/api/v1/namespaces/default/endpoints",
        json!({"metadata": {"name": "hooks"}, "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"name": "https", "port": 8443}]}]}),
    );
    let mut hook = webhook("service.example.com", json!({}));
    hook["clientConfig"] = json!({"service": {"namespace": "default", "name": "hooks", "path": "/validate"}, "caBundle": base64::engine::general_purpose::STANDARD.encode("CA")});
    configuration(&h, false, "by-service", vec![hook]);
    let refused = call(&h, "POST", "/api/v1/namespaces/default/configmaps", Some(&configmap("a", json!({}))));
    assert_eq!(refused.status, 400, "{}", String::from_utf8_lossy(&refused.body));
    assert_eq!(
        seen.borrow().as_slice(),
        [("https://10.1.2.3:8443/validate?timeout=10s".to_owned(), Some("hooks.default.svc".to_owned()))]
    );
}

/// A policy of three validations on ConfigMaps, with a ConfigMap as its param.
fn policy(name: &str) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}]},
            "validations": [
                {"expression": "!has(object.data) || size(object.data) <= int(params.data.maxKeys)", "messageExpression": "'at most ' + params.data.maxKeys + ' keys'"},
                {"expression": "object.metadata.name.startsWith('ok-')", "message": "names start with ok-", "reason": "Forbidden"},
                {"expression": "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)", "message": "no forbidden label"},
            ],
            "auditAnnotations": [{"key": "keys", "valueExpression": "string(has(object.data) ? size(object.data) : 0)"}],
        }
    })
}

fn binding(name: &str, policy: &str, actions: &[&str], namespace: &str) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": policy,
            "validationActions": actions,
            "paramRef": {"name": "limits", "namespace": "policy-params", "parameterNotFoundAction": "Deny"},
            "matchResources": {"namespaceSelector": {"matchLabels": {"policed": namespace}}},
        }
    })
}

#[test]
fn a_validating_admission_policy_with_a_param_denies_warns_and_audits() {
    let h = server();
    created(&h, "/api/v1/namespaces", json!({"metadata": {"name": "policy-params"}}));
    created(&h, "/api/v1/namespaces/policy-params/configmaps", json!({"metadata": {"name": "limits"}, "data": {"maxKeys": "1"}}));
    for (ns, mode) in [("denied", "deny"), ("warned", "warn")] {
        created(&h, "/api/v1/namespaces", json!({"metadata": {"name": ns, "labels": {"policed": mode}}}));
    }
    created(&h, &format!("{ADMISSION}/validatingadmissionpolicies"), policy("small-configmaps"));
    created(&h, &format!("{ADMISSION}/validatingadmissionpolicybindings"), binding("deny", "small-configmaps", &["Deny"], "deny"));
    created(&h, &format!("{ADMISSION}/validatingadmissionpolicybindings"), binding("warn", "small-configmaps", &["Warn", "Audit"], "warn"));
    h.reflect();

    let two_keys = |name: &str| json!({"metadata": {"name": name}, "data": {"a": "1", "b": "2"}});
    let refused = call(&h, "POST", "/api/v1/namespaces/denied/configmaps", Some(&two_keys("ok-big")));
    assert_eq!(refused.status, 422, "{}", String::from_utf8_lossy(&refused.body));
    let status = refused.json();
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(
        status["message"],
        "configmaps \"ok-big\" is forbidden: ValidatingAdmissionPolicy 'small-configmaps' with binding 'deny' denied request: at most 1 keys"
    );
    let named = call(&h, "POST", "/api/v1/namespaces/denied/configmaps", Some(&json!({"metadata": {"name": "bad-name"}})));
    assert_eq!(named.status, 403);
    assert_eq!(named.json()["reason"], "Forbidden");
    assert_eq!(call(&h, "POST", "/api/v1/namespaces/denied/configmaps", Some(&json!({"metadata": {"name": "ok-small"}, "data": {"a": "1"}}))).status, 201);

    // Warn: admitted with the warning.
    let warned = call(&h, "POST", "/api/v1/namespaces/warned/configmaps", Some(&two_keys("ok-big")));
    assert_eq!(warned.status, 201, "{}", String::from_utf8_lossy(&warned.body));
    assert_eq!(
        warned.header("warning"),
        Some("299 - \"Validation failed for ValidatingAdmissionPolicy 'small-configmaps' with binding 'warn': at most 1 keys\"")
    );
    // Unbound namespaces are not policed.
    assert_eq!(call(&h, "POST", "/api/v1/namespaces/default/configmaps", Some(&two_keys("big"))).status, 201);

    // A missing param refuses under parameterNotFoundAction: Deny.
    assert_eq!(call(&h, "DELETE", "/api/v1/namespaces/policy-params/configmaps/limits", None).status, 200);
    h.reflect();
    let unparameterised = call(&h, "POST", "/api/v1/namespaces/denied/configmaps", Some(&json!({"metadata": {"name": "ok-x"}})));
    assert_eq!(unparameterised.status, 422, "{}", String::from_utf8_lossy(&unparameterised.body));
    assert!(unparameterised.json()["message"].as_str().unwrap().contains("no params found for policy binding with `Deny` parameterNotFoundAction"), "{}", unparameterised.json());
}

use super::*;
use crate::admission::matching::{GroupVersionKind, GroupVersionResource, Matched, Request};
use crate::admission::{Attributes, Operation};
use crate::authn::UserInfo;
use serde_json::json;

fn obj(v: Json) -> Object {
    v.as_object().cloned().expect("an object")
}

fn policy(spec: Json) -> Object {
    obj(json!({"metadata": {"name": "p"}, "spec": spec}))
}

fn binding(actions: &[&str]) -> Object {
    obj(json!({"metadata": {"name": "b"}, "spec": {"policyName": "p", "validationActions": actions}}))
}

fn deployment(replicas: i64) -> Object {
    obj(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web"}},
        "spec": {"replicas": replicas}}))
}

fn attributes<'a>(op: Operation, user: Option<&'a UserInfo>) -> Attributes<'a> {
    Attributes {
        operation: op,
        group: "apps",
        version: "v1",
        resource: "deployments",
        subresource: "",
        namespace: Some("ns"),
        name: "web",
        user,
        dry_run: false,
    }
}

fn matched() -> Matched {
    Matched {
        resource: GroupVersionResource::new("apps", "v1", "deployments"),
        kind: GroupVersionKind::new("apps", "v1", "Deployment"),
    }
}

const NO_PARAMS: ParamObjects<'static> = ParamObjects {
    namespaced: None,
    objects: &[],
};

/// Evaluate `spec` for a create of `object` under a binding with `actions`.
fn run(spec: Json, actions: &[&str], object: &Object) -> Decision {
    let compiled = compile(&policy(spec));
    let mut request = Request::new(attributes(Operation::Create, None), ("apps", "v1", "Deployment"));
    request.object = Some(object);
    let m = matched();
    let input = Input {
        request: &request,
        matched: &m,
        namespace: None,
    };
    evaluate(&compiled, &binding(actions), &input, &NO_PARAMS)
}

fn denial_messages(d: &Decision) -> Vec<String> {
    d.denials.iter().map(Denial::message).collect()
}

// validator_test.go TestValidate "test deny/allow" and the default message
#[test]
fn a_false_validation_denies_with_the_expression_as_message() {
    let spec = json!({"validations": [{"expression": "object.spec.replicas < 5"}]});
    assert_eq!(run(spec.clone(), &["Deny"], &deployment(3)), Decision::default());
    let d = run(spec, &["Deny"], &deployment(7));
    assert_eq!(
        denial_messages(&d),
        ["ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: object.spec.replicas < 5"]
    );
    assert_eq!(d.denials[0].reason.as_deref(), Some("Invalid"));
}

// validator_test.go "test messageExpression", "messageExpression fallback"
#[test]
fn messages_and_message_expressions() {
    let spec = |message_expression: &str| {
        json!({"validations": [{"expression": "object.spec.replicas < 5", "message": "too many",
            "messageExpression": message_expression}]})
    };
    let d = run(spec("'replicas: ' + string(object.spec.replicas)"), &["Deny"], &deployment(7));
    assert_eq!(d.denials[0].message, "replicas: 7");
    // A message expression that errs, is blank or spans lines falls back to the message.
    for fallback in ["string(object.nope)", "'  '", "'a\\nb'"] {
        let d = run(spec(fallback), &["Deny"], &deployment(7));
        assert_eq!(d.denials[0].message, "too many", "{fallback}");
    }
}

// dispatcher.go reasonToCode; admission_test.go TestReasonCode
#[test]
fn reasons_set_the_status_code() {
    let object = deployment(7);
    let mut request = Request::new(attributes(Operation::Create, None), ("apps", "v1", "Deployment"));
    request.object = Some(&object);
    for (reason, code) in [(None, 422), (Some("Forbidden"), 403), (Some("Unauthorized"), 401), (Some("RequestEntityTooLarge"), 413)] {
        let mut v = json!({"expression": "false", "message": "no"});
        if let Some(r) = reason {
            v["reason"] = json!(r);
        }
        let d = run(json!({"validations": [v]}), &["Deny"], &object);
        let e = d.denials[0].to_api_error(&request);
        assert_eq!(e.code, code);
        assert_eq!(e.reason, reason.unwrap_or("Invalid"));
        assert_eq!(
            e.message,
            "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no"
        );
        assert_eq!(e.details.unwrap().causes[0].message, "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no");
    }
}

// admission_test.go TestAuditValidationAction, TestWarnValidationAction, TestAllValidationActions
#[test]
fn warn_and_audit_actions() {
    let spec = json!({"validations": [{"expression": "true"}, {"expression": "object.spec.replicas < 5", "message": "m<&>"}]});
    let d = run(spec, &["Warn", "Audit"], &deployment(7));
    assert!(d.denials.is_empty());
    assert_eq!(d.warnings, ["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': m<&>"]);
    assert_eq!(
        d.validation_failures,
        [r#"[{"message":"m\u003c\u0026\u003e","policy":"p","binding":"b","expressionIndex":1,"validationActions":["Warn","Audit"]}]"#]
    );
    let published = publish_audit_annotations("p", &[d]);
    assert_eq!(published[0].0, VALIDATION_FAILURE_ANNOTATION);
}

// validator_test.go "test runtime error", failurePolicy Ignore
#[test]
fn evaluation_errors_follow_the_failure_policy() {
    let spec = |fp: &str| json!({"failurePolicy": fp, "validations": [{"expression": "object.spec.missing == 1"}]});
    let d = run(spec("Fail"), &["Deny"], &deployment(1));
    assert_eq!(
        denial_messages(&d),
        ["ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'object.spec.missing == 1' resulted in error: no such key: missing"]
    );
    assert_eq!(d.denials[0].reason, None);
    assert_eq!(run(spec("Ignore"), &["Deny"], &deployment(1)), Decision::default());
    // With Warn, an error is a warning.
    let d = run(spec("Fail"), &["Warn"], &deployment(1));
    assert_eq!(d.warnings.len(), 1);
}

// compile_test.go TestCompileValidatingPolicyExpression; validation_test.go (VAP expressions)
#[test]
fn compilation_errors_in_upstream_words() {
    let p = policy(json!({
        "matchConditions": [{"name": "m", "expression": "object.x"}],
        "variables": [{"name": "a", "expression": "1 +"}],
        "validations": [
            {"expression": "1 + 1"},
            {"expression": "true", "messageExpression": "1"},
            {"expression": "params.x == 1"},
            {"expression": "variables.nope == 1"},
            {"expression": "request.nope == 1"}
        ],
        "auditAnnotations": [{"key": "k", "valueExpression": "1"}]
    }));
    let errors: Vec<(String, String)> = expression_errors(&p).into_iter().map(|e| (e.field, e.detail)).collect();
    let expect = [
        ("spec.matchConditions[0].expression", "must evaluate to bool but got dyn"),
        (
            "spec.variables[0].expression",
            "compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 1 +\n | ...^",
        ),
        ("spec.validations[0].expression", "must evaluate to bool but got int"),
        ("spec.validations[1].messageExpression", "must evaluate to string but got int"),
        (
            "spec.validations[2].expression",
            "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^",
        ),
        (
            "spec.validations[3].expression",
            "compilation failed: ERROR: <input>:1:10: undefined field 'nope'\n | variables.nope == 1\n | .........^",
        ),
        (
            "spec.validations[4].expression",
            "compilation failed: ERROR: <input>:1:8: undefined field 'nope'\n | request.nope == 1\n | .......^",
        ),
        ("spec.auditAnnotations[0].valueExpression", "must evaluate to one of [string null_type] but got int"),
    ];
    let expect: Vec<(String, String)> = expect.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    assert_eq!(errors, expect);
    // A compile error denies at run time under Fail.
    let d = run(json!({"validations": [{"expression": "1 + 1"}]}), &["Deny"], &deployment(1));
    assert_eq!(d.denials[0].message, "compilation error: must evaluate to bool but got int");
}

// composition_test.go TestCompositedPolicies
#[test]
fn variables_compose_and_are_typed() {
    let spec = json!({
        "variables": [
            {"name": "replicas", "expression": "object.spec.replicas"},
            {"name": "doubled", "expression": "variables.replicas * 2"},
            {"name": "broken", "expression": "object.nope"}
        ],
        "validations": [{"expression": "variables.doubled < 10", "messageExpression": "'doubled: ' + string(variables.doubled)"}]
    });
    assert!(run(spec.clone(), &["Deny"], &deployment(4)).denials.is_empty());
    let d = run(spec, &["Deny"], &deployment(6));
    assert_eq!(d.denials[0].message, "doubled: 12");
    // An erring variable only matters where it is read.
    let spec = json!({"variables": [{"name": "bad", "expression": "object.nope"}],
        "validations": [{"expression": "true"}, {"expression": "variables.bad == 1"}]});
    let d = run(spec, &["Deny"], &deployment(6));
    assert_eq!(
        d.denials[0].message,
        "expression 'variables.bad == 1' resulted in error: no such key: nope"
    );
    let spec = json!({"variables": [{"name": "bad", "expression": "1 +"}],
        "validations": [{"expression": "variables.bad == 1"}]});
    let d = run(spec, &["Deny"], &deployment(6));
    assert!(d.denials[0].message.starts_with(
        "expression 'variables.bad == 1' resulted in error: composited variable \"bad\" fails to compile: compilation failed: ERROR: <input>:1:4"
    ));
}

// matchconditions/matcher_test.go; validator_test.go "test match conditions"
#[test]
fn match_conditions_gate_validation() {
    let spec = |cond: &str, fp: &str| {
        json!({"failurePolicy": fp, "matchConditions": [{"name": "first", "expression": "true"}, {"name": "c", "expression": cond}],
            "validations": [{"expression": "false"}]})
    };
    assert!(run(spec("object.spec.replicas > 5", "Fail"), &["Deny"], &deployment(1)).denials.is_empty());
    assert_eq!(run(spec("object.spec.replicas > 5", "Fail"), &["Deny"], &deployment(7)).denials.len(), 1);
    let d = run(spec("object.nope == 1", "Fail"), &["Deny"], &deployment(7));
    assert_eq!(d.denials[0].message, "expression 'object.nope == 1' resulted in error: no such key: nope");
    assert!(run(spec("object.nope == 1", "Ignore"), &["Deny"], &deployment(7)).denials.is_empty());
    // A false condition wins over an error.
    let spec = json!({"matchConditions": [{"name": "e", "expression": "object.nope == 1"}, {"name": "f", "expression": "false"}],
        "validations": [{"expression": "false"}]});
    assert!(run(spec, &["Deny"], &deployment(7)).denials.is_empty());
}

// matchconditions/matcher_test.go TestMatcher for webhooks
#[test]
fn webhook_match_conditions() {
    let object = deployment(1);
    let mut request = Request::new(attributes(Operation::Create, None), ("apps", "v1", "Deployment"));
    request.object = Some(&object);
    let m = matched();
    let hook = json!({"matchConditions": [
        {"name": "is-web", "expression": "object.metadata.name == 'web'"},
        {"name": "not-dry", "expression": "!request.dryRun"}]});
    let compiled = compile_webhook_match_conditions(&hook);
    assert_eq!(match_conditions(&compiled, FailurePolicy::Fail, &request, &m), MatchConditionsOutcome::Match);
    let hook = json!({"matchConditions": [{"name": "is-db", "expression": "object.metadata.name == 'db'"}]});
    assert_eq!(
        match_conditions(&compile_webhook_match_conditions(&hook), FailurePolicy::Fail, &request, &m),
        MatchConditionsOutcome::NoMatch {
            failed_condition: "is-db".into()
        }
    );
    let hook = json!({"matchConditions": [{"name": "a", "expression": "object.a"}, {"name": "b", "expression": "object.b"}]});
    let compiled = compile_webhook_match_conditions(&hook);
    assert_eq!(compiled[0].expression.error(), Some("must evaluate to bool but got dyn"));
    let hook = json!({"matchConditions": [{"name": "a", "expression": "object.a == 1"}, {"name": "b", "expression": "object.b == 1"}]});
    assert_eq!(
        match_conditions(&compile_webhook_match_conditions(&hook), FailurePolicy::Fail, &request, &m),
        MatchConditionsOutcome::Error(
            "[expression 'object.a == 1' resulted in error: no such key: a, expression 'object.b == 1' resulted in error: no such key: b]".into()
        )
    );
    // Webhooks have no params.
    let hook = json!({"matchConditions": [{"name": "p", "expression": "params == null"}]});
    assert!(compile_webhook_match_conditions(&hook)[0].expression.error().unwrap().contains("undeclared reference to 'params'"));
}

// admission_test.go TestParamRef ("deny when not found", "allow when not found", selector)
#[test]
fn params_by_name_and_selector() {
    let spec = json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "validations": [{"expression": "object.spec.replicas <= int(params.data.max)", "messageExpression": "'max ' + params.data.max"}]});
    let compiled = compile(&policy(spec));
    let limits = [
        obj(json!({"metadata": {"name": "small", "namespace": "ns", "labels": {"tier": "a"}}, "data": {"max": "2"}})),
        obj(json!({"metadata": {"name": "large", "namespace": "ns", "labels": {"tier": "a"}}, "data": {"max": "10"}})),
        obj(json!({"metadata": {"name": "small", "namespace": "other"}, "data": {"max": "100"}})),
    ];
    let params = ParamObjects {
        namespaced: Some(true),
        objects: &limits,
    };
    let object = deployment(5);
    let mut request = Request::new(attributes(Operation::Create, None), ("apps", "v1", "Deployment"));
    request.object = Some(&object);
    let m = matched();
    let input = Input {
        request: &request,
        matched: &m,
        namespace: None,
    };
    let with_ref = |param_ref: Json| {
        let b = obj(json!({"metadata": {"name": "b"}, "spec": {"policyName": "p", "validationActions": ["Deny"], "paramRef": param_ref}}));
        evaluate(&compiled, &b, &input, &params)
    };
    let d = with_ref(json!({"name": "small", "parameterNotFoundAction": "Deny"}));
    assert_eq!(denial_messages(&d), ["ValidatingAdmissionPolicy 'p' with binding 'b' denied request: max 2"]);
    assert!(with_ref(json!({"name": "large", "parameterNotFoundAction": "Deny"})).denials.is_empty());
    assert!(with_ref(json!({"name": "small", "namespace": "other", "parameterNotFoundAction": "Deny"})).denials.is_empty());
    assert!(with_ref(json!({"name": "none", "parameterNotFoundAction": "Allow"})).denials.is_empty());
    assert_eq!(
        denial_messages(&with_ref(json!({"name": "none", "parameterNotFoundAction": "Deny"}))),
        ["ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"]
    );
    // A selector evaluates once per selected param.
    let d = with_ref(json!({"selector": {"matchLabels": {"tier": "a"}}, "parameterNotFoundAction": "Deny"}));
    assert_eq!(d.denials.len(), 1);
    let d = with_ref(json!({"selector": {}, "namespace": "other", "parameterNotFoundAction": "Deny"}));
    assert!(d.denials.is_empty());
    // The param kind is not served.
    let unknown = ParamObjects {
        namespaced: None,
        objects: &[],
    };
    let b = obj(json!({"metadata": {"name": "b"}, "spec": {"validationActions": ["Deny"], "paramRef": {"name": "x"}}}));
    assert_eq!(
        evaluate(&compiled, &b, &input, &unknown).denials[0].message,
        "failed to configure binding: paramKind kind `&ParamKind{APIVersion:v1,Kind:ConfigMap,}` not known"
    );
    // No paramRef: params is null.
    let b = obj(json!({"metadata": {"name": "b"}, "spec": {"validationActions": ["Deny"]}}));
    assert!(evaluate(&compiled, &b, &input, &params).denials[0].message.contains("resulted in error"));
}

// admission_test.go TestAuditAnnotations
#[test]
fn audit_annotations() {
    let spec = json!({"auditAnnotations": [
        {"key": "replicas", "valueExpression": "'count ' + string(object.spec.replicas)"},
        {"key": "none", "valueExpression": "null"},
        {"key": "blank", "valueExpression": "'  '"}
    ]});
    let a = run(spec.clone(), &["Deny"], &deployment(3));
    let b = run(spec, &["Deny"], &deployment(4));
    assert_eq!(a.audit_annotations, [("replicas".to_string(), "count 3".to_string())]);
    assert_eq!(publish_audit_annotations("p", &[a.clone(), a, b]), [("p/replicas".to_string(), "count 3, count 4".to_string())]);
    let spec = json!({"auditAnnotations": [{"key": "k", "valueExpression": "object.spec.replicas"}]});
    let compiled = compile(&policy(spec));
    assert_eq!(compiled.audit_annotations[0].value_expression.error(), Some("must evaluate to one of [string null_type] but got dyn"));
}

// activation.go: the request, the namespace object and null objects
#[test]
fn request_namespace_and_objects() {
    let user = UserInfo {
        name: "alice".into(),
        uid: String::new(),
        groups: vec!["devs".into()],
        extra: Default::default(),
    };
    let ns = obj(json!({"metadata": {"name": "ns", "labels": {"env": "prod"}, "creationTimestamp": "2024-01-01T00:00:00Z"}}));
    let old = deployment(2);
    let mut request = Request::new(attributes(Operation::Delete, Some(&user)), ("apps", "v1", "Deployment"));
    request.old_object = Some(&old);
    let m = matched();
    let input = Input {
        request: &request,
        matched: &m,
        namespace: Some(&ns),
    };
    let spec = json!({"validations": [
        {"expression": "object == null && oldObject.spec.replicas == 2"},
        {"expression": "request.operation == 'DELETE' && request.userInfo.username == 'alice' && 'devs' in request.userInfo.groups"},
        {"expression": "request.kind.kind == 'Deployment' && request.resource.resource == 'deployments' && request.name == 'web' && !has(request.subResource)"},
        {"expression": "namespaceObject.metadata.labels.env == 'prod' && namespaceObject.metadata.creationTimestamp < timestamp('2025-01-01T00:00:00Z')"},
        {"expression": "request.dryRun"}
    ]});
    let d = evaluate(&compile(&policy(spec)), &binding(&["Deny"]), &input, &NO_PARAMS);
    assert_eq!(denial_messages(&d), ["ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: request.dryRun"]);
}

// activation.go Evaluate: the per-expression cost limit and the budget
#[test]
fn cost_limits() {
    let expensive = "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, true))))))";
    let d = run(json!({"validations": [{"expression": expensive}]}), &["Deny"], &deployment(1));
    assert_eq!(
        d.denials[0].message,
        format!("expression '{expensive}' resulted in error: operation cancelled: actual cost limit exceeded")
    );
    let many: Vec<Json> = (0..11).map(|_| json!({"expression": expensive})).collect();
    let d = run(json!({"validations": many}), &["Deny"], &deployment(1));
    assert_eq!(
        denial_messages(&d),
        ["ValidatingAdmissionPolicy 'p' with binding 'b' denied request: validation failed due to running out of cost budget, no further validation rules will be run"]
    );
}

// policy_source.go calculatePolicyData; dispatcher.go addConfigError
#[test]
fn a_param_kind_not_served_is_a_configuration_error() {
    let spec = |fp: &str| json!({"failurePolicy": fp, "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}, "validations": [{"expression": "true"}]});
    let unknown = ParamObjects {
        namespaced: None,
        objects: &[],
    };
    let d = configuration_error(&compile(&policy(spec("Fail"))), &unknown).unwrap();
    assert_eq!(
        d.message(),
        "ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: failed to find resource referenced by paramKind: '/v1, Kind=ConfigMap'"
    );
    assert_eq!(configuration_error(&compile(&policy(spec("Ignore"))), &unknown), None);
    let served = ParamObjects {
        namespaced: Some(true),
        objects: &[],
    };
    assert_eq!(configuration_error(&compile(&policy(spec("Fail"))), &served), None);
}

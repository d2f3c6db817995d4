//! ValidatingAdmissionPolicy (`apiary_core::admission::policy`): an arbitrary
//! expression as a variable, match condition, validation, message expression and
//! audit annotation of a policy with a ConfigMap param kind, evaluated against an
//! arbitrary object (as the new object and the old one, and as the param) under
//! Deny, Warn and Audit; also as a webhook match condition. Never panics, overflows
//! the stack or runs away (the per-call and per-policy cost limits bound each run);
//! compiling twice gives the same errors.
//!
//! Input: a byte picking the operation and failure policy, the expression, a NUL
//! byte, then the object's JSON.
#![no_main]

use apiary_core::admission::matching::{GroupVersionKind, GroupVersionResource, Matched, Request};
use apiary_core::admission::policy::{
    compile, compile_webhook_match_conditions, evaluate, expression_errors, match_conditions, FailurePolicy, Input,
    ParamObjects,
};
use apiary_core::admission::{Attributes, Operation};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let split = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let Ok(expr) = std::str::from_utf8(&rest[..split]) else { return };
    let object: Map<String, Value> = rest
        .get(split + 1..)
        .and_then(|r| serde_json::from_slice::<Value>(r).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_else(|| {
            json!({"metadata": {"name": "p", "namespace": "ns", "labels": {"a": "b"}}, "data": {"k": "v"}, "spec": {"n": 1}})
                .as_object()
                .cloned()
                .unwrap()
        });
    let fp = if pick & 4 == 0 { "Fail" } else { "Ignore" };
    let policy = json!({"metadata": {"name": "p"}, "spec": {
        "failurePolicy": fp,
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "variables": [{"name": "v", "expression": expr}, {"name": "w", "expression": "variables.v"}],
        "matchConditions": [{"name": "m", "expression": expr}],
        "validations": [
            {"expression": expr, "messageExpression": expr},
            {"expression": "variables.w == variables.v", "message": "m"}
        ],
        "auditAnnotations": [{"key": "k", "valueExpression": expr}]
    }});
    let policy = policy.as_object().unwrap();
    let compiled = compile(policy);
    assert_eq!(expression_errors(policy), expression_errors(policy));
    let op = [Operation::Create, Operation::Update, Operation::Delete, Operation::Connect][pick as usize % 4];
    let attributes = Attributes {
        operation: op,
        group: "",
        version: "v1",
        resource: "configmaps",
        subresource: "",
        namespace: Some("ns"),
        name: "p",
        user: None,
        dry_run: pick & 8 != 0,
    };
    let mut request = Request::new(attributes, ("", "v1", "ConfigMap"));
    request.object = Some(&object);
    request.old_object = Some(&object);
    let matched = Matched {
        resource: GroupVersionResource::new("", "v1", "configmaps"),
        kind: GroupVersionKind::new("", "v1", "ConfigMap"),
    };
    let input = Input {
        request: &request,
        matched: &matched,
        namespace: Some(&object),
    };
    let params = [object.clone()];
    let lookup = ParamObjects {
        namespaced: Some(true),
        objects: &params,
    };
    let binding = json!({"metadata": {"name": "b"}, "spec": {"policyName": "p",
        "validationActions": ["Deny", "Warn", "Audit"],
        "paramRef": {"selector": {}, "parameterNotFoundAction": "Deny"}}});
    let decision = evaluate(&compiled, binding.as_object().unwrap(), &input, &lookup);
    for d in &decision.denials {
        let _ = d.to_api_error(&request);
    }
    let hook = json!({"matchConditions": [{"name": "m", "expression": expr}]});
    let conditions = compile_webhook_match_conditions(&hook);
    let policy = if pick & 4 == 0 { FailurePolicy::Fail } else { FailurePolicy::Ignore };
    let _ = match_conditions(&conditions, policy, &request, &matched);
});

//! Admission matching (`apiary_core::admission::matching`): an arbitrary webhook (or
//! `matchResources`) JSON, namespace object and request object against a request
//! whose operation, resource, subresource and namespace are picked by the first
//! bytes. Never panics; rules with every list widened to `*` (and resources to
//! `*/*`, scope `*`) match whatever the exact rules matched; the same answers twice.
//!
//! Input: four selector bytes, then up to three JSON documents split by zero bytes
//! (webhook, namespace, object).
#![no_main]

use apiary_core::admission::matching::{
    binding_matches, policy_matches, rule_matches, webhook_matches, EquivalenceTable, GroupVersionKind,
    GroupVersionResource, Request,
};
use apiary_core::admission::{Attributes, Operation};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};

/// Deployments are served in three group-versions.
fn deployments() -> EquivalenceTable {
    let served = [("apps", "v1"), ("extensions", "v1beta1"), ("apps", "v1beta2")];
    let entry = |(g, v): (&str, &str)| (GroupVersionResource::new(g, v, "deployments"), GroupVersionKind::new(g, v, "Deployment"));
    EquivalenceTable(vec![served.into_iter().map(entry).collect()])
}

const RESOURCES: [(&str, &str, &str, &str); 4] = [
    ("", "v1", "pods", "Pod"),
    ("apps", "v1", "deployments", "Deployment"),
    ("", "v1", "namespaces", "Namespace"),
    ("", "v1", "nodes", "Node"),
];

/// The rule with every list a wildcard.
fn widened(rule: &Value) -> Value {
    let mut r = rule.clone();
    if let Some(o) = r.as_object_mut() {
        o.insert("operations".into(), json!(["*"]));
        o.insert("apiGroups".into(), json!(["*"]));
        o.insert("apiVersions".into(), json!(["*"]));
        o.insert("resources".into(), json!(["*/*"]));
        o.insert("scope".into(), json!("*"));
    }
    r
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let op = [Operation::Create, Operation::Update, Operation::Delete, Operation::Connect][data[0] as usize % 4];
    let (group, version, resource, kind) = RESOURCES[data[1] as usize % RESOURCES.len()];
    let subresource = ["", "status", "scale", "exec"][data[2] as usize % 4];
    let namespace = [None, Some("ns"), Some("")][data[3] as usize % 3];
    let mut docs = data[4..].split(|&b| b == 0).map(|d| serde_json::from_slice::<Value>(d).ok());
    let webhook = docs.next().flatten().unwrap_or(Value::Null);
    let ns: Option<Map<String, Value>> = docs.next().flatten().and_then(|v| v.as_object().cloned());
    let object: Option<Map<String, Value>> = docs.next().flatten().and_then(|v| v.as_object().cloned());
    let attributes = Attributes {
        operation: op,
        group,
        version,
        resource,
        subresource,
        namespace,
        name: "n",
        user: None,
        dry_run: false,
    };
    let table = deployments();
    let mut request = Request::new(attributes, (group, version, kind));
    request.object = object.as_ref();
    request.old_object = object.as_ref();
    let first = webhook_matches(&webhook, &request, ns.as_ref(), &table);
    assert_eq!(first, webhook_matches(&webhook, &request, ns.as_ref(), &table));
    let _ = policy_matches(&webhook, &request, ns.as_ref(), &table);
    if let Some(o) = webhook.as_object() {
        let _ = binding_matches(o, &request, ns.as_ref(), &table);
    }
    let resource = request.resource();
    for rule in webhook.get("rules").and_then(Value::as_array).into_iter().flatten() {
        if rule_matches(rule, &request, &resource) {
            assert!(rule_matches(&widened(rule), &request, &resource), "{rule}");
        }
    }
    // A webhook whose rules all widen matches at least where it matched.
    if let Ok(Some(_)) = first {
        let mut wide = webhook.clone();
        if let Some(rules) = wide.get_mut("rules").and_then(Value::as_array_mut) {
            for r in rules.iter_mut() {
                *r = widened(r);
            }
        }
        assert!(matches!(webhook_matches(&wide, &request, ns.as_ref(), &table), Ok(Some(_))));
    }
});

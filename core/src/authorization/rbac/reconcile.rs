//! Reconciling a bootstrap RBAC object with the one stored, as upstream's
//! `rbac/bootstrap-roles` hook does: labels and annotations the stored object lacks
//! are added, missing rules (and aggregation selectors) are added to roles, missing
//! subjects to bindings; nothing is removed, and an object annotated
//! `rbac.authorization.kubernetes.io/autoupdate: "false"` is left alone.

use super::covers;
use super::rule::PolicyRule;
use serde_json::{Map, Value};

pub const AUTOUPDATE: &str = "rbac.authorization.kubernetes.io/autoupdate";

/// The object to write in place of `existing`, or `None` when it needs nothing (or is
/// protected from updates).
pub fn reconcile(existing: &Value, expected: &Value) -> Option<Value> {
    let protected = existing
        .pointer(&format!("/metadata/annotations/{}", AUTOUPDATE.replace('/', "~1")))
        .and_then(Value::as_str)
        == Some("false");
    if protected {
        return None;
    }
    let mut result = existing.clone();
    let mut changed = false;
    for field in ["labels", "annotations"] {
        changed |= merge_missing(&mut result, expected, field);
    }
    if expected.get("roleRef").is_some() {
        changed |= add_missing_subjects(&mut result, expected);
    } else {
        changed |= add_missing_rules(&mut result, expected);
        changed |= add_missing_selectors(&mut result, expected);
    }
    changed.then_some(result)
}

/// Add the expected metadata map entries the stored object has no key for (a stored
/// value wins, as upstream merges).
fn merge_missing(result: &mut Value, expected: &Value, field: &str) -> bool {
    let Some(want) = expected.pointer(&format!("/metadata/{field}")).and_then(Value::as_object) else {
        return false;
    };
    let Some(metadata) = result.get_mut("metadata").and_then(Value::as_object_mut) else {
        return false;
    };
    let have = metadata
        .entry(field)
        .or_insert_with(|| Value::Object(Map::new()));
    if !have.is_object() {
        *have = Value::Object(Map::new());
    }
    let have = have.as_object_mut().expect("an object");
    let mut changed = false;
    for (k, v) in want {
        if !have.contains_key(k) {
            have.insert(k.clone(), v.clone());
            changed = true;
        }
    }
    changed
}

fn rules(v: &Value) -> Vec<PolicyRule> {
    v.get("rules")
        .cloned()
        .and_then(|r| serde_json::from_value(r).ok())
        .unwrap_or_default()
}

fn add_missing_rules(result: &mut Value, expected: &Value) -> bool {
    let have = rules(result);
    let missing = covers::uncovered(&have, &rules(expected));
    if missing.is_empty() {
        return false;
    }
    let mut all: Vec<Value> = result
        .get("rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    all.extend(missing.iter().map(|r| serde_json::to_value(r).expect("rules serialize")));
    result["rules"] = Value::Array(all);
    true
}

fn add_missing_selectors(result: &mut Value, expected: &Value) -> bool {
    let Some(want) = expected
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
    else {
        return false;
    };
    let have: Vec<Value> = result
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let missing: Vec<&Value> = want.iter().filter(|s| !have.contains(s)).collect();
    if missing.is_empty() {
        return false;
    }
    let mut all = have;
    all.extend(missing.into_iter().cloned());
    result["aggregationRule"] = serde_json::json!({ "clusterRoleSelectors": all });
    true
}

fn add_missing_subjects(result: &mut Value, expected: &Value) -> bool {
    let want = expected.get("subjects").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut have = result.get("subjects").and_then(Value::as_array).cloned().unwrap_or_default();
    let key = |s: &Value| {
        ["kind", "name", "namespace"].map(|f| s.get(f).and_then(Value::as_str).unwrap_or("").to_owned())
    };
    let mut changed = false;
    for s in want {
        if !have.iter().any(|h| key(h) == key(&s)) {
            have.push(s);
            changed = true;
        }
    }
    if changed {
        result["subjects"] = Value::Array(have);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_rules_are_added_and_nothing_removed() {
        let stored = json!({"metadata": {"name": "r", "annotations": {"mine": "x"}},
            "rules": [{"verbs": ["delete"], "apiGroups": [""], "resources": ["pods"]}]});
        let expected = json!({"metadata": {"name": "r", "annotations": {AUTOUPDATE: "true"}, "labels": {"l": "v"}},
            "rules": [{"verbs": ["get", "delete"], "apiGroups": [""], "resources": ["pods"]}]});
        let out = reconcile(&stored, &expected).expect("an update");
        assert_eq!(out["metadata"]["annotations"], json!({"mine": "x", AUTOUPDATE: "true"}));
        assert_eq!(out["metadata"]["labels"], json!({"l": "v"}));
        assert_eq!(
            out["rules"],
            json!([{"verbs": ["delete"], "apiGroups": [""], "resources": ["pods"]},
                   {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}])
        );
        assert_eq!(reconcile(&out, &expected), None, "a second pass changes nothing");
    }

    #[test]
    fn autoupdate_false_protects() {
        let stored = json!({"metadata": {"name": "r", "annotations": {AUTOUPDATE: "false"}}, "rules": []});
        let expected = json!({"metadata": {"name": "r"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]});
        assert_eq!(reconcile(&stored, &expected), None);
    }

    #[test]
    fn bindings_gain_missing_subjects() {
        let stored = json!({"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "extra"}]});
        let expected = json!({"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "Group", "name": "system:authenticated", "apiGroup": "rbac.authorization.k8s.io"}]});
        let out = reconcile(&stored, &expected).expect("an update");
        assert_eq!(out["subjects"].as_array().map(Vec::len), Some(2));
    }
}

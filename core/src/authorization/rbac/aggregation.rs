//! ClusterRole aggregation, as upstream's clusterrole-aggregation controller keeps it:
//! a ClusterRole with an `aggregationRule` has as rules the union of the rules of
//! every other ClusterRole its selectors match — selector by selector, roles by name,
//! each rule once, in that order. Aggregation is transitive through labels: an
//! aggregated role that is itself selected passes on what it gathered, one pass later.

use super::rule::PolicyRule;
use crate::selection::LabelSelector;
use serde_json::Value;

/// An aggregated ClusterRole whose rules are not what its selectors gather.
#[derive(Debug, PartialEq, Eq)]
pub struct Stale {
    pub name: String,
    pub rules: Vec<PolicyRule>,
}

struct Role<'a> {
    name: &'a str,
    labels: Option<&'a serde_json::Map<String, Value>>,
    rules: Vec<PolicyRule>,
}

/// Every aggregated ClusterRole among `cluster_roles` whose rules must change.
pub fn stale(cluster_roles: &[Value]) -> Vec<Stale> {
    let mut roles: Vec<Role<'_>> = cluster_roles
        .iter()
        .map(|r| Role {
            name: r.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(""),
            labels: r.pointer("/metadata/labels").and_then(Value::as_object),
            rules: r
                .get("rules")
                .cloned()
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default(),
        })
        .collect();
    roles.sort_by(|a, b| a.name.cmp(b.name));
    let mut out = Vec::new();
    for aggregated in cluster_roles {
        let Some(selectors) = aggregated
            .pointer("/aggregationRule/clusterRoleSelectors")
            .and_then(Value::as_array)
        else {
            continue;
        };
        let name = aggregated.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        let mut gathered: Vec<PolicyRule> = Vec::new();
        for selector in selectors {
            // A selector that does not parse selects nothing (upstream stops there).
            let Some(selector) = LabelSelector::from_object(selector) else {
                continue;
            };
            for role in roles.iter().filter(|r| r.name != name && selector.matches_labels(r.labels)) {
                for rule in &role.rules {
                    if !gathered.contains(rule) {
                        gathered.push(rule.clone());
                    }
                }
            }
        }
        let current = roles.iter().find(|r| r.name == name).map(|r| &r.rules);
        if current != Some(&gathered) {
            out.push(Stale {
                name: name.to_owned(),
                rules: gathered,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selected_roles_rules_are_gathered_by_name_each_once_and_transitively() {
        let rule = |verb: &str, resource: &str| json!({"verbs": [verb], "apiGroups": [""], "resources": [resource]});
        let mut roles = vec![
            json!({"metadata": {"name": "view"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"to-view": "true"}}]}}),
            json!({"metadata": {"name": "edit", "labels": {"to-view": "true"}},
                   "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"to-edit": "true"}}]}}),
            json!({"metadata": {"name": "z-extra", "labels": {"to-view": "true"}}, "rules": [rule("get", "pods"), rule("get", "secrets")]}),
            json!({"metadata": {"name": "a-base", "labels": {"to-view": "true"}}, "rules": [rule("get", "pods")]}),
            json!({"metadata": {"name": "writer", "labels": {"to-edit": "true"}}, "rules": [rule("create", "pods")]}),
            json!({"metadata": {"name": "unrelated"}, "rules": [rule("delete", "pods")]}),
        ];
        // First pass: view gathers a-base then z-extra (edit has nothing yet); edit
        // gathers writer.
        let first = stale(&roles);
        assert_eq!(first.len(), 2);
        let names: Vec<_> = first.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["view", "edit"]);
        let got = |s: &Stale| serde_json::to_value(&s.rules).unwrap();
        assert_eq!(got(&first[0]), json!([rule("get", "pods"), rule("get", "secrets")]));
        assert_eq!(got(&first[1]), json!([rule("create", "pods")]));
        for s in &first {
            let role = roles.iter_mut().find(|r| r["metadata"]["name"] == s.name.as_str()).unwrap();
            role["rules"] = got(s);
        }
        // Second pass: view now passes on what edit gathered, in name order (a-base,
        // edit, z-extra).
        let second = stale(&roles);
        assert_eq!(second.len(), 1);
        assert_eq!(got(&second[0]), json!([rule("get", "pods"), rule("create", "pods"), rule("get", "secrets")]));
        roles[0]["rules"] = got(&second[0]);
        assert!(stale(&roles).is_empty(), "settled");
    }
}

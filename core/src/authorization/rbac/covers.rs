//! Whether one set of rules grants everything another does, as upstream's
//! `validation.Covers` decides it: the requested rules are broken into single-verb,
//! single-resource pieces, and each piece must be covered by one owner rule. Used to
//! prevent escalation (a role may only grant what its author holds) and to reconcile
//! the bootstrap policy (missing pieces are added).

use super::rule::PolicyRule;

const ALL: &str = "*";

/// The pieces of `requested` that no rule of `owner` covers (empty: covered).
pub fn uncovered(owner: &[PolicyRule], requested: &[PolicyRule]) -> Vec<PolicyRule> {
    requested
        .iter()
        .flat_map(breakdown)
        .filter(|piece| !owner.iter().any(|o| covers(o, piece)))
        .collect()
}

/// A rule as single-group, single-resource, single-verb (and single-name) pieces,
/// then single-URL, single-verb ones.
pub fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let one = |s: &String| vec![s.clone()];
    let mut pieces = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let piece = |names| PolicyRule {
                    verbs: one(verb),
                    api_groups: one(group),
                    resources: one(resource),
                    resource_names: names,
                    non_resource_urls: Vec::new(),
                };
                if rule.resource_names.is_empty() {
                    pieces.push(piece(Vec::new()));
                } else {
                    pieces.extend(rule.resource_names.iter().map(|n| piece(one(n))));
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            pieces.push(PolicyRule {
                verbs: one(verb),
                non_resource_urls: one(url),
                ..PolicyRule::default()
            });
        }
    }
    pieces
}

fn has(set: &[String], item: &str) -> bool {
    set.iter().any(|s| s == item)
}

fn has_all(set: &[String], items: &[String]) -> bool {
    items.iter().all(|i| has(set, i))
}

/// Whether `owner` grants all of `requested` (upstream's `ruleCovers`).
fn covers(owner: &PolicyRule, requested: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, ALL) || has_all(&owner.verbs, &requested.verbs);
    let groups = has(&owner.api_groups, ALL) || has_all(&owner.api_groups, &requested.api_groups);
    let resources = resources_cover(&owner.resources, &requested.resources);
    let urls = requested
        .non_resource_urls
        .iter()
        .all(|r| owner.non_resource_urls.iter().any(|o| url_covers(o, r)));
    let names = if requested.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &requested.resource_names)
    };
    verbs && groups && resources && urls && names
}

/// `*` covers everything; `*/scale` covers the scale subresource of any resource.
fn resources_cover(owner: &[String], requested: &[String]) -> bool {
    if has(owner, ALL) {
        return true;
    }
    requested.iter().all(|r| {
        has(owner, r)
            || r.split_once('/')
                .is_some_and(|(_, sub)| owner.iter().any(|o| o.strip_prefix("*/") == Some(sub)))
    })
}

fn url_covers(owner: &str, requested: &str) -> bool {
    owner == requested || (owner.ends_with('*') && requested.starts_with(owner.trim_end_matches('*')))
}

/// Missing pieces as upstream's escalation message lists them: pieces that differ only
/// in their verb merged into one rule (`CompactRules`), each written as
/// `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`, sorted.
pub fn describe(missing: &[PolicyRule]) -> Vec<String> {
    let mut merged: Vec<PolicyRule> = Vec::new();
    for piece in missing {
        let simple = piece.api_groups.len() == 1
            && piece.resources.len() == 1
            && piece.resource_names.len() <= 1
            && piece.non_resource_urls.is_empty();
        let same = |m: &PolicyRule| {
            m.api_groups == piece.api_groups
                && m.resources == piece.resources
                && m.resource_names == piece.resource_names
                && m.non_resource_urls.is_empty()
        };
        match merged.iter_mut().find(|m| simple && same(m)) {
            Some(m) => m.verbs.extend(piece.verbs.iter().cloned()),
            None => merged.push(piece.clone()),
        }
    }
    let mut lines: Vec<String> = merged.iter().map(compact).collect();
    lines.sort();
    lines.dedup();
    lines
}

/// Go's `%q` of a string slice: `["a" "b"]`.
fn quoted(list: &[String]) -> String {
    let items: Vec<String> = list.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", items.join(" "))
}

/// Upstream's `CompactString` of a rule.
fn compact(rule: &PolicyRule) -> String {
    let mut parts = Vec::new();
    for (name, list) in [
        ("APIGroups", &rule.api_groups),
        ("Resources", &rule.resources),
        ("NonResourceURLs", &rule.non_resource_urls),
        ("ResourceNames", &rule.resource_names),
        ("Verbs", &rule.verbs),
    ] {
        if !list.is_empty() {
            parts.push(format!("{name}:{}", quoted(list)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// Go's `%q` of a string slice, for the groups in the escalation message.
pub fn go_quoted(list: &[String]) -> String {
    quoted(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
        let v = |s: &[&str]| s.iter().map(|s| s.to_string()).collect();
        PolicyRule {
            verbs: v(verbs),
            api_groups: v(groups),
            resources: v(resources),
            ..PolicyRule::default()
        }
    }

    #[test]
    fn stars_and_subresources_cover() {
        let admin = [rule(&["*"], &["*"], &["*"])];
        assert!(uncovered(&admin, &[rule(&["get", "list"], &["apps"], &["deployments/scale"])]).is_empty());
        let scale = [rule(&["update"], &[""], &["*/scale"])];
        assert!(uncovered(&scale, &[rule(&["update"], &[""], &["replicationcontrollers/scale"])]).is_empty());
        assert_eq!(uncovered(&scale, &[rule(&["update"], &[""], &["replicationcontrollers"])]).len(), 1);
    }

    #[test]
    fn missing_pieces_are_listed_and_described_as_upstream() {
        let owner = [rule(&["get"], &[""], &["pods"])];
        let missing = uncovered(&owner, &[rule(&["get", "list", "watch"], &[""], &["pods", "secrets"])]);
        assert_eq!(missing.len(), 5);
        assert_eq!(
            describe(&missing),
            [
                r#"{APIGroups:[""], Resources:["pods"], Verbs:["list" "watch"]}"#,
                r#"{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "watch"]}"#,
            ]
        );
    }

    #[test]
    fn names_narrow_and_urls_prefix() {
        let named = PolicyRule {
            resource_names: vec!["a".into()],
            ..rule(&["get"], &[""], &["configmaps"])
        };
        assert!(uncovered(std::slice::from_ref(&named), std::slice::from_ref(&named)).is_empty());
        assert_eq!(uncovered(&[named], &[rule(&["get"], &[""], &["configmaps"])]).len(), 1);
        let urls = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/apis/*".into()],
            ..PolicyRule::default()
        };
        let want = PolicyRule {
            non_resource_urls: vec!["/apis/apps".into()],
            ..urls.clone()
        };
        assert!(uncovered(&[urls], &[want]).is_empty());
    }
}

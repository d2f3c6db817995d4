//! Which FlowSchema a request matches, and which flow of it the request belongs to:
//! a schema matches when one of its rules names one of the request's subjects and,
//! for a resource request, one of its resource rules covers the verb, group,
//! resource (with subresource) and namespace — for other paths, one of its
//! non-resource rules covers the verb and path.

use super::objects::{Distinguisher, FlowSchema, NonResourceRule, PolicyRules, ResourceRule, Subject};
use crate::authn::UserInfo;
use crate::request_info::RequestInfo;

/// Whether `schema` takes the request.
pub fn matches(schema: &FlowSchema, user: &UserInfo, info: &RequestInfo) -> bool {
    schema.rules.iter().any(|rules| rules_match(rules, user, info))
}

fn rules_match(rules: &PolicyRules, user: &UserInfo, info: &RequestInfo) -> bool {
    if !rules.subjects.iter().any(|s| subject_matches(s, user)) {
        return false;
    }
    if info.is_resource_request {
        rules.resource_rules.iter().any(|r| resource_rule_matches(r, info))
    } else {
        rules.non_resource_rules.iter().any(|r| non_resource_rule_matches(r, info))
    }
}

fn subject_matches(subject: &Subject, user: &UserInfo) -> bool {
    match subject.kind.as_str() {
        "User" => subject.user.as_ref().is_some_and(|u| u.name == "*" || u.name == user.name),
        "Group" => subject
            .group
            .as_ref()
            .is_some_and(|g| g.name == "*" || user.groups.contains(&g.name)),
        "ServiceAccount" => subject.service_account.as_ref().is_some_and(|sa| {
            let Some(rest) = user.name.strip_prefix("system:serviceaccount:") else {
                return false;
            };
            match sa.name.as_str() {
                // Any account of the namespace.
                "*" => rest.strip_prefix(sa.namespace.as_str()).is_some_and(|r| r.starts_with(':')),
                name => rest.split_once(':') == Some((sa.namespace.as_str(), name)),
            }
        }),
        _ => false,
    }
}

/// `value` is listed, or the list is just the wildcard.
fn listed(list: &[String], value: &str, wildcard: &str) -> bool {
    (list.len() == 1 && list[0] == wildcard) || list.iter().any(|v| v == value)
}

fn resource_rule_matches(rule: &ResourceRule, info: &RequestInfo) -> bool {
    let resource = match info.subresource.as_str() {
        "" => info.resource.clone(),
        sub => format!("{}/{sub}", info.resource),
    };
    if !listed(&rule.verbs, &info.verb, "*")
        || !listed(&rule.resources, &resource, "*")
        || !listed(&rule.api_groups, &info.api_group, "*")
    {
        return false;
    }
    if info.namespace.is_empty() {
        rule.cluster_scope
    } else {
        listed(&rule.namespaces, &info.namespace, "*")
    }
}

fn non_resource_rule_matches(rule: &NonResourceRule, info: &RequestInfo) -> bool {
    if !listed(&rule.verbs, &info.verb, "*") {
        return false;
    }
    rule.non_resource_urls.iter().any(|url| {
        if url == "*" || *url == info.path {
            return true;
        }
        // `/apis/*` and `/apis` both cover what is under `/apis/`.
        let mut prefix = url.trim_end_matches('*').to_owned();
        if !prefix.ends_with('/') {
            prefix.push('/');
        }
        info.path.starts_with(&prefix)
    })
}

/// The flow a request of `schema` belongs to (empty when the schema distinguishes none).
pub fn flow_distinguisher(schema: &FlowSchema, user: &UserInfo, info: &RequestInfo) -> String {
    match schema.distinguisher {
        Some(Distinguisher::ByUser) => user.name.clone(),
        Some(Distinguisher::ByNamespace) => info.namespace.clone(),
        None => String::new(),
    }
}

/// The number the flow's queues are dealt from: the first eight bytes, little-endian,
/// of the SHA-256 of the schema's name, a zero byte and the distinguisher — as
/// upstream hashes it, so that a flow lands in the same queues on every server.
pub fn flow_hash(schema: &str, distinguisher: &str) -> u64 {
    let mut digest = ring::digest::Context::new(&ring::digest::SHA256);
    digest.update(schema.as_bytes());
    digest.update(&[0]);
    digest.update(distinguisher.as_bytes());
    let sum = digest.finish();
    u64::from_le_bytes(sum.as_ref()[..8].try_into().expect("32 bytes"))
}

/// Deal a hand of `hand_size` distinct queues out of `deck_size` from `hash`, as
/// upstream's shuffle-sharding dealer does: each card is a remainder of the hash in a
/// mixed-radix count down from the deck size, shifted past the cards dealt before it.
pub fn deal(mut hash: u64, deck_size: usize, hand_size: usize) -> Vec<usize> {
    let mut remainders = Vec::with_capacity(hand_size);
    for i in 0..hand_size {
        let base = (deck_size - i) as u64;
        remainders.push((hash % base) as usize);
        hash /= base;
    }
    let mut hand = Vec::with_capacity(hand_size);
    for i in 0..hand_size {
        let mut card = remainders[i];
        for j in (1..=i).rev() {
            if card >= remainders[j - 1] {
                card += 1;
            }
        }
        hand.push(card);
    }
    hand
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flowcontrol::objects::mandatory;

    fn info(method: &str, path: &str) -> RequestInfo {
        crate::request_info::resolve(&method.parse().unwrap(), path, None)
    }

    #[test]
    fn hands_hold_distinct_cards_within_the_deck() {
        for hash in [0, 1, 12345, u64::MAX, flow_hash("global-default", "alice")] {
            let hand = deal(hash, 128, 6);
            let mut sorted = hand.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 6, "{hand:?}");
            assert!(hand.iter().all(|&c| c < 128));
        }
        // Every card of a full hand is dealt once.
        let mut all = deal(987_654_321, 8, 8);
        all.sort_unstable();
        assert_eq!(all, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn schemas_match_subjects_and_rules() {
        let (schemas, _) = mandatory();
        let admin = UserInfo::named("admin", vec!["system:masters".into(), "system:authenticated".into()]);
        let alice = UserInfo::named("alice", vec!["system:authenticated".into()]);
        let pods = info("GET", "/api/v1/namespaces/default/pods");
        assert!(matches(&schemas[0], &admin, &pods));
        assert!(!matches(&schemas[0], &alice, &pods));
        assert!(matches(&schemas[1], &alice, &pods));
        assert!(matches(&schemas[1], &alice, &info("GET", "/healthz")));
        assert_eq!(flow_distinguisher(&schemas[1], &alice, &pods), "alice");
    }

    #[test]
    fn non_resource_prefixes_and_service_accounts() {
        let rule = NonResourceRule { verbs: vec!["get".into()], non_resource_urls: vec!["/apis/*".into(), "/healthz".into()] };
        assert!(non_resource_rule_matches(&rule, &info("GET", "/apis/apps")));
        assert!(non_resource_rule_matches(&rule, &info("GET", "/healthz")));
        // A path names what is under it too, as upstream reads it.
        assert!(non_resource_rule_matches(&rule, &info("GET", "/healthz/etcd")));
        assert!(!non_resource_rule_matches(&rule, &info("GET", "/healthzz")));
        assert!(!non_resource_rule_matches(&rule, &info("GET", "/apisx")));
        let sa = |ns: &str, name: &str| Subject {
            kind: "ServiceAccount".into(),
            user: None,
            group: None,
            service_account: Some(super::super::objects::ServiceAccountSubject { namespace: ns.into(), name: name.into() }),
        };
        let user = UserInfo::named("system:serviceaccount:kube-system:default", vec![]);
        assert!(subject_matches(&sa("kube-system", "*"), &user));
        assert!(subject_matches(&sa("kube-system", "default"), &user));
        assert!(!subject_matches(&sa("kube", "*"), &user));
        assert!(!subject_matches(&sa("kube-system", "other"), &user));
    }
}

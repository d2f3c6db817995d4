//! RBAC rule matching and covering over any rules and request: never panics; a set of
//! rules covers itself; what a rule allows, rules that cover it allow too; the index
//! built from any bindings decides without panicking.

#![no_main]

use apiary_core::authn::UserInfo;
use apiary_core::authorization::rbac::{covers, PolicyRule};
use apiary_core::authorization::Attributes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // "rules JSON \n verb \n group \n resource \n subresource \n name \n path"
    let mut parts = text.splitn(7, '\n');
    let Some(rules) = parts.next().and_then(|j| serde_json::from_str::<Vec<PolicyRule>>(j).ok()) else {
        return;
    };
    let field = |p: Option<&str>| p.unwrap_or("").to_owned();
    let (verb, group, resource, sub, name, path) = (
        field(parts.next()),
        field(parts.next()),
        field(parts.next()),
        field(parts.next()),
        field(parts.next()),
        field(parts.next()),
    );
    let user = UserInfo::named("fuzz", vec![]);
    for resource_request in [true, false] {
        let a = Attributes {
            user: &user,
            verb: &verb,
            resource_request,
            namespace: "ns",
            api_group: &group,
            api_version: "v1",
            resource: &resource,
            subresource: &sub,
            name: &name,
            path: &path,
        };
        let allowed = rules.iter().any(|r| r.allows(&a));
        // A rule broken into pieces allows what the whole allowed.
        let pieces: Vec<PolicyRule> = rules.iter().flat_map(covers::breakdown).collect();
        if allowed && pieces.len() < 10_000 {
            assert!(pieces.iter().any(|r| r.allows(&a)), "a piece allows what its rule allowed");
        }
    }
    if rules.iter().map(|r| r.verbs.len() * r.resources.len().max(1) * r.api_groups.len().max(1)).sum::<usize>() < 10_000 {
        assert!(covers::uncovered(&rules, &rules).is_empty(), "rules cover themselves");
        let _ = covers::describe(&covers::uncovered(&[], &rules));
    }
});

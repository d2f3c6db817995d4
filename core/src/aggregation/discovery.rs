//! Discovery with the aggregated groups: `/apis` lists the groups of service-backed
//! APIServices beside the local ones, ordered as kube-aggregator orders them (by the
//! highest `groupPriorityMinimum` of a group's APIServices, then by name; a group's
//! versions by `versionPriority`, then kube version order), and `/apis/<group>` of such
//! a group is answered from its APIServices. Groups no APIService changes keep the
//! registry's order and versions.

use super::text;
use crate::registry::{compare_versions, GroupInfo, Registry};
use crate::shared::Shared;
use serde_json::Value;
use std::cmp::Reverse;

/// The groups of `/apis` (the core group is not one), most preferred first.
pub(crate) fn groups(shared: &Shared, registry: &Registry) -> Vec<GroupInfo> {
    let local = registry.groups();
    if !super::any_remote(shared) {
        return local;
    }
    merge(local, &super::apiservices(shared).unwrap_or_default())
}

/// `local` groups with the remote versions of `apis` joined, in upstream's order.
fn merge(local: Vec<GroupInfo>, apis: &[Value]) -> Vec<GroupInfo> {
    let priority = |a: &Value, key: &str| a.pointer(&format!("/spec/{key}")).and_then(Value::as_i64).unwrap_or(0);
    let mut groups: Vec<(i64, GroupInfo)> = Vec::new();
    // A local group no APIService names sorts where the registry puts it: with the
    // priority of the group before it (the aggregator's own group comes first).
    let mut previous = i64::MAX;
    for mut group in local {
        let rank = of_group(apis, &group.name).map(|a| priority(a, "groupPriorityMinimum")).max().unwrap_or(previous);
        previous = rank;
        let remote: Vec<String> = of_group(apis, &group.name)
            .filter(|a| super::Backend::of(a).is_some())
            .map(|a| text(a, "/spec/version").to_owned())
            .filter(|v| !group.versions.contains(v))
            .collect();
        if !remote.is_empty() {
            group.versions.extend(remote);
            sort_versions(&mut group, apis);
        }
        groups.push((rank, group));
    }
    for api in apis.iter().filter(|a| super::Backend::of(a).is_some()) {
        let name = text(api, "/spec/group");
        if groups.iter().any(|(_, g)| g.name == name) {
            continue;
        }
        let rank = of_group(apis, name).map(|a| priority(a, "groupPriorityMinimum")).max().unwrap_or(0);
        let mut group = GroupInfo {
            name: name.to_owned(),
            versions: of_group(apis, name).map(|a| text(a, "/spec/version").to_owned()).collect(),
            preferred_version: String::new(),
        };
        sort_versions(&mut group, apis);
        // Before the first group it outranks; the local ones keep their order.
        let at = groups.iter().position(|(r, g)| *r < rank || (*r == rank && g.name.as_str() > name)).unwrap_or(groups.len());
        groups.insert(at, (rank, group));
    }
    groups.into_iter().map(|(_, g)| g).collect()
}

/// The APIServices of `group`.
fn of_group<'a>(apis: &'a [Value], group: &'a str) -> impl Iterator<Item = &'a Value> {
    apis.iter().filter(move |a| !group.is_empty() && text(a, "/spec/group") == group)
}

/// A group's versions by their APIServices' `versionPriority`, then kube version order;
/// the first is preferred.
fn sort_versions(group: &mut GroupInfo, apis: &[Value]) {
    let version_priority = |v: &str| {
        apis.iter()
            .find(|a| text(a, "/spec/group") == group.name && text(a, "/spec/version") == v)
            .and_then(|a| a.pointer("/spec/versionPriority").and_then(Value::as_i64))
            .unwrap_or(0)
    };
    let mut versions = std::mem::take(&mut group.versions);
    versions.dedup();
    versions.sort_by(|a, b| Reverse(version_priority(a)).cmp(&Reverse(version_priority(b))).then_with(|| compare_versions(a, b)));
    group.preferred_version = versions.first().cloned().unwrap_or_default();
    group.versions = versions;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn api(group: &str, version: &str, group_priority: i64, version_priority: i64, remote: bool) -> Value {
        let mut a = json!({"metadata": {"name": format!("{version}.{group}")},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": group_priority, "versionPriority": version_priority}});
        if remote {
            a["spec"]["service"] = json!({"namespace": "n", "name": "s", "port": 443});
        }
        a
    }

    #[test]
    fn aggregated_groups_sort_by_priority_then_name_and_versions_by_version_priority() {
        let local = Registry::builtin().groups();
        let apis = [
            api("apps", "v1", 17800, 15, false),
            api("metrics.k8s.io", "v1beta1", 100, 100, true),
            api("a.example.com", "v1", 100, 100, true),
            api("wardle.example.com", "v1alpha1", 17900, 10, true),
            api("wardle.example.com", "v1beta1", 17900, 5, true),
        ];
        let merged = merge(local.clone(), &apis);
        let names: Vec<&str> = merged.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names[..3], ["apiregistration.k8s.io", "wardle.example.com", "apps"]);
        assert_eq!(names[names.len() - 2..], ["a.example.com", "metrics.k8s.io"]);
        let wardle = &merged[1];
        assert_eq!(wardle.versions, ["v1alpha1", "v1beta1"]);
        assert_eq!(wardle.preferred_version, "v1alpha1");
        let unchanged: Vec<&GroupInfo> = merged.iter().filter(|g| local.iter().any(|l| l.name == g.name)).collect();
        assert_eq!(unchanged.len(), local.len());
        assert!(unchanged.iter().zip(&local).all(|(a, b)| a.name == b.name && a.versions == b.versions));
    }
}

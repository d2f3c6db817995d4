//! Discovery with the aggregated groups: `/apis` lists the groups of service-backed
//! APIServices beside the local ones, ordered as kube-aggregator orders them (by the
//! highest `groupPriorityMinimum` of a group's APIServices, then by name; a group's
//! versions by `versionPriority`, then kube version order), and `/apis/<group>` of such
//! a group is answered from its APIServices. Groups no APIService changes keep the
//! registry's order and versions.
//!
//! Aggregated discovery (`apidiscovery.k8s.io`) lists the same groups and versions; a
//! service-backed group version has the resources its backend listed at the last
//! passing availability check, converted as upstream converts a backend's legacy
//! `APIResourceList`, and is `Current`; while its APIService is not Available it is
//! listed `Stale` with no resources, as upstream's discovery manager lists a group
//! version whose backend it could not read.

use super::text;
use crate::discovery::{self as docs, AggregatedVersion, ApiGroupDiscoveryList, ApiResourceDiscovery, ApiSubresourceDiscovery, ApiVersionDiscovery, GroupVersionKind};
use crate::registry::{compare_versions, GroupInfo, Registry};
use crate::shared::Shared;
use serde_json::Value;
use std::cmp::Reverse;

/// The groups of `/apis` (the core group is not one), most preferred first.
pub(crate) fn groups(shared: &Shared, registry: &Registry) -> Vec<GroupInfo> {
    match remote_apis(shared) {
        None => registry.groups(),
        Some(apis) => merge(registry.groups(), &apis),
    }
}

/// Every APIService, when one of them names a Service.
fn remote_apis(shared: &Shared) -> Option<Vec<Value>> {
    super::any_remote(shared).then(|| super::apiservices(shared).unwrap_or_default())
}

/// The aggregated discovery document of `/apis`, the groups in [`groups`]' order.
pub(crate) fn aggregated_apis(shared: &Shared, registry: &Registry, version: AggregatedVersion) -> ApiGroupDiscoveryList {
    let Some(apis) = remote_apis(shared) else {
        return docs::aggregated_apis(registry, version);
    };
    let items = merge(registry.groups(), &apis)
        .into_iter()
        .map(|group| {
            let versions = group
                .versions
                .iter()
                .map(|v| {
                    let remote = of_group(&apis, &group.name).find(|a| text(a, "/spec/version") == v && super::Backend::of(a).is_some());
                    match remote {
                        Some(api) => remote_version(shared, api),
                        None => docs::version_discovery(registry, &group.name, v),
                    }
                })
                .collect();
            docs::group_discovery_of(&group.name, versions)
        })
        .collect();
    docs::discovery_list(version, items)
}

/// The aggregated entry of a service-backed APIService's group version.
fn remote_version(shared: &Shared, api: &Value) -> ApiVersionDiscovery {
    let known = super::is_available(api).then(|| shared.backend_documents.resources(text(api, "/metadata/name"))).flatten();
    let freshness = if known.is_some() { docs::FRESHNESS_CURRENT } else { docs::FRESHNESS_STALE };
    ApiVersionDiscovery {
        version: text(api, "/spec/version").to_owned(),
        resources: known.unwrap_or_default(),
        freshness: freshness.to_owned(),
    }
}

/// A backend's legacy discovery document (`APIResourceList`) as aggregated discovery
/// resources, as upstream's `ConvertGroupVersionIntoToDiscovery`: every entry without
/// `/` a resource, in the list's order; every `x/y` a subresource `y` of `x` (a
/// resource with no kind made for it when the list has none); `None` when a
/// subresource's scope is not its resource's, or the document is not a resource list.
pub(crate) fn legacy_to_aggregated(list: &Value) -> Option<Vec<ApiResourceDiscovery>> {
    let entries = list.get("resources")?.as_array()?;
    let strings = |e: &Value, key: &str| -> Vec<String> {
        e.get(key).and_then(Value::as_array).map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect()).unwrap_or_default()
    };
    let scope = |e: &Value| if e.get("namespaced").and_then(Value::as_bool).unwrap_or(false) { "Namespaced" } else { "Cluster" };
    let kind = |e: &Value| GroupVersionKind { group: text(e, "/group").to_owned(), version: text(e, "/version").to_owned(), kind: text(e, "/kind").to_owned() };
    let no_kind = || kind(&Value::Null);
    let mut resources: Vec<ApiResourceDiscovery> = entries
        .iter()
        .filter(|e| !text(e, "/name").contains('/'))
        .map(|e| ApiResourceDiscovery {
            resource: text(e, "/name").to_owned(),
            response_kind: Some(kind(e)),
            scope: scope(e).to_owned(),
            singular_resource: text(e, "/singularName").to_owned(),
            verbs: strings(e, "verbs"),
            short_names: strings(e, "shortNames"),
            categories: strings(e, "categories"),
            subresources: Vec::new(),
        })
        .collect();
    for e in entries {
        let Some((parent, sub)) = text(e, "/name").split_once('/') else { continue };
        let at = match resources.iter().position(|r| r.resource == parent) {
            Some(at) => at,
            None => {
                resources.push(ApiResourceDiscovery {
                    resource: parent.to_owned(),
                    response_kind: Some(no_kind()),
                    scope: scope(e).to_owned(),
                    singular_resource: String::new(),
                    verbs: Vec::new(),
                    short_names: Vec::new(),
                    categories: Vec::new(),
                    subresources: Vec::new(),
                });
                resources.len() - 1
            }
        };
        if resources[at].scope != scope(e) {
            return None;
        }
        resources[at].subresources.push(ApiSubresourceDiscovery {
            subresource: sub.to_owned(),
            response_kind: Some(if text(e, "/kind").is_empty() { no_kind() } else { kind(e) }),
            verbs: strings(e, "verbs"),
        });
    }
    Some(resources)
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
    fn a_legacy_list_converts_as_upstream_converts_it() {
        let list = json!({"kind": "APIResourceList", "groupVersion": "x.example.com/v1", "resources": [
            {"name": "things/scale", "namespaced": true, "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get"]},
            {"name": "things", "singularName": "thing", "namespaced": true, "kind": "Thing", "verbs": ["get"]},
            {"name": "orphans/proxy", "namespaced": false, "kind": "", "verbs": ["get"]},
        ]});
        let converted = serde_json::to_value(legacy_to_aggregated(&list).unwrap()).unwrap();
        assert_eq!(converted, json!([
            {"resource": "things", "responseKind": {"group": "", "version": "", "kind": "Thing"}, "scope": "Namespaced",
             "singularResource": "thing", "verbs": ["get"],
             "subresources": [{"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": ["get"]}]},
            {"resource": "orphans", "responseKind": {"group": "", "version": "", "kind": ""}, "scope": "Cluster", "singularResource": "", "verbs": [],
             "subresources": [{"subresource": "proxy", "responseKind": {"group": "", "version": "", "kind": ""}, "verbs": ["get"]}]},
        ]));
        // A subresource scoped otherwise than its resource: no document.
        let mismatched = json!({"resources": [{"name": "a", "namespaced": true, "kind": "A", "verbs": []},
            {"name": "a/status", "namespaced": false, "kind": "A", "verbs": []}]});
        assert!(legacy_to_aggregated(&mismatched).is_none());
        assert!(legacy_to_aggregated(&json!({"kind": "Status"})).is_none());
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

//! The discovery documents, built from the [`Registry`].
//!
//! Pure functions from the registry to the bodies kube-apiserver serves on
//! `/api`, `/apis`, `/apis/<group>`, `/api/v1` and `/apis/<group>/<version>`, plus the
//! aggregated `apidiscovery.k8s.io` documents on `/api` and `/apis` that clients ask for
//! with an `Accept` header ([`negotiate_aggregated`]).
//!
//! The documents are typed values that serialize with serde to exactly kube's JSON:
//! the same field names, the same field order (Go's struct order) and the same omitted
//! empty fields. Serialize them with `serde_json::to_vec`.

mod negotiate;
#[cfg(test)]
mod tests;

pub use negotiate::{
    negotiate_aggregated, AggregatedVersion, AGGREGATED_V2BETA1_CONTENT_TYPE,
    AGGREGATED_V2_CONTENT_TYPE,
};

use crate::registry::{GroupInfo, Registry, Resource, Subresource};
use serde::Serialize;
use std::net::SocketAddr;

/// `/api`: the versions of the core group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiVersions {
    pub kind: String,
    pub versions: Vec<String>,
    /// Not optional in kube: `null` when no address is known.
    #[serde(rename = "serverAddressByClientCIDRs")]
    pub server_address_by_client_cidrs: Option<Vec<ServerAddressByClientCidr>>,
}

/// Where clients in a CIDR should reach the server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServerAddressByClientCidr {
    #[serde(rename = "clientCIDR")]
    pub client_cidr: String,
    #[serde(rename = "serverAddress")]
    pub server_address: String,
}

/// `/apis`: every group but the core one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiGroupList {
    pub kind: String,
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub groups: Vec<ApiGroup>,
}

/// `/apis/<group>`, and one entry of `/apis` (where `kind` and `apiVersion` are absent).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiGroup {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(rename = "apiVersion", skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    pub name: String,
    pub versions: Vec<GroupVersionForDiscovery>,
    #[serde(rename = "preferredVersion")]
    pub preferred_version: GroupVersionForDiscovery,
}

/// One version of a group: `{"groupVersion": "apps/v1", "version": "v1"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupVersionForDiscovery {
    #[serde(rename = "groupVersion")]
    pub group_version: String,
    pub version: String,
}

/// `/api/v1` and `/apis/<group>/<version>`: the resources of one group version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiResourceList {
    pub kind: String,
    /// kube leaves `apiVersion` out of `/api/v1` and sets `v1` on `/apis/...`.
    #[serde(rename = "apiVersion", skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(rename = "groupVersion")]
    pub group_version: String,
    pub resources: Vec<ApiResource>,
}

/// One resource or subresource (`pods/status`) of an [`ApiResourceList`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiResource {
    pub name: String,
    #[serde(rename = "singularName")]
    pub singular_name: String,
    pub namespaced: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub version: String,
    pub kind: String,
    pub verbs: Vec<String>,
    #[serde(rename = "shortNames", skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    #[serde(rename = "storageVersionHash", skip_serializing_if = "Option::is_none")]
    pub storage_version_hash: Option<String>,
}

/// The aggregated discovery document (`apidiscovery.k8s.io` `APIGroupDiscoveryList`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiGroupDiscoveryList {
    pub kind: String,
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub metadata: ListMeta,
    pub items: Vec<ApiGroupDiscovery>,
}

/// An empty list metadata: serializes as `{}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ListMeta {}

/// One group of the aggregated document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiGroupDiscovery {
    pub metadata: GroupDiscoveryMeta,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<ApiVersionDiscovery>,
}

/// The object metadata of an aggregated group entry: only the name (absent for the core
/// group). kube v1.33 serializes the zero creation timestamp as an explicit `null`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupDiscoveryMeta {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(rename = "creationTimestamp")]
    pub creation_timestamp: (),
}

/// One version of a group in the aggregated document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiVersionDiscovery {
    pub version: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ApiResourceDiscovery>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub freshness: String,
}

/// One resource in the aggregated document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiResourceDiscovery {
    pub resource: String,
    #[serde(rename = "responseKind", skip_serializing_if = "Option::is_none")]
    pub response_kind: Option<GroupVersionKind>,
    pub scope: String,
    #[serde(rename = "singularResource")]
    pub singular_resource: String,
    pub verbs: Vec<String>,
    #[serde(rename = "shortNames", skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subresources: Vec<ApiSubresourceDiscovery>,
}

/// One subresource in the aggregated document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiSubresourceDiscovery {
    pub subresource: String,
    #[serde(rename = "responseKind", skip_serializing_if = "Option::is_none")]
    pub response_kind: Option<GroupVersionKind>,
    pub verbs: Vec<String>,
}

/// A response kind. Group and version are empty when they are the enclosing group
/// version's, as kube reports them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupVersionKind {
    pub group: String,
    pub version: String,
    pub kind: String,
}

/// `/api`: `APIVersions` with the core group's versions. `server_address` is the address
/// clients should use (kube's advertise address and secure port), reported for every
/// client CIDR.
pub fn api_versions(server_address: Option<SocketAddr>) -> ApiVersions {
    ApiVersions {
        kind: "APIVersions".to_owned(),
        versions: vec!["v1".to_owned()],
        server_address_by_client_cidrs: server_address.map(|addr| {
            vec![ServerAddressByClientCidr {
                client_cidr: "0.0.0.0/0".to_owned(),
                server_address: addr.to_string(),
            }]
        }),
    }
}

/// `/apis`: `APIGroupList` with every group but the core one, in kube's order.
pub fn api_group_list(registry: &Registry) -> ApiGroupList {
    group_list(registry.groups())
}

/// An `APIGroupList` of `groups`, in their order.
pub fn group_list(groups: Vec<GroupInfo>) -> ApiGroupList {
    ApiGroupList {
        kind: "APIGroupList".to_owned(),
        api_version: "v1".to_owned(),
        groups: groups
            .into_iter()
            .map(|g| group_entry(&g.name, &g.versions, &g.preferred_version))
            .collect(),
    }
}

/// `/apis/<group>`: the `APIGroup`, or `None` when the group is not served (the core
/// group is not served under `/apis`).
pub fn api_group(registry: &Registry, group: &str) -> Option<ApiGroup> {
    if group.is_empty() {
        return None;
    }
    group_of(registry.groups(), group)
}

/// The `APIGroup` of `group` among `groups`.
pub fn group_of(groups: Vec<GroupInfo>, group: &str) -> Option<ApiGroup> {
    if group.is_empty() {
        return None;
    }
    let info = groups.into_iter().find(|g| g.name == group)?;
    let mut entry = group_entry(&info.name, &info.versions, &info.preferred_version);
    entry.kind = Some("APIGroup".to_owned());
    entry.api_version = Some("v1".to_owned());
    Some(entry)
}

fn group_entry(name: &str, versions: &[String], preferred: &str) -> ApiGroup {
    let gv = |v: &str| GroupVersionForDiscovery {
        group_version: format!("{name}/{v}"),
        version: v.to_owned(),
    };
    ApiGroup {
        kind: None,
        api_version: None,
        name: name.to_owned(),
        versions: versions.iter().map(|v| gv(v)).collect(),
        preferred_version: gv(preferred),
    }
}

/// `/api/v1` (group `""`) and `/apis/<group>/<version>`: the `APIResourceList`, with one
/// entry per resource and one per subresource (`pods/status`), sorted by name; `None`
/// when the group version is not served.
pub fn api_resource_list(
    registry: &Registry,
    group: &str,
    version: &str,
) -> Option<ApiResourceList> {
    let resources = registry.resources_in(group, version);
    if resources.is_empty() {
        return None;
    }
    let mut entries = Vec::new();
    for r in resources {
        entries.push(ApiResource {
            name: r.plural.clone(),
            singular_name: r.singular.clone(),
            namespaced: r.namespaced,
            group: String::new(),
            version: String::new(),
            kind: r.kind.clone(),
            verbs: r.verbs.clone(),
            short_names: r.short_names.clone(),
            categories: r.categories.clone(),
            storage_version_hash: r.storage_version_hash.clone(),
        });
        for s in subresources_by_name(r) {
            entries.push(ApiResource {
                name: format!("{}/{}", r.plural, s.name),
                singular_name: String::new(),
                namespaced: r.namespaced,
                group: s.group.clone().unwrap_or_default(),
                version: s.version.clone().unwrap_or_default(),
                kind: s.kind.clone(),
                verbs: s.verbs.clone(),
                short_names: Vec::new(),
                categories: Vec::new(),
                storage_version_hash: None,
            });
        }
    }
    // kube sorts the paths: "pods" < "pods/attach" < … < "pods/status" < "podtemplates".
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Some(ApiResourceList {
        kind: "APIResourceList".to_owned(),
        api_version: (!group.is_empty()).then(|| "v1".to_owned()),
        group_version: if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        },
        resources: entries,
    })
}

/// Aggregated discovery for `/api`: one entry, the core group, with no name.
pub fn aggregated_api(registry: &Registry, version: AggregatedVersion) -> ApiGroupDiscoveryList {
    discovery_list(version, vec![group_discovery(registry, "")])
}

/// Aggregated discovery for `/apis`: every group but the core one, in kube's order.
pub fn aggregated_apis(registry: &Registry, version: AggregatedVersion) -> ApiGroupDiscoveryList {
    let items = registry
        .groups()
        .iter()
        .map(|g| group_discovery(registry, &g.name))
        .collect();
    discovery_list(version, items)
}

/// An `APIGroupDiscoveryList` of `items`, in their order.
pub(crate) fn discovery_list(
    version: AggregatedVersion,
    items: Vec<ApiGroupDiscovery>,
) -> ApiGroupDiscoveryList {
    ApiGroupDiscoveryList {
        kind: "APIGroupDiscoveryList".to_owned(),
        api_version: version.api_version().to_owned(),
        metadata: ListMeta {},
        items,
    }
}

fn group_discovery(registry: &Registry, group: &str) -> ApiGroupDiscovery {
    let versions = registry
        .versions_of(group)
        .into_iter()
        .map(|v| version_discovery(registry, group, v))
        .collect();
    group_discovery_of(group, versions)
}

/// The aggregated entry of `group` with `versions`, in their order.
pub(crate) fn group_discovery_of(group: &str, versions: Vec<ApiVersionDiscovery>) -> ApiGroupDiscovery {
    ApiGroupDiscovery {
        metadata: GroupDiscoveryMeta {
            name: group.to_owned(),
            creation_timestamp: (),
        },
        versions,
    }
}

/// The aggregated entry of a group version the registry serves: its resources, current.
pub(crate) fn version_discovery(registry: &Registry, group: &str, version: &str) -> ApiVersionDiscovery {
    ApiVersionDiscovery {
        version: version.to_owned(),
        resources: registry
            .resources_in(group, version)
            .into_iter()
            .map(resource_discovery)
            .collect(),
        freshness: FRESHNESS_CURRENT.to_owned(),
    }
}

/// The `freshness` of a group version whose resources are up to date.
pub const FRESHNESS_CURRENT: &str = "Current";
/// The `freshness` of a group version whose resources could not be fetched.
pub const FRESHNESS_STALE: &str = "Stale";

fn resource_discovery(r: &Resource) -> ApiResourceDiscovery {
    ApiResourceDiscovery {
        resource: r.plural.clone(),
        response_kind: Some(GroupVersionKind {
            group: String::new(),
            version: String::new(),
            kind: r.kind.clone(),
        }),
        scope: if r.namespaced {
            "Namespaced"
        } else {
            "Cluster"
        }
        .to_owned(),
        singular_resource: r.singular.clone(),
        verbs: r.verbs.clone(),
        short_names: r.short_names.clone(),
        categories: r.categories.clone(),
        subresources: subresources_by_name(r)
            .into_iter()
            .map(|s| ApiSubresourceDiscovery {
                subresource: s.name.clone(),
                response_kind: Some(GroupVersionKind {
                    group: s.group.clone().unwrap_or_default(),
                    version: s.version.clone().unwrap_or_default(),
                    kind: s.kind.clone(),
                }),
                verbs: s.verbs.clone(),
            })
            .collect(),
    }
}

fn subresources_by_name(r: &Resource) -> Vec<&Subresource> {
    let mut subs: Vec<&Subresource> = r.subresources.iter().collect();
    subs.sort_by(|a, b| a.name.cmp(&b.name));
    subs
}

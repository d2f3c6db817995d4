//! The controllers Apiary runs over its own objects, as kube-controller-manager (and
//! the apiextensions server) would over a cluster's: ClusterRole aggregation, the CRD
//! controllers (names, establishing, cleanup of a deleted CRD's objects), the
//! namespace controller, the ServiceAccount controller, the root CA publisher and
//! kube-apiserver's APF configuration ensurer. Each
//! is a pure function of the watch caches that answers the writes it wants now; the
//! adapter (or the harness) runs them as the server's own requests whenever a cache
//! they read changes, until they want nothing. kube-controller-manager's may be
//! switched off ([`enabled`]).

pub(crate) mod crds;
pub mod enabled;
pub mod garbage_collector;
pub(crate) mod namespace_defaults;
pub(crate) mod namespaces;
mod resource_quota;

use enabled::Controller;

use crate::authorization::rbac::{self, aggregation};
use crate::shared::Shared;
use crate::watch_cache::WatchCache;
use bytes::Bytes;
use serde_json::{json, Value};
use std::sync::Arc;

/// The field manager of aggregated rules, upstream's controller name.
const AGGREGATION_MANAGER: &str = "clusterrole-aggregation-controller";

/// Which cache changes the controllers have seen: they need a look when they move.
/// In order: ClusterRoles, CRDs, the caches of the objects of CRDs being deleted,
/// namespaces (and, while one is terminating, every cache), the revisions of the
/// objects each namespace gets by default, (for the garbage collector) every cache,
/// (for the quota controller, while there are quotas) every cache, and the FlowSchemas
/// and PriorityLevelConfigurations, and (for autoregistration) the APIServices and
/// the CRDs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Seen([u64; 9]);

/// The controllers' view of the server.
pub(crate) fn changes(shared: &Shared) -> Seen {
    let changes = |c: Option<Arc<WatchCache>>| c.map_or(0, |c| c.changes());
    let crds = cache(shared, CRD_GROUP, "customresourcedefinitions");
    let apiservices = changes(cache(shared, crate::aggregation::GROUP, "apiservices"));
    let crd_changes = changes(crds.clone());
    let cleaning: Vec<String> = shared.crd_cleanups.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let deleting = shared.served.with_caches(|caches| {
        cleaning.iter().map(|prefix| caches.get(prefix).map_or(0, |c| c.changes())).fold(0u64, u64::wrapping_add)
    });
    let enabled = &shared.config.controllers;
    let all_caches = || shared.served.with_caches(|caches| caches.iter().map(|c| c.changes()).fold(0, u64::wrapping_add));
    let everything = if enabled.runs(Controller::GarbageCollector) { all_caches() } else { 0 };
    let namespaces = cache(shared, "", "namespaces");
    let mut namespace_changes = changes(namespaces.clone());
    if shared.namespaces_terminating.load(std::sync::atomic::Ordering::Relaxed) {
        let all = if enabled.runs(Controller::GarbageCollector) { everything } else { all_caches() };
        namespace_changes = namespace_changes.wrapping_add(all);
    }
    let defaults = if enabled.runs(Controller::ServiceAccount) || enabled.runs(Controller::RootCaPublisher) {
        defaults_revisions(shared, namespaces)
    } else {
        0
    };
    Seen([
        changes(cache(shared, rbac::GROUP, "clusterroles")),
        changes(crds),
        deleting,
        namespace_changes,
        defaults,
        everything,
        quota_changes(shared, all_caches),
        changes(cache(shared, crate::flowcontrol::GROUP, "flowschemas"))
            .wrapping_add(changes(cache(shared, crate::flowcontrol::GROUP, "prioritylevelconfigurations")).rotate_left(32)),
        apiservices.wrapping_add(crd_changes.rotate_left(32)),
    ])
}

/// What the quota controller reads: the quotas, and every cache while there are any.
fn quota_changes(shared: &Shared, all_caches: impl Fn() -> u64) -> u64 {
    if !shared.config.controllers.runs(Controller::ResourceQuota) {
        return 0;
    }
    let Some(quotas) = cache(shared, "", "resourcequotas") else { return 0 };
    let any = quotas.snapshot("", 0).is_some_and(|(items, _)| !items.is_empty());
    if any {
        quotas.changes().wrapping_add(all_caches())
    } else {
        quotas.changes()
    }
}

/// The revisions of every namespace's default ServiceAccount and root CA ConfigMap,
/// summed: a look at namespace keys and two cache lookups each, no object read.
fn defaults_revisions(shared: &Shared, namespaces: Option<Arc<WatchCache>>) -> u64 {
    let Some((listed, _)) = namespaces.and_then(|c| c.snapshot("", 0)) else {
        return 0;
    };
    let root = &shared.config.storage_prefix;
    let (accounts, configmaps) = (cache(shared, "", "serviceaccounts"), cache(shared, "", "configmaps"));
    let revision = |cache: &Option<Arc<WatchCache>>, key: String| {
        cache.as_ref().and_then(|c| c.get(&key)).flatten().map_or(0, |kv| kv.mod_revision)
    };
    listed.iter().fold(0u64, |sum, kv| {
        let ns = kv.key.rsplit('/').next().unwrap_or("");
        let account = revision(&accounts, crate::storage::object_key(root, "", "serviceaccounts", Some(ns), namespace_defaults::SERVICE_ACCOUNT));
        let ca = revision(&configmaps, crate::storage::object_key(root, "", "configmaps", Some(ns), namespace_defaults::ROOT_CA));
        sum.wrapping_add(account).wrapping_add(ca.rotate_left(32))
    })
}

const CRD_GROUP: &str = "apiextensions.k8s.io";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

pub(crate) fn cache(shared: &Shared, group: &str, resource: &str) -> Option<Arc<WatchCache>> {
    let prefix = crate::storage::resource_prefix(&shared.config.storage_prefix, group, resource, None);
    shared.served.with_caches(|c| c.get(&prefix).cloned())
}

/// The watch cache of a CRD's objects (one for all its versions).
fn custom_objects_cache(shared: &Shared, crd: &Value) -> Option<Arc<WatchCache>> {
    let text = |p: &str| crd.pointer(p).and_then(Value::as_str).unwrap_or("");
    cache(shared, text("/spec/group"), text("/status/acceptedNames/plural"))
}

fn objects(cache: Option<Arc<WatchCache>>) -> Option<Vec<Value>> {
    let (stored, _) = cache?.snapshot("", 0)?;
    Some(stored.iter().filter_map(|kv| serde_json::from_slice(&kv.value).ok()).collect())
}

/// The writes the controllers want as the caches stand now (at `now`); the resources of
/// CustomResourceDefinitions are joined to (or removed from) the registry on the way.
///
/// Each controller looks only when what it reads changed since its last look (writes
/// anywhere wake the garbage collector, and must not make every controller read its
/// objects); asked again with nothing changed (after a failed write), all look.
pub(crate) fn writes(shared: &Shared, now: std::time::SystemTime) -> Vec<http::Request<Bytes>> {
    let enabled = &shared.config.controllers;
    let at = now;
    let now = crate::time::rfc3339(now);
    let seen = changes(shared);
    let last = std::mem::replace(&mut *shared.controllers_seen.lock().unwrap_or_else(|p| p.into_inner()), Some(seen));
    let all = last.is_none_or(|last| last == seen);
    let moved = |i: usize| all || last.is_none_or(|last| last.0[i] != seen.0[i]);
    let mut writes = Vec::new();
    if enabled.runs(Controller::ClusterRoleAggregation) && moved(0) {
        writes.extend(cluster_role_aggregation(shared));
    }
    if moved(1) || moved(2) {
        if let Some(definitions) = objects(cache(shared, CRD_GROUP, "customresourcedefinitions")) {
            writes.extend(custom_resource_definitions(shared, definitions, &now));
        }
    }
    if moved(8) {
        let crds_known = cache(shared, CRD_GROUP, "customresourcedefinitions").is_some_and(|c| c.snapshot("", 0).is_some());
        writes.extend(crate::aggregation::autoregister::writes(shared, crds_known, &now));
    }
    if moved(3) || moved(4) {
        if let Some(namespaces) = objects(cache(shared, "", "namespaces")) {
            if enabled.runs(Controller::Namespace) {
                writes.extend(terminating_namespaces(shared, &namespaces, &now));
            }
            writes.extend(namespace_defaults(shared, &namespaces));
        }
    }
    if enabled.runs(Controller::GarbageCollector) {
        writes.extend(garbage_collector::pass(shared, at));
    }
    if enabled.runs(Controller::ResourceQuota) && moved(6) {
        writes.extend(resource_quotas(shared, at));
    }
    if moved(7) {
        writes.extend(flowcontrol_configuration(shared));
        if shared.flowcontrol.is_some() {
            writes.extend(flow_schema_conditions(shared, &now));
        }
    }
    writes
}

/// kube-apiserver's APF configuration ensurer, which upstream runs every minute: here
/// whenever a FlowSchema or PriorityLevelConfiguration changes (a deleted mandatory
/// object is written back at once). Nothing while either cache is not filled.
fn flowcontrol_configuration(shared: &Shared) -> Vec<http::Request<Bytes>> {
    let schemas = objects(cache(shared, crate::flowcontrol::GROUP, "flowschemas"));
    let levels = objects(cache(shared, crate::flowcontrol::GROUP, "prioritylevelconfigurations"));
    match (schemas, levels) {
        (Some(schemas), Some(levels)) => crate::bootstrap::flowcontrol::ensure(&schemas, &levels),
        _ => Vec::new(),
    }
}

/// The field manager of FlowSchemas' `Dangling` conditions, upstream's.
const FLOWCONTROL_MANAGER: &str = "api-priority-and-fairness-config-consumer-v1";

/// Priority and fairness's configuration controller: each FlowSchema's `Dangling`
/// condition says whether its priority level exists, applied as upstream applies it.
fn flow_schema_conditions(shared: &Shared, now: &str) -> Vec<http::Request<Bytes>> {
    let group = crate::flowcontrol::GROUP;
    let (Some(schemas), Some(levels)) =
        (objects(cache(shared, group, "flowschemas")), objects(cache(shared, group, "prioritylevelconfigurations")))
    else {
        return Vec::new();
    };
    crate::flowcontrol::status_updates(&schemas, &levels)
        .into_iter()
        .map(|update| {
            let status = if update.dangling { "True" } else { "False" };
            let apply = json!({
                "apiVersion": format!("{group}/v1"),
                "kind": "FlowSchema",
                "metadata": {"name": update.flow_schema},
                "status": {"conditions": [{
                    "type": "Dangling",
                    "status": status,
                    "lastTransitionTime": now,
                    "reason": update.reason,
                    "message": update.message,
                }]},
            });
            let path = format!(
                "/apis/{group}/v1/flowschemas/{}/status?fieldManager={FLOWCONTROL_MANAGER}&force=true",
                update.flow_schema
            );
            controller_request(&path, "application/apply-patch+yaml", apply)
        })
        .collect()
}

/// The quota controller: each quota's status brought up to date with what its
/// namespace's objects use.
fn resource_quotas(shared: &Shared, now: std::time::SystemTime) -> Vec<http::Request<Bytes>> {
    let Some(quotas) = objects(cache(shared, "", "resourcequotas")) else { return Vec::new() };
    let now = now.duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).ok();
    let root = &shared.config.storage_prefix;
    let mut writes = Vec::new();
    for quota in &quotas {
        let text = |p: &str| quota.pointer(p).and_then(Value::as_str).unwrap_or("");
        let (ns, name) = (text("/metadata/namespace"), text("/metadata/name"));
        let objects_of = |group: &str, resource: &str| {
            let prefix = crate::storage::resource_prefix(root, group, resource, Some(ns));
            // A resource not served counts nothing; one whose cache is not fed yet
            // cannot be counted.
            match cache(shared, group, resource) {
                None => Some(Vec::new()),
                Some(c) => c.snapshot(&prefix, 0).map(|(items, _)| items.iter().filter_map(|kv| serde_json::from_slice(&kv.value).ok()).collect()),
            }
        };
        if let Some(patch) = resource_quota::status_patch(quota, objects_of, now) {
            let path = format!("/api/v1/namespaces/{ns}/resourcequotas/{name}/status");
            writes.push(controller_request(&path, "application/merge-patch+json", patch));
        }
    }
    writes
}

/// The namespace controller: what each namespace being deleted needs next.
fn terminating_namespaces(shared: &Shared, all: &[Value], now: &str) -> Vec<http::Request<Bytes>> {
    let terminating: Vec<&Value> = all.iter().filter(|n| !namespace_defaults::active(n)).collect();
    shared.namespaces_terminating.store(!terminating.is_empty(), std::sync::atomic::Ordering::Relaxed);
    if terminating.is_empty() {
        return Vec::new();
    }
    let registry = shared.registry();
    // One version of each namespaced resource: its versions share their objects, as
    // a resource stored as another (events.k8s.io Events) shares that one's.
    let mut resources: Vec<&crate::registry::Resource> = Vec::new();
    for r in registry.resources().iter().filter(|r| r.namespaced && r.stores_own() && r.has_verb("deletecollection")) {
        if !resources.iter().any(|seen| seen.group == r.group && seen.plural == r.plural) {
            resources.push(r);
        }
    }
    let mut writes = Vec::new();
    'namespaces: for ns in terminating {
        let name = ns.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        let mut held: Vec<(&crate::registry::Resource, Vec<Value>)> = Vec::new();
        for r in &resources {
            let root = &shared.config.storage_prefix;
            let prefix = crate::storage::resource_prefix(root, &r.group, &r.plural, Some(name));
            let Some(found) = cache(shared, &r.group, &r.plural).and_then(|c| c.snapshot(&prefix, 0)) else {
                // A cache not filled yet cannot tell what is left.
                continue 'namespaces;
            };
            if !found.0.is_empty() {
                held.push((r, found.0.iter().filter_map(|kv| serde_json::from_slice(&kv.value).ok()).collect()));
            }
        }
        let content: Vec<namespaces::Content<'_>> = held
            .iter()
            .map(|(r, objects)| namespaces::Content { name: format!("{}.{}", r.plural, r.group), objects })
            .collect();
        let next = namespaces::terminating(ns, &content, now);
        // One DELETE per object, as upstream's controller does when a resource has no
        // deletecollection: the server may run them side by side (a deletecollection
        // deletes one after another).
        for &i in &next.delete {
            let (r, objects) = &held[i];
            let going = objects.iter().filter(|o| o.pointer("/metadata/deletionTimestamp").is_none_or(Value::is_null));
            writes.extend(going.filter_map(|o| o.pointer("/metadata/name").and_then(Value::as_str)).map(|object| {
                let path = format!("{}/{object}?propagationPolicy=Background", collection_path(r, Some(name)));
                http::Request::delete(path).body(Bytes::new()).expect("a well-formed controller request")
            }));
        }
        if let Some(conditions) = next.conditions {
            let patch = json!({"status": {"conditions": conditions}});
            writes.push(controller_request(&format!("/api/v1/namespaces/{name}/status"), "application/merge-patch+json", patch));
        }
        if next.finalize {
            let mut finalized = ns.clone();
            let kept: Vec<String> = crate::rest::object::strings(ns.pointer("/spec/finalizers"))
                .into_iter()
                .filter(|f| f != namespaces::FINALIZER)
                .collect();
            finalized["spec"]["finalizers"] = json!(kept);
            if let Some(meta) = finalized.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("resourceVersion");
            }
            writes.push(
                http::Request::put(format!("/api/v1/namespaces/{name}/finalize"))
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(Bytes::from(finalized.to_string()))
                    .expect("a well-formed controller request"),
            );
        }
        if next.delete_namespace {
            writes.push(http::Request::delete(format!("/api/v1/namespaces/{name}")).body(Bytes::new()).expect("a well-formed controller request"));
        }
    }
    writes
}

/// The ServiceAccount controller and the root CA publisher: what active namespaces
/// lack of the objects they get by default.
fn namespace_defaults(shared: &Shared, all: &[Value]) -> Vec<http::Request<Bytes>> {
    let enabled = &shared.config.controllers;
    let accounts = cache(shared, "", "serviceaccounts").filter(|_| enabled.runs(Controller::ServiceAccount));
    let root_ca = shared.config.authenticators.service_accounts.as_ref().and_then(|t| t.root_ca.clone());
    let configmaps = cache(shared, "", "configmaps").filter(|_| enabled.runs(Controller::RootCaPublisher));
    let root = &shared.config.storage_prefix;
    let mut writes = Vec::new();
    for ns in all.iter().filter(|n| namespace_defaults::active(n)) {
        let name = ns.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        if let Some(accounts) = &accounts {
            let key = crate::storage::object_key(root, "", "serviceaccounts", Some(name), namespace_defaults::SERVICE_ACCOUNT);
            if accounts.get(&key) == Some(None) {
                writes.push(post(&format!("/api/v1/namespaces/{name}/serviceaccounts"), namespace_defaults::service_account()));
            }
        }
        if let (Some(configmaps), Some(ca)) = (&configmaps, root_ca.as_deref().filter(|ca| !ca.is_empty())) {
            let key = crate::storage::object_key(root, "", "configmaps", Some(name), namespace_defaults::ROOT_CA);
            let Some(existing) = configmaps.get(&key) else { continue };
            let existing: Option<Value> = existing.and_then(|kv| serde_json::from_slice(&kv.value).ok());
            match (namespace_defaults::root_ca(existing.as_ref(), ca), existing.is_some()) {
                (None, _) => {}
                (Some(made), false) => writes.push(post(&format!("/api/v1/namespaces/{name}/configmaps"), made)),
                (Some(updated), true) => writes.push(
                    http::Request::put(format!("/api/v1/namespaces/{name}/configmaps/{}", namespace_defaults::ROOT_CA))
                        .header(http::header::CONTENT_TYPE, "application/json")
                        .body(Bytes::from(updated.to_string()))
                        .expect("a well-formed controller request"),
                ),
            }
        }
    }
    writes
}

fn post(path: &str, body: Value) -> http::Request<Bytes> {
    http::Request::post(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Bytes::from(body.to_string()))
        .expect("a well-formed controller request")
}

/// The naming, establishing and finalizer controllers of CRDs, and the registry made
/// to serve what they established.
fn custom_resource_definitions(shared: &Shared, mut definitions: Vec<Value>, now: &str) -> Vec<http::Request<Bytes>> {
    let registry = shared.registry();
    let builtin: Vec<&crate::registry::Resource> = {
        let mine = shared.crd_resources.lock().unwrap_or_else(|p| p.into_inner());
        registry
            .resources()
            .iter()
            .map(|r| &**r)
            .filter(|r| !mine.iter().any(|(g, v, p)| *g == r.group && *v == r.version && *p == r.plural))
            .collect()
    };
    let mut writes = Vec::new();
    let mut served = Vec::new();
    let mut cleaning = Vec::new();
    for i in 0..definitions.len() {
        let crd = &definitions[i];
        let name = crd.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_owned();
        let taken = crds::Taken::around(crd, &definitions, &builtin);
        let mut decided = crds::decide(crd, &taken, now);
        let resources = decided.served_as.as_ref().map(|names| crds::resources_of(crd, names)).unwrap_or_default();
        // A served CRD whose objects' cache is not filled yet cannot tell what is left.
        let objects_cache = custom_objects_cache(shared, crd);
        let prefix = objects_cache.as_ref().map(|c| c.prefix().to_owned());
        let cleanup = match objects(objects_cache) {
            Some(objects) => crds::cleanup(crd, &objects),
            None if resources.is_empty() => crds::cleanup(crd, &[]),
            None => crds::Cleanup::None,
        };
        if cleanup != crds::Cleanup::None {
            cleaning.extend(prefix);
        }
        match cleanup {
            crds::Cleanup::None => {}
            crds::Cleanup::Finish => writes.push(remove_cleanup_finalizer(crd, &name)),
            cleanup @ (crds::Cleanup::Delete(_) | crds::Cleanup::Wait) => {
                crds::cleanup_in_progress(&mut decided.status, now);
                if let (crds::Cleanup::Delete(namespaces), Some(r)) = (cleanup, resources.first()) {
                    writes.extend(namespaces.iter().map(|ns| delete_collection(r, ns.as_deref())));
                }
            }
        }
        if crd.get("status") != Some(&decided.status) {
            let patch = json!([{"op": "add", "path": "/status", "value": decided.status}]);
            writes.insert(0, controller_request(&format!("{CRDS}/{name}/status"), "application/json-patch+json", patch));
        }
        // Later CRDs see the names this one was accepted with.
        definitions[i]["status"] = decided.status;
        served.extend(resources);
    }
    serve_custom_resources(shared, served);
    *shared.crd_cleanups.lock().unwrap_or_else(|p| p.into_inner()) = cleaning;
    writes
}

/// A JSON patch taking the cleanup finalizer away (the CRD then goes).
fn remove_cleanup_finalizer(crd: &Value, name: &str) -> http::Request<Bytes> {
    let remaining: Vec<String> = crate::rest::object::strings(crd.pointer("/metadata/finalizers"))
        .into_iter()
        .filter(|f| f != crds::CLEANUP_FINALIZER)
        .collect();
    // No finalizer can join a CRD being deleted, so the list read is the list to keep.
    let patch = json!([{"op": "replace", "path": "/metadata/finalizers", "value": remaining}]);
    controller_request(&format!("{CRDS}/{name}"), "application/json-patch+json", patch)
}

/// A DELETE of every object of `r` in `namespace` (all of them when cluster-scoped),
/// their dependents collected in the background.
fn delete_collection(r: &crate::registry::Resource, namespace: Option<&str>) -> http::Request<Bytes> {
    let path = format!("{}?propagationPolicy=Background", collection_path(r, namespace));
    http::Request::delete(path).body(Bytes::new()).expect("a well-formed controller request")
}

/// The path of the objects of `r` (in `namespace`).
fn collection_path(r: &crate::registry::Resource, namespace: Option<&str>) -> String {
    let root = if r.group.is_empty() { "/api/v1".to_owned() } else { format!("/apis/{}/{}", r.group, r.version) };
    match namespace {
        Some(ns) => format!("{root}/namespaces/{ns}/{}", r.plural),
        None => format!("{root}/{}", r.plural),
    }
}

fn controller_request(path: &str, content_type: &str, body: Value) -> http::Request<Bytes> {
    http::Request::patch(path)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(Bytes::from(body.to_string()))
        .expect("a well-formed controller request")
}

/// Make the registry serve exactly the CRDs' resources: add the new and the changed,
/// remove those it served for a CRD (or version) that is gone. Resources added by other
/// means (`Server::add_resource`) are left alone, and so are built-in resources a CRD
/// would shadow.
fn serve_custom_resources(shared: &Shared, wanted: Vec<crate::registry::Resource>) {
    let registry = shared.registry();
    let mut mine = shared.crd_resources.lock().unwrap_or_else(|p| p.into_inner());
    for resource in &wanted {
        let id = (resource.group.clone(), resource.version.clone(), resource.plural.clone());
        let served = registry.lookup(&resource.group, &resource.version, &resource.plural);
        if served.is_some() && !mine.contains(&id) {
            continue;
        }
        if served.is_none_or(|served| *served != *resource) {
            shared.served.add(resource.clone());
        }
        if !mine.contains(&id) {
            mine.push(id);
        }
    }
    mine.retain(|(group, version, plural)| {
        let still = wanted.iter().any(|w| w.group == *group && w.version == *version && w.plural == *plural);
        if !still {
            shared.served.remove(group, version, plural);
        }
        still
    });
}

/// ClusterRole aggregation: the rules aggregated roles must be given.
fn cluster_role_aggregation(shared: &Shared) -> Vec<http::Request<Bytes>> {
    let Some(roles) = objects(cache(shared, rbac::GROUP, "clusterroles")) else {
        return Vec::new();
    };
    aggregation::stale(&roles)
        .into_iter()
        .map(|stale| {
            // Applied as upstream's controller applies them: it owns the rules.
            let body = serde_json::json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": stale.name},
                "rules": stale.rules,
            });
            http::Request::patch(format!(
                "/apis/rbac.authorization.k8s.io/v1/clusterroles/{}?fieldManager={AGGREGATION_MANAGER}&force=true",
                stale.name
            ))
            .header(http::header::CONTENT_TYPE, "application/apply-patch+yaml")
            .body(Bytes::from(body.to_string()))
            .expect("a well-formed controller request")
        })
        .collect()
}

//! Autoregistration: a local APIService for every group version the server serves, as
//! kube-apiserver's autoregister controller keeps one for each built-in group version
//! (labelled `onstart`, with its table of priorities) and its CRD registration
//! controller one for each custom resource group version (labelled `true`); an
//! automanaged APIService whose group version is no longer served goes. Local
//! APIServices are Available, as upstream's local availability controller marks them.

use super::{text, with_available, APISERVICES, GROUP};
use crate::shared::Shared;
use bytes::Bytes;
use serde_json::{json, Value};

/// The label that marks an APIService the server manages.
const AUTOMANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";
/// Its value for built-in group versions (registered at start) and for those of CRDs.
const ON_START: &str = "onstart";
const SYNCED: &str = "true";

/// Custom resources rank below every built-in group; their versions sort among
/// themselves by kube version order.
const CRD_GROUP_PRIORITY: i64 = 1000;
const CRD_VERSION_PRIORITY: i64 = 100;

/// kube-apiserver's priorities of the built-in group versions it serves by default:
/// `(group, version, groupPriorityMinimum, versionPriority)`. A built-in group version
/// not in it gets no APIService, as upstream skips those it has no priority for.
const BUILTIN_PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v2", 17500, 30),
    ("autoscaling", "v1", 17500, 15),
    ("batch", "v1", 17400, 15),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("networking.k8s.io", "v1", 17200, 15),
    ("policy", "v1", 17100, 15),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("node.k8s.io", "v1", 16300, 15),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
];

/// An APIService the server wants to exist.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Wanted {
    group: String,
    version: String,
    group_priority: i64,
    version_priority: i64,
    label: &'static str,
}

impl Wanted {
    fn name(&self) -> String {
        format!("{}.{}", self.version, self.group)
    }

    fn spec(&self) -> Value {
        json!({
            "group": self.group,
            "version": self.version,
            "groupPriorityMinimum": self.group_priority,
            "versionPriority": self.version_priority,
        })
    }

    /// Whether `api`'s spec is this one.
    fn matches(&self, api: &Value) -> bool {
        let spec = api.get("spec").unwrap_or(&Value::Null);
        let number = |k: &str| spec.get(k).and_then(Value::as_i64);
        text(api, "/spec/group") == self.group
            && text(api, "/spec/version") == self.version
            && number("groupPriorityMinimum") == Some(self.group_priority)
            && number("versionPriority") == Some(self.version_priority)
            && spec.get("service").is_none_or(Value::is_null)
    }
}

/// What the server serves, as APIServices: the built-in group versions of the table,
/// then those of CRDs (`crds`: group and version of every custom resource served) that
/// no built-in one already names.
fn wanted(builtin: &[(String, String)], crds: &[(String, String)]) -> Vec<Wanted> {
    let mut wanted: Vec<Wanted> = Vec::new();
    for (group, version) in builtin {
        let Some(&(_, _, group_priority, version_priority)) =
            BUILTIN_PRIORITIES.iter().find(|(g, v, _, _)| g == group && v == version)
        else {
            continue;
        };
        let w = Wanted { group: group.clone(), version: version.clone(), group_priority, version_priority, label: ON_START };
        if !wanted.contains(&w) {
            wanted.push(w);
        }
    }
    for (group, version) in crds {
        if wanted.iter().any(|w| w.group == *group && w.version == *version) {
            continue;
        }
        wanted.push(Wanted {
            group: group.clone(),
            version: version.clone(),
            group_priority: CRD_GROUP_PRIORITY,
            version_priority: CRD_VERSION_PRIORITY,
            label: SYNCED,
        });
    }
    wanted
}

/// The writes that bring `existing` APIServices to what is `wanted` at `now`: create
/// the missing, restore the spec of a changed automanaged one, delete automanaged ones
/// no longer served, and mark local ones Available.
fn reconcile(wanted: &[Wanted], existing: &[Value], now: &str) -> Vec<http::Request<Bytes>> {
    let mut writes = Vec::new();
    for w in wanted {
        let name = w.name();
        match existing.iter().find(|a| text(a, "/metadata/name") == name) {
            None => writes.push(json_request(http::Method::POST, APISERVICES.to_owned(), &object(w, None))),
            Some(api) if automanaged(api).is_some() && !w.matches(api) => {
                let path = format!("{APISERVICES}/{name}");
                writes.push(json_request(http::Method::PUT, path, &object(w, Some(api))));
            }
            Some(_) => {}
        }
    }
    for api in existing {
        let name = text(api, "/metadata/name");
        if automanaged(api).is_some() && !wanted.iter().any(|w| w.name() == name) {
            let delete = http::Request::delete(format!("{APISERVICES}/{name}")).body(Bytes::new());
            writes.push(delete.expect("a well-formed aggregator request"));
            continue;
        }
        let local = api.pointer("/spec/service").is_none_or(Value::is_null);
        if local {
            if let Some(updated) = with_available(api, "True", "Local", "Local APIServices are always available", now) {
                writes.push(super::status_update(&updated));
            }
        }
    }
    writes
}

/// The automanaged label of `api`, if it has one.
fn automanaged(api: &Value) -> Option<&str> {
    api.pointer("/metadata/labels")?.get(AUTOMANAGED)?.as_str().filter(|l| [ON_START, SYNCED].contains(l))
}

/// The APIService `w`, replacing `old` (its metadata kept) when given.
fn object(w: &Wanted, old: Option<&Value>) -> Value {
    let mut metadata = old.and_then(|o| o.get("metadata").cloned()).unwrap_or_else(|| json!({"name": w.name()}));
    metadata["labels"][AUTOMANAGED] = json!(w.label);
    json!({
        "apiVersion": format!("{GROUP}/v1"),
        "kind": "APIService",
        "metadata": metadata,
        "spec": w.spec(),
    })
}

fn json_request(method: http::Method, path: String, body: &Value) -> http::Request<Bytes> {
    // Upstream's writes are kube-apiserver's own.
    http::Request::builder()
        .method(method)
        .uri(format!("{path}?fieldManager=kube-apiserver"))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Bytes::from(body.to_string()))
        .expect("a well-formed aggregator request")
}

/// The autoregistration controller's writes as the caches stand now; nothing while
/// the APIServices' or the CRDs' cache is not filled (the CRDs' group versions are not
/// known yet, and their APIServices would go and come back).
pub(crate) fn writes(shared: &Shared, crds_known: bool, now: &str) -> Vec<http::Request<Bytes>> {
    let Some(existing) = super::apiservices(shared) else { return Vec::new() };
    if !crds_known {
        return Vec::new();
    }
    let custom: Vec<(String, String)> = {
        let mine = shared.crd_resources.lock().unwrap_or_else(|p| p.into_inner());
        mine.iter().map(|(g, v, _)| (g.clone(), v.clone())).collect()
    };
    let registry = shared.registry();
    let builtin: Vec<(String, String)> = registry
        .resources()
        .iter()
        .map(|r| (r.group.clone(), r.version.clone()))
        .filter(|gv| !custom.contains(gv))
        .collect();
    reconcile(&wanted(&builtin, &custom), &existing, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gv(group: &str, version: &str) -> (String, String) {
        (group.to_owned(), version.to_owned())
    }

    #[test]
    fn built_in_group_versions_take_the_table_and_crds_the_low_priority() {
        let wanted = wanted(&[gv("apps", "v1"), gv("resource.k8s.io", "v1beta1")], &[gv("example.com", "v1"), gv("apps", "v1")]);
        let names: Vec<(String, i64, i64, &str)> =
            wanted.iter().map(|w| (w.name(), w.group_priority, w.version_priority, w.label)).collect();
        assert_eq!(names, [("v1.apps".to_owned(), 17800, 15, ON_START), ("v1.example.com".to_owned(), 1000, 100, SYNCED)]);
    }

    #[test]
    fn automanaged_ones_no_longer_served_go_and_others_stay() {
        let api = |name: &str, label: Option<&str>| {
            let mut o = json!({"metadata": {"name": name}, "spec": {"service": {"name": "s", "namespace": "n"}}});
            if let Some(l) = label {
                o["metadata"]["labels"] = json!({AUTOMANAGED: l});
            }
            o
        };
        let existing = [api("v1.gone.io", Some(SYNCED)), api("v1.mine.io", None)];
        let writes = reconcile(&[], &existing, "2026-01-01T00:00:00Z");
        let said: Vec<String> = writes.iter().map(|w| format!("{} {}", w.method(), w.uri())).collect();
        assert_eq!(said, [format!("DELETE {APISERVICES}/v1.gone.io")]);
    }
}

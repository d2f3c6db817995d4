//! CustomResourceDefinitions served, as upstream's apiextensions controllers serve
//! them: each served version of a CRD joins the registry as a resource with the CRD's
//! names, scope and schema, and leaves it with the CRD; a CRD's status gets its
//! `acceptedNames`, `storedVersions` and the `NamesAccepted` and `Established`
//! conditions. Not yet: validation of the CRD itself, name conflicts, subresources,
//! printer columns, conversion and the cleanup finalizer (issue 16).

use crate::registry::{NameRule, Resource};
use crate::resources::SharedStrategy;
use crate::schema::ResourceSchema;
use serde_json::{json, Value};

const VERBS: [&str; 8] = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn strings(v: &Value, pointer: &str) -> Vec<String> {
    crate::rest::object::strings(v.pointer(pointer))
}

/// The names a CRD's resources go by, with upstream's defaults (a CRD stored before
/// the kind defaulted them may lack them).
pub(crate) fn accepted_names(crd: &Value) -> Value {
    let mut names = crd.pointer("/spec/names").cloned().unwrap_or_else(|| json!({}));
    if let Value::Object(map) = &mut names {
        crate::resources::customresourcedefinitions::defaults::default_names(map);
    }
    names
}

/// The resources a CRD serves: one per served version. None while it is being
/// deleted, or when it lacks a group, plural or kind.
pub(crate) fn resources_of(crd: &Value) -> Vec<Resource> {
    let group = text(crd, "/spec/group");
    let plural = text(crd, "/spec/names/plural");
    let kind = text(crd, "/spec/names/kind");
    if group.is_empty() || plural.is_empty() || kind.is_empty() || crd.pointer("/metadata/deletionTimestamp").is_some() {
        return Vec::new();
    }
    let names = accepted_names(crd);
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array).cloned().unwrap_or_default();
    versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(false))
        .map(|v| Resource {
            group: group.to_owned(),
            version: text(v, "/name").to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            singular: text(&names, "/singular").to_owned(),
            namespaced: text(crd, "/spec/scope") != "Cluster",
            verbs: VERBS.iter().map(|s| s.to_string()).collect(),
            short_names: strings(crd, "/spec/names/shortNames"),
            categories: strings(crd, "/spec/names/categories"),
            subresources: Vec::new(),
            name_rule: NameRule::Dns1123Subdomain,
            storage_version_hash: None,
            strategy: SharedStrategy::plain(),
            schema: ResourceSchema::custom(
                v.pointer("/schema/openAPIV3Schema").cloned().unwrap_or_else(|| json!({"type": "object"})),
            ),
        })
        .collect()
}

/// The status a CRD should have, when it differs from the one it has (timestamps of
/// conditions that keep their status are kept).
pub(crate) fn wanted_status(crd: &Value, now: &str) -> Option<Value> {
    if resources_of(crd).is_empty() {
        return None;
    }
    let had = crd.get("status").cloned().unwrap_or_else(|| json!({}));
    let since = |kind: &str| {
        had.get("conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|c| c["type"] == kind && c["status"] == "True")
            .and_then(|c| c.get("lastTransitionTime").cloned())
            .unwrap_or_else(|| json!(now))
    };
    let storage = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .map(|v| text(v, "/name").to_owned());
    let mut stored = strings(&had, "/storedVersions");
    if let Some(storage) = storage {
        if !stored.contains(&storage) {
            stored.push(storage);
        }
    }
    let status = json!({
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "lastTransitionTime": since("NamesAccepted"),
             "reason": "NoConflicts", "message": "no conflicts found"},
            {"type": "Established", "status": "True", "lastTransitionTime": since("Established"),
             "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"},
        ],
        "acceptedNames": accepted_names(crd),
        "storedVersions": stored,
    });
    (status != had).then_some(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd() -> Value {
        json!({"metadata": {"name": "widgets.example.com"},
               "spec": {"group": "example.com", "scope": "Namespaced",
                        "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                        "versions": [{"name": "v1", "served": true, "storage": true,
                                      "schema": {"openAPIV3Schema": {"type": "object"}}},
                                     {"name": "v1alpha1", "served": false, "storage": false}]}})
    }

    #[test]
    fn served_versions_become_resources_with_upstreams_default_names() {
        let resources = resources_of(&crd());
        assert_eq!(resources.len(), 1);
        let r = &resources[0];
        assert_eq!((r.group.as_str(), r.version.as_str(), r.plural.as_str(), r.singular.as_str()), ("example.com", "v1", "widgets", "widget"));
        assert!(r.namespaced);
        assert_eq!(r.short_names, ["wd"]);
        let mut deleting = crd();
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert!(resources_of(&deleting).is_empty());
    }

    #[test]
    fn the_status_is_established_once_and_then_left_alone() {
        let status = wanted_status(&crd(), "2026-11-24T12:00:00Z").expect("a status");
        assert_eq!(status["acceptedNames"]["listKind"], "WidgetList");
        assert_eq!(status["storedVersions"], json!(["v1"]));
        assert_eq!(status["conditions"][1]["type"], "Established");
        let mut established = crd();
        established["status"] = status;
        assert_eq!(wanted_status(&established, "2026-11-24T13:00:00Z"), None);
    }
}

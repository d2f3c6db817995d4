//! CustomResourceDefinitions served, as upstream's apiextensions controllers serve
//! them: the naming controller accepts the names nobody else in the group holds
//! (`acceptedNames`, `NamesAccepted`), the establishing controller marks the CRD
//! `Established`, each served version then joins the registry as a resource with the
//! CRD's accepted names, scope, schema and subresources, and the finalizer controller
//! deletes every object of a CRD being deleted before it lets the CRD go.

use crate::registry::{NameRule, Resource, Subresource};
use crate::resources::customresources::{Crd, CustomResources};
use crate::resources::SharedStrategy;
use crate::schema::{structural, ResourceSchema};
use crate::validation::{FieldError, FieldPath};
use serde_json::{json, Value};

const VERBS: [&str; 8] = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn strings(v: &Value, pointer: &str) -> Vec<String> {
    crate::rest::object::strings(v.pointer(pointer))
}

/// The finalizer a CRD carries from its DELETE until its objects are gone.
pub(crate) const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The names a CRD asks for, with upstream's defaults (a CRD stored before the kind
/// defaulted them may lack them).
pub(crate) fn requested_names(crd: &Value) -> Value {
    let mut names = crd.pointer("/spec/names").cloned().unwrap_or_else(|| json!({}));
    if let Value::Object(map) = &mut names {
        crate::resources::customresourcedefinitions::defaults::default_names(map);
    }
    names
}

/// The names others hold in one group: the resource names (plural, singular, short
/// names) and kinds (kind, list kind) other CRDs were accepted with, and the built-in
/// resources' of that group.
#[derive(Debug, Default)]
pub(crate) struct Taken {
    resources: Vec<String>,
    kinds: Vec<String>,
}

impl Taken {
    /// What is taken in `crd`'s group by everyone but `crd`.
    pub(crate) fn around(crd: &Value, all: &[Value], builtin: &[&Resource]) -> Taken {
        let group = text(crd, "/spec/group");
        let name = text(crd, "/metadata/name");
        let mut taken = Taken::default();
        for other in all.iter().filter(|o| text(o, "/spec/group") == group && text(o, "/metadata/name") != name) {
            let accepted = other.pointer("/status/acceptedNames").cloned().unwrap_or_default();
            for key in ["/plural", "/singular"] {
                taken.resources.push(text(&accepted, key).to_owned());
            }
            taken.resources.extend(strings(&accepted, "/shortNames"));
            for key in ["/kind", "/listKind"] {
                taken.kinds.push(text(&accepted, key).to_owned());
            }
        }
        for r in builtin.iter().filter(|r| r.group == group) {
            taken.resources.extend([r.plural.clone(), r.singular.clone()]);
            taken.resources.extend(r.short_names.iter().cloned());
            taken.kinds.extend([r.kind.clone(), r.list_kind()]);
        }
        taken.resources.retain(|n| !n.is_empty());
        taken.kinds.retain(|n| !n.is_empty());
        taken
    }
}

/// A name may be taken when it is the one already accepted, or nobody else holds it.
fn claim(requested: &str, accepted: &str, taken: &[String]) -> Result<(), String> {
    if requested == accepted || !taken.iter().any(|t| t == requested) {
        Ok(())
    } else {
        Err(format!("{} is already in use", crate::schema::go_quote(requested)))
    }
}

/// One requested name claimed: taken into `names`, or the conflict made the condition.
fn name_check(
    requested: &Value,
    accepted: &Value,
    key: &str,
    pool: &[String],
    reason: &'static str,
    names: &mut Value,
    condition: &mut (&'static str, &'static str, String),
) {
    let want = text(requested, key);
    match claim(want, text(accepted, key), pool) {
        Ok(()) => names[&key[1..]] = json!(want),
        Err(e) => *condition = ("False", reason, e),
    }
}

/// The names a CRD is accepted with, and its `NamesAccepted` condition (status,
/// reason, message), as upstream's naming controller decides them: each requested
/// name that conflicts keeps the one accepted before, and names the last conflict.
pub(crate) fn accept_names(crd: &Value, taken: &Taken) -> (Value, (&'static str, &'static str, String)) {
    let requested = requested_names(crd);
    let accepted = crd.pointer("/status/acceptedNames").cloned().unwrap_or_else(|| json!({}));
    let mut names = accepted.clone();
    let mut condition = ("True", "NoConflicts", "no conflicts found".to_owned());
    let (want_short, had_short) = (strings(&requested, "/shortNames"), strings(&accepted, "/shortNames"));
    for (key, reason) in [("/plural", "PluralConflict"), ("/singular", "SingularConflict")] {
        name_check(&requested, &accepted, key, &taken.resources, reason, &mut names, &mut condition);
    }
    if want_short != had_short {
        let conflicts: Vec<String> = want_short
            .iter()
            .filter(|n| !had_short.contains(n))
            .filter_map(|n| claim(n, "", &taken.resources).err())
            .collect();
        match conflicts.as_slice() {
            [] => names["shortNames"] = json!(want_short),
            [one] => condition = ("False", "ShortNamesConflict", one.clone()),
            many => condition = ("False", "ShortNamesConflict", format!("[{}]", many.join(", "))),
        }
    }
    for (key, reason) in [("/kind", "KindConflict"), ("/listKind", "ListKindConflict")] {
        name_check(&requested, &accepted, key, &taken.kinds, reason, &mut names, &mut condition);
    }
    match requested.get("categories") {
        Some(c) => names["categories"] = c.clone(),
        None => {
            names.as_object_mut().map(|n| n.remove("categories"));
        }
    }
    if want_short.is_empty() && had_short.is_empty() {
        names.as_object_mut().map(|n| n.remove("shortNames"));
    }
    (names, condition)
}

/// The resources a CRD serves under `names` (its accepted names): one per served
/// version. Still served while it is being deleted, so that its objects can be.
pub(crate) fn resources_of(crd: &Value, names: &Value) -> Vec<Resource> {
    let group = text(crd, "/spec/group");
    let plural = text(names, "/plural");
    let kind = text(names, "/kind");
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return Vec::new();
    }
    let namespaced = text(crd, "/spec/scope") != "Cluster";
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array).cloned().unwrap_or_default();
    let storage_version = versions
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .map_or("", |v| text(v, "/name"));
    let of = Crd {
        group,
        storage_version,
        versions: versions.len(),
        terminating: crd.pointer("/metadata/deletionTimestamp").is_some(),
        namespaced,
        conversion: crd.pointer("/spec/conversion").unwrap_or(&Value::Null),
    };
    versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(false))
        .map(|v| (v, CustomResources::new(v, &of)))
        .map(|(v, strategy)| Resource {
            group: group.to_owned(),
            version: text(v, "/name").to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            singular: text(names, "/singular").to_owned(),
            namespaced,
            verbs: VERBS.iter().map(|s| s.to_string()).collect(),
            short_names: strings(names, "/shortNames"),
            categories: strings(names, "/categories"),
            subresources: subresources(v, kind),
            name_rule: NameRule::Dns1123Subdomain,
            storage_version_hash: None,
            // The strategy validates with the schema that decodes the bodies: compiled once.
            schema: ResourceSchema::compiled(CustomResources::openapi_v3(v), strategy.schema().clone()),
            strategy: SharedStrategy::new(strategy),
        })
        .collect()
}

/// The subresources a version serves, as discovery lists them (sorted by name).
fn subresources(version: &Value, kind: &str) -> Vec<Subresource> {
    let declared = |name: &str| version.pointer(&format!("/subresources/{name}")).is_some();
    let verbs = || ["get", "patch", "update"].map(String::from).to_vec();
    let mut subresources = Vec::new();
    if declared("scale") {
        subresources.push(Subresource {
            name: "scale".into(),
            kind: "Scale".into(),
            group: Some("autoscaling".into()),
            version: Some("v1".into()),
            verbs: verbs(),
        });
    }
    if declared("status") {
        let kind = kind.to_owned();
        subresources.push(Subresource { name: "status".into(), kind, group: None, version: None, verbs: verbs() });
    }
    subresources
}

/// A condition of a CRD's status.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Condition<'a> {
    pub kind: &'a str,
    pub status: &'a str,
    pub reason: &'a str,
    pub message: &'a str,
}

/// `conditions` with `c` set as upstream's SetCRDCondition sets it: the transition
/// time kept while the status stays, the condition added when missing.
pub(crate) fn set_condition(conditions: &mut Vec<Value>, c: Condition<'_>, now: &str) {
    let made = |since: &Value| json!({"type": c.kind, "status": c.status, "lastTransitionTime": since,
                                      "reason": c.reason, "message": c.message});
    match conditions.iter_mut().find(|had| had["type"] == c.kind) {
        Some(had) => {
            let since = if had["status"] == c.status { had["lastTransitionTime"].clone() } else { json!(now) };
            *had = made(&since);
        }
        None => conditions.push(made(&json!(now))),
    }
}

/// What the controllers make of one CRD now: the status it should have and the names
/// it is served under (those its stored status accepted).
#[derive(Debug)]
pub(crate) struct Decision {
    pub status: Value,
    /// The accepted names when the CRD is served, else `None`.
    pub served_as: Option<Value>,
}

/// Decide a CRD's status, as upstream's naming and establishing controllers do: its
/// accepted names and `NamesAccepted`; `Established` (for good) once the accepted
/// names are stored and the resource served under them; `storedVersions` with the
/// storage version.
pub(crate) fn decide(crd: &Value, taken: &Taken, now: &str) -> Decision {
    let had = crd.get("status").cloned().unwrap_or_else(|| json!({}));
    let (names, accepted) = accept_names(crd, taken);
    let mut conditions = had.get("conditions").and_then(Value::as_array).cloned().unwrap_or_default();
    let (status, reason, message) = &accepted;
    set_condition(&mut conditions, Condition { kind: "NamesAccepted", status, reason, message }, now);
    // Served once storage says the names are accepted (as upstream's handler reads
    // it), under the names stored with them; Established follows, so a client that
    // waited for it always finds the resource.
    let stored_condition = |kind: &str| {
        had.get("conditions")
            .and_then(Value::as_array)
            .is_some_and(|cs| cs.iter().any(|c| c["type"] == kind && c["status"] == "True"))
    };
    let served_as = stored_condition("NamesAccepted").then(|| had.get("acceptedNames").cloned().unwrap_or_default());
    if !stored_condition("Established") {
        let c = match (*status, served_as.is_some()) {
            ("True", true) => Condition { kind: "Established", status: "True", reason: "InitialNamesAccepted", message: "the initial names have been accepted" },
            ("True", false) => Condition { kind: "Established", status: "False", reason: "Installing", message: "the initial names have been accepted" },
            _ => Condition { kind: "Established", status: "False", reason: "NotAccepted", message: "not all names are accepted" },
        };
        set_condition(&mut conditions, c, now);
    }
    match non_structural(crd) {
        Some((reason, message)) => {
            let c = Condition { kind: "NonStructuralSchema", status: "True", reason, message: &message };
            set_condition(&mut conditions, c, now);
        }
        None => conditions.retain(|c| c["type"] != "NonStructuralSchema"),
    }
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
    let mut status = had.as_object().cloned().unwrap_or_default();
    status.insert("conditions".into(), json!(conditions));
    status.insert("acceptedNames".into(), names.clone());
    status.insert("storedVersions".into(), json!(stored));
    Decision { status: Value::Object(status), served_as }
}

/// Why a CRD's schemas are not structural, as upstream's nonstructuralschema controller
/// words its condition (reason and message); `None` when they all are. apiextensions
/// v1 refuses such a CRD, so only one stored by an older server can have it.
fn non_structural(crd: &Value) -> Option<(&'static str, String)> {
    let mut errors = Vec::new();
    if crd.pointer("/spec/preserveUnknownFields") == Some(&Value::Bool(true)) {
        errors.push(FieldError::invalid_unquoted("spec.preserveUnknownFields", "true", "must be false"));
    }
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for (i, version) in versions.iter().enumerate() {
        let Some(schema) = version.pointer("/schema/openAPIV3Schema") else {
            continue;
        };
        let path = FieldPath::new("spec").child("versions").index(i).child("schema").child("openAPIV3Schema");
        match structural::violations_at(&path, schema) {
            Ok(found) => errors.extend(found),
            Err(e) => {
                let message = format!("failed to check validation schema for version {}: {e}", text(version, "/name"));
                return Some(("StructuralError", message));
            }
        }
    }
    (!errors.is_empty()).then(|| ("Violations", crate::validation::aggregate(&errors)))
}

/// What the cleanup of a CRD being deleted wants next.
#[derive(Debug, PartialEq)]
pub(crate) enum Cleanup {
    /// Not being deleted, or not ours to clean up (no cleanup finalizer).
    None,
    /// Objects remain: delete those in these namespaces (`None`: cluster-scoped).
    Delete(Vec<Option<String>>),
    /// Objects are being deleted and none is left to ask for: wait for them.
    Wait,
    /// Nothing is left: say so and take the finalizer away.
    Finish,
}

/// The cleanup a CRD wants, given its objects as the watch cache holds them.
pub(crate) fn cleanup(crd: &Value, objects: &[Value]) -> Cleanup {
    let deleting = crd.pointer("/metadata/deletionTimestamp").is_some();
    if !deleting || !strings(crd, "/metadata/finalizers").iter().any(|f| f == CLEANUP_FINALIZER) {
        return Cleanup::None;
    }
    if objects.is_empty() {
        return Cleanup::Finish;
    }
    let mut namespaces: Vec<Option<String>> = objects
        .iter()
        .filter(|o| o.pointer("/metadata/deletionTimestamp").is_none())
        .map(|o| o.pointer("/metadata/namespace").and_then(Value::as_str).map(str::to_owned))
        .collect();
    namespaces.sort();
    namespaces.dedup();
    if namespaces.is_empty() {
        Cleanup::Wait
    } else {
        Cleanup::Delete(namespaces)
    }
}

/// The `Terminating` condition of a CRD whose objects are being deleted, set in its
/// (decided) `status`.
pub(crate) fn cleanup_in_progress(status: &mut Value, now: &str) {
    let c = Condition {
        kind: "Terminating",
        status: "True",
        reason: "InstanceDeletionInProgress",
        message: "CustomResource deletion is in progress",
    };
    set_status_condition(status, c, now);
}

/// [`set_condition`] in a status object's `conditions` (made an object if it is not).
fn set_status_condition(status: &mut Value, c: Condition<'_>, now: &str) {
    if !status.is_object() {
        *status = json!({});
    }
    let mut conditions = status.get("conditions").and_then(Value::as_array).cloned().unwrap_or_default();
    set_condition(&mut conditions, c, now);
    status["conditions"] = Value::Array(conditions);
}

/// Mark a CRD a DELETE asks to remove: its cleanup finalizer added and its
/// `Terminating` condition set, as upstream's CRD storage does before it deletes.
pub(crate) fn mark_terminating(crd: &mut crate::rest::object::Object, now: &str) {
    let meta = crate::rest::object::meta_mut(crd);
    let mut finalizers = strings(&Value::Object(meta.clone()), "/finalizers");
    if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
        finalizers.push(CLEANUP_FINALIZER.to_owned());
        meta.insert("finalizers".into(), json!(finalizers));
    }
    let status = crd.entry("status").or_insert_with(|| json!({}));
    let c = Condition {
        kind: "Terminating",
        status: "True",
        reason: "InstanceDeletionPending",
        message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
    };
    set_status_condition(status, c, now);
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
        let decided = decide(&crd(), &Taken::default(), "2026-11-24T12:00:00Z");
        assert!(decided.served_as.is_none(), "not before the stored status accepts the names");
        let mut accepted = crd();
        accepted["status"] = decided.status;
        let names = decide(&accepted, &Taken::default(), "2026-11-24T12:00:00Z").served_as.expect("served");
        let resources = resources_of(&accepted, &names);
        assert_eq!(resources.len(), 1);
        let r = &resources[0];
        assert_eq!((r.group.as_str(), r.version.as_str(), r.plural.as_str(), r.singular.as_str()), ("example.com", "v1", "widgets", "widget"));
        assert!(r.namespaced);
        assert_eq!(r.short_names, ["wd"]);
    }

    #[test]
    fn the_status_is_established_once_and_then_left_alone() {
        let installing = decide(&crd(), &Taken::default(), "2026-11-24T12:00:00Z").status;
        assert_eq!(installing["acceptedNames"]["listKind"], "WidgetList");
        assert_eq!(installing["storedVersions"], json!(["v1"]));
        assert_eq!(installing["conditions"][1]["reason"], "Installing", "established only once served");
        let mut accepted = crd();
        accepted["status"] = installing;
        let status = decide(&accepted, &Taken::default(), "2026-11-24T12:00:01Z").status;
        assert_eq!(status["conditions"][1]["type"], "Established");
        assert_eq!(status["conditions"][1]["status"], "True");
        let mut established = crd();
        established["status"] = status.clone();
        assert_eq!(decide(&established, &Taken::default(), "2026-11-24T13:00:00Z").status, status);
    }

    #[test]
    fn a_name_another_crd_holds_is_not_accepted() {
        let mut other = crd();
        other["metadata"]["name"] = json!("gadgets.example.com");
        other["status"] = json!({"acceptedNames": {"plural": "gadgets", "singular": "gadget", "shortNames": ["wd"], "kind": "Gadget", "listKind": "GadgetList"}});
        let taken = Taken::around(&crd(), &[crd(), other], &[]);
        let decided = decide(&crd(), &taken, "2026-11-24T12:00:00Z");
        let names_accepted = &decided.status["conditions"][0];
        assert_eq!(names_accepted["status"], "False");
        assert_eq!(names_accepted["reason"], "ShortNamesConflict");
        assert_eq!(names_accepted["message"], "\"wd\" is already in use");
        assert_eq!(decided.status["conditions"][1]["reason"], "NotAccepted");
        assert!(decided.served_as.is_none());
        assert_eq!(decided.status["acceptedNames"]["plural"], "widgets");
        assert_eq!(decided.status["acceptedNames"].get("shortNames"), None);
    }

    #[test]
    fn cleanup_deletes_per_namespace_then_waits_then_finishes() {
        let mut deleting = crd();
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert_eq!(cleanup(&deleting, &[]), Cleanup::None, "no finalizer, nothing to do");
        deleting["metadata"]["finalizers"] = json!([CLEANUP_FINALIZER]);
        let objects = [json!({"metadata": {"namespace": "b"}}), json!({"metadata": {"namespace": "a"}}),
                       json!({"metadata": {"namespace": "a"}})];
        assert_eq!(cleanup(&deleting, &objects), Cleanup::Delete(vec![Some("a".into()), Some("b".into())]));
        let held = [json!({"metadata": {"namespace": "a", "deletionTimestamp": "t", "finalizers": ["x"]}})];
        assert_eq!(cleanup(&deleting, &held), Cleanup::Wait);
        assert_eq!(cleanup(&deleting, &[]), Cleanup::Finish);
    }
}

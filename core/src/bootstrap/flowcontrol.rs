//! Upstream's API Priority and Fairness bootstrap configuration: the mandatory and
//! suggested FlowSchemas and PriorityLevelConfigurations kube-apiserver v1.33 keeps in
//! every cluster (`flowcontrol.json` beside this file: their specs and the
//! `apf.kubernetes.io/autoupdate-spec` annotation, server-set fields left out), and how
//! a stored one is brought back to it, as upstream's ensurer does.

use serde_json::Value;
use std::sync::OnceLock;

const OBJECTS: &str = include_str!("flowcontrol.json");

/// The annotation that says whether the server keeps an object's spec its own.
pub const AUTO_UPDATE: &str = "apf.kubernetes.io/autoupdate-spec";

/// The objects no cluster goes without: their specs are fixed (validation refuses
/// others) and written back whatever the annotation says.
const MANDATORY: [&str; 2] = ["exempt", "catch-all"];

/// Every bootstrap object: the PriorityLevelConfigurations, then the FlowSchemas.
pub fn objects() -> &'static [Value] {
    static PARSED: OnceLock<Vec<Value>> = OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(OBJECTS).expect("the APF bootstrap configuration is JSON"))
}

/// The fixed spec of the mandatory object `name` of `kind`, if it is one.
pub fn mandatory_spec(kind: &str, name: &str) -> Option<&'static Value> {
    if !MANDATORY.contains(&name) {
        return None;
    }
    objects().iter().find(|o| o["kind"] == kind && o["metadata"]["name"] == name).map(|o| &o["spec"])
}

fn name_of(o: &Value) -> &str {
    o["metadata"]["name"].as_str().unwrap_or_default()
}

/// Whether `name` of `kind` is a bootstrap object.
pub fn is_bootstrap(kind: &str, name: &str) -> bool {
    objects().iter().any(|o| o["kind"] == kind && name_of(o) == name)
}

/// The auto-update annotation of a stored object, as Go's `strconv.ParseBool` reads it:
/// `None` when absent or not a boolean.
fn auto_update(stored: &Value) -> Option<bool> {
    match stored.pointer("/metadata/annotations")?.get(AUTO_UPDATE)?.as_str()? {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// The update that brings a stored bootstrap object back to `wanted`, or `None` when
/// it needs none. A mandatory object's spec is always made ours again; a suggested
/// one's only while its annotation says so (or, without a readable annotation, while
/// nobody changed its spec: generation 1). Either way the annotation is set to what
/// was decided. The exempt priority level's `spec.exempt` stays the stored one (its
/// one part an administrator may tune).
pub fn reconcile(stored: &Value, wanted: &Value) -> Option<Value> {
    let name = name_of(wanted);
    let kind = wanted["kind"].as_str().unwrap_or_default();
    let mandatory = MANDATORY.contains(&name);
    let update_spec = mandatory
        || auto_update(stored).unwrap_or_else(|| stored.pointer("/metadata/generation").and_then(Value::as_i64) == Some(1));
    let annotation_stale = auto_update(stored) != Some(update_spec);
    let mut spec = wanted["spec"].clone();
    if kind == "PriorityLevelConfiguration" && name == "exempt" {
        if let Some(exempt) = stored.pointer("/spec/exempt").filter(|e| e.is_object()) {
            spec["exempt"] = exempt.clone();
        }
    }
    let spec_differs = update_spec && !same_spec(&stored["spec"], &spec);
    if !annotation_stale && !spec_differs {
        return None;
    }
    let mut updated = stored.clone();
    if spec_differs {
        updated["spec"] = spec;
    }
    if annotation_stale {
        let meta = updated["metadata"].as_object_mut()?;
        let annotations = meta.entry("annotations").or_insert_with(|| serde_json::json!({}));
        if !annotations.is_object() {
            *annotations = serde_json::json!({});
        }
        annotations[AUTO_UPDATE] = Value::String(update_spec.to_string());
    }
    Some(updated)
}

/// Whether two specs are the same as Go compares them semantically: a zero scalar, an
/// empty list and an absent field are one (a struct, even empty, is not nothing: the
/// pointers of these specs tell the two apart).
pub fn same_spec(a: &Value, b: &Value) -> bool {
    let normalized = |v| crate::validation::value::without_zero_values(v, is_zero);
    normalized(a) == normalized(b)
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(_) => false,
    }
}

/// The collection the objects of `kind` are written to.
pub fn collection(kind: &str) -> &'static str {
    match kind {
        "FlowSchema" => "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
        _ => "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
    }
}

/// The requests one pass of upstream's ensurer makes over the stored objects: missing
/// bootstrap objects created, stored ones reconciled, the ones the server kept and no
/// longer ships deleted.
pub fn ensure(stored_schemas: &[Value], stored_levels: &[Value]) -> Vec<http::Request<bytes::Bytes>> {
    let json = |request: http::request::Builder, body: &Value| {
        request
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(bytes::Bytes::from(body.to_string()))
            .expect("a well-formed request")
    };
    let mut requests = Vec::new();
    for (kind, stored) in [("PriorityLevelConfiguration", stored_levels), ("FlowSchema", stored_schemas)] {
        let collection = collection(kind);
        for wanted in objects().iter().filter(|o| o["kind"] == kind) {
            let name = name_of(wanted);
            match stored.iter().find(|o| name_of(o) == name) {
                None => requests.push(json(http::Request::post(collection), wanted)),
                Some(current) => {
                    if let Some(updated) = reconcile(current, wanted) {
                        requests.push(json(http::Request::put(format!("{collection}/{name}")), &updated));
                    }
                }
            }
        }
        requests.extend(unwanted(kind, stored).into_iter().map(|name| {
            http::Request::delete(format!("{collection}/{name}")).body(bytes::Bytes::new()).expect("a well-formed request")
        }));
    }
    requests
}

/// The bootstrap objects in a stored list no longer wanted: those the server keeps
/// (annotation true) whose names are not bootstrap names any more.
pub fn unwanted<'a>(kind: &str, stored: &'a [Value]) -> Vec<&'a str> {
    stored
        .iter()
        .filter(|o| auto_update(o) == Some(true) && !is_bootstrap(kind, name_of(o)))
        .map(name_of)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wanted(name: &str) -> &'static Value {
        objects().iter().find(|o| name_of(o) == name && o["kind"] == "FlowSchema").unwrap()
    }

    #[test]
    fn upstreams_counts() {
        let count = |kind: &str| objects().iter().filter(|o| o["kind"] == kind).count();
        assert_eq!((count("FlowSchema"), count("PriorityLevelConfiguration")), (11, 8));
        assert!(mandatory_spec("FlowSchema", "exempt").is_some());
        assert!(mandatory_spec("FlowSchema", "global-default").is_none());
    }

    #[test]
    fn suggested_specs_follow_their_annotation() {
        let want = wanted("global-default");
        let mut stored = want.clone();
        stored["spec"]["matchingPrecedence"] = json!(42);
        stored["metadata"]["generation"] = json!(2);
        assert_eq!(reconcile(&stored, want).unwrap()["spec"], want["spec"], "annotation true: spec made ours");
        stored["metadata"]["annotations"][AUTO_UPDATE] = json!("false");
        assert!(reconcile(&stored, want).is_none(), "annotation false: left alone");
        stored["metadata"]["annotations"] = json!({});
        let updated = reconcile(&stored, want).unwrap();
        assert_eq!(updated["spec"]["matchingPrecedence"], 42, "changed by someone: kept");
        assert_eq!(updated["metadata"]["annotations"][AUTO_UPDATE], "false");
    }

    #[test]
    fn mandatory_specs_are_forced_back() {
        let want = wanted("catch-all");
        let mut stored = want.clone();
        stored["metadata"]["annotations"][AUTO_UPDATE] = json!("false");
        stored["spec"]["matchingPrecedence"] = json!(9999);
        let updated = reconcile(&stored, want).unwrap();
        assert_eq!(updated["spec"], want["spec"]);
        assert_eq!(updated["metadata"]["annotations"][AUTO_UPDATE], "true");
        assert!(reconcile(want, want).is_none());
    }

    #[test]
    fn the_exempt_levels_own_shares_are_kept() {
        let want = objects().iter().find(|o| name_of(o) == "exempt" && o["kind"] == "PriorityLevelConfiguration").unwrap();
        let mut stored = want.clone();
        stored["spec"]["exempt"] = json!({"nominalConcurrencyShares": 10, "lendablePercent": 50});
        assert!(reconcile(&stored, want).is_none());
    }

    #[test]
    fn a_pass_over_what_is_stored_writes_only_what_differs() {
        let levels: Vec<Value> = objects().iter().filter(|o| o["kind"] == "PriorityLevelConfiguration").cloned().collect();
        let mut schemas: Vec<Value> = objects().iter().filter(|o| o["kind"] == "FlowSchema" && name_of(o) != "exempt").cloned().collect();
        assert_eq!(ensure(&schemas, &levels).len(), 1, "the missing exempt schema");
        schemas.push(wanted("exempt").clone());
        assert!(ensure(&schemas, &levels).is_empty());
        schemas.push(json!({"metadata": {"name": "old", "annotations": {AUTO_UPDATE: "true"}}}));
        let requests = ensure(&schemas, &levels);
        assert_eq!((requests[0].method(), requests[0].uri().path()), (&http::Method::DELETE, "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/old"));
    }

    #[test]
    fn objects_the_server_kept_that_are_no_longer_bootstrap_ones_go() {
        let stored = vec![
            json!({"metadata": {"name": "old", "annotations": {AUTO_UPDATE: "true"}}}),
            json!({"metadata": {"name": "mine"}}),
            json!({"metadata": {"name": "catch-all", "annotations": {AUTO_UPDATE: "true"}}}),
        ];
        assert_eq!(unwanted("FlowSchema", &stored), ["old"]);
    }
}

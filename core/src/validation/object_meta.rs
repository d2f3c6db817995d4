//! Upstream's checks of an object's metadata beyond its name and namespace
//! (apimachinery's `ValidateObjectMetaAccessor`, and core/v1's extra finalizer rule):
//! labels, annotations and their total size, owner references, finalizers. Every kind
//! goes through them, built-in or custom, on create and on update.

use super::names::{label_key, label_value, qualified_name};
use super::{go_json_string, FieldError};
use crate::rest::object::Object;
use serde_json::{Map, Value};

/// The most bytes an object's annotations (keys and values) may take together.
pub const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// The finalizers an unqualified name may be (core/v1's standard ones).
const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

/// Which of upstream's two metadata rule sets a kind follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaRules {
    /// apimachinery's generic rules (custom resources, CRDs).
    Generic,
    /// The generic rules, and an unqualified finalizer must be a standard one (the
    /// built-in kinds, validated by `pkg/apis/core/validation`'s `ValidateObjectMeta`).
    Builtin,
}

/// The metadata checks of an object at `metadata`, in upstream's order: labels,
/// annotations, owner references, finalizers.
pub fn validate(obj: &Object, rules: MetaRules) -> Vec<FieldError> {
    let empty = Map::new();
    let meta = obj.get("metadata").and_then(Value::as_object).unwrap_or(&empty);
    validate_at("metadata", meta, rules)
}

/// [`validate`] of metadata found at `path`.
pub fn validate_at(path: &str, meta: &Map<String, Value>, rules: MetaRules) -> Vec<FieldError> {
    let at = |child: &str| format!("{path}.{child}");
    let mut errs = labels(&at("labels"), meta.get("labels"));
    errs.extend(annotations(&at("annotations"), meta.get("annotations")));
    errs.extend(owner_references(&at("ownerReferences"), meta.get("ownerReferences")));
    let finalizers = crate::rest::object::strings(meta.get("finalizers"));
    errs.extend(validate_finalizers(&at("finalizers"), &finalizers));
    if rules == MetaRules::Builtin {
        errs.extend(standard_finalizers(&at("finalizers"), &finalizers));
    }
    errs
}

fn entries(map: Option<&Value>) -> impl Iterator<Item = (&String, &str)> {
    map.and_then(Value::as_object).into_iter().flatten().map(|(k, v)| (k, v.as_str().unwrap_or("")))
}

/// Each label's key and value, errors at the map itself (`metadata.labels`).
pub fn labels(path: &str, labels: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, value) in entries(labels) {
        errs.extend(label_key(key).into_iter().map(|msg| FieldError::invalid(path, key, msg)));
        errs.extend(label_value(value).into_iter().map(|msg| FieldError::invalid(path, value, msg)));
    }
    errs
}

/// Each annotation's key (a qualified name, in any case), then their total size.
pub fn annotations(path: &str, annotations: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut size = 0;
    for (key, value) in entries(annotations) {
        errs.extend(qualified_name(&key.to_lowercase()).into_iter().map(|msg| FieldError::invalid(path, key, msg)));
        size += key.len() + value.len();
    }
    if size > ANNOTATIONS_MAX_BYTES {
        errs.push(FieldError::too_long(path, ANNOTATIONS_MAX_BYTES));
    }
    errs
}

/// Each reference names its owner whole (apiVersion with a version, kind, name, uid;
/// errors at the list's path, without an index, as upstream reports them), and at most
/// one is the controller.
pub fn owner_references(path: &str, refs: Option<&Value>) -> Vec<FieldError> {
    let refs: Vec<&Value> = refs.and_then(Value::as_array).into_iter().flatten().collect();
    let text = |r: &Value, field: &str| r.get(field).and_then(Value::as_str).unwrap_or("").to_owned();
    let mut errs = Vec::new();
    let mut controller: Option<String> = None;
    for r in &refs {
        let api_version = text(r, "apiVersion");
        let at = |child: &str| format!("{path}.{child}");
        if version_of(&api_version).is_empty() {
            errs.push(FieldError::invalid(&at("apiVersion"), &api_version, "version must not be empty"));
        }
        for field in ["kind", "name", "uid"] {
            let value = text(r, field);
            if value.is_empty() {
                errs.push(FieldError::invalid(&at(field), "", "must not be empty"));
            }
        }
        if version_of(&api_version) == "v1" && group_of(&api_version).is_empty() && text(r, "kind") == "Event" {
            let shown = owner_reference_json(r);
            errs.push(FieldError::invalid_unquoted(path, &shown, "/v1, Kind=Event is disallowed from being an owner"));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            match &controller {
                Some(first) => {
                    let this = format!("{}/{}", text(r, "kind"), text(r, "name"));
                    let all: Vec<String> = refs.iter().map(|r| owner_reference_json(r)).collect();
                    let detail = format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {this}"
                    );
                    errs.push(FieldError::invalid_unquoted(path, &format!("[{}]", all.join(",")), &detail));
                }
                None => controller = Some(format!("{}/{}", text(r, "kind"), text(r, "name"))),
            }
        }
    }
    errs
}

/// The version of an `apiVersion` (`v1`, `apps/v1`), as upstream's `ParseGroupVersion`
/// reads it; none when it does not parse.
fn version_of(api_version: &str) -> &str {
    match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [version] => version,
        [_, version] => version,
        _ => "",
    }
}

fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map(|(g, _)| g).unwrap_or("")
}

/// An owner reference as Go's JSON encoder writes the typed one: its fields in the
/// struct's order, the optional ones only when set.
fn owner_reference_json(r: &Value) -> String {
    let text = |field: &str| go_json_string(r.get(field).and_then(Value::as_str).unwrap_or(""));
    let mut out = format!(
        "{{\"apiVersion\":{},\"kind\":{},\"name\":{},\"uid\":{}",
        text("apiVersion"),
        text("kind"),
        text("name"),
        text("uid")
    );
    for flag in ["controller", "blockOwnerDeletion"] {
        if let Some(b) = r.get(flag).and_then(Value::as_bool) {
            out.push_str(&format!(",\"{flag}\":{b}"));
        }
    }
    out.push('}');
    out
}

/// Upstream's `ValidateFinalizers`: each a qualified name, and not both of the garbage
/// collector's.
pub fn validate_finalizers(path: &str, finalizers: &[String]) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = finalizers
        .iter()
        .flat_map(|f| qualified_name(f).into_iter().map(move |msg| FieldError::invalid(path, f, msg)))
        .collect();
    if finalizers.iter().any(|f| f == "orphan") && finalizers.iter().any(|f| f == "foregroundDeletion") {
        let listed: Vec<String> = finalizers.iter().map(|f| crate::schema::go_quote(f)).collect();
        errs.push(FieldError::invalid_unquoted(
            path,
            &format!("[]string{{{}}}", listed.join(", ")),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    errs
}

/// core/v1's rule: a finalizer without a `prefix/` is one of the standard ones.
pub fn standard_finalizers(path: &str, finalizers: &[String]) -> Vec<FieldError> {
    finalizers
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.contains('/') && !STANDARD_FINALIZERS.contains(&f.as_str()))
        .map(|(i, f)| {
            FieldError::invalid(
                &format!("{path}[{i}]"),
                f,
                "name is neither a standard finalizer name nor is it fully qualified",
            )
        })
        .collect()
}

/// The errors of one finalizer name, as a namespace's `spec.finalizers` are checked:
/// a qualified name, and a standard one when unqualified.
pub fn finalizer_name(path: &str, name: &str) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = qualified_name(name).into_iter().map(|msg| FieldError::invalid(path, name, msg)).collect();
    if !name.contains('/') && !STANDARD_FINALIZERS.contains(&name) {
        errs.push(FieldError::invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified"));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(meta: Value) -> Object {
        json!({"metadata": meta}).as_object().unwrap().clone()
    }

    #[test]
    fn labels_and_annotations_read_like_upstream() {
        let errs = validate(&object(json!({"labels": {"a/b/c": "x", "ok": "bad value!"}})), MetaRules::Generic);
        assert_eq!(errs.len(), 2);
        assert!(errs[0].to_string().starts_with("metadata.labels: Invalid value: \"a/b/c\": a valid label key must consist"));
        assert!(errs[1].to_string().starts_with("metadata.labels: Invalid value: \"bad value!\": a valid label must be"));
        let big = "a".repeat(ANNOTATIONS_MAX_BYTES);
        let errs = validate(&object(json!({"annotations": {"k": big}})), MetaRules::Generic);
        assert_eq!(errs[0].to_string(), "metadata.annotations: Too long: may not be more than 262144 bytes");
    }

    #[test]
    fn owner_references_name_their_owner_and_one_controller() {
        let refs = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "1", "controller": true},
                          {"apiVersion": "apps/", "kind": "", "name": "y", "uid": "2", "controller": true}]);
        let errs: Vec<String> = owner_references("metadata.ownerReferences", Some(&refs)).iter().map(ToString::to_string).collect();
        assert_eq!(errs[0], "metadata.ownerReferences.apiVersion: Invalid value: \"apps/\": version must not be empty");
        assert_eq!(errs[1], "metadata.ownerReferences.kind: Invalid value: \"\": must not be empty");
        assert!(errs[2].ends_with("Found \"true\" in references for ConfigMap/x and /y"), "{}", errs[2]);
        assert!(errs[2].contains(r#"[{"apiVersion":"v1","kind":"ConfigMap","name":"x","uid":"1","controller":true},"#));
    }

    #[test]
    fn builtin_kinds_want_qualified_or_standard_finalizers() {
        let meta = object(json!({"finalizers": ["kubernetes", "mine", "example.com/x"]}));
        assert!(validate(&meta, MetaRules::Generic).is_empty());
        let errs = validate(&meta, MetaRules::Builtin);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "metadata.finalizers[1]");
    }
}

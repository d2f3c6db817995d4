//! What a CRD is given before it is checked and stored: apiextensions v1's defaults
//! (`pkg/apis/apiextensions/v1/defaults.go`) and the status its registry strategy
//! starts it with or carries over (`registry/customresourcedefinition/strategy.go`).

use crate::rest::object::Object;
use serde_json::{json, Map, Value};

/// The v1 defaults: the names' `singular` (the kind in lower case) and `listKind` (the
/// kind with `List`), `conversion: {strategy: None}`, port 443 for a conversion
/// webhook's service. `preserveUnknownFields: false` is what v1 writes by leaving it
/// out (an `omitempty` bool), so it is left out here too.
pub(crate) fn apply(crd: &mut Object) {
    let Some(Value::Object(spec)) = crd.get_mut("spec") else {
        return;
    };
    if let Some(Value::Object(names)) = spec.get_mut("names") {
        default_names(names);
    }
    if spec.get("conversion").is_none_or(Value::is_null) {
        spec.insert("conversion".into(), json!({"strategy": "None"}));
    }
    let service = spec.get_mut("conversion").and_then(|c| c.pointer_mut("/webhook/clientConfig/service"));
    if let Some(Value::Object(service)) = service {
        if service.get("port").is_none_or(Value::is_null) {
            service.insert("port".into(), json!(443));
        }
    }
    if spec.get("preserveUnknownFields") == Some(&Value::Bool(false)) {
        spec.remove("preserveUnknownFields");
    }
}

/// A CRD's names with upstream's defaults filled in: `singular` is the kind in lower
/// case, `listKind` the kind with `List`.
pub(crate) fn default_names(names: &mut Map<String, Value>) {
    let empty = |names: &Map<String, Value>, key: &str| names.get(key).and_then(Value::as_str).unwrap_or("").is_empty();
    // Nothing to copy (and nothing allocated) when both are set, as on every read.
    if !empty(names, "singular") && !empty(names, "listKind") {
        return;
    }
    let kind = names.get("kind").and_then(Value::as_str).unwrap_or("").to_owned();
    if empty(names, "singular") && !kind.is_empty() {
        names.insert("singular".into(), json!(kind.to_lowercase()));
    }
    if empty(names, "listKind") && !kind.is_empty() {
        names.insert("listKind".into(), json!(format!("{kind}List")));
    }
}

/// A new CRD's status, whatever it was sent with: no names accepted and no conditions
/// yet, its storage version stored (upstream's `PrepareForCreate`, written as Go writes
/// the empty status). Go also writes `conditions: null`; that is left out, because
/// `kubectl wait --for=condition=Established` fails on a null list instead of waiting,
/// and here the controllers write the first conditions a moment after the create
/// (upstream's are quick enough that it does not show).
pub(crate) fn prepare_for_create(crd: &mut Object) {
    let mut status = json!({
        "acceptedNames": {"kind": "", "plural": ""},
        "storedVersions": null,
    });
    if let Some(storage) = storage_version(crd) {
        status["storedVersions"] = json!([storage]);
    }
    crd.insert("status".into(), status);
}

/// A CRD written through the main resource keeps its stored status, except that a new
/// storage version joins `storedVersions` (upstream's `PrepareForUpdate`).
pub(crate) fn prepare_for_update(new: &mut Object, old: &Object) {
    let mut status = old.get("status").cloned().unwrap_or_else(|| json!({}));
    if let Some(storage) = storage_version(new) {
        let stored = status.get("storedVersions").and_then(Value::as_array).cloned().unwrap_or_default();
        if !stored.iter().any(|v| v.as_str() == Some(storage.as_str())) {
            let mut stored = stored;
            stored.push(json!(storage));
            status["storedVersions"] = Value::Array(stored);
        }
    }
    new.insert("status".into(), status);
}

/// The name of the first version marked `storage`.
fn storage_version(crd: &Object) -> Option<String> {
    crd.get("spec")
        .and_then(|s| s.get("versions"))
        .and_then(Value::as_array)?
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .map(|v| v.get("name").and_then(Value::as_str).unwrap_or("").to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_conversion_get_v1_defaults() {
        let mut crd = json!({"spec": {"names": {"kind": "Widget", "plural": "widgets"}, "preserveUnknownFields": false,
                                      "versions": [{"name": "v1", "storage": true}]}})
        .as_object()
        .cloned()
        .unwrap();
        apply(&mut crd);
        prepare_for_create(&mut crd);
        assert_eq!(crd["spec"]["names"]["singular"], "widget");
        assert_eq!(crd["spec"]["names"]["listKind"], "WidgetList");
        assert_eq!(crd["spec"]["conversion"], json!({"strategy": "None"}));
        assert!(crd["spec"].get("preserveUnknownFields").is_none());
        assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
    }

    #[test]
    fn a_new_storage_version_joins_the_stored_ones() {
        let old = json!({"status": {"storedVersions": ["v1"], "acceptedNames": {"kind": "W"}}}).as_object().cloned().unwrap();
        let mut new = json!({"spec": {"versions": [{"name": "v1", "storage": false}, {"name": "v2", "storage": true}]},
                             "status": {"storedVersions": []}})
        .as_object()
        .cloned()
        .unwrap();
        prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], json!({"storedVersions": ["v1", "v2"], "acceptedNames": {"kind": "W"}}));
    }
}

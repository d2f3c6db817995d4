//! APIServices (apiregistration.k8s.io/v1): the group versions the server serves,
//! itself (`Local`, no Service) or through an extension API server, with a status
//! only `/status` writes. Defaults as upstream's v1 (a Service's port 443); a new
//! local APIService is Available at once, as kube-aggregator's strategy marks it.
//! Validation is upstream's `ValidateAPIService` in its order and words: the name
//! `<version>.<group>`, priorities in range, and a local one without a CA bundle or
//! `insecureSkipTLSVerify`.

use super::columns::Column;
use super::defaults::{object, or_insert};
use super::flowschemas::invalid_int;
use super::{reset_status, Columns, Strategy};
use crate::rest::object::{meta_str, Object};
use crate::validation::value::{int, list, present, text};
use crate::validation::{names, FieldError, FieldPath};
use serde_json::{json, Value};

pub struct APIServices;

static COLUMNS: &[Column] = &[
    Column {
        name: "Service",
        kind: "string",
        format: "",
        description: "The reference to the service that hosts this API endpoint.",
        priority: 0,
        cell: |o| match o.get("spec").and_then(|s| s.get("service")).filter(|s| s.is_object()) {
            Some(s) => json!(format!("{}/{}", text(s, "namespace"), text(s, "name"))),
            None => json!("Local"),
        },
    },
    Column {
        name: "Available",
        kind: "string",
        format: "",
        description: "Whether this service is available.",
        priority: 0,
        cell: available,
    },
];

/// The Available condition as upstream prints it: its status, with its reason when not
/// True; Unknown without one.
fn available(o: &Object) -> Value {
    let conditions = o.get("status").map(|s| list(s, "conditions")).unwrap_or(&[]);
    match conditions.iter().find(|c| text(c, "type") == "Available") {
        None => json!("Unknown"),
        Some(c) => match (text(c, "status"), text(c, "reason")) {
            ("True", _) | (_, "") => json!(text(c, "status")),
            (status, reason) => json!(format!("{status} ({reason})")),
        },
    }
}

impl Strategy for APIServices {
    fn name(&self) -> &'static str {
        "apiservices"
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn default(&self, obj: &mut Object) {
        if let Some(service) = object(obj, "spec").and_then(|s| object(s, "service")) {
            or_insert(service, "port", || json!(443));
        }
    }

    /// The status starts empty; a local APIService is Available from the start, since
    /// this server serves it (the condition dated by the object's creation).
    fn prepare_for_create(&self, new: &mut Object, has_status: bool) {
        if has_status {
            reset_status(new);
        }
        let local = !new.get("spec").is_some_and(|s| present(s, "service"));
        if local {
            let now = meta_str(new, "creationTimestamp").to_owned();
            new.insert(
                "status".into(),
                json!({"conditions": [{
                    "type": "Available",
                    "status": "True",
                    "lastTransitionTime": now,
                    "reason": "Local",
                    "message": "Local APIServices are always available",
                }]}),
            );
        }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_status_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        let conditions = new.get("status").map(|s| list(s, "conditions")).unwrap_or(&[]);
        let path = FieldPath::new("status").child("conditions");
        conditions
            .iter()
            .enumerate()
            .filter(|(_, c)| !matches!(text(c, "status"), "True" | "False" | "Unknown"))
            .map(|(i, c)| FieldError::not_supported(path.index(i).child("status").as_str(), text(c, "status"), &["True", "False", "Unknown"]))
            .collect()
    }
}

/// Upstream's `ValidateAPIService` past the generic metadata checks (the name's
/// path-segment rule is the registry's).
fn validate(api: &Object) -> Vec<FieldError> {
    let spec = api.get("spec").unwrap_or(&Value::Null);
    let path = FieldPath::new("spec");
    let (group, version) = (text(spec, "group"), text(spec, "version"));
    let mut errs = Vec::new();
    let name = meta_str(api, "name");
    let required = format!("{version}.{group}");
    if names::path_segment(name).is_empty() && name != required {
        let detail = format!("must be `spec.version+\".\"+spec.group`: {}", crate::validation::quoted(&required));
        errs.push(FieldError::invalid("metadata.name", name, detail));
    }
    if group.is_empty() && version != "v1" {
        errs.push(FieldError::required(path.child("group").as_str(), "only v1 may have an empty group and it better be legacy kube"));
    }
    if !group.is_empty() {
        errs.extend(names::dns1123_subdomain(group).into_iter().map(|m| FieldError::invalid(path.child("group").as_str(), group, m)));
    }
    errs.extend(names::dns1035_label(version).into_iter().map(|m| FieldError::invalid(path.child("version").as_str(), version, m)));
    let group_priority = int(spec, "groupPriorityMinimum").unwrap_or(0);
    if !(1..=20_000).contains(&group_priority) {
        errs.push(invalid_int(&path.child("groupPriorityMinimum"), group_priority, "must be positive and less than 20000"));
    }
    let version_priority = int(spec, "versionPriority").unwrap_or(0);
    if !(1..=1000).contains(&version_priority) {
        errs.push(invalid_int(&path.child("versionPriority"), version_priority, "must be positive and less than 1000"));
    }
    let insecure = spec.get("insecureSkipTLSVerify").and_then(Value::as_bool).unwrap_or(false);
    let ca_bytes = ca_bundle_len(text(spec, "caBundle"));
    let Some(service) = spec.get("service").filter(|s| !s.is_null()) else {
        if ca_bytes > 0 {
            let at = path.child("caBundle");
            errs.push(FieldError::invalid(at.as_str(), &format!("{ca_bytes} bytes"), "local APIServices may not have a caBundle"));
        }
        if insecure {
            let at = path.child("insecureSkipTLSVerify");
            errs.push(FieldError::invalid_unquoted(at.as_str(), "true", "local APIServices may not have insecureSkipTLSVerify"));
        }
        return errs;
    };
    let at = path.child("service");
    for key in ["namespace", "name"] {
        if text(service, key).is_empty() {
            errs.push(FieldError::required(at.child(key).as_str(), ""));
        }
    }
    let port = int(service, "port").unwrap_or(0);
    if !(1..=65535).contains(&port) {
        errs.push(invalid_int(&at.child("port"), port, "port is not valid: must be between 1 and 65535, inclusive"));
    }
    if insecure && ca_bytes > 0 {
        errs.push(FieldError::invalid_unquoted(path.child("insecureSkipTLSVerify").as_str(), "true", "may not be true if caBundle is present"));
    }
    errs
}

/// How many bytes a base64 CA bundle decodes to.
fn ca_bundle_len(encoded: &str) -> usize {
    let trimmed = encoded.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(name: &str, spec: Value) -> Object {
        let mut o = json!({"metadata": {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": spec}).as_object().unwrap().clone();
        APIServices.default(&mut o);
        o
    }

    #[test]
    fn a_local_one_is_available_at_once_and_a_service_port_defaults() {
        let mut local = api("v1.x.io", json!({"group": "x.io", "version": "v1", "groupPriorityMinimum": 1, "versionPriority": 1}));
        APIServices.prepare_for_create(&mut local, true);
        assert_eq!(available(&local), "True");
        assert_eq!(local["status"]["conditions"][0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
        let mut remote = api("v1.x.io", json!({"service": {"namespace": "n", "name": "s"}}));
        APIServices.prepare_for_create(&mut remote, true);
        assert_eq!(remote["status"], json!({}));
        assert_eq!(remote["spec"]["service"]["port"], 443);
        assert_eq!((COLUMNS[0].cell)(&remote), "n/s");
        remote["status"] = json!({"conditions": [{"type": "Available", "status": "False", "reason": "MissingEndpoints"}]});
        assert_eq!(available(&remote), "False (MissingEndpoints)");
    }

    #[test]
    fn a_local_one_has_no_ca_bundle() {
        let o = api("v1.x.io", json!({"group": "x.io", "version": "v1", "groupPriorityMinimum": 1, "versionPriority": 1, "caBundle": "AAAA", "insecureSkipTLSVerify": true}));
        let errs: Vec<String> = validate(&o).iter().map(ToString::to_string).collect();
        assert_eq!(errs, [
            r#"spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle"#,
            "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
        ]);
    }
}

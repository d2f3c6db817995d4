//! Environment variables (`env`, `envFrom`) and where their values come from.

use crate::validation::names::dns1123_subdomain;
use crate::validation::value::{present, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;

/// The pod fields an environment variable may read (`fieldRef.fieldPath`).
const ENV_FIELD_PATHS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// The pod fields core/v1 knows as downward API field labels at all.
const V1_FIELD_LABELS: &[&str] = &[
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.serviceAccountName",
    "spec.schedulerName",
    "status.phase",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

const RESOURCE_FIELD_PATHS: &[&str] = &[
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

const ENV_NAME_MSG: &str = "a valid environment variable name must consist only of printable ASCII characters other than '='";

/// Upstream's relaxed environment variable names (on by default since v1.32).
fn env_name_errors(name: &str) -> Vec<String> {
    if name.bytes().all(|b| (32..=126).contains(&b) && b != b'=') {
        Vec::new()
    } else {
        vec![ENV_NAME_MSG.to_owned()]
    }
}

pub(super) fn validate_env(vars: &[Value], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, var) in vars.iter().enumerate() {
        let at = path.index(i);
        match text(var, "name") {
            "" => errs.push(FieldError::required(at.child("name").as_str(), "")),
            name => errs.extend(env_name_errors(name).into_iter().map(|m| FieldError::invalid(at.child("name").as_str(), name, m))),
        }
        errs.extend(value_from(var, &at.child("valueFrom")));
    }
    errs
}

fn value_from(var: &Value, path: &FieldPath) -> Vec<FieldError> {
    let Some(from) = var.get("valueFrom").filter(|v| !v.is_null()) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    let mut sources = 0;
    if let Some(field_ref) = from.get("fieldRef").filter(|v| !v.is_null()) {
        sources += 1;
        errs.extend(field_selector(field_ref, &path.child("fieldRef")));
    }
    if let Some(resource_ref) = from.get("resourceFieldRef").filter(|v| !v.is_null()) {
        sources += 1;
        errs.extend(resource_selector(resource_ref, &path.child("resourceFieldRef")));
    }
    for key in ["configMapKeyRef", "secretKeyRef"] {
        if let Some(selector) = from.get(key).filter(|v| !v.is_null()) {
            sources += 1;
            errs.extend(key_selector(selector, &path.child(key)));
        }
    }
    let invalid = |detail: &str| FieldError::invalid(path.as_str(), "", detail);
    if sources == 0 {
        errs.push(invalid("must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"));
    } else if !text(var, "value").is_empty() {
        errs.push(invalid("may not be specified when `value` is not empty"));
    } else if sources > 1 {
        errs.push(invalid("may not have more than one field specified at a time"));
    }
    errs
}

/// `metadata.labels['x']` as its field and subscript.
fn subscripted(path: &str) -> Option<(&str, &str)> {
    let inner = path.strip_suffix("']")?;
    let (field, key) = inner.split_once("['")?;
    (!field.is_empty()).then_some((field, key))
}

fn field_selector(selector: &Value, path: &FieldPath) -> Vec<FieldError> {
    // An absent apiVersion is defaulted to v1.
    let version = match text(selector, "apiVersion") {
        "" => "v1",
        v => v,
    };
    let field_path = text(selector, "fieldPath");
    if field_path.is_empty() {
        return vec![FieldError::required(path.child("fieldPath").as_str(), "")];
    }
    let conversion = if version != "v1" {
        Err(format!("unsupported pod version: {version}"))
    } else if let Some((field, _)) = subscripted(field_path) {
        match field {
            "metadata.annotations" | "metadata.labels" => Ok(()),
            _ => Err(format!("field label does not support subscript: {field_path}")),
        }
    } else if V1_FIELD_LABELS.contains(&field_path) {
        Ok(())
    } else {
        Err(format!("field label not supported: {field_path}"))
    };
    if let Err(e) = conversion {
        return vec![FieldError::invalid(path.child("fieldPath").as_str(), field_path, format!("error converting fieldPath: {e}"))];
    }
    match subscripted(field_path) {
        Some((field, key)) => {
            let key = if field == "metadata.annotations" { key.to_lowercase() } else { key.to_owned() };
            crate::validation::names::qualified_name(&key).into_iter().map(|m| FieldError::invalid(path.as_str(), &key, m)).collect()
        }
        None if !ENV_FIELD_PATHS.contains(&field_path) => {
            let mut supported = ENV_FIELD_PATHS.to_vec();
            supported.sort_unstable();
            vec![FieldError::not_supported(path.child("fieldPath").as_str(), field_path, &supported)]
        }
        None => Vec::new(),
    }
}

fn resource_selector(selector: &Value, path: &FieldPath) -> Vec<FieldError> {
    let resource = text(selector, "resource");
    if resource.is_empty() {
        return vec![FieldError::required(path.child("resource").as_str(), "")];
    }
    let hugepages = resource.starts_with("requests.hugepages-") || resource.starts_with("limits.hugepages-");
    if RESOURCE_FIELD_PATHS.contains(&resource) || hugepages {
        return Vec::new();
    }
    vec![FieldError::not_supported(path.child("resource").as_str(), resource, RESOURCE_FIELD_PATHS)]
}

/// A ConfigMap's or Secret's key (`configMapKeyRef`, `secretKeyRef`).
fn key_selector(selector: &Value, path: &FieldPath) -> Vec<FieldError> {
    let name = text(selector, "name");
    let mut errs: Vec<FieldError> =
        dns1123_subdomain(name).into_iter().map(|m| FieldError::invalid(path.child("name").as_str(), name, m)).collect();
    match text(selector, "key") {
        "" => errs.push(FieldError::required(path.child("key").as_str(), "")),
        key => errs.extend(config_key_errors(key).into_iter().map(|m| FieldError::invalid(path.child("key").as_str(), key, m))),
    }
    errs
}

/// Upstream's `IsConfigMapKey`.
fn config_key_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push("must be no more than 253 characters".to_owned());
    }
    if !key.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b)) {
        errs.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')".to_owned());
    }
    if key == "." {
        errs.push("must not be '.'".to_owned());
    } else if key == ".." {
        errs.push("must not be '..'".to_owned());
    } else if key.starts_with("..") {
        errs.push("must not start with '..'".to_owned());
    }
    errs
}

pub(super) fn validate_env_from(sources: &[Value], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        let at = path.index(i);
        let prefix = text(source, "prefix");
        errs.extend(env_name_errors(prefix).into_iter().map(|m| FieldError::invalid(at.child("prefix").as_str(), prefix, m)));
        let mut count = 0;
        for key in ["configMapRef", "secretRef"] {
            if present(source, key) {
                count += 1;
                let reference = &source[key];
                let name_path = at.child(key).child("name");
                match text(reference, "name") {
                    "" => errs.push(FieldError::required(name_path.as_str(), "")),
                    name => errs.extend(dns1123_subdomain(name).into_iter().map(|m| FieldError::invalid(name_path.as_str(), name, m))),
                }
            }
        }
        if count == 0 {
            errs.push(FieldError::invalid(path.as_str(), "", "must specify one of: `configMapRef` or `secretRef`"));
        } else if count > 1 {
            errs.push(FieldError::invalid(path.as_str(), "", "may not have more than one field specified at a time"));
        }
    }
    errs
}

//! Which fields a resource can be selected by, and where their values live.
//!
//! Each kind's strategy (`resources/`) says which fields it can be selected by, as a
//! [`SelectableFields`]; this module reads the values. Upstream answers this in two
//! places that a [`SelectableFields`] folds into one:
//!
//! - the kind's field label conversion func (`pkg/apis/<group>/<version>/conversion.go`,
//!   `AddFieldLabelConversionFunc`) says which selector fields a request may use, may
//!   rename one (pods' legacy `spec.host`, events.k8s.io's `regarding.*`), and words
//!   the 400 for any other; a kind without one falls back to
//!   `runtime.DefaultMetaV1FieldSelectorConversion` (only `metadata.name` and
//!   `metadata.namespace`, with its own wording) — [`DEFAULT`];
//! - the registry strategy's `GetAttrs`/`ToSelectableFields`
//!   (`pkg/registry/<group>/<resource>/strategy.go`) computes the field values an
//!   object is matched against. A field the conversion accepts but the strategy never
//!   sets reads as "" (pods' `status.podIPs`).
//!
//! Note what upstream does *not* have, and so neither does Apiary: apps/v1
//! registers no conversion, so replicasets (and statefulsets) reject `status.replicas`
//! with the default message, although their strategy computes it.
//!
//! A custom resource is selectable by `metadata.name`, by `metadata.namespace` when
//! namespaced, and by each path its CRD version declares in `selectableFields`
//! ([`DeclaredFields`]; upstream's `crConverter.ConvertFieldLabel` and the custom
//! resource strategy's `GetAttrs`).

use crate::jsonpath::{Item, JsonPath};
use serde_json::{Map, Value};
use std::sync::Arc;

type Object = Map<String, Value>;

/// The 400 message for a field a resource cannot be selected by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// `field label not supported: <field>` (most conversion funcs).
    NotSupported,
    /// `field label "<field>" not supported for Job` (batch/v1).
    NotSupportedForJob,
    /// `"<field>" is not a known field selector: only "metadata.name", "metadata.namespace"`
    /// (the default conversion).
    NotKnown,
}

impl Rejection {
    pub fn message(self, field: &str) -> String {
        let quoted = crate::schema::go_quote(field);
        match self {
            Rejection::NotSupported => format!("field label not supported: {field}"),
            Rejection::NotSupportedForJob => format!("field label {quoted} not supported for Job"),
            Rejection::NotKnown => {
                format!("{quoted} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"")
            }
        }
    }
}

/// The selectable fields of one resource.
#[derive(Debug)]
pub struct SelectableFields {
    /// (the field a request names, the attribute it selects — see [`attribute`]).
    pub fields: &'static [(&'static str, &'static str)],
    pub rejection: Rejection,
}

impl SelectableFields {
    /// The attribute `field` selects, or the 400 message.
    pub fn convert(&self, field: &str) -> Result<&'static str, String> {
        self.fields
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, attribute)| *attribute)
            .ok_or_else(|| self.rejection.message(field))
    }
}

/// What a field selector's term compares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attribute {
    /// An attribute [`attribute`] computes, by name.
    Named(&'static str),
    /// A custom resource's selectable field: what its declared path finds.
    Path(Arc<JsonPath>),
}

impl Attribute {
    /// The attribute's value in `obj`, as a term compares it.
    pub fn value(&self, obj: &Object) -> String {
        match self {
            Attribute::Named(name) => attribute(obj, name),
            Attribute::Path(path) => declared_value(path, obj),
        }
    }
}

/// The fields a resource can be selected by.
#[derive(Clone, Copy, Debug)]
pub enum FieldLabels<'a> {
    /// A built-in kind's, fixed.
    Builtin(&'static SelectableFields),
    /// A custom resource's.
    Declared(&'a DeclaredFields),
}

impl FieldLabels<'_> {
    /// The attribute `field` selects, or the 400 message.
    pub fn convert(&self, field: &str) -> Result<Attribute, String> {
        match self {
            FieldLabels::Builtin(fields) => fields.convert(field).map(Attribute::Named),
            FieldLabels::Declared(fields) => fields.convert(field),
        }
    }
}

/// The selectable fields of a custom resource: its metadata's and the paths its CRD
/// version declares, each read once when the CRD is served.
#[derive(Debug)]
pub struct DeclaredFields {
    namespaced: bool,
    /// (the field a request names: the path without its leading dot, the path).
    paths: Vec<(String, Arc<JsonPath>)>,
}

impl DeclaredFields {
    /// The fields of a resource (`namespaced` or not) whose CRD version declares
    /// `paths` (`selectableFields[*].jsonPath`, such as `.spec.color`).
    pub fn new<'p>(namespaced: bool, paths: impl IntoIterator<Item = &'p str>) -> DeclaredFields {
        let paths = paths
            .into_iter()
            .map(|path| {
                // A path that does not parse (the CRD's validation refuses one) reads "".
                let parsed = JsonPath::of_path(path).unwrap_or_default();
                (path.strip_prefix('.').unwrap_or(path).to_owned(), Arc::new(parsed))
            })
            .collect();
        DeclaredFields { namespaced, paths }
    }

    fn convert(&self, field: &str) -> Result<Attribute, String> {
        match field {
            "metadata.name" => Ok(Attribute::Named(NAME.1)),
            "metadata.namespace" if self.namespaced => Ok(Attribute::Named(NAMESPACE.1)),
            _ => self
                .paths
                .iter()
                .find(|(name, _)| name == field)
                .map(|(_, path)| Attribute::Path(Arc::clone(path)))
                .ok_or_else(|| Rejection::NotSupported.message(field)),
        }
    }
}

/// A declared field's value: the first thing its path finds, as `fmt.Sprint` prints
/// it; "" when it finds nothing or null.
fn declared_value(path: &JsonPath, obj: &Object) -> String {
    match path.first_in(obj) {
        None | Some(Item::Json(Value::Null)) => String::new(),
        Some(found) => found.sprint(),
    }
}

/// A field every object has.
pub const NAME: (&str, &str) = ("metadata.name", "metadata.name");
/// A field every namespaced object has.
pub const NAMESPACE: (&str, &str) = ("metadata.namespace", "metadata.namespace");

/// Every resource whose kind has no field label conversion of its own.
pub static DEFAULT: SelectableFields = SelectableFields {
    fields: &[NAME, NAMESPACE],
    rejection: Rejection::NotKnown,
};

fn at<'a>(obj: &'a Object, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter().try_fold(obj.get(*first)?, |v, p| v.get(p))
}

fn text<'a>(obj: &'a Object, path: &[&str]) -> &'a str {
    at(obj, path).and_then(Value::as_str).unwrap_or("")
}

fn first_text<'a>(obj: &'a Object, paths: &[&[&str]]) -> &'a str {
    paths
        .iter()
        .map(|p| text(obj, p))
        .find(|s| !s.is_empty())
        .unwrap_or("")
}

/// `strconv.FormatBool`, false when unset.
fn boolean(obj: &Object, path: &[&str]) -> String {
    at(obj, path)
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .to_string()
}

/// `strconv.Itoa` of an int32 field, 0 when unset.
fn integer(obj: &Object, path: &[&str]) -> String {
    at(obj, path)
        .and_then(Value::as_i64)
        .unwrap_or(0)
        .to_string()
}

/// The value of attribute `name` of `obj`, as the registry strategy computes it:
/// strings as they are, booleans as "true"/"false", counts in decimal, "" for an
/// attribute the object does not have.
///
/// Events are read in either shape, core/v1 (`involvedObject`, `source`,
/// `reportingComponent`) or events.k8s.io/v1 (`regarding`, `deprecatedSource`,
/// `reportingController`), since upstream computes them from the one internal type
/// both versions convert to.
pub fn attribute(obj: &Object, name: &str) -> String {
    let text = |path: &[&str]| text(obj, path).to_owned();
    match name {
        "metadata.name" => text(&["metadata", "name"]),
        "metadata.namespace" => text(&["metadata", "namespace"]),
        "spec.hostNetwork" => boolean(obj, &["spec", "hostNetwork"]),
        "spec.unschedulable" => boolean(obj, &["spec", "unschedulable"]),
        // The internal type keeps only podIPs; converting a v1 object fills its first
        // entry from status.podIP when that is set (it wins over podIPs[0]).
        "status.podIP" => match text(&["status", "podIP"]) {
            ip if !ip.is_empty() => ip,
            _ => at(obj, &["status", "podIPs"])
                .and_then(|ips| ips.get(0))
                .and_then(|ip| ip.get("ip"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        },
        "status.replicas" => integer(obj, &["status", "replicas"]),
        "status.successful" => integer(obj, &["status", "succeeded"]),
        "reportingComponent" => {
            first_text(obj, &[&["reportingComponent"], &["reportingController"]]).to_owned()
        }
        "source" => first_text(
            obj,
            &[
                &["source", "component"],
                &["deprecatedSource", "component"],
                &["reportingComponent"],
                &["reportingController"],
            ],
        )
        .to_owned(),
        _ => match name.strip_prefix("involvedObject.") {
            Some(field) => {
                first_text(obj, &[&["involvedObject", field], &["regarding", field]]).to_owned()
            }
            // Plain string fields: spec.nodeName, status.phase, type, reason, ... A field
            // the strategy never computes (pods' status.podIPs) has no object path of
            // this shape with a string in it, and reads "".
            None if name == "status.podIPs" => String::new(),
            None => {
                let path: Vec<&str> = name.split('.').collect();
                text(&path)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Object {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn pod_attributes() {
        let pod = obj(json!({
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"nodeName": "n1", "restartPolicy": "Never", "schedulerName": "s",
                     "serviceAccountName": "sa", "hostNetwork": true},
            "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}],
                       "nominatedNodeName": "n2"}
        }));
        let cases = [
            ("metadata.name", "p"),
            ("metadata.namespace", "ns"),
            ("spec.nodeName", "n1"),
            ("spec.restartPolicy", "Never"),
            ("spec.schedulerName", "s"),
            ("spec.serviceAccountName", "sa"),
            ("spec.hostNetwork", "true"),
            ("status.phase", "Running"),
            ("status.podIP", "10.0.0.1"),
            ("status.podIPs", ""),
            ("status.nominatedNodeName", "n2"),
        ];
        for (name, want) in cases {
            assert_eq!(attribute(&pod, name), want, "{name}");
        }
        let bare = obj(json!({"metadata": {"name": "q"}, "status": {"podIP": "10.1.1.1"}}));
        assert_eq!(attribute(&bare, "spec.hostNetwork"), "false");
        assert_eq!(attribute(&bare, "status.podIP"), "10.1.1.1");
        assert_eq!(attribute(&bare, "spec.nodeName"), "");
    }

    #[test]
    fn other_attributes() {
        let node = obj(json!({"spec": {"unschedulable": true}}));
        assert_eq!(attribute(&node, "spec.unschedulable"), "true");
        assert_eq!(attribute(&obj(json!({})), "spec.unschedulable"), "false");
        assert_eq!(
            attribute(&obj(json!({"status": {"replicas": 3}})), "status.replicas"),
            "3"
        );
        assert_eq!(attribute(&obj(json!({})), "status.replicas"), "0");
        assert_eq!(
            attribute(
                &obj(json!({"status": {"succeeded": 2}})),
                "status.successful"
            ),
            "2"
        );
        assert_eq!(attribute(&obj(json!({"type": "Opaque"})), "type"), "Opaque");
        assert_eq!(
            attribute(&obj(json!({"status": {"phase": "Active"}})), "status.phase"),
            "Active"
        );
        assert_eq!(
            attribute(
                &obj(json!({"spec": {"signerName": "x/y"}})),
                "spec.signerName"
            ),
            "x/y"
        );
        assert_eq!(
            attribute(
                &obj(json!({"spec": {"clusterIP": "None"}})),
                "spec.clusterIP"
            ),
            "None"
        );

        let core = obj(json!({
            "involvedObject": {"kind": "Pod", "name": "p", "uid": "u"},
            "reason": "Started", "type": "Normal", "reportingComponent": "kubelet",
            "source": {"component": "kubelet-src"}
        }));
        assert_eq!(attribute(&core, "involvedObject.kind"), "Pod");
        assert_eq!(attribute(&core, "involvedObject.uid"), "u");
        assert_eq!(attribute(&core, "involvedObject.fieldPath"), "");
        assert_eq!(attribute(&core, "source"), "kubelet-src");
        assert_eq!(attribute(&core, "reportingComponent"), "kubelet");
        let no_source = obj(json!({"reportingComponent": "ctl"}));
        assert_eq!(attribute(&no_source, "source"), "ctl");

        let new = obj(json!({
            "regarding": {"kind": "Node", "name": "n"}, "reason": "R",
            "reportingController": "c", "deprecatedSource": {"component": ""}
        }));
        assert_eq!(attribute(&new, "involvedObject.kind"), "Node");
        assert_eq!(attribute(&new, "reportingComponent"), "c");
        assert_eq!(attribute(&new, "source"), "c");
    }
}

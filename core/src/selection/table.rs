//! Which fields each resource can be selected by, and where their values live.
//!
//! Upstream answers this in two places that this table folds into one row per
//! resource:
//!
//! - the kind's field label conversion func (`pkg/apis/<group>/<version>/conversion.go`,
//!   `AddFieldLabelConversionFunc`) says which selector fields a request may use, may
//!   rename one (pods' legacy `spec.host`, events.k8s.io's `regarding.*`), and words
//!   the 400 for any other; a kind without one falls back to
//!   `runtime.DefaultMetaV1FieldSelectorConversion` (only `metadata.name` and
//!   `metadata.namespace`, with its own wording) — every resource not listed here;
//! - the registry strategy's `GetAttrs`/`ToSelectableFields`
//!   (`pkg/registry/<group>/<resource>/strategy.go`) computes the field values an
//!   object is matched against. A field the conversion accepts but the strategy never
//!   sets reads as "" (pods' `status.podIPs`).
//!
//! Note what upstream does *not* have, and so neither does this table: apps/v1
//! registers no conversion, so replicasets (and statefulsets) reject `status.replicas`
//! with the default message, although their strategy computes it.

use super::Object;
use serde_json::Value;

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
    pub group: &'static str,
    pub resource: &'static str,
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

const NAME: (&str, &str) = ("metadata.name", "metadata.name");
const NAMESPACE: (&str, &str) = ("metadata.namespace", "metadata.namespace");

/// Every resource that is not in [`TABLE`].
pub const DEFAULT: SelectableFields = SelectableFields {
    group: "",
    resource: "",
    fields: &[NAME, NAMESPACE],
    rejection: Rejection::NotKnown,
};

/// The resources with a field label conversion of their own, as of Kubernetes v1.33.
#[rustfmt::skip]
pub const TABLE: &[SelectableFields] = &[
    // pkg/apis/core/v1/conversion.go; pkg/registry/core/pod/strategy.go
    SelectableFields { group: "", resource: "pods", rejection: Rejection::NotSupported, fields: &[
        NAME, NAMESPACE,
        ("spec.nodeName", "spec.nodeName"),
        ("spec.restartPolicy", "spec.restartPolicy"),
        ("spec.schedulerName", "spec.schedulerName"),
        ("spec.serviceAccountName", "spec.serviceAccountName"),
        ("spec.hostNetwork", "spec.hostNetwork"),
        ("status.phase", "status.phase"),
        ("status.podIP", "status.podIP"),
        ("status.podIPs", "status.podIPs"),
        ("status.nominatedNodeName", "status.nominatedNodeName"),
        // For old v1 clients.
        ("spec.host", "spec.nodeName"),
    ]},
    // pkg/registry/core/node/strategy.go: no metadata.namespace.
    SelectableFields { group: "", resource: "nodes", rejection: Rejection::NotSupported, fields: &[
        NAME,
        ("spec.unschedulable", "spec.unschedulable"),
    ]},
    SelectableFields { group: "", resource: "replicationcontrollers", rejection: Rejection::NotSupported, fields: &[
        NAME, NAMESPACE,
        ("status.replicas", "status.replicas"),
    ]},
    // pkg/registry/core/event/strategy.go
    SelectableFields { group: "", resource: "events", rejection: Rejection::NotSupported, fields: &[
        ("involvedObject.kind", "involvedObject.kind"),
        ("involvedObject.namespace", "involvedObject.namespace"),
        ("involvedObject.name", "involvedObject.name"),
        ("involvedObject.uid", "involvedObject.uid"),
        ("involvedObject.apiVersion", "involvedObject.apiVersion"),
        ("involvedObject.resourceVersion", "involvedObject.resourceVersion"),
        ("involvedObject.fieldPath", "involvedObject.fieldPath"),
        ("reason", "reason"),
        ("reportingComponent", "reportingComponent"),
        ("source", "source"),
        ("type", "type"),
        NAMESPACE, NAME,
    ]},
    SelectableFields { group: "", resource: "namespaces", rejection: Rejection::NotSupported, fields: &[
        ("status.phase", "status.phase"),
        NAME,
    ]},
    SelectableFields { group: "", resource: "secrets", rejection: Rejection::NotSupported, fields: &[
        ("type", "type"),
        NAMESPACE, NAME,
    ]},
    // spec.clusterIP since v1.30, spec.type since v1.31.
    SelectableFields { group: "", resource: "services", rejection: Rejection::NotSupported, fields: &[
        NAMESPACE, NAME,
        ("spec.clusterIP", "spec.clusterIP"),
        ("spec.type", "spec.type"),
    ]},
    // pkg/apis/events/v1/conversion.go: the events.k8s.io names of the core fields.
    SelectableFields { group: "events.k8s.io", resource: "events", rejection: Rejection::NotSupported, fields: &[
        ("reason", "reason"),
        ("regarding.kind", "involvedObject.kind"),
        ("regarding.namespace", "involvedObject.namespace"),
        ("regarding.name", "involvedObject.name"),
        ("regarding.uid", "involvedObject.uid"),
        ("regarding.apiVersion", "involvedObject.apiVersion"),
        ("regarding.resourceVersion", "involvedObject.resourceVersion"),
        ("regarding.fieldPath", "involvedObject.fieldPath"),
        ("reportingController", "reportingComponent"),
        ("source", "source"),
        ("type", "type"),
        NAMESPACE, NAME,
    ]},
    // pkg/apis/batch/v1/conversion.go; pkg/registry/batch/job/strategy.go
    SelectableFields { group: "batch", resource: "jobs", rejection: Rejection::NotSupportedForJob, fields: &[
        NAME, NAMESPACE,
        ("status.successful", "status.successful"),
    ]},
    // pkg/apis/certificates/v1/conversion.go (served once the resource is).
    SelectableFields { group: "certificates.k8s.io", resource: "certificatesigningrequests", rejection: Rejection::NotSupported, fields: &[
        NAME,
        ("spec.signerName", "spec.signerName"),
    ]},
];

/// The selectable fields of `group`/`resource`.
pub fn selectable_fields(group: &str, resource: &str) -> &'static SelectableFields {
    TABLE
        .iter()
        .find(|t| t.group == group && t.resource == resource)
        .unwrap_or(&DEFAULT)
}

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
    fn one_row_per_resource() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                assert!(
                    (a.group, a.resource) != (b.group, b.resource),
                    "{} twice",
                    a.resource
                );
            }
            assert!(
                a.fields.iter().any(|(f, _)| *f == "metadata.name"),
                "{}",
                a.resource
            );
        }
    }

    #[test]
    fn conversions_and_rejections_per_resource() {
        let pods = selectable_fields("", "pods");
        assert_eq!(pods.convert("spec.host"), Ok("spec.nodeName"));
        assert_eq!(pods.convert("status.podIPs"), Ok("status.podIPs"));
        assert_eq!(
            pods.convert("spec.foo").unwrap_err(),
            "field label not supported: spec.foo"
        );
        let cm = selectable_fields("", "configmaps");
        assert_eq!(cm.convert("metadata.namespace"), Ok("metadata.namespace"));
        assert_eq!(
            cm.convert("spec.foo").unwrap_err(),
            r#""spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace""#
        );
        let rs = selectable_fields("apps", "replicasets");
        assert!(rs
            .convert("status.replicas")
            .unwrap_err()
            .contains("is not a known field selector"));
        let rc = selectable_fields("", "replicationcontrollers");
        assert_eq!(rc.convert("status.replicas"), Ok("status.replicas"));
        assert_eq!(
            selectable_fields("batch", "jobs")
                .convert("spec.x")
                .unwrap_err(),
            r#"field label "spec.x" not supported for Job"#
        );
        for (group, resource) in [
            ("", "nodes"),
            ("", "namespaces"),
            ("certificates.k8s.io", "certificatesigningrequests"),
        ] {
            let e = selectable_fields(group, resource)
                .convert("metadata.namespace")
                .unwrap_err();
            assert_eq!(
                e, "field label not supported: metadata.namespace",
                "{resource}"
            );
        }
        let ev = selectable_fields("events.k8s.io", "events");
        assert_eq!(ev.convert("regarding.name"), Ok("involvedObject.name"));
        assert_eq!(ev.convert("reportingController"), Ok("reportingComponent"));
        assert!(ev.convert("involvedObject.name").is_err());
        assert!(selectable_fields("", "events")
            .convert("regarding.name")
            .is_err());
        let svc = selectable_fields("", "services");
        assert_eq!(svc.convert("spec.type"), Ok("spec.type"));
        assert_eq!(selectable_fields("", "secrets").convert("type"), Ok("type"));
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

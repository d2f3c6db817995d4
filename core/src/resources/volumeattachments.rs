//! VolumeAttachments (storage.k8s.io/v1): a request to attach a volume to a node, whose
//! status the attacher writes. The attacher is named as a CSI driver is, the source is
//! a persistent volume's name or an inline volume spec (exactly one), the node a DNS
//! subdomain; the spec never changes (upstream's `ValidateVolumeAttachment*`, which in
//! v1 checks the attacher twice). An inline spec is not checked as a PersistentVolume's.

use super::csinodes::driver_name;
use super::{Column, Columns, Strategy};
use crate::rest::object::Object;
use crate::validation::value::text;
use crate::validation::{go_json, names, FieldError};
use serde_json::{json, Value};

pub struct VolumeAttachments;

const ONE_SOURCE: &str = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";

static COLUMNS: &[Column] = &[
    Column { name: "Attacher", kind: "string", format: "name", description: "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().", priority: 0, cell: |o| super::columns::str_at(o, &["spec", "attacher"]) },
    Column { name: "PV", kind: "string", description: "persistentVolumeName represents the name of the persistent volume to attach.", format: "", priority: 0, cell: |o| super::columns::str_at(o, &["spec", "source", "persistentVolumeName"]) },
    Column { name: "Node", kind: "string", description: "nodeName represents the node that the volume should be attached to.", format: "", priority: 0, cell: |o| super::columns::str_at(o, &["spec", "nodeName"]) },
    Column { name: "Attached", kind: "boolean", description: "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.", format: "", priority: 0, cell: |o| json!(super::columns::at(o, &["status", "attached"]).and_then(Value::as_bool).unwrap_or(false)) },
];

impl Strategy for VolumeAttachments {
    fn name(&self) -> &'static str {
        "volumeattachments"
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = validate(new);
        if new.get("spec") != old.get("spec") {
            let spec = new.get("spec").cloned().unwrap_or(json!({}));
            errs.push(FieldError::invalid_unquoted("spec", &internal_spec(&spec), "field is immutable"));
        }
        errs
    }
}

fn validate(va: &Object) -> Vec<FieldError> {
    let spec = va.get("spec").cloned().unwrap_or(json!({}));
    let attacher = text(&spec, "attacher");
    let mut errs = Vec::new();
    if attacher.is_empty() {
        errs.push(FieldError::required("spec.attacher", ""));
    }
    let source = spec.get("source").cloned().unwrap_or(json!({}));
    let set = |f: &str| source.get(f).is_some_and(|v| !v.is_null());
    match (set("inlineVolumeSpec"), set("persistentVolumeName")) {
        (false, false) => errs.push(FieldError::required("spec.source", ONE_SOURCE)),
        (true, true) => errs.push(FieldError::forbidden("spec.source", ONE_SOURCE)),
        (false, true) if text(&source, "persistentVolumeName").is_empty() => {
            errs.push(FieldError::required("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName"))
        }
        _ => {}
    }
    let node = text(&spec, "nodeName");
    errs.extend(names::dns1123_subdomain(node).into_iter().map(|m| FieldError::invalid("spec.nodeName", node, m)));
    // The v1 checks.
    errs.extend(driver_name("spec.attacher", attacher));
    if set("persistentVolumeName") {
        let pv = text(&source, "persistentVolumeName");
        let field = "spec.source.persistentVolumeName";
        errs.extend(names::dns1123_subdomain(pv).into_iter().map(|m| FieldError::invalid(field, pv, m)));
    }
    errs
}

/// The spec as upstream prints its internal type: Go's field names, in Go's order.
fn internal_spec(spec: &Value) -> String {
    let source = spec.get("source").cloned().unwrap_or(json!({}));
    let field = |v: &Value, f: &str| go_json(v.get(f).unwrap_or(&Value::Null));
    format!(
        "{{\"Attacher\":{},\"Source\":{{\"PersistentVolumeName\":{},\"InlineVolumeSpec\":{}}},\"NodeName\":{}}}",
        go_json(&json!(text(spec, "attacher"))),
        field(&source, "persistentVolumeName"),
        field(&source, "inlineVolumeSpec"),
        go_json(&json!(text(spec, "nodeName"))),
    )
}

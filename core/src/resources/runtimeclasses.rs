//! RuntimeClasses (node.k8s.io/v1): a handler the node's runtime knows, by a DNS label
//! that never changes; the pod overhead a class adds, as resource limits are checked;
//! where its pods may run, as a pod's node selector and tolerations are checked
//! (upstream's `ValidateRuntimeClass*`).

use super::{Column, Columns, Strategy};
use crate::rest::object::Object;
use crate::validation::pod_spec::{validate_requirements, validate_tolerations};
use crate::validation::value::{list, text};
use crate::validation::{names, object_meta, FieldError, FieldPath};
use serde_json::{json, Value};

pub struct RuntimeClasses;

static COLUMNS: &[Column] = &[Column {
    name: "Handler",
    kind: "string",
    description: "",
    format: "", priority: 0, cell: |o| super::columns::str_at(o, &["handler"]),
}];

impl Strategy for RuntimeClasses {
    fn name(&self) -> &'static str {
        "runtimeclasses"
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = validate(new);
        let handler = |o: &Object| o.get("handler").cloned().unwrap_or(json!(""));
        if handler(new) != handler(old) {
            errs.push(FieldError::immutable("handler", &handler(new)));
        }
        errs
    }
}

fn validate(rc: &Object) -> Vec<FieldError> {
    let rc = Value::Object(rc.clone());
    let handler = text(&rc, "handler");
    let mut errs: Vec<FieldError> =
        names::dns1123_label(handler).into_iter().map(|m| FieldError::invalid("handler", handler, m)).collect();
    if let Some(fixed) = rc.get("overhead").and_then(|o| o.get("podFixed")).filter(|f| !f.is_null()) {
        // Upstream checks the overhead as a container's limits.
        errs.extend(validate_requirements(Some(&json!({"limits": fixed})), &FieldPath::new("overhead")));
    }
    if let Some(scheduling) = rc.get("scheduling").filter(|s| !s.is_null()) {
        errs.extend(object_meta::labels("scheduling.nodeSelector", scheduling.get("nodeSelector")));
        // Upstream nests the tolerations' own path under the field's.
        let at = FieldPath::new("scheduling").child("tolerations").child("tolerations");
        errs.extend(validate_tolerations(list(scheduling, "tolerations"), &at));
    }
    errs
}

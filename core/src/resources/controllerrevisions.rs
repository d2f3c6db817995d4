//! ControllerRevisions (apps/v1): a snapshot of a workload's template that its
//! controller keeps to roll back to. Its revision is not negative and its data is a
//! JSON object, which never changes (upstream's `ValidateControllerRevision*`).

use super::columns::{self as cols, Column};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::value::non_negative;
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;

pub struct ControllerRevisions;

impl Strategy for ControllerRevisions {
    fn name(&self) -> &'static str {
        "controllerrevisions"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = validate(new);
        let data = |o: &Object| o.get("data").cloned().unwrap_or(Value::Null);
        if data(new) != data(old) {
            errs.push(FieldError::immutable("data", &data(new)));
        }
        errs
    }
}

fn validate(revision: &Object) -> Vec<FieldError> {
    // The recorded server reports the revision before the data.
    let mut errs = non_negative(&FieldPath::new("revision"), revision.get("revision").and_then(Value::as_i64));
    match revision.get("data") {
        None | Some(Value::Null) => errs.push(FieldError::required("data", "data is mandatory")),
        Some(Value::Object(_)) => {}
        Some(_) => errs.push(FieldError::required("data", "data must be a valid JSON object")),
    }
    errs
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Controller", kind: "string", description: "Controller of the object", format: "", priority: 0, cell: controller },
    Column { name: "Revision", kind: "string", description: "revision indicates the revision of the state represented by Data.", format: "", priority: 0, cell: |o| serde_json::json!(cols::int_at(o, &["revision"])) },
];

/// CONTROLLER: the controlling owner as kind.group/name in lower case (kind/name for
/// the core group), `<none>` without one.
fn controller(revision: &Object) -> Value {
    let owners = cols::at(revision, &["metadata", "ownerReferences"]).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let Some(owner) = owners.iter().find(|o| o.get("controller").and_then(Value::as_bool) == Some(true)) else {
        return serde_json::json!("<none>");
    };
    let field = |k: &str| owner.get(k).and_then(Value::as_str).unwrap_or("");
    let group = field("apiVersion").rsplit_once('/').map_or("", |(g, _)| g);
    let kind = if group.is_empty() { field("kind").to_owned() } else { format!("{}.{group}", field("kind")) };
    serde_json::json!(format!("{}/{}", kind.to_lowercase(), field("name")))
}

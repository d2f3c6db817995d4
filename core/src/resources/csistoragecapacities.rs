//! CSIStorageCapacities (storage.k8s.io/v1): the capacity a storage class has in a
//! topology segment. The class is named as a DNS subdomain, the segment by a label
//! selector, the capacity is not negative (upstream's `ValidateCSIStorageCapacity*`,
//! which leaves `maximumVolumeSize` unchecked).

use super::{Column, Columns, Strategy};
use crate::rest::object::Object;
use crate::validation::quantity::Quantity;
use crate::validation::{label_selector, names, FieldError};
use serde_json::{json, Value};

pub struct CsiStorageCapacities;

/// Upstream prints its creation time as it is, not as an age.
static COLUMNS: &[Column] = &[Column {
    name: "Created At",
    kind: "date",
    description: "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
    format: "", priority: 0, cell: |o| json!(crate::rest::object::meta_str(o, "creationTimestamp")),
}];

impl Strategy for CsiStorageCapacities {
    fn name(&self) -> &'static str {
        "csistoragecapacities"
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Laid { columns: COLUMNS, age_at: None }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }
}

fn validate(capacity: &Object) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(selector) = capacity.get("nodeTopology").filter(|s| !s.is_null()) {
        errs.extend(label_selector::validate("nodeTopology", selector, false));
    }
    let class = capacity.get("storageClassName").and_then(Value::as_str).unwrap_or("");
    errs.extend(names::dns1123_subdomain(class).into_iter().map(|m| FieldError::invalid("storageClassName", class, m)));
    if let Some(amount) = capacity.get("capacity").and_then(Quantity::from_json).filter(Quantity::is_negative) {
        errs.push(FieldError::invalid("capacity", &amount.canonical(), "must be greater than or equal to 0"));
    }
    errs
}

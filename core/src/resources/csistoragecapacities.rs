//! CSIStorageCapacities (storage.k8s.io/v1): the capacity a storage class has in a
//! topology segment. The class is named as a DNS subdomain, the segment by a label
//! selector, the capacity is not negative (upstream's `ValidateCSIStorageCapacity*`,
//! which leaves `maximumVolumeSize` unchecked).

use super::{Columns, Strategy};
use crate::rest::object::Object;
use crate::validation::quantity::Quantity;
use crate::validation::{label_selector, names, FieldError};
use serde_json::Value;

pub struct CsiStorageCapacities;


impl Strategy for CsiStorageCapacities {
    fn name(&self) -> &'static str {
        "csistoragecapacities"
    }

    fn columns(&self) -> Columns<'_> {
        // Upstream prints its creation time as it is, not as an age.
        super::columns::CREATED_AT
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

//! StorageClasses (storage.k8s.io/v1): a DELETE answers with the deleted object.
//! Defaults: volumes are deleted with their claims and bound at once.

use super::defaults::or_insert;
use super::Strategy;
use crate::rest::object::Object;
use serde_json::json;

pub struct StorageClasses;

impl Strategy for StorageClasses {
    fn name(&self) -> &'static str {
        "storageclasses"
    }

    fn default(&self, obj: &mut Object) {
        or_insert(obj, "reclaimPolicy", || json!("Delete"));
        or_insert(obj, "volumeBindingMode", || json!("Immediate"));
    }

    fn delete_returns_object(&self) -> bool {
        true
    }
}

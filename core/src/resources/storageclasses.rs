//! StorageClasses (storage.k8s.io/v1): a DELETE answers with the deleted object.

use super::Strategy;

pub struct StorageClasses;

impl Strategy for StorageClasses {
    fn name(&self) -> &'static str {
        "storageclasses"
    }

    fn delete_returns_object(&self) -> bool {
        true
    }
}

//! PersistentVolumeClaims (core/v1): a DELETE answers with the deleted object.

use super::Strategy;

pub struct PersistentVolumeClaims;

impl Strategy for PersistentVolumeClaims {
    fn name(&self) -> &'static str {
        "persistentvolumeclaims"
    }

    fn delete_returns_object(&self) -> bool {
        true
    }
}

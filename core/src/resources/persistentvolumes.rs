//! PersistentVolumes (core/v1): a DELETE answers with the deleted object.

use super::Strategy;

pub struct PersistentVolumes;

impl Strategy for PersistentVolumes {
    fn name(&self) -> &'static str {
        "persistentvolumes"
    }

    fn delete_returns_object(&self) -> bool {
        true
    }
}

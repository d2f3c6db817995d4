//! CustomResourceDefinitions (apiextensions.k8s.io/v1): spec changes count in
//! `metadata.generation`.

use super::Strategy;
use crate::rest::object::Object;

pub struct CustomResourceDefinitions;

impl Strategy for CustomResourceDefinitions {
    fn name(&self) -> &'static str {
        "customresourcedefinitions"
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    /// Deleting a CRD first deletes its objects: it waits for them under its cleanup
    /// finalizer, `Terminating`.
    fn mark_deleting(&self, crd: &mut Object, now: &str) {
        crate::controllers::crds::mark_terminating(crd, now);
    }
}

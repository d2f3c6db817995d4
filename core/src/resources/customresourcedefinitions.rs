//! CustomResourceDefinitions (apiextensions.k8s.io/v1): spec changes count in
//! `metadata.generation`.

use super::Strategy;

pub struct CustomResourceDefinitions;

impl Strategy for CustomResourceDefinitions {
    fn name(&self) -> &'static str {
        "customresourcedefinitions"
    }

    fn tracks_generation(&self) -> bool {
        true
    }
}

//! Ingresses (networking.k8s.io/v1): spec changes count in `metadata.generation`.

use super::Strategy;

pub struct Ingresses;

impl Strategy for Ingresses {
    fn name(&self) -> &'static str {
        "ingresses"
    }

    fn tracks_generation(&self) -> bool {
        true
    }
}

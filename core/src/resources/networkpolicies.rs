//! NetworkPolicies (networking.k8s.io/v1): spec changes count in `metadata.generation`.

use super::Strategy;

pub struct NetworkPolicies;

impl Strategy for NetworkPolicies {
    fn name(&self) -> &'static str {
        "networkpolicies"
    }

    fn tracks_generation(&self) -> bool {
        true
    }
}

//! IngressClasses (networking.k8s.io/v1). Defaults: parameters without a scope are
//! cluster-scoped.

use super::defaults::{object_at, or_insert};
use super::Strategy;
use crate::rest::object::Object;
use serde_json::json;

pub struct IngressClasses;

impl Strategy for IngressClasses {
    fn name(&self) -> &'static str {
        "ingressclasses"
    }

    /// Upstream's strategy starts the generation at 1 and counts spec changes.
    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        if let Some(parameters) = object_at(obj, &["spec", "parameters"]) {
            or_insert(parameters, "scope", || json!("Cluster"));
        }
    }
}

//! PodDisruptionBudgets (policy/v1): spec changes count in `metadata.generation`. A
//! pod's eviction reads and spends them (rest/eviction.rs), and finds them as named
//! here.

use super::Strategy;

/// The group, version and resource of the budgets an eviction consults.
pub const GROUP: &str = "policy";
pub const VERSION: &str = "v1";
pub const RESOURCE: &str = "poddisruptionbudgets";

pub struct PodDisruptionBudgets;

impl Strategy for PodDisruptionBudgets {
    fn name(&self) -> &'static str {
        RESOURCE
    }

    fn tracks_generation(&self) -> bool {
        true
    }
}

//! DaemonSets (apps/v1): spec changes count in `metadata.generation`.

use super::Strategy;

pub struct DaemonSets;

impl Strategy for DaemonSets {
    fn name(&self) -> &'static str {
        "daemonsets"
    }

    fn tracks_generation(&self) -> bool {
        true
    }
}

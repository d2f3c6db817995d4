//! CronJobs (batch/v1): spec changes count in `metadata.generation`.

use super::Strategy;

pub struct CronJobs;

impl Strategy for CronJobs {
    fn name(&self) -> &'static str {
        "cronjobs"
    }

    fn tracks_generation(&self) -> bool {
        true
    }
}

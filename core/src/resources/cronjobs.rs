//! CronJobs (batch/v1): spec changes count in `metadata.generation`. Defaults:
//! concurrent runs allowed, not suspended, 3 successful and 1 failed Jobs kept; the
//! job template's pod template gets pod spec defaults (not a Job's own defaults: the
//! CronJob controller's Jobs get those when they are created).

use super::defaults::{object, object_at, or_insert, or_insert_str};
use super::Strategy;
use crate::rest::object::Object;
use serde_json::json;

pub struct CronJobs;

impl Strategy for CronJobs {
    fn name(&self) -> &'static str {
        "cronjobs"
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        or_insert_str(spec, "concurrencyPolicy", "Allow");
        or_insert(spec, "suspend", || json!(false));
        or_insert(spec, "successfulJobsHistoryLimit", || json!(3));
        or_insert(spec, "failedJobsHistoryLimit", || json!(1));
        if let Some(template) = object_at(spec, &["jobTemplate", "spec", "template"]) {
            super::pod_spec::default_template(template);
        }
    }
}

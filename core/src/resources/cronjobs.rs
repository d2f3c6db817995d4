//! CronJobs (batch/v1): spec changes count in `metadata.generation`; the job
//! template is checked as a Job's spec (upstream's `ValidateJobTemplateSpec`).

use super::jobs::validate_job_spec;
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::pod_template::invalid_selector;
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;

pub struct CronJobs;

impl Strategy for CronJobs {
    fn name(&self) -> &'static str {
        "cronjobs"
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        job_template(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        job_template(new)
    }
}

/// The Jobs a CronJob makes: valid, with a selector left for the server to generate.
fn job_template(cronjob: &Object) -> Vec<FieldError> {
    let template = cronjob.get("spec").and_then(|s| s.get("jobTemplate")).unwrap_or(&Value::Null);
    let spec = template.get("spec").unwrap_or(&Value::Null);
    let path = FieldPath::new("spec").child("jobTemplate").child("spec");
    let mut errs = validate_job_spec(spec, &path);
    if let Some(selector) = spec.get("selector").filter(|s| !s.is_null()) {
        errs.push(invalid_selector(&path.child("selector"), Some(selector), "`selector` will be auto-generated"));
    }
    if spec.get("manualSelector") == Some(&Value::Bool(true)) {
        errs.push(FieldError::not_supported(path.child("manualSelector").as_str(), "true", &["nil", "false"]));
    }
    errs
}

//! CronJobs (batch/v1): spec changes count in `metadata.generation`. Defaults:
//! concurrent runs allowed, not suspended, 3 successful and 1 failed Jobs kept; the
//! job template's pod template gets pod spec defaults (not a Job's own defaults: the
//! CronJob controller's Jobs get those when they are created).
//!
//! Checked as upstream's `ValidateCronJobSpec` checks it: a schedule robfig/cron reads
//! (without a time zone in it: that is `timeZone`'s), a known concurrency policy, the
//! job template as a Job's spec (upstream's `ValidateJobTemplateSpec`), limits never
//! negative, a known time zone, a name short enough for its Jobs' names.

use super::columns::{self as cols, Column};
use super::defaults::{object, object_at, or_insert, or_insert_str};
use super::jobs::validate_job_spec;
use super::Strategy;
use crate::rest::object::{meta_str, Object};
use crate::validation::pod_template::invalid_selector;
use crate::validation::{cron_schedule, time_zones, FieldError, FieldPath};
use serde_json::{json, Value};

pub struct CronJobs;

/// A CronJob's name, with the 11 characters of its Jobs' suffix, is a Job's name.
const NAME_MAX: usize = 52;
const CONCURRENCY_POLICIES: [&str; 3] = ["Allow", "Forbid", "Replace"];

impl Strategy for CronJobs {
    fn name(&self) -> &'static str {
        "cronjobs"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
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
    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new, false)
    }

    /// A schedule stored with a time zone in it may keep one.
    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        validate(new, schedule(old).contains("TZ"))
    }
}

fn schedule(cj: &Object) -> &str {
    spec(cj, "schedule").and_then(Value::as_str).unwrap_or("")
}

fn spec<'a>(cj: &'a Object, field: &str) -> Option<&'a Value> {
    cj.get("spec").and_then(|s| s.get(field)).filter(|v| !v.is_null())
}

fn validate(cj: &Object, tz_in_schedule_allowed: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = meta_str(cj, "name");
    if name.len() > NAME_MAX {
        errs.push(FieldError::invalid("metadata.name", name, format!("must be no more than {NAME_MAX} characters")));
    }
    let time_zone = spec(cj, "timeZone").and_then(Value::as_str);
    match schedule(cj) {
        "" => errs.push(FieldError::required("spec.schedule", "")),
        s => {
            if let Err(why) = cron_schedule::parse(s) {
                errs.push(FieldError::invalid("spec.schedule", s, why));
            }
            if s.contains("TZ") {
                let why = match (tz_in_schedule_allowed, time_zone) {
                    (false, _) => Some("cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
                    (true, Some(_)) => Some("cannot use both timeZone field and TZ or CRON_TZ in schedule"),
                    (true, None) => None,
                };
                errs.extend(why.map(|why| FieldError::invalid("spec.schedule", s, why)));
            }
        }
    }
    errs.extend(non_negative(cj, "startingDeadlineSeconds"));
    let policy = spec(cj, "concurrencyPolicy").and_then(Value::as_str).unwrap_or(CONCURRENCY_POLICIES[0]);
    if !CONCURRENCY_POLICIES.contains(&policy) {
        errs.push(FieldError::not_supported("spec.concurrencyPolicy", policy, &CONCURRENCY_POLICIES));
    }
    errs.extend(job_template(cj));
    errs.extend(non_negative(cj, "successfulJobsHistoryLimit"));
    errs.extend(non_negative(cj, "failedJobsHistoryLimit"));
    if let Some(zone) = time_zone {
        errs.extend(validate_time_zone(zone));
    }
    errs
}

fn non_negative(cj: &Object, field: &str) -> Option<FieldError> {
    let n = spec(cj, field)?.as_i64().filter(|n| *n < 0)?;
    Some(FieldError::invalid_unquoted(&format!("spec.{field}"), &n.to_string(), "must be greater than or equal to 0"))
}

/// An explicit IANA zone: path parts of a zone's characters, and one that exists.
fn validate_time_zone(zone: &str) -> Option<FieldError> {
    const FIELD: &str = "spec.timeZone";
    if zone.is_empty() {
        return Some(FieldError::invalid(FIELD, zone, "timeZone must be nil or non-empty string"));
    }
    let part_ok = |p: &str| {
        p != "."
            && p != ".."
            && !p.starts_with('-')
            && (1..=14).contains(&p.len())
            && p.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'+'))
    };
    if !zone.split('/').all(part_ok) {
        return Some(FieldError::invalid(FIELD, zone, format!("unknown time zone {zone}")));
    }
    if zone.eq_ignore_ascii_case("local") {
        return Some(FieldError::invalid(FIELD, zone, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"));
    }
    time_zones::load(zone).err().map(|why| FieldError::invalid(FIELD, zone, why))
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

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Schedule", kind: "string", description: "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.", format: "", priority: 0, cell: |o| cols::str_at(o, &["spec", "schedule"]) },
    Column { name: "Timezone", kind: "string", description: "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones", format: "", priority: 0, cell: |o| cols::or_none(cols::at(o, &["spec", "timeZone"]).and_then(Value::as_str).unwrap_or("").to_owned()) },
    Column { name: "Suspend", kind: "boolean", description: "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.", format: "", priority: 0, cell: |o| json!(match cols::at(o, &["spec", "suspend"]).and_then(Value::as_bool) { Some(true) => "True", Some(false) => "False", None => "<unset>" }) },
    Column { name: "Active", kind: "integer", description: "A list of pointers to currently running jobs.", format: "", priority: 0, cell: |o| cols::count_at(o, &["status", "active"]) },
    Column { name: "Last Schedule", kind: "string", description: "Information when was the last time the job was successfully scheduled.", format: "", priority: 0, cell: |o| match cols::at(o, &["status", "lastScheduleTime"]).filter(|t| !t.is_null()) { Some(t) => cols::since(Some(t)), None => json!("<none>") } },
    Column { name: "Containers", kind: "string", description: "Names of each container in the template.", format: "", priority: 1, cell: |o| cols::container_names(o, JOB_TEMPLATE) },
    Column { name: "Images", kind: "string", description: "Images referenced by each container in the template.", format: "", priority: 1, cell: |o| cols::container_images(o, JOB_TEMPLATE) },
    Column { name: "Selector", kind: "string", description: "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors", format: "", priority: 1, cell: |o| cols::label_selector_at(o, &["spec", "jobTemplate", "spec", "selector"]) },
];

const JOB_TEMPLATE: &[&str] = &["spec", "jobTemplate", "spec", "template", "spec"];

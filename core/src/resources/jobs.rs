//! Jobs (batch/v1): spec changes count in `metadata.generation`; selectable by
//! `status.successful`, with batch/v1's own wording for other fields.
//!
//! Defaults: one completion at a time when neither count is given, 6 retries (no
//! limit when retries are counted per index), NonIndexed, not suspended, failed pods
//! replaced once terminated (once failed under a pod failure policy), the selector
//! not written by hand, and a Job with no labels labelled as its template. A new Job whose selector is not written by hand
//! gets one made from its uid, and its template the labels that selector matches, as
//! upstream's job strategy makes them.

use super::defaults::{is_empty, labels_at, object, object_or_new, objects, or_insert, or_insert_str, value_at};
use super::Strategy;
use crate::rest::object::{meta_mut, meta_str, Object};
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME, NAMESPACE};
use serde_json::{json, Map, Value};

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupportedForJob,
    fields: &[NAME, NAMESPACE, ("status.successful", "status.successful")],
};

/// The label the generated selector matches, and the others the template gets.
const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
const JOB_NAME: &str = "batch.kubernetes.io/job-name";
const LEGACY_CONTROLLER_UID: &str = "controller-uid";
const LEGACY_JOB_NAME: &str = "job-name";

pub struct Jobs;

impl Strategy for Jobs {
    fn name(&self) -> &'static str {
        "jobs"
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }

    fn default(&self, obj: &mut Object) {
        let unlabelled = obj.get("metadata").and_then(Value::as_object).is_none_or(|m| is_empty(m, "labels"));
        if unlabelled {
            if let Some(labels) = labels_at(obj, &["spec", "template", "metadata", "labels"]) {
                meta_mut(obj).insert("labels".into(), labels);
            }
        }
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        if matches!(spec.get("completions"), None | Some(Value::Null)) && matches!(spec.get("parallelism"), None | Some(Value::Null)) {
            spec.insert("completions".into(), json!(1));
        }
        or_insert(spec, "parallelism", || json!(1));
        let per_index = !matches!(spec.get("backoffLimitPerIndex"), None | Some(Value::Null));
        or_insert(spec, "backoffLimit", || json!(if per_index { i32::MAX as i64 } else { 6 }));
        or_insert(spec, "completionMode", || json!("NonIndexed"));
        or_insert(spec, "suspend", || json!(false));
        or_insert(spec, "manualSelector", || json!(false));
        let has_failure_policy = !matches!(spec.get("podFailurePolicy"), None | Some(Value::Null));
        if let Some(policy) = object(spec, "podFailurePolicy") {
            for rule in objects(policy, "rules") {
                for pattern in objects(rule, "onPodConditions") {
                    or_insert_str(pattern, "status", "True");
                }
            }
        }
        or_insert(spec, "podReplacementPolicy", || {
            json!(if has_failure_policy { "Failed" } else { "TerminatingOrFailed" })
        });
        if let Some(template) = object(spec, "template") {
            super::pod_spec::default_template(template);
        }
    }

    fn prepare_for_create(&self, new: &mut Object, has_status: bool) {
        if has_status {
            super::reset_status(new);
        }
        generate_selector(new);
    }
}

/// The selector and template labels of a Job whose selector is not manual. The Job's
/// own labels, when defaulting copied them from the template, follow the template's
/// (upstream's defaulting shares the template's label map with the Job).
fn generate_selector(job: &mut Object) {
    let manual = value_at(job, &["spec", "manualSelector"]).and_then(Value::as_bool) == Some(true);
    if manual {
        return;
    }
    let uid = meta_str(job, "uid").to_owned();
    let name = meta_str(job, "name").to_owned();
    let template_labels = value_at(job, &["spec", "template", "metadata", "labels"]).filter(|l| l.is_object());
    let job_labels = job.get("metadata").and_then(|m| m.get("labels"));
    let unlabelled = job_labels.is_none_or(|l| l.as_object().is_none_or(Map::is_empty));
    let shares_labels = template_labels.is_some() && (unlabelled || job_labels == template_labels);
    let Some(spec) = object(job, "spec") else {
        return;
    };
    if let Some(labels) = object_or_new(spec, "template")
        .and_then(|t| object_or_new(t, "metadata"))
        .and_then(|m| object_or_new(m, "labels"))
    {
        for (key, value) in [
            (LEGACY_CONTROLLER_UID, &uid),
            (LEGACY_JOB_NAME, &name),
            (CONTROLLER_UID, &uid),
            (JOB_NAME, &name),
        ] {
            if !labels.contains_key(key) {
                labels.insert(key.into(), json!(value));
            }
        }
    }
    or_insert(spec, "selector", || json!({"matchLabels": {CONTROLLER_UID: uid}}));
    if shares_labels {
        if let Some(labels) = value_at(job, &["spec", "template", "metadata", "labels"]).cloned() {
            meta_mut(job).insert("labels".into(), labels);
        }
    }
}

//! Jobs (batch/v1): spec changes count in `metadata.generation`; selectable by
//! `status.successful`, with batch/v1's own wording for other fields.
//!
//! Defaults: one completion at a time when neither count is given, 6 retries (no
//! limit when retries are counted per index), NonIndexed, not suspended, failed pods
//! replaced once terminated (once failed under a pod failure policy), the selector
//! not written by hand, and a Job with no labels labelled as its template. A new Job whose selector is not written by hand
//! gets one made from its uid, and its template the labels that selector matches, as
//! upstream's job strategy makes them. The template is checked as a pod's that
//! restarts `OnFailure` or `Never`, the counts and policies as upstream's
//! `ValidateJob` checks them, and what may not change once created.

use super::columns::{self as cols, Column};
use super::defaults::{is_empty, labels_at, object, object_or_new, objects, or_insert, or_insert_str, value_at};
use super::Strategy;
use crate::rest::object::{meta_mut, meta_str, Object};
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME, NAMESPACE};
use crate::validation::pod_template::{immutable_selector, invalid_selector, selector_matches_template, validate_template, Selector};
use crate::validation::value::{int, invalid_int, list, non_negative, present, text};
use crate::validation::{go_json, go_json_string, FieldError, FieldPath};
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

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
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

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate_job(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = validate_job(new);
        let (spec, old_spec) = (spec_of(new), spec_of(old));
        let path = FieldPath::new("spec");
        // Upstream checks the spec a second time on update: its errors come twice.
        errs.extend(validate_job_spec_with_selector(spec, &path));
        errs.extend(immutable(spec, old_spec, "completions", &path));
        errs.extend(immutable_selector(spec, old_spec, &path));
        errs.extend(template_update(new, old, &path));
        for field in ["completionMode", "podFailurePolicy", "backoffLimitPerIndex"] {
            errs.extend(immutable(spec, old_spec, field, &path));
        }
        errs
    }
}

fn spec_of(obj: &Object) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

fn immutable(new: &Value, old: &Value, field: &str, path: &FieldPath) -> Vec<FieldError> {
    let (a, b) = (new.get(field).filter(|v| !v.is_null()), old.get(field).filter(|v| !v.is_null()));
    if a == b {
        return Vec::new();
    }
    vec![FieldError::immutable(path.child(field).as_str(), a.unwrap_or(&Value::Null))]
}

/// A suspended Job that never started may still have its pods' scheduling changed.
fn template_update(new: &Object, old: &Object, path: &FieldPath) -> Vec<FieldError> {
    let (template, old_template) = (spec_of(new).get("template"), spec_of(old).get("template"));
    let never_started = old.get("status").and_then(|s| s.get("startTime")).is_none_or(Value::is_null);
    let suspended = spec_of(old).get("suspend") == Some(&Value::Bool(true));
    let comparable = |t: Option<&Value>| {
        let mut t = t.cloned().unwrap_or(Value::Null);
        if suspended && never_started {
            if let Some(meta) = t.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("labels");
                meta.remove("annotations");
            }
            if let Some(spec) = t.get_mut("spec").and_then(Value::as_object_mut) {
                for field in ["nodeSelector", "tolerations", "affinity", "schedulingGates"] {
                    spec.remove(field);
                }
            }
        }
        t
    };
    if comparable(template) == comparable(old_template) {
        return Vec::new();
    }
    // Upstream prints its internal Go template here; this prints the JSON.
    vec![FieldError::immutable(path.child("template").as_str(), template.unwrap_or(&Value::Null))]
}

/// Upstream's `ValidateJob`.
fn validate_job(job: &Object) -> Vec<FieldError> {
    let spec = spec_of(job);
    let mut errs = generated_selector(job);
    errs.extend(validate_job_spec_with_selector(spec, &FieldPath::new("spec")));
    if text(spec, "completionMode") == "Indexed" {
        if let Some(completions) = int(spec, "completions").filter(|c| *c > 0) {
            let name = job.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("");
            let hostname = format!("{name}-{}", completions - 1);
            if !crate::validation::names::dns1123_label(&hostname).is_empty() {
                let detail = format!("will not able to create pod with invalid DNS label: {hostname}");
                errs.push(FieldError::invalid("metadata.name", name, detail));
            }
        }
    }
    errs
}

/// A selector the server generated selects exactly the Job's uid; one a client
/// wrote needs `manualSelector`.
fn generated_selector(job: &Object) -> Vec<FieldError> {
    let spec = spec_of(job);
    if spec.get("manualSelector") == Some(&Value::Bool(true)) {
        return Vec::new();
    }
    let labels = spec.get("template").and_then(|t| t.get("metadata")).and_then(|m| m.get("labels"));
    // The selector is generated on create (or absent where that is not done).
    let (Some(_), Some(selector)) = (labels.filter(|l| !l.is_null()), spec.get("selector").filter(|s| !s.is_null())) else {
        return Vec::new();
    };
    let uid = job.get("metadata").and_then(|m| m.get("uid")).cloned().unwrap_or(Value::Null);
    let generated = json!({ "matchLabels": { CONTROLLER_UID: uid } });
    if selector.get("matchLabels") == generated.get("matchLabels") && list(selector, "matchExpressions").is_empty() {
        return Vec::new();
    }
    vec![invalid_selector(&FieldPath::new("spec").child("selector"), Some(selector), "`selector` not auto-generated")]
}

/// Upstream's `ValidateJobSpec`: the spec, then its selector.
fn validate_job_spec_with_selector(spec: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = validate_job_spec(spec, path);
    let given = spec.get("selector").filter(|s| !s.is_null());
    // Without `manualSelector` the server generates it, so only a manual one can be missing.
    if given.is_none() && spec.get("manualSelector") == Some(&Value::Bool(true)) {
        errs.push(FieldError::required(path.child("selector").as_str(), ""));
    }
    if given.is_some() {
        let selector = Selector::of(given);
        if !matches!(selector, Selector::Invalid) {
            errs.extend(selector_matches_template(&selector, spec.get("template").unwrap_or(&Value::Null), &path.child("template")));
        }
    }
    errs
}

/// Upstream's `validateJobSpec`, shared with CronJobs' job templates.
pub fn validate_job_spec(spec: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in ["parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"] {
        errs.extend(non_negative(&path.child(field), int(spec, field)));
    }
    let mode = text(spec, "completionMode");
    let indexed = mode == "Indexed";
    if let Some(per_index) = int(spec, "backoffLimitPerIndex") {
        let at = path.child("backoffLimitPerIndex");
        errs.extend(non_negative(&at, Some(per_index)));
        if !indexed {
            errs.push(invalid_int(&at, per_index, "requires indexed completion mode"));
        }
    }
    if let Some(max_failed) = int(spec, "maxFailedIndexes") {
        let at = path.child("maxFailedIndexes");
        errs.extend(non_negative(&at, Some(max_failed)));
        if !present(spec, "backoffLimitPerIndex") {
            errs.push(FieldError::required(path.child("backoffLimitPerIndex").as_str(), "when maxFailedIndexes is specified"));
        }
    }
    match mode {
        "" | "NonIndexed" => {}
        "Indexed" => {
            // Defaulting sets completions to 1 when neither it nor parallelism is given.
            if !present(spec, "completions") && present(spec, "parallelism") {
                errs.push(FieldError::required(path.child("completions").as_str(), "when completion mode is Indexed"));
            }
        }
        other => errs.push(FieldError::not_supported(path.child("completionMode").as_str(), other, &["NonIndexed", "Indexed"])),
    }
    if let Some(policy) = spec.get("podFailurePolicy").filter(|p| !p.is_null()) {
        errs.extend(pod_failure_policy(spec, policy, &path.child("podFailurePolicy")));
    }
    if let Some(policy) = spec.get("successPolicy").filter(|p| !p.is_null()) {
        if !indexed {
            errs.push(FieldError::invalid_unquoted(path.child("successPolicy").as_str(), &success_policy_shown(policy), "requires indexed completion mode"));
        }
    }
    match text(spec, "podReplacementPolicy") {
        "" | "Failed" => {}
        "TerminatingOrFailed" if !present(spec, "podFailurePolicy") => {}
        "TerminatingOrFailed" => errs.push(FieldError::not_supported(path.child("podReplacementPolicy").as_str(), "TerminatingOrFailed", &["Failed"])),
        other => errs.push(FieldError::not_supported(path.child("podReplacementPolicy").as_str(), other, &["Failed", "TerminatingOrFailed"])),
    }
    let template = spec.get("template").unwrap_or(&Value::Null);
    let template_path = path.child("template");
    errs.extend(validate_template(template, &[], &template_path));
    let restart_path = template_path.child("spec").child("restartPolicy");
    match template.get("spec").map(|s| text(s, "restartPolicy")).unwrap_or("") {
        // Absent, defaulting makes it Always.
        "" | "Always" => errs.push(FieldError::required(restart_path.as_str(), "valid values: \"OnFailure\", \"Never\"")),
        "OnFailure" if present(spec, "podFailurePolicy") => {
            errs.push(FieldError::invalid(restart_path.as_str(), "OnFailure", "only \"Never\" is supported when podFailurePolicy is specified"))
        }
        "OnFailure" | "Never" => {}
        other => errs.push(FieldError::not_supported(restart_path.as_str(), other, &["OnFailure", "Never"])),
    }
    errs
}

/// The struct Go prints for a success policy.
fn success_policy_shown(policy: &Value) -> String {
    let rules: Vec<String> = list(policy, "rules")
        .iter()
        .map(|r| {
            let indexes = r.get("succeededIndexes").and_then(Value::as_str).map_or_else(|| "null".to_owned(), go_json_string);
            let count = r.get("succeededCount").map_or_else(|| "null".to_owned(), go_json);
            format!("{{\"SucceededIndexes\":{indexes},\"SucceededCount\":{count}}}")
        })
        .collect();
    format!("{{\"Rules\":[{}]}}", rules.join(","))
}

const ACTIONS: &[&str] = &["Count", "FailIndex", "FailJob", "Ignore"];

fn pod_failure_policy(spec: &Value, policy: &Value, path: &FieldPath) -> Vec<FieldError> {
    let template_spec = spec.get("template").and_then(|t| t.get("spec")).unwrap_or(&Value::Null);
    let containers: Vec<&str> =
        list(template_spec, "containers").iter().chain(list(template_spec, "initContainers")).map(|c| text(c, "name")).collect();
    let mut errs = Vec::new();
    let rules = list(policy, "rules");
    if rules.len() > 20 {
        errs.push(FieldError::too_many(path.child("rules").as_str(), rules.len(), 20));
    }
    for (i, rule) in rules.iter().enumerate() {
        let at = path.child("rules").index(i);
        let action_path = at.child("action");
        match text(rule, "action") {
            "" => errs.push(FieldError::required(action_path.as_str(), "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]")),
            "FailIndex" if !present(spec, "backoffLimitPerIndex") => {
                errs.push(FieldError::invalid(action_path.as_str(), "FailIndex", "requires the backoffLimitPerIndex to be set"))
            }
            a if ACTIONS.contains(&a) => {}
            other => errs.push(FieldError::not_supported(action_path.as_str(), other, ACTIONS)),
        }
        let exit_codes = rule.get("onExitCodes").filter(|e| !e.is_null());
        if let Some(codes) = exit_codes {
            errs.extend(on_exit_codes(codes, &containers, &at.child("onExitCodes")));
        }
        let conditions = !list(rule, "onPodConditions").is_empty();
        if exit_codes.is_some() && conditions {
            errs.push(FieldError::shown(at.as_str(), crate::validation::ErrorKind::Invalid, None, "specifying both OnExitCodes and OnPodConditions is not supported"));
        }
        if exit_codes.is_none() && !conditions {
            errs.push(FieldError::shown(at.as_str(), crate::validation::ErrorKind::Invalid, None, "specifying one of OnExitCodes and OnPodConditions is required"));
        }
    }
    errs
}

fn on_exit_codes(codes: &Value, containers: &[&str], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(name) = codes.get("containerName").and_then(Value::as_str) {
        if !containers.contains(&name) {
            errs.push(FieldError::invalid(path.child("containerName").as_str(), name, "must be one of the container or initContainer names in the pod template"));
        }
    }
    let operator = text(codes, "operator");
    match operator {
        "" => errs.push(FieldError::required(path.child("operator").as_str(), "valid values: [\"In\" \"NotIn\"]")),
        "In" | "NotIn" => {}
        other => errs.push(FieldError::not_supported(path.child("operator").as_str(), other, &["In", "NotIn"])),
    }
    let values_path = path.child("values");
    let values: Vec<i64> = list(codes, "values").iter().map(|v| v.as_i64().unwrap_or(0)).collect();
    if values.is_empty() {
        errs.push(FieldError::invalid_unquoted(values_path.as_str(), "[]", "at least one value is required"));
    } else if values.len() > 255 {
        errs.push(FieldError::too_many(values_path.as_str(), values.len(), 255));
    } else {
        let mut seen = std::collections::HashSet::new();
        for (j, value) in values.iter().enumerate() {
            let at = values_path.index(j);
            if operator == "In" && *value == 0 {
                errs.push(invalid_int(&at, 0, "must not be 0 for the In operator"));
            }
            if !seen.insert(*value) {
                errs.push(FieldError::shown(at.as_str(), crate::validation::ErrorKind::Duplicate, Some(&value.to_string()), ""));
            }
        }
        if values.windows(2).any(|w| w[0] > w[1]) {
            errs.push(FieldError::invalid_unquoted(values_path.as_str(), &go_json(&json!(values)), "must be ordered"));
        }
    }
    errs
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

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Status", kind: "string", description: "Status of the job.", format: "", priority: 0, cell: status_cell },
    Column { name: "Completions", kind: "string", description: "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.", format: "", priority: 0, cell: completions },
    Column { name: "Duration", kind: "string", description: "Time required to complete the job.", format: "", priority: 0, cell: |o| cols::between(cols::at(o, &["status", "startTime"]), cols::at(o, &["status", "completionTime"])) },
    Column { name: "Containers", kind: "string", description: "Names of each container in the template.", format: "", priority: 1, cell: |o| cols::container_names(o, cols::TEMPLATE) },
    Column { name: "Images", kind: "string", description: "Images referenced by each container in the template.", format: "", priority: 1, cell: |o| cols::container_images(o, cols::TEMPLATE) },
    Column { name: "Selector", kind: "string", description: "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors", format: "", priority: 1, cell: |o| cols::label_selector_at(o, &["spec", "selector"]) },
];

/// A Job's STATUS cell, as upstream's printer words it.
fn status_cell(job: &Object) -> Value {
    let has = |t: &str| {
        cols::at(job, &["status", "conditions"]).and_then(Value::as_array).is_some_and(|cs| {
            cs.iter().any(|c| c.get("type").and_then(Value::as_str) == Some(t) && c.get("status").and_then(Value::as_str) == Some("True"))
        })
    };
    let deleting = cols::at(job, &["metadata", "deletionTimestamp"]).is_some_and(|t| !t.is_null());
    json!(if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else if deleting {
        "Terminating"
    } else if has("Suspended") {
        "Suspended"
    } else if has("FailureTarget") {
        "FailureTarget"
    } else if has("SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    })
}

/// A Job's COMPLETIONS cell: succeeded of the completions asked for (`of N` when
/// parallel without a count).
fn completions(job: &Object) -> Value {
    let succeeded = cols::int_at(job, &["status", "succeeded"]);
    let spec = |k: &str| cols::at(job, &["spec", k]).and_then(Value::as_i64);
    json!(match (spec("completions"), spec("parallelism")) {
        (Some(n), _) => format!("{succeeded}/{n}"),
        (None, Some(p)) if p > 1 => format!("{succeeded}/1 of {p}"),
        _ => format!("{succeeded}/1"),
    })
}

//! StatefulSets (apps/v1): spec changes count in `metadata.generation`; a `scale`
//! subresource. Defaults: one replica, pods managed in order, rolling updates from
//! partition 0, 10 revisions kept, claims retained, and each volume claim template
//! defaulted as a PersistentVolumeClaim. The template is checked as a pod's with the
//! claim templates as its volumes, and updates are limited to the fields upstream
//! lets change.

use super::columns::{self as cols, Column};
use super::defaults::{object, object_or_new, objects, or_insert, or_insert_str};
use super::{persistentvolumeclaims, status_and_scale, Handler, ScaleRules, SelectorShape, Strategy};
use crate::rest::object::Object;
use crate::validation::pod_template::{required_selector, restart_always, selector_matches_template, validate_template, Selector};
use crate::validation::value::{int, list, non_negative, text};
use crate::validation::{go_json_string, FieldError, FieldPath};
use serde_json::{json, Value};

pub struct StatefulSets;

impl Strategy for StatefulSets {
    fn name(&self) -> &'static str {
        "statefulsets"
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
        or_insert_str(spec, "podManagementPolicy", "OrderedReady");
        if let Some(strategy) = object_or_new(spec, "updateStrategy") {
            // A strategy left unset is a rolling update with its own defaults; one
            // that says RollingUpdate gets them only if it has a rollingUpdate.
            if super::defaults::unset_str(strategy, "type") {
                strategy.insert("type".into(), json!("RollingUpdate"));
                or_insert(strategy, "rollingUpdate", || json!({}));
            }
            if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                if let Some(rolling) = object(strategy, "rollingUpdate") {
                    or_insert(rolling, "partition", || json!(0));
                }
            }
        }
        or_insert(spec, "replicas", || json!(1));
        or_insert(spec, "revisionHistoryLimit", || json!(10));
        if let Some(retention) = object_or_new(spec, "persistentVolumeClaimRetentionPolicy") {
            or_insert_str(retention, "whenDeleted", "Retain");
            or_insert_str(retention, "whenScaled", "Retain");
        }
        for claim in objects(spec, "volumeClaimTemplates") {
            or_insert_str(claim, "apiVersion", "v1");
            or_insert_str(claim, "kind", "PersistentVolumeClaim");
            persistentvolumeclaims::default_claim(claim);
        }
        if let Some(template) = object(spec, "template") {
            super::pod_spec::default_template(template);
        }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate_spec(spec_of(new))
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = validate_spec(spec_of(new));
        errs.extend(only_mutable_fields_changed(spec_of(new), spec_of(old)));
        errs
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        status_and_scale(name, SCALE)
    }
}

const SCALE: ScaleRules = ScaleRules {
    selector: SelectorShape::LabelSelector,
    not_found_as: None,
};

fn spec_of(obj: &Object) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

/// Upstream's `ValidateStatefulSetSpec`; absent policies are their defaults.
fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let path = FieldPath::new("spec");
    let mut errs = Vec::new();
    match text(spec, "podManagementPolicy") {
        "" | "OrderedReady" | "Parallel" => {}
        other => errs.push(FieldError::invalid(path.child("podManagementPolicy").as_str(), other, "must be 'OrderedReady' or 'Parallel'")),
    }
    errs.extend(update_strategy(spec.get("updateStrategy").unwrap_or(&Value::Null), &path.child("updateStrategy")));
    errs.extend(retention_policy(spec.get("persistentVolumeClaimRetentionPolicy"), &path.child("persistentVolumeClaimRetentionPolicy")));
    errs.extend(non_negative(&path.child("replicas"), int(spec, "replicas")));
    errs.extend(non_negative(&path.child("minReadySeconds"), int(spec, "minReadySeconds")));
    let (selector_errs, selector) = required_selector(spec, &path, "statefulset");
    errs.extend(selector_errs);
    let template = spec.get("template").unwrap_or(&Value::Null);
    let template_path = path.child("template");
    if !matches!(selector, Selector::Invalid) {
        errs.extend(selector_matches_template(&selector, template, &template_path));
    }
    // The pods mount each claim template as a volume of its name.
    let claims = list(spec, "volumeClaimTemplates");
    errs.extend(claim_templates(claims, &path.child("volumeClaimTemplates")));
    let claim_volumes: Vec<Value> =
        claims.iter().map(|c| json!({"name": text(c.get("metadata").unwrap_or(&Value::Null), "name"), "persistentVolumeClaim": {"claimName": "claim"}})).collect();
    errs.extend(validate_template(template, &claim_volumes, &template_path));
    errs.extend(restart_always(template, &template_path));
    if template.get("spec").and_then(|s| s.get("activeDeadlineSeconds")).is_some_and(|v| !v.is_null()) {
        let at = template_path.child("spec").child("activeDeadlineSeconds");
        errs.push(FieldError::forbidden(at.as_str(), "activeDeadlineSeconds in StatefulSet is not Supported"));
    }
    errs
}

/// The struct Go prints for a rolling update (`{"Partition":0,"MaxUnavailable":null}`).
fn rolling_update_shown(rolling: &Value) -> String {
    let unavailable = rolling.get("maxUnavailable").map_or_else(|| "null".to_owned(), crate::validation::go_json);
    format!("{{\"Partition\":{},\"MaxUnavailable\":{unavailable}}}", int(rolling, "partition").unwrap_or(0))
}

fn update_strategy(strategy: &Value, path: &FieldPath) -> Vec<FieldError> {
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match text(strategy, "type") {
        "OnDelete" => match rolling {
            Some(r) => vec![FieldError::invalid_unquoted(
                path.child("rollingUpdate").as_str(),
                &rolling_update_shown(r),
                "only allowed for updateStrategy 'RollingUpdate'",
            )],
            None => Vec::new(),
        },
        "" | "RollingUpdate" => {
            rolling.map(|r| non_negative(&path.child("rollingUpdate").child("partition"), int(r, "partition"))).unwrap_or_default()
        }
        other => {
            let shown_rolling = rolling.map_or_else(|| "null".to_owned(), rolling_update_shown);
            let shown = format!("{{\"Type\":{},\"RollingUpdate\":{shown_rolling}}}", go_json_string(other));
            vec![FieldError::invalid_unquoted(path.as_str(), &shown, "must be 'RollingUpdate' or 'OnDelete'")]
        }
    }
}

fn retention_policy(policy: Option<&Value>, path: &FieldPath) -> Vec<FieldError> {
    let Some(policy) = policy.filter(|p| !p.is_null()) else { return Vec::new() };
    let mut errs = Vec::new();
    for field in ["whenDeleted", "whenScaled"] {
        match text(policy, field) {
            "" | "Retain" | "Delete" => {}
            other => errs.push(FieldError::not_supported(path.child(field).as_str(), other, &["Retain", "Delete"])),
        }
    }
    errs
}

/// Claim templates need an access mode and a storage request.
fn claim_templates(claims: &[Value], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, claim) in claims.iter().enumerate() {
        let spec = claim.get("spec").unwrap_or(&Value::Null);
        let at = path.index(i).child("spec");
        if list(spec, "accessModes").is_empty() {
            errs.push(FieldError::required(at.child("accessModes").as_str(), "at least 1 access mode is required"));
        }
        let storage = spec.get("resources").and_then(|r| r.get("requests")).and_then(|r| r.get("storage"));
        if storage.is_none_or(Value::is_null) {
            // Upstream reports it on `resources`, keyed by the resource.
            errs.push(FieldError::required(at.child("resources").key("storage").as_str(), ""));
        }
    }
    errs
}

/// Fields an update may change; any other change is refused as a whole.
const MUTABLE: &[&str] =
    &["replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit", "persistentVolumeClaimRetentionPolicy", "minReadySeconds"];

fn only_mutable_fields_changed(new: &Value, old: &Value) -> Vec<FieldError> {
    let rest = |spec: &Value| {
        let mut spec = spec.as_object().cloned().unwrap_or_default();
        spec.retain(|k, v| !MUTABLE.contains(&k.as_str()) && !v.is_null());
        spec
    };
    if rest(new) == rest(old) {
        return Vec::new();
    }
    vec![FieldError::forbidden(
        "spec",
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    )]
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Ready", kind: "string", description: "Number of the pod with ready state", format: "", priority: 0, cell: |o| json!(format!("{}/{}", cols::int_at(o, &["status", "readyReplicas"]), cols::int_at(o, &["spec", "replicas"]))) },
    Column { name: "Containers", kind: "string", description: "Names of each container in the template.", format: "", priority: 1, cell: |o| cols::container_names(o, cols::TEMPLATE) },
    Column { name: "Images", kind: "string", description: "Images referenced by each container in the template.", format: "", priority: 1, cell: |o| cols::container_images(o, cols::TEMPLATE) },
];

//! DaemonSets (apps/v1): spec changes count in `metadata.generation`. Defaults: a
//! rolling update of one pod at a time without surge, 10 revisions kept. Upstream's
//! strategy also counts template changes in the `deprecated.daemonset.template.generation`
//! annotation, which `kubectl rollout` reads.

use super::defaults::{object, object_or_new, or_insert, or_insert_str};
use super::Strategy;
use crate::rest::object::{meta_mut, Object};
use serde_json::{json, Value};

/// The annotation upstream keeps the template's generation in.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

pub struct DaemonSets;

impl Strategy for DaemonSets {
    fn name(&self) -> &'static str {
        "daemonsets"
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        // The v1 form of a template generation every DaemonSet has: upstream's
        // conversion always writes it ("0" until the strategy counts the first).
        let has_generation = obj
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .is_some_and(|a| a.get(TEMPLATE_GENERATION).is_some());
        if !has_generation {
            annotate_template_generation(obj, 0);
        }
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        if let Some(strategy) = object_or_new(spec, "updateStrategy") {
            or_insert_str(strategy, "type", "RollingUpdate");
            if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                if let Some(rolling) = object_or_new(strategy, "rollingUpdate") {
                    or_insert(rolling, "maxUnavailable", || json!(1));
                    or_insert(rolling, "maxSurge", || json!(0));
                }
            }
        }
        or_insert(spec, "revisionHistoryLimit", || json!(10));
        if let Some(template) = object(spec, "template") {
            super::pod_spec::default_template(template);
        }
    }

    fn prepare_for_create(&self, new: &mut Object, has_status: bool) {
        if has_status {
            super::reset_status(new);
        }
        annotate_template_generation(new, 1);
    }

    fn prepare_for_update(&self, new: &mut Object, old: &Object, has_status: bool) {
        if has_status {
            super::keep_status(new, old);
        }
        // A template change counts one more template generation; otherwise the stored
        // count stays.
        let kept = old
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(TEMPLATE_GENERATION))
            .cloned();
        let changed = template(new) != template(old);
        if changed {
            let count = kept.as_ref().and_then(Value::as_str).and_then(|c| c.parse::<i64>().ok()).unwrap_or(0);
            annotate_template_generation(new, count + 1);
        } else if let Some(kept) = kept {
            annotations(new).insert(TEMPLATE_GENERATION.into(), kept);
        }
    }
}

fn template(obj: &Object) -> Option<&Value> {
    obj.get("spec").and_then(|s| s.get("template"))
}

fn annotations(obj: &mut Object) -> &mut serde_json::Map<String, Value> {
    let meta = meta_mut(obj);
    if !meta.get("annotations").is_some_and(Value::is_object) {
        meta.insert("annotations".into(), json!({}));
    }
    meta.get_mut("annotations").and_then(Value::as_object_mut).expect("annotations were just made a map")
}

fn annotate_template_generation(obj: &mut Object, generation: i64) {
    annotations(obj).insert(TEMPLATE_GENERATION.into(), Value::String(generation.to_string()));
}

//! StatefulSets (apps/v1): spec changes count in `metadata.generation`; a `scale`
//! subresource. Defaults: one replica, pods managed in order, rolling updates from
//! partition 0, 10 revisions kept, claims retained, and each volume claim template
//! defaulted as a PersistentVolumeClaim.

use super::defaults::{object, object_or_new, objects, or_insert, or_insert_str};
use super::{persistentvolumeclaims, status_and_scale, Handler, ScaleRules, SelectorShape, Strategy};
use crate::rest::object::Object;
use serde_json::{json, Value};

pub struct StatefulSets;

impl Strategy for StatefulSets {
    fn name(&self) -> &'static str {
        "statefulsets"
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

    fn subresource(&self, name: &str) -> Option<Handler> {
        status_and_scale(name, SCALE)
    }
}

const SCALE: ScaleRules = ScaleRules {
    selector: SelectorShape::LabelSelector,
    not_found_as: None,
};

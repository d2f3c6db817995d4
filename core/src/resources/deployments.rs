//! Deployments (apps/v1): spec changes count in `metadata.generation`; a `scale`
//! subresource; Ready, Up-to-date and Available columns. Defaults (apps/v1): one
//! replica, a 25%/25% rolling update, 10 revisions kept, a 600 s progress deadline.

use super::defaults::{object, object_or_new, or_insert, or_insert_str};
use super::{status_and_scale, Handler, ScaleRules, SelectorShape, Strategy};
use crate::rest::object::Object;
use super::columns::{Columns, at, int_at, Column};
use serde_json::{json, Value};

const COLUMNS: &[Column] = &[
    Column {
        name: "Ready",
        kind: "string",
        description: "Number of ready replicas out of the desired number",
        cell: |o| {
            let want = at(o, &["spec", "replicas"]).and_then(Value::as_i64).unwrap_or(1);
            json!(format!("{}/{}", int_at(o, &["status", "readyReplicas"]), want))
        },
    },
    Column {
        name: "Up-to-date",
        kind: "integer",
        description: "Total number of non-terminated pods targeted by this deployment that have the desired template spec",
        cell: |o| json!(int_at(o, &["status", "updatedReplicas"])),
    },
    Column {
        name: "Available",
        kind: "integer",
        description: "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment",
        cell: |o| json!(int_at(o, &["status", "availableReplicas"])),
    },
];

pub struct Deployments;

impl Strategy for Deployments {
    fn name(&self) -> &'static str {
        "deployments"
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        or_insert(spec, "replicas", || json!(1));
        if let Some(strategy) = object_or_new(spec, "strategy") {
            or_insert_str(strategy, "type", "RollingUpdate");
            if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                if let Some(rolling) = object_or_new(strategy, "rollingUpdate") {
                    or_insert(rolling, "maxUnavailable", || json!("25%"));
                    or_insert(rolling, "maxSurge", || json!("25%"));
                }
            }
        }
        or_insert(spec, "revisionHistoryLimit", || json!(10));
        or_insert(spec, "progressDeadlineSeconds", || json!(600));
        if let Some(template) = object(spec, "template") {
            super::pod_spec::default_template(template);
        }
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        status_and_scale(name, SCALE)
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }
}

const SCALE: ScaleRules = ScaleRules {
    selector: SelectorShape::LabelSelector,
    not_found_as: None,
};

//! TaintNodesByCondition: a node joins tainted not-ready (NoSchedule), so nothing is
//! scheduled onto it before its kubelet reports it ready and the node lifecycle
//! controller lifts the taint.

use super::plugin::{Notes, Plugin};
use super::reads::Fetched;
use super::request::Request;
use super::{Context, Operation};
use crate::rest::object::Object;
use crate::status::ApiError;
use serde_json::{json, Value};

#[derive(Debug)]
pub(super) struct TaintNodesByCondition;

const NOT_READY: &str = "node.kubernetes.io/not-ready";

impl Plugin for TaintNodesByCondition {
    fn handles(&self, request: &Request) -> bool {
        request.is_core("nodes", "") && request.operation == Operation::Create
    }

    fn mutates(&self) -> bool {
        true
    }

    fn mutate(
        &self,
        _chain: &Context,
        _request: &Request,
        node: &mut Object,
        _fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let spec = node.entry("spec").or_insert_with(|| json!({}));
        let Some(spec) = spec.as_object_mut() else { return Ok(()) };
        let taints = spec.entry("taints").or_insert_with(|| json!([]));
        if !taints.is_array() {
            *taints = json!([]);
        }
        let taints = taints.as_array_mut().expect("made a list above");
        let tainted = taints.iter().any(|t| {
            t.get("key").and_then(Value::as_str) == Some(NOT_READY) && t.get("effect").and_then(Value::as_str) == Some("NoSchedule")
        });
        if !tainted {
            taints.push(json!({"key": NOT_READY, "effect": "NoSchedule"}));
        }
        Ok(())
    }
}

//! DefaultTolerationSeconds: a pod that does not tolerate its node becoming not-ready
//! or unreachable tolerates both for a while (`--default-not-ready-toleration-seconds`,
//! `--default-unreachable-toleration-seconds`, 300 s), so that it is not evicted at the
//! first missed heartbeat.

use super::plugin::{Notes, Plugin};
use super::reads::Fetched;
use super::request::Request;
use super::{Context, Operation};
use crate::rest::object::Object;
use crate::status::ApiError;
use serde_json::{json, Value};

#[derive(Debug)]
pub(super) struct DefaultTolerationSeconds;

const NOT_READY: &str = "node.kubernetes.io/not-ready";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

impl Plugin for DefaultTolerationSeconds {
    fn handles(&self, request: &Request) -> bool {
        request.is_core("pods", "") && matches!(request.operation, Operation::Create | Operation::Update)
    }

    fn mutates(&self) -> bool {
        true
    }

    fn mutate(
        &self,
        chain: &Context,
        _request: &Request,
        pod: &mut Object,
        _fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        let tolerations = spec.get("tolerations").and_then(Value::as_array).cloned().unwrap_or_default();
        // A toleration with no key tolerates every taint; one with no effect, every effect.
        let tolerates = |key: &str| {
            tolerations.iter().any(|t| {
                let k = t.get("key").and_then(Value::as_str).unwrap_or("");
                let effect = t.get("effect").and_then(Value::as_str).unwrap_or("");
                (k == key || k.is_empty()) && (effect == "NoExecute" || effect.is_empty())
            })
        };
        let settings = &chain.settings;
        let mut added = Vec::new();
        for (key, seconds) in [(NOT_READY, settings.not_ready_toleration_seconds), (UNREACHABLE, settings.unreachable_toleration_seconds)] {
            if !tolerates(key) {
                added.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}));
            }
        }
        if !added.is_empty() {
            let list = spec.entry("tolerations").or_insert_with(|| json!([]));
            if !list.is_array() {
                *list = json!([]);
            }
            list.as_array_mut().expect("made a list above").extend(added);
        }
        Ok(())
    }
}

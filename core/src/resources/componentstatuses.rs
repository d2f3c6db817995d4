//! ComponentStatuses (core/v1, deprecated since v1.19): the health of the control
//! plane's parts, made on each read and never stored; only `get` and `list`, each
//! answered with upstream's deprecation warning.
//!
//! Upstream probes the scheduler's and the controller manager's `/healthz` and each
//! etcd server. Apiary has no separate parts to probe, so it tells what is true of
//! itself: `etcd-0` is its storage (healthy while the storage's health check passes;
//! an embedded store always is), `controller-manager` is healthy while any of the
//! built-in controllers runs (all switched off by `--disable-controllers`, it is not,
//! and an outside controller manager is not probed), and `scheduler` is never healthy:
//! Apiary runs none and probes none.

use super::{Column, Columns, ServerFacts, Strategy, Handler};
use crate::rest::object::Object;
use serde_json::{json, Value};

pub struct ComponentStatuses;

static COLUMNS: &[Column] = &[
    Column { name: "Status", kind: "string", description: "Status of the component conditions", format: "", priority: 0, cell: |o| json!(if healthy(o) { "Healthy" } else { "Unhealthy" }) },
    Column { name: "Message", kind: "string", description: "Message of the component conditions", format: "", priority: 0, cell: |o| json!(healthy_condition(o, "message")) },
    Column { name: "Error", kind: "string", description: "Error of the component conditions", format: "", priority: 0, cell: |o| json!(healthy_condition(o, "error")) },
];

impl Strategy for ComponentStatuses {
    fn name(&self) -> &'static str {
        "componentstatuses"
    }

    fn handler(&self) -> Option<Handler> {
        Some(Handler::Computed)
    }

    fn subresource(&self, _name: &str) -> Option<Handler> {
        None
    }

    fn warning(&self) -> Option<&'static str> {
        Some("v1 ComponentStatus is deprecated in v1.19+")
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Laid { columns: COLUMNS, age_at: None }
    }

    fn computed(&self, facts: &ServerFacts) -> Vec<Object> {
        let controllers = match facts.controllers_run {
            true => (true, "ok"),
            false => (false, "no built-in controller runs (--disable-controllers); an outside controller manager is not probed"),
        };
        let storage = match facts.storage_healthy {
            true => (true, "ok"),
            false => (false, "the storage's health check fails"),
        };
        vec![
            component("scheduler", (false, "Apiary runs no scheduler and probes none")),
            component("controller-manager", controllers),
            component("etcd-0", storage),
        ]
    }
}

fn component(name: &str, (healthy, message): (bool, &str)) -> Object {
    let status = if healthy { "True" } else { "False" };
    let obj = json!({
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": name},
        "conditions": [{"type": "Healthy", "status": status, "message": message}],
    });
    match obj {
        Value::Object(o) => o,
        _ => unreachable!("an object"),
    }
}

/// A field of the Healthy condition, "" when there is none.
fn healthy_condition<'a>(o: &'a Object, field: &str) -> &'a str {
    let conditions = o.get("conditions").and_then(Value::as_array).into_iter().flatten();
    conditions
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("Healthy"))
        .find_map(|c| c.get(field).and_then(Value::as_str))
        .unwrap_or("")
}

fn healthy(o: &Object) -> bool {
    healthy_condition(o, "status") == "True"
}

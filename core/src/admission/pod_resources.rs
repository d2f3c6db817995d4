//! Resource lists (`{"cpu": "500m", "memory": "1Gi"}`) as the LimitRanger and
//! ResourceQuota plugins add, compare and print them, and what a pod as a whole
//! requests and is limited to, counting init containers and sidecars as the kubelet
//! does when it sizes a pod.

use crate::validation::quantity::Quantity;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Named quantities, kept sorted so that every message and sum comes out in one order.
pub type ResourceList = BTreeMap<String, Quantity>;

/// The quantities of a JSON map; entries that are not quantities are skipped (the
/// kind's validation refuses them before admission).
pub fn read_list(value: Option<&Value>) -> ResourceList {
    let Some(Value::Object(map)) = value else {
        return ResourceList::new();
    };
    map.iter().filter_map(|(k, v)| Some((k.clone(), Quantity::from_json(v)?))).collect()
}

/// The list as JSON, each quantity in its canonical text.
pub fn write_list(list: &ResourceList) -> Value {
    Value::Object(list.iter().map(|(k, q)| (k.clone(), Value::String(q.canonical()))).collect::<Map<_, _>>())
}

/// Adds `more` into `list`, name by name (a sum past what a quantity holds keeps the
/// old value rather than wrapping).
pub fn add_into(list: &mut ResourceList, more: &ResourceList) {
    for (name, q) in more {
        match list.get(name) {
            Some(have) => {
                if let Some(sum) = have.checked_add(q) {
                    list.insert(name.clone(), sum);
                }
            }
            None => {
                list.insert(name.clone(), *q);
            }
        }
    }
}

/// Keeps, name by name, the larger of the two.
pub fn max_into(list: &mut ResourceList, other: &ResourceList) {
    for (name, q) in other {
        if list.get(name).is_none_or(|have| q > have) {
            list.insert(name.clone(), *q);
        }
    }
}

/// `name=value` pairs in name order, joined by commas, as quota messages print lists.
pub fn print_list(list: &ResourceList) -> String {
    list.iter().map(|(k, q)| format!("{k}={}", q.canonical())).collect::<Vec<_>>().join(",")
}

/// A container's `resources.requests` or `resources.limits`.
pub fn container_list(container: &Value, which: &str) -> ResourceList {
    read_list(container.pointer(&format!("/resources/{which}")))
}

/// The containers of a pod's spec under `key` (`containers`, `initContainers`).
pub fn containers<'a>(pod: &'a Value, key: &str) -> &'a [Value] {
    match pod.pointer(&format!("/spec/{key}")) {
        Some(Value::Array(items)) => items,
        _ => &[],
    }
}

/// What the pod requests (`which` = `requests`) or is limited to (`limits`): the
/// regular containers and the sidecars (init containers that restart always) run
/// together, and each other init container runs alone beside the sidecars started
/// before it, so the pod needs the larger of the two. Overhead is added when asked
/// (quota counts it; LimitRanger does not): to every request, and to a limit only
/// where one is set.
pub fn pod_total(pod: &Value, which: &str, with_overhead: bool) -> ResourceList {
    let mut total = ResourceList::new();
    for c in containers(pod, "containers") {
        add_into(&mut total, &container_list(c, which));
    }
    let mut sidecars = ResourceList::new();
    let mut init_peak = ResourceList::new();
    for c in containers(pod, "initContainers") {
        let own = container_list(c, which);
        let running = if c.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            add_into(&mut total, &own);
            add_into(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut alone = own;
            add_into(&mut alone, &sidecars);
            alone
        };
        max_into(&mut init_peak, &running);
    }
    max_into(&mut total, &init_peak);
    if with_overhead {
        let overhead = read_list(pod.pointer("/spec/overhead"));
        if which == "requests" {
            add_into(&mut total, &overhead);
        } else {
            for (name, q) in &overhead {
                if let Some(sum) = total.get(name).and_then(|have| have.checked_add(q)) {
                    total.insert(name.clone(), sum);
                }
            }
        }
    }
    total
}

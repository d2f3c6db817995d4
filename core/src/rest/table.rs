//! Server-side printing: the meta.k8s.io Table that `kubectl get` asks for.
//!
//! Every resource gets Name and Age; a few get the extra columns kube-apiserver's
//! printers show. Rows carry the object's metadata as a PartialObjectMetadata unless
//! `includeObject` says otherwise.

use super::object::{self, Object};
use super::scope::Scope;
use serde_json::{json, Value};

/// A column: its header, type, and how to compute a cell from an object.
struct Column {
    name: &'static str,
    kind: &'static str,
    description: &'static str,
    cell: fn(&Object) -> Value,
}

fn at<'a>(obj: &'a Object, path: &[&str]) -> Option<&'a Value> {
    let mut v = obj.get(*path.first()?)?;
    for p in &path[1..] {
        v = v.get(p)?;
    }
    Some(v)
}

fn int_at(obj: &Object, path: &[&str]) -> i64 {
    at(obj, path).and_then(Value::as_i64).unwrap_or(0)
}

fn str_at(obj: &Object, path: &[&str]) -> Value {
    Value::String(at(obj, path).and_then(Value::as_str).unwrap_or("").to_owned())
}

fn count_at(obj: &Object, path: &[&str]) -> Value {
    let n = match at(obj, path) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    };
    json!(n)
}

/// Extra columns (between Name and Age) for the resources that have them.
fn extra_columns(plural: &str) -> Vec<Column> {
    match plural {
        "namespaces" => vec![Column {
            name: "Status",
            kind: "string",
            description: "The status of the namespace",
            cell: |o| str_at(o, &["status", "phase"]),
        }],
        "configmaps" => vec![Column {
            name: "Data",
            kind: "string",
            description: "Number of data entries",
            cell: |o| json!(count_at(o, &["data"]).as_u64().unwrap_or(0) + count_at(o, &["binaryData"]).as_u64().unwrap_or(0)),
        }],
        "secrets" => vec![
            Column {
                name: "Type",
                kind: "string",
                description: "The type of the secret",
                cell: |o| str_at(o, &["type"]),
            },
            Column {
                name: "Data",
                kind: "string",
                description: "Number of data entries",
                cell: |o| count_at(o, &["data"]),
            },
        ],
        "deployments" => vec![
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
        ],
        "pods" => vec![
            Column {
                name: "Ready",
                kind: "string",
                description: "The aggregate readiness state of this pod for accepting traffic",
                cell: |o| {
                    let total = at(o, &["spec", "containers"]).and_then(Value::as_array).map_or(0, Vec::len);
                    let ready = at(o, &["status", "containerStatuses"])
                        .and_then(Value::as_array)
                        .map_or(0, |s| s.iter().filter(|c| c.get("ready") == Some(&Value::Bool(true))).count());
                    json!(format!("{ready}/{total}"))
                },
            },
            Column {
                name: "Status",
                kind: "string",
                description: "The aggregate status of the containers in this pod",
                cell: pod_status,
            },
            Column {
                name: "Restarts",
                kind: "string",
                description: "The number of times the containers in this pod have been restarted",
                cell: |o| {
                    let n: i64 = at(o, &["status", "containerStatuses"])
                        .and_then(Value::as_array)
                        .map_or(0, |s| s.iter().filter_map(|c| c.get("restartCount").and_then(Value::as_i64)).sum());
                    json!(n.to_string())
                },
            },
        ],
        _ => Vec::new(),
    }
}

/// A pod's STATUS cell as upstream's printer words it, as far as apiary knows a pod:
/// the phase, or the status's reason; SchedulingGated while a gate holds it;
/// Terminating once it is being deleted and not finished.
fn pod_status(pod: &Object) -> Value {
    let text = |path: &[&str]| at(pod, path).and_then(Value::as_str).filter(|s| !s.is_empty());
    let phase = text(&["status", "phase"]);
    let mut reason = text(&["status", "reason"]).or(phase).unwrap_or("Pending");
    let gated = at(pod, &["status", "conditions"])
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some("PodScheduled")
                    && c.get("reason").and_then(Value::as_str) == Some("SchedulingGated")
            })
        });
    if gated {
        reason = "SchedulingGated";
    }
    let deleting = text(&["metadata", "deletionTimestamp"]).is_some();
    if deleting && !matches!(phase, Some("Succeeded" | "Failed")) {
        reason = "Terminating";
    }
    json!(reason)
}

/// An object's AGE cell: the time since its creation, as kubectl shows it.
pub(crate) fn age(scope: &Scope, obj: &Object) -> String {
    let now = scope
        .inputs
        .now
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    object::parse_rfc3339(object::meta_str(obj, "creationTimestamp"))
        .map(|t| human_duration(now.saturating_sub(t)))
        .unwrap_or_else(|| "<unknown>".to_owned())
}

/// A short human duration, as kubectl's AGE column shows it.
pub fn human_duration(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 600 => match s % 60 {
            0 => format!("{}m", s / 60),
            r => format!("{}m{r}s", s / 60),
        },
        s if s < 3 * 3600 => format!("{}m", s / 60),
        s if s < 8 * 3600 => match s % 3600 / 60 {
            0 => format!("{}h", s / 3600),
            m => format!("{}h{m}m", s / 3600),
        },
        s if s < 48 * 3600 => format!("{}h", s / 3600),
        s if s < 8 * 86_400 => match s % 86_400 / 3600 {
            0 => format!("{}d", s / 86_400),
            h => format!("{}d{h}h", s / 86_400),
        },
        s if s < 2 * 365 * 86_400 => format!("{}d", s / 86_400),
        s if s < 8 * 365 * 86_400 => match s % (365 * 86_400) / 86_400 {
            0 => format!("{}y", s / (365 * 86_400)),
            d => format!("{}y{d}d", s / (365 * 86_400)),
        },
        s => format!("{}y", s / (365 * 86_400)),
    }
}

/// A Table of `objects`.
pub(crate) fn table(scope: &Scope, version: &str, objects: &[Object], rv: &str, next: Option<&str>) -> Value {
    let r = scope.resource();
    let extras = extra_columns(&r.plural);
    let mut columns = vec![json!({
        "name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    })];
    for c in &extras {
        columns.push(json!({"name": c.name, "type": c.kind, "format": "", "description": c.description, "priority": 0}));
    }
    columns.push(json!({
        "name": "Age", "type": "string", "format": "", "priority": 0,
        "description": "CreationTimestamp is a timestamp representing the server time when this object was created.",
    }));
    let include = scope.query.get("includeObject").unwrap_or("Metadata");
    let rows: Vec<Value> = objects
        .iter()
        .map(|obj| {
            let mut cells = vec![json!(object::meta_str(obj, "name"))];
            cells.extend(extras.iter().map(|c| (c.cell)(obj)));
            let age = age(scope, obj);
            cells.push(json!(age));
            let mut row = json!({"cells": cells});
            let embedded = match include {
                "None" => None,
                "Object" => Some(Value::Object(obj.clone())),
                _ => Some(json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
                })),
            };
            if let Some(e) = embedded {
                row["object"] = e;
            }
            row
        })
        .collect();
    let mut meta = json!({"resourceVersion": rv});
    if let Some(token) = next {
        meta["continue"] = json!(token);
    }
    json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": meta,
        "columnDefinitions": columns,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::human_duration;

    #[test]
    fn pod_status_as_upstreams_printer_words_it() {
        let status = |pod: serde_json::Value| {
            super::pod_status(pod.as_object().unwrap()).as_str().unwrap().to_owned()
        };
        assert_eq!(status(serde_json::json!({})), "Pending");
        assert_eq!(status(serde_json::json!({"status": {"phase": "Running"}})), "Running");
        assert_eq!(
            status(serde_json::json!({"status": {"phase": "Failed", "reason": "Evicted"}})),
            "Evicted"
        );
        let deleting = |phase: &str| {
            serde_json::json!({"metadata": {"deletionTimestamp": "2026-11-22T00:00:00Z"},
                               "status": {"phase": phase}})
        };
        assert_eq!(status(deleting("Running")), "Terminating");
        assert_eq!(status(deleting("Succeeded")), "Succeeded");
    }

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(150), "2m30s");
        assert_eq!(human_duration(3 * 60 * 60 + 5), "3h");
        assert_eq!(human_duration(90_000), "25h");
        assert_eq!(human_duration(3 * 86_400), "3d");
    }
}

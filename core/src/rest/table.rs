//! Server-side printing: the meta.k8s.io Table that `kubectl get` asks for.
//!
//! Every resource gets Name and Age, and between them the columns its strategy names
//! (those kube-apiserver's printers show). Rows carry the object's metadata as a
//! PartialObjectMetadata unless `includeObject` says otherwise.

use super::object::{self, Object};
use super::scope::Scope;
use serde_json::{json, Value};

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
    let extras = r.strategy.columns();
    let mut columns = vec![json!({
        "name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    })];
    for c in extras {
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
    fn ages_read_like_kubectl() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(150), "2m30s");
        assert_eq!(human_duration(3 * 60 * 60 + 5), "3h");
        assert_eq!(human_duration(90_000), "25h");
        assert_eq!(human_duration(3 * 86_400), "3d");
    }
}

//! Server-side printing: the meta.k8s.io Table that `kubectl get` asks for.
//!
//! A built-in kind's Table has Name and Age, and between them the columns its
//! strategy names (those kube-apiserver's printers show); a custom resource's has
//! Name and then the columns its CRD declares. Rows carry the object's metadata as a
//! PartialObjectMetadata unless `includeObject` says otherwise.

use super::object::{self, Object};
use super::scope::Scope;
use crate::resources::Columns;
use serde_json::{json, Value};
use std::time::{SystemTime, UNIX_EPOCH};

/// The description of `metadata.creationTimestamp`, which Age columns carry.
pub(crate) const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// An object's AGE cell: the time since its creation, as kubectl shows it.
pub(crate) fn age(scope: &Scope, obj: &Object) -> String {
    date_cell(scope.inputs.now, object::meta_str(obj, "creationTimestamp"))
}

/// A date cell: how long before `now` the RFC 3339 time `text` was, as upstream's
/// `ConvertToHumanReadableDateType` shows it: `<unknown>` for no time, `<invalid>`
/// for one that does not parse or lies ahead.
pub(crate) fn date_cell(now: SystemTime, text: &str) -> String {
    if text.is_empty() || text == "null" {
        return "<unknown>".to_owned();
    }
    let Some((secs, nanos)) = crate::time::parse_go_rfc3339(text) else {
        return "<invalid>".to_owned();
    };
    // Go's zero time (0001-01-01T00:00:00Z) means none.
    if (secs, nanos) == (-62_135_596_800, 0) {
        return "<unknown>".to_owned();
    }
    let now = match now.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    };
    // A Go Duration holds int64 nanoseconds and saturates.
    let elapsed = (now - (i128::from(secs) * 1_000_000_000 + i128::from(nanos))).clamp(i64::MIN.into(), i64::MAX.into());
    match elapsed / 1_000_000_000 {
        s if s < -1 => "<invalid>".to_owned(),
        s if s < 0 => "0s".to_owned(),
        s => human_duration(s as u64),
    }
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

/// A cell as shown: one that reads the clock (`columns::since`) read `now`.
fn timed(now: SystemTime, cell: Value) -> Value {
    match cell.get(crate::resources::columns::SINCE).and_then(Value::as_str) {
        Some(time) => {
            let since = date_cell(now, time);
            match cell.get(crate::resources::columns::SINCE_IN).and_then(Value::as_str) {
                Some(template) => json!(template.replacen("{}", &since, 1)),
                None => json!(since),
            }
        }
        None => cell,
    }
}

type Cells<'a> = Box<dyn Fn(&Object) -> Vec<Value> + 'a>;

/// A built-in kind's columns and cells: Name, `extras`, and Age before the extra
/// `age_at` names (if any).
fn laid<'a>(now: SystemTime, name: Value, extras: &'static [crate::resources::Column], age_at: Option<usize>) -> (Vec<Value>, Cells<'a>) {
    let mut columns = vec![name];
    columns.extend(extras.iter().map(|c| {
        json!({"name": c.name, "type": c.kind, "format": c.format, "description": c.description, "priority": c.priority})
    }));
    if let Some(at) = age_at {
        let age = json!({
            "name": "Age", "type": "string", "format": "", "priority": 0,
            "description": CREATION_TIMESTAMP_DESCRIPTION,
        });
        columns.insert(at + 1, age);
    }
    let cells = move |obj: &Object| {
        let mut cells = vec![json!(object::meta_str(obj, "name"))];
        cells.extend(extras.iter().map(|c| timed(now, (c.cell)(obj))));
        if let Some(at) = age_at {
            cells.insert(at + 1, json!(date_cell(now, object::meta_str(obj, "creationTimestamp"))));
        }
        cells
    };
    (columns, Box::new(cells))
}

/// The column definitions of a Table of `columns` (a kind's), and how its rows'
/// cells are made from an object at the time `now`.
fn layout(columns: Columns<'_>, now: SystemTime) -> (Vec<Value>, Cells<'_>) {
    let name = json!({"name": "Name", "type": "string", "format": "name", "priority": 0, "description": NAME_DESCRIPTION});
    match columns {
        Columns::Builtin(extras) => {
            let shown = extras.iter().take_while(|c| c.priority == 0).count();
            laid(now, name, extras, Some(shown))
        }
        Columns::Laid { columns, age_at } => laid(now, name, columns, age_at),
        Columns::AgeUndeclared(extras) => {
            let (mut columns, cells) = laid(now, name, extras, Some(extras.len()));
            columns.pop();
            (columns, cells)
        }
        Columns::NameLast(extras) => {
            let (mut columns, cells) = laid(now, name, extras, None);
            let mut name = columns.remove(0);
            name["priority"] = json!(1);
            columns.push(name);
            let cells = move |obj: &Object| {
                let mut row = cells(obj);
                row.rotate_left(1);
                row
            };
            (columns, Box::new(cells) as Cells<'_>)
        }
        Columns::Declared(printer) => {
            let columns = std::iter::once(name).chain(printer.definitions().cloned()).collect();
            let cells = move |obj: &Object| {
                std::iter::once(json!(object::meta_str(obj, "name"))).chain(printer.cells(obj, now)).collect()
            };
            (columns, Box::new(cells))
        }
    }
}

/// The column definitions of a Table of `columns` (a kind's strategy's) and the cells
/// of `obj`'s row at the time `now`, as a Table shows them: for fuzzing the printers.
#[doc(hidden)]
pub fn row_of(columns: Columns<'_>, obj: &Object, now: SystemTime) -> (Vec<Value>, Vec<Value>) {
    let (definitions, cells) = layout(columns, now);
    let row = cells(obj);
    (definitions, row)
}

/// A Table of `objects`.
pub(crate) fn table(scope: &Scope, version: &str, objects: &[Object], rv: &str, next: Option<&str>) -> Value {
    let (columns, cells) = layout(scope.resource().strategy.columns(), scope.inputs.now);
    let include = scope.query.get("includeObject").unwrap_or("Metadata");
    let mut ordered: Vec<&Object> = objects.iter().collect();
    scope.resource().strategy.order_table_rows(&mut ordered);
    let rows: Vec<Value> = ordered
        .into_iter()
        .map(|obj| {
            let embedded = match include {
                "None" => Value::Null,
                "Object" => Value::Object(obj.clone()),
                _ => json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
                }),
            };
            json!({"cells": cells(obj), "object": embedded})
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
    use super::{date_cell, human_duration, row_of};
    use crate::resources::Columns;
    use serde_json::{json, Value};
    use std::time::{Duration, UNIX_EPOCH};

    /// What the `table_cells` fuzz target checks of any object, for an empty one and
    /// one whose fields are all of the wrong type.
    #[test]
    fn every_builtin_kind_has_a_scalar_cell_per_column() {
        let registry = crate::registry::Registry::builtin();
        let odd = json!({"metadata": {"name": 1, "creationTimestamp": [], "labels": "x"}, "spec": "x", "status": 3});
        for r in registry.resources() {
            let columns = r.strategy.columns();
            let undeclared = usize::from(matches!(columns, Columns::AgeUndeclared(_)));
            for obj in [json!({}), odd.clone()] {
                let (definitions, cells) = row_of(columns, obj.as_object().unwrap(), UNIX_EPOCH);
                assert_eq!(cells.len(), definitions.len() + undeclared, "{}: {cells:?}", r.plural);
                assert!(cells.iter().all(|c| matches!(c, Value::String(_) | Value::Number(_) | Value::Bool(_))), "{}: {cells:?}", r.plural);
            }
        }
    }

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(150), "2m30s");
        assert_eq!(human_duration(3 * 60 * 60 + 5), "3h");
        assert_eq!(human_duration(90_000), "25h");
        assert_eq!(human_duration(3 * 86_400), "3d");
    }

    #[test]
    fn date_cells_read_like_upstreams() {
        let now = UNIX_EPOCH + Duration::from_secs(1_795_392_000 + 3_723); // 2026-11-23T01:02:03Z
        assert_eq!(date_cell(now, "2026-11-23T00:20:03Z"), "42m");
        assert_eq!(date_cell(now, "2026-11-23T02:20:03+02:00"), "42m");
        assert_eq!(date_cell(now, "2026-11-23T01:02:04Z"), "0s", "a second ahead is now");
        assert_eq!(date_cell(now, "2026-11-23T01:02:06Z"), "<invalid>", "further ahead is not");
        assert_eq!(date_cell(now, "not-a-date"), "<invalid>");
        assert_eq!(date_cell(now, ""), "<unknown>");
        assert_eq!(date_cell(now, "null"), "<unknown>");
        assert_eq!(date_cell(now, "0001-01-01T00:00:00Z"), "<unknown>");
        assert_eq!(date_cell(now, "0002-01-01T00:00:00Z"), "292y", "Go's durations stop at 292 years");
    }
}

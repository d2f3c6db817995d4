//! `metadata.managedFields`: one entry per manager and operation, each with the set of
//! fields it owns, read from and written back to the object.

use super::set::FieldSet;
use serde_json::{json, Map, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// Who changed fields, and how: entries with the same identity are one manager.
/// An Update manager is also told apart by the apiVersion it wrote with; an Apply
/// manager is not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManagerId {
    pub manager: String,
    pub operation: Operation,
    pub api_version: String,
    pub subresource: String,
}

impl ManagerId {
    fn same(&self, other: &ManagerId) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == Operation::Apply || self.api_version == other.api_version)
    }

    /// As upstream names a manager in a conflict: `"kubectl" using apps/v1`.
    pub fn describe(&self) -> String {
        let mut out = crate::schema::go_quote(&self.manager);
        if !self.subresource.is_empty() {
            out.push_str(&format!(
                " with subresource {}",
                crate::schema::go_quote(&self.subresource)
            ));
        }
        if self.operation == Operation::Update {
            out.push_str(&format!(" using {}", self.api_version));
        }
        out
    }
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub id: ManagerId,
    /// RFC 3339, seconds: when the manager last changed what it owns.
    pub time: Option<String>,
    pub set: FieldSet,
}

/// Every manager of an object.
#[derive(Clone, Debug, Default)]
pub struct Managers(pub Vec<Entry>);

impl Managers {
    /// Read `metadata.managedFields`, with upstream's errors for malformed entries.
    pub fn decode(list: &Value) -> Result<Managers, String> {
        let Value::Array(entries) = list else {
            return Ok(Managers::default());
        };
        let mut out = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let text = |name: &str| entry.get(name).and_then(Value::as_str).unwrap_or("");
            let operation = match text("operation") {
                "Apply" => Operation::Apply,
                "Update" => Operation::Update,
                _ => return Err("operation must be `Apply` or `Update`".into()),
            };
            if text("apiVersion").is_empty() {
                return Err("apiVersion must not be empty".into());
            }
            match text("fieldsType") {
                "FieldsV1" => {}
                "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
                other => {
                    return Err(format!(
                        "invalid fieldsType {} in managed fields entry {i}",
                        crate::schema::go_quote(other)
                    ))
                }
            }
            let set = match entry.get("fieldsV1") {
                Some(fields) => FieldSet::from_fields_v1(fields)
                    .map_err(|e| format!("error decoding set: {e}"))?,
                None => FieldSet::new(),
            };
            out.push(Entry {
                id: ManagerId {
                    manager: text("manager").to_owned(),
                    operation,
                    api_version: text("apiVersion").to_owned(),
                    subresource: text("subresource").to_owned(),
                },
                time: entry.get("time").and_then(Value::as_str).map(str::to_owned),
                set,
            });
        }
        Ok(Managers(out))
    }

    /// `metadata.managedFields` as upstream orders it: Apply before Update, then by
    /// time, manager, apiVersion and subresource. `None` when there are none.
    pub fn encode(&self) -> Option<Value> {
        if self.0.is_empty() {
            return None;
        }
        let mut entries: Vec<&Entry> = self.0.iter().collect();
        entries.sort_by(|a, b| {
            (
                a.id.operation,
                a.time.as_deref().unwrap_or(""),
                &a.id.manager,
                &a.id.api_version,
                &a.id.subresource,
            )
                .cmp(&(
                    b.id.operation,
                    b.time.as_deref().unwrap_or(""),
                    &b.id.manager,
                    &b.id.api_version,
                    &b.id.subresource,
                ))
        });
        let encoded = entries
            .into_iter()
            .map(|e| {
                let mut entry = Map::new();
                entry.insert("manager".into(), json!(e.id.manager));
                entry.insert("operation".into(), json!(e.id.operation.as_str()));
                entry.insert("apiVersion".into(), json!(e.id.api_version));
                if let Some(time) = &e.time {
                    entry.insert("time".into(), json!(time));
                }
                entry.insert("fieldsType".into(), json!("FieldsV1"));
                entry.insert("fieldsV1".into(), e.set.to_fields_v1());
                if !e.id.subresource.is_empty() {
                    entry.insert("subresource".into(), json!(e.id.subresource));
                }
                Value::Object(entry)
            })
            .collect();
        Some(Value::Array(encoded))
    }

    pub fn get(&self, id: &ManagerId) -> Option<&Entry> {
        self.0.iter().find(|e| e.id.same(id))
    }

    /// Set what `id` owns (as of `api_version`), keeping its time.
    pub fn set(&mut self, id: &ManagerId, set: FieldSet) {
        match self.0.iter_mut().find(|e| e.id.same(id)) {
            Some(entry) => {
                entry.set = set;
                entry.id.api_version = id.api_version.clone();
            }
            None => self.0.push(Entry {
                id: id.clone(),
                time: None,
                set,
            }),
        }
    }

    pub fn touch(&mut self, id: &ManagerId, now: &str) {
        if let Some(entry) = self.0.iter_mut().find(|e| e.id.same(id)) {
            entry.time = Some(now.to_owned());
        }
    }

    /// Remove from every manager but `except` what `fields` holds.
    pub fn release(&mut self, fields: &FieldSet, except: Option<&ManagerId>) {
        for entry in &mut self.0 {
            if except.is_some_and(|id| entry.id.same(id)) {
                continue;
            }
            entry.set.remove(fields, false);
        }
        self.0.retain(|e| !e.set.is_empty());
    }

    /// Keep at most `max` Update managers, as upstream does: the oldest are merged,
    /// per apiVersion, into one `ancient-changes` entry (the first of them becomes it,
    /// the rest join it). Apply managers are never merged.
    pub fn cap_updates(&mut self, max: usize) {
        let mut updaters: Vec<ManagerId> = self
            .0
            .iter()
            .filter(|e| e.id.operation == Operation::Update)
            .map(|e| e.id.clone())
            .collect();
        if updaters.len() <= max {
            return;
        }
        let time = |id: &ManagerId| {
            self.get(id)
                .and_then(|e| e.time.clone())
                .unwrap_or_default()
        };
        updaters.sort_by_cached_key(|id| {
            (
                time(id),
                id.manager.clone(),
                id.api_version.clone(),
                id.subresource.clone(),
            )
        });
        let mut left = updaters.len();
        let mut first_of_version: Vec<(String, ManagerId)> = Vec::new();
        for id in updaters {
            if left <= max {
                break;
            }
            let first = first_of_version
                .iter()
                .find(|(v, _)| *v == id.api_version)
                .map(|(_, f)| f.clone());
            let Some(first) = first else {
                first_of_version.push((id.api_version.clone(), id));
                continue;
            };
            let bucket = ManagerId {
                manager: ANCIENT_CHANGES.into(),
                operation: Operation::Update,
                api_version: id.api_version.clone(),
                subresource: String::new(),
            };
            if self.get(&bucket).is_none() {
                if let Some(entry) = self.0.iter_mut().find(|e| e.id.same(&first)) {
                    entry.id = bucket.clone();
                }
            }
            let Some(i) = self.0.iter().position(|e| e.id.same(&id)) else {
                continue;
            };
            let merged = self.0.remove(i);
            if let Some(entry) = self.0.iter_mut().find(|e| e.id.same(&bucket)) {
                entry.set.add(&merged.set);
                entry.time = merged.time;
            }
            left -= 1;
        }
    }
}

/// The manager the oldest Update managers are merged into past the cap.
const ANCIENT_CHANGES: &str = "ancient-changes";

/// The most Update managers an object keeps (upstream's default).
pub const MAX_UPDATE_MANAGERS: usize = 10;

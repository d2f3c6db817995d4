//! Moving ownership: an update takes the fields it changed from everyone; an apply
//! owns exactly the fields of its configuration, fails on fields another manager owns
//! and it would change (unless forced), and removes the fields it stopped applying
//! that no one else owns.

use super::compare::{compare, compare_objects, Comparison};
use super::managers::{ManagerId, Managers};
use super::merge::merge;
use super::path::{Path, PathElement};
use super::set::FieldSet;
use super::typed::{ensure_named_fields, remove_items, to_field_set};
use crate::schema::SchemaNode;
use serde_json::{Map, Value};

/// One field another manager owns that an apply would change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub manager: ManagerId,
    pub path: Path,
}

#[derive(Debug)]
pub enum ApplyError {
    Conflicts(Vec<Conflict>),
    /// The object or configuration does not fit the schema (duplicate keys, items
    /// without their key fields).
    Invalid(String),
}

/// Tracks managed fields for one kind and request.
pub struct Updater<'a> {
    pub node: &'a SchemaNode<'a>,
    /// Fields nobody owns through this endpoint: `status` through the main resource
    /// of kinds with a status subresource, everything but `status` through it.
    pub ignored: &'a FieldSet,
}

/// The fields no manager owns: type and object metadata the server sets.
fn server_owned() -> &'static FieldSet {
    static SET: std::sync::OnceLock<FieldSet> = std::sync::OnceLock::new();
    SET.get_or_init(build_server_owned)
}

fn build_server_owned() -> FieldSet {
    let mut set = FieldSet::new();
    let field = PathElement::field;
    set.insert(&[field("apiVersion")]);
    set.insert(&[field("kind")]);
    set.insert(&[field("metadata")]);
    for name in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        set.insert(&[field("metadata"), field(name)]);
    }
    set
}

impl Updater<'_> {
    fn owned(&self, set: &FieldSet) -> FieldSet {
        let mut set = set.clone();
        self.keep_owned(&mut set);
        set
    }

    /// `set` without the fields no one owns through this endpoint.
    fn keep_owned(&self, set: &mut FieldSet) {
        set.remove(self.ignored, true);
        set.remove(server_owned(), false);
    }

    fn compare(&self, old: &Value, new: &Value) -> Result<Comparison, String> {
        Ok(self.unignored(compare(old, new, self.node)?))
    }

    /// `c` without the fields nobody owns through this endpoint.
    fn unignored(&self, mut c: Comparison) -> Comparison {
        if self.ignored.is_empty() {
            return c;
        }
        c.added.remove(self.ignored, true);
        c.modified.remove(self.ignored, true);
        c.removed.remove(self.ignored, true);
        c
    }

    /// Record a create, update or non-apply patch from `live` to `new` by `id`.
    pub fn update(
        &self,
        live: &Map<String, Value>,
        new: &Map<String, Value>,
        managers: &mut Managers,
        id: &ManagerId,
        now: &str,
    ) -> Result<(), String> {
        let c = self.unignored(compare_objects(live, new, self.node)?);
        let mut changed = c.added;
        changed.add(&c.modified);
        if !managers.0.is_empty() {
            managers.release(&changed.union(&c.removed), None);
        }
        let mut taken = changed;
        self.keep_owned(&mut taken);
        if !taken.is_empty() {
            let before = managers.get(id).map(|e| e.set.clone()).unwrap_or_default();
            managers.set(id, taken.merged(before));
            managers.touch(id, now);
        }
        managers.cap_updates(super::managers::MAX_UPDATE_MANAGERS);
        Ok(())
    }

    /// Apply `config` to `live` as `id`: the new object, with `managers` updated; or
    /// the conflicts (when not `force`d).
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        managers: &mut Managers,
        id: &ManagerId,
        force: bool,
        now: &str,
    ) -> Result<Value, ApplyError> {
        let invalid = ApplyError::Invalid;
        // The configuration's own set first: it names the path of a bad item.
        let applied = self.owned(&to_field_set(config, self.node).map_err(invalid)?);
        let merged = merge(live, config, self.node).map_err(invalid)?;
        let last = managers.get(id).map(|e| e.set.clone());
        let new_manager = last.is_none();
        // Only what the applier stops applying can be pruned; when it still applies
        // everything it did, pruning would remove nothing and put it all back.
        let dropped = last
            .as_ref()
            .is_some_and(|last| !last.difference(&applied).is_empty());
        managers.set(id, applied);
        let new = match &last {
            Some(last) if dropped => self.prune(&merged, managers, last).map_err(invalid)?,
            _ => merged,
        };
        let c = self.compare(live, &new).map_err(invalid)?;
        let changed = c.modified.union(&c.added);
        let mut conflicts = Vec::new();
        let mut taken = Vec::new();
        for entry in managers.0.iter().filter(|e| e.id != *id) {
            let clash = entry.set.intersection(&changed);
            if !clash.is_empty() {
                conflicts.extend(clash.paths().into_iter().map(|path| Conflict {
                    manager: entry.id.clone(),
                    path,
                }));
                taken.push((entry.id.clone(), clash));
            }
        }
        if !force && !conflicts.is_empty() {
            conflicts.sort_by(|a, b| a.manager.manager.cmp(&b.manager.manager));
            return Err(ApplyError::Conflicts(conflicts));
        }
        for entry in managers.0.iter_mut() {
            if let Some((_, clash)) = taken.iter().find(|(owner, _)| *owner == entry.id) {
                entry.set = entry.set.difference(clash);
            }
        }
        managers.release(&c.removed, Some(id));
        if new != *live || new_manager {
            managers.touch(id, now);
        }
        Ok(new)
    }

    /// `merged` without the fields the applier applied last time and no longer does,
    /// unless another manager owns them.
    fn prune(&self, merged: &Value, managers: &Managers, last: &FieldSet) -> Result<Value, String> {
        let node = self.node;
        let named = |set: &FieldSet| ensure_named_fields(set, node);
        let remove = |value: &Value, set: &FieldSet| {
            remove_items(value, set, node).unwrap_or_else(|| Value::Object(Map::new()))
        };
        let last = named(last);
        let pruned = remove(merged, &last);
        // Put back what anyone (the applier included) owns.
        let mut owned = FieldSet::new();
        for entry in &managers.0 {
            owned.add(&entry.set);
        }
        let merged_set = named(&to_field_set(merged, node)?);
        let pruned_set = named(&to_field_set(&pruned, node)?);
        let pruned = remove(
            merged,
            &merged_set.difference(&pruned_set.union(&named(&owned))),
        );
        // Put back what the applier never applied (pruning only removes its own).
        let pruned_set = named(&to_field_set(&pruned, node)?);
        Ok(remove(
            merged,
            &merged_set.difference(&pruned_set).intersection(&last),
        ))
    }
}

//! Managed fields on the REST path: who a write is recorded as, and the Update entry
//! every create, update and non-apply patch leaves in `metadata.managedFields`.

use super::object::{self, Object};
use super::scope::Scope;
use crate::apply::{manager_from_user_agent, FieldManager};
use crate::validation::FieldError;

/// The longest `fieldManager` upstream accepts.
const MAX_MANAGER_LEN: usize = 128;

impl Scope {
    /// The manager this write is recorded as: `fieldManager`, or else the product
    /// part of the User-Agent.
    pub fn manager(&self) -> String {
        match self.query.get("fieldManager") {
            Some(m) if !m.is_empty() => m.to_owned(),
            _ => manager_from_user_agent(self.user_agent.as_deref().unwrap_or("")),
        }
    }

    /// Field tracking for this resource and subresource, by the resource's schema (a
    /// custom resource's own, borrowed for the request).
    pub fn field_manager(&self) -> FieldManager<'_> {
        let r = self.resource();
        FieldManager::with_schema(
            r.schema.node(&r.group, &r.version, &r.kind),
            &r.group,
            &r.version,
            &r.kind,
            &self.subresource,
            r.has_status(),
        )
    }

    /// Record this write's Update entry in `new` (`old`: the stored object, `None` on
    /// create).
    pub fn record_update(&self, old: Option<&Object>, new: &mut Object) {
        if !self.resource().strategy.tracks_managed_fields() {
            if let Some(meta) = new.get_mut("metadata").and_then(serde_json::Value::as_object_mut) {
                meta.remove("managedFields");
            }
            return;
        }
        if self.is_apply() {
            // The apply recorded its own entry.
            return;
        }
        let now = object::rfc3339(self.inputs.now);
        self.field_manager()
            .record_update(old, new, &self.manager(), &now);
    }
}

/// Upstream's checks of `fieldManager`: at most 128 bytes, printable characters only.
pub(super) fn check_field_manager(scope: &Scope) -> Vec<FieldError> {
    let Some(manager) = scope.query.get("fieldManager") else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    if manager.len() > MAX_MANAGER_LEN {
        errors.push(FieldError::too_long("fieldManager", MAX_MANAGER_LEN));
    }
    for (i, c) in manager.chars().enumerate() {
        if c.is_control() {
            errors.push(FieldError::invalid(
                "fieldManager",
                manager,
                format!("invalid character {} (at position {i})", go_rune(c)),
            ));
        }
    }
    errors
}

/// A character as Go's `%#U` prints it: `U+0007`.
fn go_rune(c: char) -> String {
    format!("U+{:04X}", c as u32)
}

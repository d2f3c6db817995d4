//! Server-side apply and managed fields, as kube-apiserver's field manager keeps them.
//!
//! Every write records who changed which fields in `metadata.managedFields`: creates,
//! updates and non-apply patches as an `Update` entry of their manager (taking the
//! fields they changed from everyone), applies as an `Apply` entry owning exactly the
//! fields of the applied configuration. An apply that would change a field another
//! manager owns fails with a 409 naming them, unless forced; fields a manager stops
//! applying are removed when no one else owns them.
//!
//! The engine walks objects with their schema ([`crate::schema::SchemaNode`]): maps
//! and structs field by field, lists as atomic, sets, or maps keyed by their list map
//! keys, following the same rules as upstream's structured-merge-diff.

mod compare;
mod last_applied;
mod managers;
mod merge;
mod path;
mod set;
mod typed;
mod updater;

#[cfg(test)]
mod custom_tests;
#[cfg(test)]
mod tests;

pub use managers::{ManagerId, Managers, Operation};
pub use path::{Path, PathElement};
pub use set::FieldSet;
pub use updater::{ApplyError, Conflict};

use crate::schema::SchemaNode;
use crate::status::{ApiError, Cause};
use serde_json::{Map, Value};
use updater::Updater;

/// Field tracking for writes to one kind through one endpoint, by the kind's schema
/// (borrowed for `'s`: a custom resource's own).
pub struct FieldManager<'s> {
    node: SchemaNode<'s>,
    ignored: FieldSet,
    /// `apps/v1`, as managed fields entries name it.
    api_version: String,
    kind: String,
    subresource: String,
}

impl FieldManager<'static> {
    /// For the built-in `kind` in `group`/`version`, written through `subresource`
    /// (`""` for the resource itself). `has_status` says whether the resource has a
    /// status subresource, whose fields then belong to it alone.
    pub fn new(
        group: &str,
        version: &str,
        kind: &str,
        subresource: &str,
        has_status: bool,
    ) -> FieldManager<'static> {
        let node = SchemaNode::of_kind(group, version, kind).unwrap_or_else(SchemaNode::untyped);
        FieldManager::with_schema(node, group, version, kind, subresource, has_status)
    }
}

impl<'s> FieldManager<'s> {
    /// [`FieldManager::new`] for objects of the schema at `node` (a custom
    /// resource's, through [`crate::schema::ResourceSchema::node`]).
    pub fn with_schema(
        node: SchemaNode<'s>,
        group: &str,
        version: &str,
        kind: &str,
        subresource: &str,
        has_status: bool,
    ) -> FieldManager<'s> {
        let mut ignored = FieldSet::new();
        let field = PathElement::field;
        match subresource {
            "status" => ignored.insert(&[field("spec")]),
            "" if has_status => ignored.insert(&[field("status")]),
            _ => {}
        }
        FieldManager {
            node,
            ignored,
            api_version: if group.is_empty() {
                version.to_owned()
            } else {
                format!("{group}/{version}")
            },
            kind: kind.to_owned(),
            subresource: subresource.to_owned(),
        }
    }

    fn updater(&self) -> Updater<'_> {
        Updater {
            node: &self.node,
            ignored: &self.ignored,
        }
    }

    fn id(&self, manager: &str, operation: Operation) -> ManagerId {
        ManagerId {
            manager: if manager.is_empty() {
                "unknown".into()
            } else {
                manager.to_owned()
            },
            operation,
            api_version: self.api_version.clone(),
            subresource: self.subresource.clone(),
        }
    }

    /// Record a create (`live` is `None`), update or non-apply patch by `manager` in
    /// `new`'s managed fields. Managed fields a client sends are kept when they are
    /// valid (`[]` clears them); otherwise the stored ones are. Tracking never fails
    /// a write: on an error the stored entries stay as they were.
    pub fn record_update(
        &self,
        live: Option<&Map<String, Value>>,
        new: &mut Map<String, Value>,
        manager: &str,
        now: &str,
    ) {
        let stored = live
            .and_then(|l| l.get("metadata"))
            .and_then(|m| m.get("managedFields"))
            .filter(|v| !v.is_null())
            .cloned();
        let sent = new
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .and_then(|m| m.remove("managedFields"));
        let mut managers = match (&sent, self.subresource.is_empty()) {
            (Some(Value::Array(list)), true) if is_reset(list) => Managers::default(),
            (Some(list), true) => match Managers::decode(list) {
                Ok(m) if !m.0.is_empty() => m,
                _ => decode_or_empty(stored.as_ref()),
            },
            _ => decode_or_empty(stored.as_ref()),
        };
        // The stored managed fields are compared too, harmlessly: no one owns them.
        let empty = Map::new();
        let live = live.unwrap_or(&empty);
        let id = self.id(manager, Operation::Update);
        let fields = match self.updater().update(live, new, &mut managers, &id, now) {
            Ok(()) => managers.encode(),
            Err(_) => stored,
        };
        set_managed_fields(new, fields);
    }

    /// An applied configuration must name exactly this kind and version (upstream's
    /// version check, before anything is decoded or merged).
    pub fn check_type(&self, config: &Value) -> Result<(), ApiError> {
        let text = |name: &str| config.get(name).and_then(Value::as_str).unwrap_or("");
        let (api_version, kind) = (text("apiVersion"), text("kind"));
        if api_version == self.api_version && kind == self.kind {
            return Ok(());
        }
        Err(ApiError::bad_request(format!(
            "invalid object type: {}",
            go_gvk(api_version, kind)
        )))
    }

    /// Apply `config` (the decoded apply body) to `live` (`None`: the object does not
    /// exist yet) as `manager`: the object to store, managed fields included.
    pub fn apply(
        &self,
        live: Option<&Value>,
        config: &Value,
        manager: &str,
        force: bool,
        now: &str,
    ) -> Result<Map<String, Value>, ApiError> {
        if managed_fields(config).is_some() {
            return Err(ApiError::bad_request("metadata.managedFields must be nil"));
        }
        self.check_type(config)?;
        let mut managers = match live.and_then(managed_fields) {
            Some(list) => Managers::decode(list)
                .map_err(|e| ApiError::internal(format!("failed to decode managed fields: {e}")))?,
            None => Managers::default(),
        };
        let empty = Value::Object(Map::new());
        let live = live.map(without_managed_fields).unwrap_or(empty);
        let id = self.id(manager, Operation::Apply);
        // kubectl may be upgrading from client-side apply: the conflicts its last
        // applied configuration explains are forced (upstream's lastAppliedManager).
        let kubectl = manager == last_applied::KUBECTL;
        let before = kubectl.then(|| managers.clone());
        let applied = match self
            .updater()
            .apply(&live, config, &mut managers, &id, force, now)
        {
            Err(ApplyError::Conflicts(conflicts)) if kubectl => {
                match last_applied::allowed_conflicts(&live, &self.api_version, &self.node) {
                    Some(allowed) if conflicts.iter().all(|c| allowed.has(&c.path.0)) => {
                        managers = before.unwrap_or_default();
                        self.updater()
                            .apply(&live, config, &mut managers, &id, true, now)
                    }
                    Some(allowed) => Err(ApplyError::Conflicts(
                        conflicts
                            .into_iter()
                            .filter(|c| !allowed.has(&c.path.0))
                            .collect(),
                    )),
                    None => Err(ApplyError::Conflicts(conflicts)),
                }
            }
            other => other,
        }
        .map_err(|e| match e {
            ApplyError::Conflicts(conflicts) => conflict_error(&conflicts),
            // Upstream passes this on as a plain error: a 500 without a reason.
            ApplyError::Invalid(why) => ApiError::unclassified(format!(
                "failed to create typed patch object ({}; {}): {why}",
                namespaced_name(config),
                go_gvk(&self.api_version, &self.kind)
            )),
        })?;
        let Value::Object(mut object) = applied else {
            return Err(ApiError::internal("apply did not leave an object"));
        };
        if kubectl {
            // And the annotation follows what it applied (lastAppliedUpdater).
            last_applied::sync(&mut object, config);
        }
        set_managed_fields(&mut object, managers.encode());
        Ok(object)
    }
}

/// A group, version and kind as Go prints one: `apps/v1, Kind=Deployment`, and
/// `/v1, Kind=ConfigMap` for the core group.
fn go_gvk(api_version: &str, kind: &str) -> String {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
}

/// `namespace/name` of an object, as upstream names the object an apply failed on.
fn namespaced_name(object: &Value) -> String {
    let meta = |name: &str| {
        object
            .get("metadata")
            .and_then(|m| m.get(name))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    format!("{}/{}", meta("namespace"), meta("name"))
}

fn managed_fields(object: &Value) -> Option<&Value> {
    object
        .get("metadata")?
        .get("managedFields")
        .filter(|v| !v.is_null())
}

fn without_managed_fields(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    copy
}

fn set_managed_fields(object: &mut Map<String, Value>, fields: Option<Value>) {
    let meta = object
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        match fields {
            Some(fields) => meta.insert("managedFields".into(), fields),
            None => meta.remove("managedFields"),
        };
    }
}

fn decode_or_empty(list: Option<&Value>) -> Managers {
    list.and_then(|l| Managers::decode(l).ok())
        .unwrap_or_default()
}

/// `[]` or `[{}]`: the client asks for the managed fields to be cleared.
fn is_reset(list: &[Value]) -> bool {
    match list {
        [] => true,
        [one] => one.as_object().is_some_and(Map::is_empty),
        _ => false,
    }
}

/// The 409 of an apply that conflicts, as upstream words it.
fn conflict_error(conflicts: &[Conflict]) -> ApiError {
    let message = match conflicts {
        [one] => format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            one.manager.describe(),
            one.path
        ),
        _ => {
            let mut lines = Vec::new();
            let mut managers: Vec<&ManagerId> = Vec::new();
            for c in conflicts {
                if !managers.contains(&&c.manager) {
                    managers.push(&c.manager);
                }
            }
            managers.sort_by(|a, b| a.manager.cmp(&b.manager));
            for manager in managers {
                lines.push(format!("conflicts with {}:", manager.describe()));
                for c in conflicts.iter().filter(|c| c.manager == *manager) {
                    lines.push(format!("- {}", c.path));
                }
            }
            format!(
                "Apply failed with {} conflicts: {}",
                conflicts.len(),
                lines.join("\n")
            )
        }
    };
    let causes = conflicts
        .iter()
        .map(|c| Cause {
            kind: "FieldManagerConflict".into(),
            message: format!("conflict with {}", c.manager.describe()),
            field: c.path.to_string(),
        })
        .collect();
    ApiError::apply_conflict(message, causes)
}

/// The manager a write records when the request names none: the User-Agent up to
/// its first `/`, printable characters only, at most 128 bytes (as upstream).
pub fn manager_from_user_agent(user_agent: &str) -> String {
    let prefix = user_agent.split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in prefix.chars().filter(|c| !c.is_control()) {
        if out.len() + c.len_utf8() > 128 {
            break;
        }
        out.push(c);
    }
    out
}

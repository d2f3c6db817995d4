//! What decoding does to a custom resource before anything checks it, as upstream's
//! apiextensions codec does to request bodies and to objects read from storage
//! (`unstructuredSchemaCoercer.apply`, then the defaulter), in one walk:
//!
//! 1. pruning (`pruning.Prune`): fields the schema does not declare are dropped, and
//!    reported when the request asks (`unknown field "spec.foo"`); under
//!    `x-kubernetes-preserve-unknown-fields` they stay, but declared ones are still
//!    pruned below; a resource's (or an embedded resource's) `apiVersion`, `kind` and
//!    `metadata` are not pruned;
//! 2. nulls that are neither nullable nor defaulted are dropped
//!    (`PruneNonNullableNullsWithoutDefaults`);
//! 3. embedded resources' `apiVersion` and `kind` must be strings and their `metadata`
//!    an ObjectMeta (`objectmeta.Coerce`): a request fails on the first that is not; a
//!    stored object drops it;
//! 4. defaults are filled in (`defaulting.Default`).
//!
//! Each object is pruned before it is defaulted, so a default is never pruned (defaults
//! are pruned once, when the schema is compiled) and nested defaults apply inside the
//! values defaults bring.

use super::defaults::{default_value, fill_absent, take_default_if_null};
use super::embedded;
use super::node::{Additional, Node};
use super::path::Path;
use super::validate::MAX_VALUE_DEPTH;
use crate::validation::FieldError;
use serde_json::{Map, Value};

/// The fields every resource, embedded ones included, has whatever its schema says.
const TYPE_AND_OBJECT_META: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// One shaping walk and what it found.
#[derive(Debug, Default)]
pub(crate) struct Shaper {
    /// Whether unknown fields are reported (a request under `Warn` or `Strict`).
    pub report_unknown: bool,
    /// A stored object: what does not decode is dropped instead of failing.
    pub lenient: bool,
    /// Only prune (a default value): nothing dropped for being null, nothing coerced
    /// or defaulted.
    pub prune_only: bool,
    /// Leave defaults out (a server-side apply configuration: upstream defaults the
    /// merged object, so the applier owns no defaulted field).
    pub without_defaults: bool,
    /// The unknown fields pruned, as paths.
    pub unknown: Vec<String>,
    /// The strict errors of embedded resources' metadata (`unknown field
    /// "spec.template.metadata.foo"`).
    pub embedded_unknown: Vec<String>,
}

impl Shaper {
    /// Shape a resource: its root, whose `apiVersion`, `kind` and `metadata` are kept.
    pub fn resource(&mut self, root: &Node, object: &mut Map<String, Value>) -> Result<(), FieldError> {
        self.object(root, object, &Path::Root, true, !root.preserve_unknown, 0)
    }

    /// Shape any value at `node` (`None`: no schema, so objects lose every field).
    pub fn value(&mut self, node: Option<&Node>, value: &mut Value, path: &Path, depth: usize) -> Result<(), FieldError> {
        if depth > MAX_VALUE_DEPTH {
            return Ok(());
        }
        let preserve = node.is_some_and(|n| n.preserve_unknown);
        match value {
            Value::Object(map) => match node {
                Some(node) => self.object(node, map, path, false, !preserve, depth),
                None => {
                    if self.report_unknown {
                        self.unknown.extend(map.keys().map(|k| path.key(k).unknown()));
                    }
                    map.clear();
                    Ok(())
                }
            },
            Value::Array(items) => {
                // Under preserve-unknown-fields, items keep their unknown fields too
                // (upstream's skipPrune), and with no item schema nothing is looked at.
                let item_node = node.and_then(|n| n.items.as_deref());
                if preserve && item_node.is_none() {
                    return Ok(());
                }
                for (i, item) in items.iter_mut().enumerate() {
                    if let Some(item_node) = item_node.filter(|_| !self.prune_only && !self.without_defaults) {
                        if take_default_if_null(item_node, item, depth) {
                            continue;
                        }
                    }
                    let item_path = path.index(i);
                    match (preserve, item_node, item) {
                        (true, Some(n), Value::Object(map)) => self.object(n, map, &item_path, false, false, depth + 1)?,
                        (true, Some(n), nested @ Value::Array(_)) => self.kept_array(n, nested, &item_path, depth + 1)?,
                        (true, _, _) => {}
                        (false, n, item) => self.value(n, item, &item_path, depth + 1)?,
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// An array inside a preserving array: its items keep unknown fields as well.
    fn kept_array(&mut self, node: &Node, value: &mut Value, path: &Path, depth: usize) -> Result<(), FieldError> {
        if depth > MAX_VALUE_DEPTH {
            return Ok(());
        }
        let (Some(item_node), Value::Array(items)) = (node.items.as_deref(), value) else {
            return Ok(());
        };
        for (i, item) in items.iter_mut().enumerate() {
            if !self.prune_only && !self.without_defaults && take_default_if_null(item_node, item, depth) {
                continue;
            }
            let item_path = path.index(i);
            match item {
                Value::Object(map) => self.object(item_node, map, &item_path, false, false, depth + 1)?,
                nested @ Value::Array(_) => self.kept_array(item_node, nested, &item_path, depth + 1)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// An object at `node`: `root` for a resource's root; `prune` drops unknown fields
    /// (else they are kept, for preserve-unknown-fields).
    fn object(&mut self, node: &Node, map: &mut Map<String, Value>, path: &Path, root: bool, prune: bool, depth: usize) -> Result<(), FieldError> {
        let embedded = node.embedded || root;
        let open = !matches!(node.additional, Additional::Absent);
        // Keys to remove: unknown ones (when pruning) and disallowed nulls.
        let mut dropped: Vec<String> = Vec::new();
        for (key, value) in map.iter_mut() {
            let property = node.property(key);
            let type_and_meta = embedded && TYPE_AND_OBJECT_META.contains(&key.as_str());
            if property.is_none() && !open && !type_and_meta {
                if prune {
                    if self.report_unknown && !(matches!(path, Path::Root) && TYPE_AND_OBJECT_META.contains(&key.as_str())) {
                        self.unknown.push(path.key(key).unknown());
                    }
                    dropped.push(key.clone());
                }
                continue;
            }
            let member = property.or_else(|| node.additional_schema());
            if !self.prune_only && value.is_null() {
                if let Some(member) = member.filter(|m| !m.nullable) {
                    if self.without_defaults && member.default.is_some() {
                        continue;
                    }
                    if !take_default_if_null(member, value, depth) {
                        dropped.push(key.clone());
                    }
                    continue;
                }
            }
            if type_and_meta {
                if let Some(member) = member.filter(|_| !self.prune_only && !self.without_defaults) {
                    default_value(member, value, depth + 1);
                }
            } else if property.is_some() {
                self.value(property, value, &path.field(key), depth + 1)?;
            } else {
                self.value(member, value, &path.key(key), depth + 1)?;
            }
        }
        for key in dropped {
            map.remove(&key);
        }
        if self.prune_only {
            return Ok(());
        }
        if node.embedded && !root {
            embedded::coerce(map, path, self.lenient, self.report_unknown, &mut self.embedded_unknown)?;
        }
        if !self.without_defaults {
            fill_absent(node, map, depth);
        }
        Ok(())
    }
}

/// Prune `value` by `node` alone (a default value, as the schema is compiled).
pub(crate) fn prune_value(node: &Node, value: &mut Value) {
    let mut shaper = Shaper { prune_only: true, ..Shaper::default() };
    // Pruning alone never fails.
    let _ = shaper.value(Some(node), value, &Path::Root, 0);
}

//! Running the compiled rules over an object, as upstream's CEL validator does: every
//! rule at every node the object has, `self` the node's value and `oldSelf` its old
//! value where old and new correlate (same property, same key of a `map` list), a
//! cost budget shared by the whole object, and failures worded as upstream words them
//! (`spec: Invalid value: "object": failed rule: self.a < self.b`).
//!
//! On update, a failing rule that does not read `oldSelf`, on a part of the object
//! that did not change, is only a warning (validation ratcheting, GA in 1.33).

use super::eval::{Activation, CostLimitExceeded, COST_LIMIT_MESSAGE};
use super::rule::{Reason, Rule};
use super::schema::{CompiledSchema, Node};
use super::value::Value;
use super::{MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES, PER_CALL_LIMIT, RUNTIME_COST_BUDGET};
use crate::validation::{ErrorKind, FieldError};
use serde_json::Value as Json;
use std::collections::HashMap;
use std::rc::Rc;

/// The outcome of validating one object: errors fail the write, warnings go back to
/// the client.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Validation {
    pub errors: Vec<FieldError>,
    pub warnings: Vec<String>,
}

impl CompiledSchema {
    /// The errors of `new` (with `old`, on update) under every rule.
    pub fn validate(&self, new: &Json, old: Option<&Json>) -> Vec<FieldError> {
        self.validate_with_warnings(new, old).errors
    }

    /// The errors and the ratcheted warnings of `new` under every rule.
    pub fn validate_with_warnings(&self, new: &Json, old: Option<&Json>) -> Validation {
        let Some(root) = &self.root else {
            return Validation::default();
        };
        let mut v = Validator {
            budget: RUNTIME_COST_BUDGET,
            out: Validation::default(),
        };
        let ratchet = match old {
            Some(old) => Ratchet {
                current: Some((new, old)),
                parent: None,
            },
            None => Ratchet::default(),
        };
        v.node(root, &Path::Root, new, old, ratchet);
        v.out
    }
}

/// A field path as upstream's `field.Path` prints it (`<nil>` for the root, which is
/// where the custom resource strategy starts). Built as a chain on the stack and
/// printed only for an error: validating an object that passes allocates no paths.
#[derive(Clone, Copy, Debug)]
enum Path<'p> {
    Root,
    Child(&'p Path<'p>, &'p str),
    Key(&'p Path<'p>, &'p str),
    Index(&'p Path<'p>, usize),
}

impl<'p> Path<'p> {
    fn child(&'p self, name: &'p str) -> Path<'p> {
        Path::Child(self, name)
    }

    fn render(&self) -> String {
        match self {
            Path::Root => "<nil>".to_owned(),
            Path::Child(Path::Root, name) => (*name).to_owned(),
            Path::Child(parent, name) => format!("{}.{name}", parent.render()),
            Path::Key(Path::Root, key) => format!("[{key}]"),
            Path::Key(parent, key) => format!("{}[{key}]", parent.render()),
            Path::Index(Path::Root, i) => format!("[{i}]"),
            Path::Index(parent, i) => format!("{}[{i}]", parent.render()),
        }
    }
}

/// Where an update's old and new values line up, for ratcheting.
#[derive(Clone, Copy, Debug, Default)]
struct Ratchet<'j> {
    current: Option<(&'j Json, &'j Json)>,
    /// The nearest correlated ancestor, when this node is not correlated.
    parent: Option<(&'j Json, &'j Json)>,
}

impl<'j> Ratchet<'j> {
    fn key(self, field: &str) -> Ratchet<'j> {
        let Some((new, old)) = self.current else { return self };
        if self.parent.is_none() && (field == "apiVersion" || field == "kind") {
            // Both sides are converted to the same type and kind: changes to them
            // are invisible, so they never ratchet.
            return Ratchet::default();
        }
        let child = match (new.get(field), old.get(field)) {
            (Some(n), Some(o)) if new.is_object() && old.is_object() => Some((n, o)),
            _ => None,
        };
        Ratchet {
            current: child,
            parent: self.current,
        }
    }

    fn index(self, correlated_old: Option<&'j Json>, new_item: &'j Json) -> Ratchet<'j> {
        if self.current.is_none() {
            return self;
        }
        Ratchet {
            current: correlated_old.map(|o| (new_item, o)),
            parent: self.current,
        }
    }

    fn unchanged(&self) -> bool {
        match (self.current, self.parent) {
            (Some((n, o)), _) => n == o,
            (None, Some((n, o))) => n == o,
            _ => false,
        }
    }
}

struct Validator {
    budget: i64,
    out: Validation,
}

/// The items of an old `map` list by key, to find the old item of a new one.
fn map_list_index<'j>(old: &'j [Json], keys: &[String]) -> HashMap<String, &'j Json> {
    let mut index = HashMap::with_capacity(old.len());
    for item in old {
        if let Some(k) = map_list_key(item, keys) {
            index.entry(k).or_insert(item);
        }
    }
    index
}

/// The composite key of a `map` list item: every key present and a scalar.
fn map_list_key(item: &Json, keys: &[String]) -> Option<String> {
    let mut out = String::new();
    for k in keys {
        match item.get(k)? {
            v @ (Json::Bool(_) | Json::Number(_) | Json::String(_)) => {
                out.push('\u{0}');
                out.push_str(&v.to_string());
            }
            _ => return None,
        }
    }
    Some(out)
}

impl Validator {
    /// Validate `new` at `node`; false once the budget is spent (nothing more runs).
    fn node<'j>(&mut self, node: &Node, path: &Path<'_>, new: &'j Json, old: Option<&'j Json>, ratchet: Ratchet<'j>) -> bool {
        if new.is_null() {
            return true;
        }
        let old = old.filter(|o| !o.is_null());
        if !self.expressions(node, path, new, old, ratchet) {
            return false;
        }
        match new {
            Json::Array(items) => {
                let Some(item_node) = &node.items else { return true };
                let old_items = old.and_then(Json::as_array);
                let index = match (&node.list_map_keys, old_items) {
                    (Some(keys), Some(o)) if !keys.is_empty() && !o.is_empty() => Some(map_list_index(o, keys)),
                    _ => None,
                };
                for (i, item) in items.iter().enumerate() {
                    let correlated = match (&index, &node.list_map_keys) {
                        (Some(index), Some(keys)) => map_list_key(item, keys).and_then(|k| index.get(&k).copied()),
                        _ => None,
                    };
                    let item_path = Path::Index(path, i);
                    if !self.node(item_node, &item_path, item, correlated, ratchet.index(correlated, item)) {
                        return false;
                    }
                }
            }
            Json::Object(map) => {
                let old_map = if node.map_correlatable { old.and_then(Json::as_object) } else { None };
                if let Some(additional) = &node.additional {
                    for (k, v) in map {
                        let old_v = old_map.and_then(|m| m.get(k));
                        if !self.node(additional, &Path::Key(path, k), v, old_v, ratchet.key(k)) {
                            return false;
                        }
                    }
                }
                for (name, prop) in &node.properties {
                    let Some(v) = map.get(name) else { continue };
                    let old_v = old_map.and_then(|m| m.get(name));
                    if !self.node(prop, &path.child(name), v, old_v, ratchet.key(name)) {
                        return false;
                    }
                }
            }
            _ => {}
        }
        true
    }

    fn invalid(path: &Path<'_>, type_name: &str, detail: impl Into<String>) -> FieldError {
        FieldError::invalid(&path.render(), type_name, detail)
    }

    fn stop(&mut self, error: FieldError) -> bool {
        self.out.errors.push(error);
        self.budget = -1;
        false
    }

    /// The rules of one node.
    fn expressions<'j>(&mut self, node: &Node, path: &Path<'_>, new: &'j Json, old: Option<&'j Json>, ratchet: Ratchet<'j>) -> bool {
        let Some(decl) = &node.decl else { return true };
        if node.rules.is_empty() {
            return true;
        }
        let type_name = node.type_name.as_str();
        if self.budget <= 0 {
            return self.stop(Self::invalid(
                path,
                type_name,
                "validation failed due to running out of cost budget, no further validation rules will be run",
            ));
        }
        let self_value = Value::from_json(new, decl);
        let old_value = old.map(|o| Value::from_json(o, decl));
        let plain = Activation {
            self_value: self_value.clone(),
            old_self: old_value.clone(),
            named: Vec::new(),
        };
        let optional = Activation {
            self_value,
            old_self: Some(Value::Optional(old_value.map(Rc::new))),
            named: Vec::new(),
        };
        for rule in &node.rules {
            let compiled = match &rule.program {
                Err(detail) => {
                    self.out
                        .errors
                        .push(Self::invalid(path, type_name, format!("rule compile error: {detail}")));
                    continue;
                }
                Ok(None) => continue,
                Ok(Some(c)) => c,
            };
            let optional_old_self = rule.optional_old_self == Some(true);
            let uses_old_self = compiled.program.checked.uses_old_self;
            // Transition rules run only where there is an old value to compare with.
            if uses_old_self && old.is_none() && !optional_old_self {
                continue;
            }
            let activation = if optional_old_self { &optional } else { &plain };
            let outcome = compiled.program.eval(activation, PER_CALL_LIMIT);
            if outcome.cost as i64 > self.budget || outcome.cost > i64::MAX as u64 {
                return self.stop(Self::invalid(
                    path,
                    type_name,
                    "validation failed due to running out of cost budget, no further validation rules will be run",
                ));
            }
            self.budget -= outcome.cost as i64;
            let result = match outcome.value {
                Err(CostLimitExceeded) => {
                    return self.stop(Self::invalid(
                        path,
                        type_name,
                        format!(
                            "'{COST_LIMIT_MESSAGE}': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                            rule.error_string()
                        ),
                    ));
                }
                Ok(v) => v,
            };
            match result {
                Value::Bool(true) => continue,
                Value::Error(e) => {
                    let detail = if e.starts_with("no such overload") {
                        format!(
                            "'{e}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                            rule.error_string()
                        )
                    } else {
                        format!("{e} evaluating rule: {}", rule.error_string())
                    };
                    self.out.errors.push(Self::invalid(path, type_name, detail));
                    continue;
                }
                _ => {}
            }
            let error_path = match &rule.normalized_field_path {
                Some(p) if !p.is_empty() => path.child(p),
                _ => *path,
            };
            let message = match &rule.message_program {
                Ok(Some(message_program)) => match self.message(rule, &message_program.program, &plain) {
                    MessageOutcome::Message(m) => m,
                    MessageOutcome::Fallback => rule.message_or_default(),
                    MessageOutcome::Stop(detail) => {
                        let error = Self::invalid(&error_path, type_name, detail);
                        self.report(error, uses_old_self, ratchet);
                        self.budget = -1;
                        return false;
                    }
                },
                _ => rule.message_or_default(),
            };
            let error = error_for_reason(rule, &error_path, type_name, message);
            self.report(error, uses_old_self, ratchet);
        }
        true
    }

    /// A failure is an error, or a warning when ratcheting lets it through.
    fn report(&mut self, error: FieldError, uses_old_self: bool, ratchet: Ratchet) {
        if !uses_old_self && ratchet.unchanged() {
            self.out.warnings.push(error.to_string());
        } else {
            self.out.errors.push(error);
        }
    }

    fn message(&mut self, rule: &Rule, program: &super::eval::Program, activation: &Activation) -> MessageOutcome {
        let outcome = program.eval(activation, PER_CALL_LIMIT);
        if outcome.cost as i64 > self.budget {
            return MessageOutcome::Stop(
                "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"
                    .to_owned(),
            );
        }
        let value = match outcome.value {
            Err(CostLimitExceeded) => {
                return MessageOutcome::Stop(format!(
                    "no further validation rules will be run due to call cost exceeds limit for messageExpression: {}",
                    crate::schema::go_quote(&rule.message_expression)
                ));
            }
            Ok(v) => v,
        };
        self.budget -= outcome.cost as i64;
        let Value::String(s) = value else {
            return MessageOutcome::Fallback;
        };
        let trimmed = s.trim();
        if trimmed.len() > MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES || trimmed.contains('\n') || trimmed.is_empty() {
            return MessageOutcome::Fallback;
        }
        MessageOutcome::Message(trimmed.to_owned())
    }
}

/// What a message expression yields.
#[derive(Debug)]
enum MessageOutcome {
    Message(String),
    /// It failed: the rule's message (or the default) is used instead.
    Fallback,
    /// It went past a cost limit: validation stops with this detail.
    Stop(String),
}

/// The error of a failed rule, of the kind its `reason` asks for.
fn error_for_reason(rule: &Rule, path: &Path<'_>, type_name: &str, message: String) -> FieldError {
    let field = &path.render();
    match rule.reason() {
        Some(Reason::Forbidden) => FieldError::forbidden(field, message),
        Some(Reason::Required) => FieldError::required(field, message),
        Some(Reason::Duplicate) => FieldError {
            field: field.to_owned(),
            kind: ErrorKind::Duplicate,
            value: Some(type_name.to_owned()),
            detail: String::new(),
        },
        Some(Reason::Invalid) | None => FieldError::invalid(field, type_name, message),
    }
}

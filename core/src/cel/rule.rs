//! One `x-kubernetes-validations` entry: the rule, its message (or message
//! expression), the reason and field path its failures are reported with, and both
//! expressions compiled against the schema node it sits on.

use super::compile::{compile_expression, Compiled};
use super::decl::DeclType;
use super::field_path::valid_field_path;
use super::types::Type;
use serde_json::Value as Json;
use std::sync::Arc;

/// How a failure is reported (the entry's `reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Required,
    Forbidden,
    Invalid,
    Duplicate,
}

impl Reason {
    pub const ALL: [&'static str; 4] = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"];

    pub fn parse(s: &str) -> Option<Reason> {
        Some(match s {
            "FieldValueRequired" => Reason::Required,
            "FieldValueForbidden" => Reason::Forbidden,
            "FieldValueInvalid" => Reason::Invalid,
            "FieldValueDuplicate" => Reason::Duplicate,
            _ => return None,
        })
    }
}

/// Upstream compiles the constant patterns of `find()` and `findAll()` when it builds
/// the program: a bad one fails the rule then.
pub(super) fn constant_regex_error(e: &super::ast::Expr) -> Option<String> {
    use super::ast::{ExprKind, Literal};
    if let ExprKind::Call { function, target: Some(_), args } = &e.kind {
        if function == "find" || function == "findAll" {
            if let Some(ExprKind::Literal(Literal::String(pattern))) = args.first().map(|a| &a.kind) {
                if let Err(err) = super::lib::compile_regex(pattern) {
                    return Some(err);
                }
            }
        }
    }
    e.children().into_iter().find_map(constant_regex_error)
}

/// A validation rule, compiled.
#[derive(Debug)]
pub struct Rule {
    pub rule: String,
    pub message: String,
    pub message_expression: String,
    /// As written; [`Reason::parse`] reads it.
    pub reason: Option<String>,
    pub field_path: String,
    pub optional_old_self: Option<bool>,
    /// `Ok(None)` for an empty rule (nothing to run); `Err` with upstream's detail.
    pub(super) program: Result<Option<Compiled>, String>,
    pub(super) message_program: Result<Option<Compiled>, String>,
    /// The `fieldPath` in the form errors are reported under.
    pub(super) normalized_field_path: Option<String>,
}

impl Rule {
    /// Read an entry of `x-kubernetes-validations` (fields of the wrong type count as
    /// absent: decoding the CRD reports them).
    pub fn from_json(entry: &Json) -> Rule {
        let text = |key: &str| entry.get(key).and_then(Json::as_str).unwrap_or("").to_owned();
        Rule {
            rule: text("rule"),
            message: text("message"),
            message_expression: text("messageExpression"),
            reason: entry.get("reason").and_then(Json::as_str).map(str::to_owned),
            field_path: text("fieldPath"),
            optional_old_self: entry.get("optionalOldSelf").and_then(Json::as_bool),
            program: Ok(None),
            message_program: Ok(None),
            normalized_field_path: None,
        }
    }

    /// Compile the rule and its message expression for a node of type `decl` whose
    /// schema is `schema`.
    pub(super) fn compile(&mut self, decl: &Arc<DeclType>, schema: &Json) {
        let optional = self.optional_old_self == Some(true);
        if self.rule.trim().is_empty() {
            self.program = Ok(None);
            return;
        }
        self.program = match compile_expression(&self.rule, decl, optional) {
            Err(issues) => Err(format!("compilation failed: {issues}")),
            Ok(c) if c.output != Type::Bool => Err("cel expression must evaluate to a bool".to_owned()),
            Ok(c) => match constant_regex_error(&c.program.expr) {
                Some(e) => Err(format!("program instantiation failed: {e}")),
                None => Ok(Some(c)),
            },
        };
        if self.program.is_err() {
            return;
        }
        if !self.message_expression.is_empty() {
            self.message_program = match compile_expression(&self.message_expression, decl, optional) {
                Err(issues) => Err(format!("messageExpression compilation failed: {issues}")),
                Ok(c) if c.output != Type::String => Err("messageExpression must evaluate to a string".to_owned()),
                Ok(c) => Ok(Some(c)),
            };
        }
        if !self.field_path.is_empty() {
            self.normalized_field_path = valid_field_path(&self.field_path, schema).ok();
        }
    }

    pub fn uses_old_self(&self) -> bool {
        matches!(&self.program, Ok(Some(c)) if c.program.checked.uses_old_self)
    }

    /// The estimated worst-case cost of the rule itself (0 when it did not compile).
    pub fn max_cost(&self) -> u64 {
        match &self.program {
            Ok(Some(c)) => c.max_cost,
            _ => 0,
        }
    }

    pub fn message_max_cost(&self) -> Option<u64> {
        match &self.message_program {
            Ok(Some(c)) => Some(c.max_cost),
            _ => None,
        }
    }

    pub fn reason(&self) -> Option<Reason> {
        self.reason.as_deref().and_then(Reason::parse)
    }

    /// What failures say without a message: the message, else the rule.
    pub(super) fn error_string(&self) -> &str {
        if self.message.is_empty() {
            self.rule.trim()
        } else {
            self.message.trim()
        }
    }

    pub(super) fn message_or_default(&self) -> String {
        if self.message.is_empty() {
            format!("failed rule: {}", self.error_string())
        } else {
            self.message.trim().to_owned()
        }
    }

    /// The entry as Go's `%#v` prints upstream's internal `ValidationRule` (the value
    /// of a compilation error). A set pointer prints as an address upstream; we print
    /// a fixed one.
    pub(super) fn go_value(&self) -> String {
        let q = |s: &str| crate::schema::go_quote(s);
        let reason = match &self.reason {
            None => "(*apiextensions.FieldValueErrorReason)(nil)".to_owned(),
            Some(_) => "(*apiextensions.FieldValueErrorReason)(0xc000000000)".to_owned(),
        };
        let optional = match self.optional_old_self {
            None => "(*bool)(nil)",
            Some(_) => "(*bool)(0xc000000001)",
        };
        format!(
            "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, FieldPath:{}, OptionalOldSelf:{optional}}}",
            q(&self.rule),
            q(&self.message),
            q(&self.message_expression),
            q(&self.field_path),
        )
    }
}

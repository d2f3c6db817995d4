//! ValidatingAdmissionPolicy: a policy's CEL expressions compiled in the admission
//! environment ([`compile`]), and evaluated for a request under one of its bindings
//! ([`evaluate`]), with upstream's decisions, messages and audit annotations
//! (`admission/plugin/policy/validating`). Match conditions are shared with
//! admission webhooks ([`match_conditions`]). Pure: the caller reads the policy, its
//! bindings, the param objects and the namespace, and decides what matches
//! ([`super::matching`]).
//!
//! How the chain calls it, per request in the validating phase:
//! 1. for each policy (compiled once per generation with [`compile`]):
//!    `matching::policy_matches(spec.matchConstraints, ...)` gives the matched
//!    resource and kind (or not); a request for the admission configuration kinds is
//!    not exempt from policies (only from webhooks);
//! 2. [`configuration_error`] once (a `paramKind` that is not served refuses the
//!    request, or not, by the failure policy), then for each of its bindings, `matching::binding_matches`, then
//!    [`evaluate`]`(&compiled, binding, &input, &params)`;
//! 3. the first [`Denial`] of all refuses the request with
//!    [`Denial::to_api_error`]; every warning becomes a `Warning` header; the audit
//!    annotations of a policy's bindings are merged with
//!    [`publish_audit_annotations`].
//!
//! Not here: the `authorizer` variable (no authorizer is reachable from a pure
//! function; an expression using it fails to compile), and upstream's type-checking
//! warnings (`status.typeChecking`): objects are dynamic.

mod environment;
mod evaluate;
mod plugin;

pub(crate) use plugin::ValidatingAdmissionPolicy;

pub use environment::{dynamic, Environment};
pub use evaluate::{
    configuration_error, evaluate, match_conditions, publish_audit_annotations, Decision, Denial, Input, MatchConditionsOutcome,
    ParamLookup, ParamObjects, VALIDATION_FAILURE_ANNOTATION,
};

use crate::cel::ast::{Expr, ExprKind, Literal};
use crate::cel::compile::{compile_declared, CompileError};
use crate::cel::eval::Program;
use crate::cel::types::Type;
use crate::rest::object::Object;
use crate::validation::FieldError;
use serde_json::Value as Json;

/// What happens when an expression cannot be evaluated (`failurePolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailurePolicy {
    Fail,
    Ignore,
}

impl FailurePolicy {
    /// Read from a stored spec (defaulted to `Fail`).
    pub fn of(spec: Option<&Json>) -> FailurePolicy {
        match spec.and_then(|s| s.get("failurePolicy")).and_then(Json::as_str) {
            Some("Ignore") => FailurePolicy::Ignore,
            _ => FailurePolicy::Fail,
        }
    }
}

/// One compiled expression: its program, or why it has none in upstream's words.
#[derive(Debug)]
pub struct Expression {
    pub text: String,
    pub(crate) program: Result<Program, String>,
    /// The variables (by index in the policy's `variables`) the expression reads.
    pub(crate) reads: Vec<usize>,
}

impl Expression {
    /// Compile `text` in `env`; `expected` are the result types allowed (none: any).
    pub fn compile(text: &str, env: &Environment, expected: &[Type]) -> Expression {
        let program = match compile_declared(text, &env.declarations()) {
            Err(CompileError::Issues(issues)) => Err(format!("compilation failed: {issues}")),
            Err(CompileError::Instantiation(e)) => Err(format!("program instantiation failed: {e}")),
            Ok((_, output)) if !expected.is_empty() && !expected.contains(&output) => {
                let output = type_name(&output);
                Err(match expected {
                    [one] => format!("must evaluate to {} but got {output}", type_name(one)),
                    many => {
                        let names: Vec<String> = many.iter().map(type_name).collect();
                        format!("must evaluate to one of [{}] but got {output}", names.join(" "))
                    }
                })
            }
            Ok((program, _)) => Ok(program),
        };
        let reads = match (&program, &env.variables) {
            (Ok(p), Some(declared)) => {
                let mut names = Vec::new();
                let all = variable_reads(&p.expr, &mut names);
                declared
                    .iter()
                    .enumerate()
                    .filter(|(_, (n, _))| all || names.contains(&n.as_str()))
                    .map(|(i, _)| i)
                    .collect()
            }
            _ => Vec::new(),
        };
        Expression {
            text: text.to_owned(),
            program,
            reads,
        }
    }

    /// The compilation error, if any (upstream's `CompilationResult.Error.Detail`).
    pub fn error(&self) -> Option<&str> {
        self.program.as_ref().err().map(String::as_str)
    }

    fn output(&self) -> Type {
        match &self.program {
            Ok(p) => p.checked.type_of(p.expr.id).clone(),
            Err(_) => Type::Dyn,
        }
    }
}

/// A type as cel-go's `Type.String()` names it (the checker's errors say `null`).
fn type_name(t: &Type) -> String {
    match t {
        Type::Null => "null_type".to_owned(),
        other => other.to_string(),
    }
}

/// The names of `variables.<name>` an expression selects; `true` when it uses
/// `variables` some other way (then it may read any).
fn variable_reads<'e>(e: &'e Expr, names: &mut Vec<&'e str>) -> bool {
    let is_variables = |e: &Expr| matches!(&e.kind, ExprKind::Ident(n) if n == "variables");
    match &e.kind {
        ExprKind::Ident(n) => n == "variables",
        ExprKind::Select { operand, field, .. } if is_variables(operand) => {
            names.push(field);
            false
        }
        ExprKind::Call { function, args, .. } if function == "_?._" && args.first().is_some_and(is_variables) => {
            match args.get(1).map(|a| &a.kind) {
                Some(ExprKind::Literal(Literal::String(field))) => {
                    names.push(field);
                    false
                }
                _ => true,
            }
        }
        _ => {
            let mut all = false;
            for child in e.children() {
                all |= variable_reads(child, names);
            }
            all
        }
    }
}

/// A `name`d expression: a variable or a match condition.
#[derive(Debug)]
pub struct NamedExpression {
    pub name: String,
    pub expression: Expression,
}

/// One entry of `spec.validations`.
#[derive(Debug)]
pub struct CompiledValidation {
    pub expression: Expression,
    pub message: String,
    pub message_expression: Option<Expression>,
    pub reason: Option<String>,
}

/// One entry of `spec.auditAnnotations`.
#[derive(Debug)]
pub struct CompiledAuditAnnotation {
    pub key: String,
    pub value_expression: Expression,
}

/// `spec.paramKind`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamKind {
    pub api_version: String,
    pub kind: String,
}

/// A policy, compiled.
#[derive(Debug)]
pub struct CompiledPolicy {
    pub name: String,
    pub failure_policy: FailurePolicy,
    pub param_kind: Option<ParamKind>,
    pub variables: Vec<NamedExpression>,
    pub match_conditions: Vec<NamedExpression>,
    pub validations: Vec<CompiledValidation>,
    pub audit_annotations: Vec<CompiledAuditAnnotation>,
    /// Whether any expression reads `request` or `namespaceObject`: each is made for
    /// every evaluation that may read it, and for no other.
    pub(crate) reads_request: bool,
    pub(crate) reads_namespace: bool,
}

impl CompiledPolicy {
    fn expressions(&self) -> impl Iterator<Item = &Expression> {
        let named = self.variables.iter().chain(&self.match_conditions).map(|n| &n.expression);
        let validations = self.validations.iter().flat_map(|v| std::iter::once(&v.expression).chain(&v.message_expression));
        named.chain(validations).chain(self.audit_annotations.iter().map(|a| &a.value_expression))
    }

    /// Whether some expression names the variable `name`.
    fn names(&self, name: &str) -> bool {
        self.expressions().any(|e| e.program.as_ref().is_ok_and(|p| names_ident(&p.expr, name)))
    }
}

/// Whether `e` names the identifier `name` anywhere (a comprehension's own variable of
/// that name counts too: reading it costs nothing more).
fn names_ident(e: &Expr, name: &str) -> bool {
    match &e.kind {
        ExprKind::Ident(n) => n == name,
        _ => e.children().into_iter().any(|c| names_ident(c, name)),
    }
}

fn text<'j>(v: &'j Json, key: &str) -> &'j str {
    v.get(key).and_then(Json::as_str).unwrap_or("")
}

fn entries<'j>(spec: Option<&'j Json>, key: &str) -> &'j [Json] {
    spec.and_then(|s| s.get(key)).and_then(Json::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// Compile a ValidatingAdmissionPolicy (as stored): variables in order (each sees
/// those before it), then match conditions, validations with their message
/// expressions, and audit annotations, as upstream's `compilePolicy` does.
pub fn compile(policy: &Object) -> CompiledPolicy {
    let name = policy
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_owned();
    let spec = policy.get("spec");
    let param_kind = spec.and_then(|s| s.get("paramKind")).filter(|p| p.is_object()).map(|p| ParamKind {
        api_version: text(p, "apiVersion").to_owned(),
        kind: text(p, "kind").to_owned(),
    });
    let mut env = Environment {
        has_params: param_kind.is_some(),
        variables: Some(Vec::new()),
    };
    let mut variables = Vec::new();
    for v in entries(spec, "variables") {
        let expression = Expression::compile(text(v, "expression"), &env, &[]);
        let name = text(v, "name").to_owned();
        if let Some(declared) = env.variables.as_mut() {
            declared.push((name.clone(), expression.output()));
        }
        variables.push(NamedExpression { name, expression });
    }
    let match_conditions = entries(spec, "matchConditions")
        .iter()
        .map(|c| NamedExpression {
            name: text(c, "name").to_owned(),
            expression: Expression::compile(text(c, "expression"), &env, &[Type::Bool]),
        })
        .collect();
    let validations = entries(spec, "validations")
        .iter()
        .map(|v| {
            let message_expression = text(v, "messageExpression");
            CompiledValidation {
                expression: Expression::compile(text(v, "expression"), &env, &[Type::Bool]),
                message: text(v, "message").to_owned(),
                message_expression: (!message_expression.is_empty())
                    .then(|| Expression::compile(message_expression, &env, &[Type::String])),
                reason: v.get("reason").and_then(Json::as_str).map(str::to_owned),
            }
        })
        .collect();
    let audit_annotations = entries(spec, "auditAnnotations")
        .iter()
        .map(|a| CompiledAuditAnnotation {
            key: text(a, "key").to_owned(),
            value_expression: Expression::compile(text(a, "valueExpression"), &env, &[Type::String, Type::Null]),
        })
        .collect();
    let mut compiled = CompiledPolicy {
        name,
        failure_policy: FailurePolicy::of(spec),
        param_kind,
        variables,
        match_conditions,
        validations,
        audit_annotations,
        reads_request: true,
        reads_namespace: true,
    };
    compiled.reads_request = compiled.names("request");
    compiled.reads_namespace = compiled.names("namespaceObject");
    compiled
}

/// The compilation errors of a policy's expressions, as the ValidatingAdmissionPolicy
/// strategy reports them (`spec.validations[0].expression: Invalid value: "...":
/// compilation failed: ERROR: <input>:1:1: ...`). Empty expressions are left to the
/// strategy's own required-field checks.
pub fn expression_errors(policy: &Object) -> Vec<FieldError> {
    let compiled = compile(policy);
    let spec = policy.get("spec");
    let mut errors = Vec::new();
    let mut check = |path: String, raw: &str, e: &Expression| {
        if let (false, Some(detail)) = (raw.trim().is_empty(), e.error()) {
            errors.push(FieldError::invalid(&path, raw, detail));
        }
    };
    for (i, (c, raw)) in compiled.match_conditions.iter().zip(entries(spec, "matchConditions")).enumerate() {
        check(format!("spec.matchConditions[{i}].expression"), text(raw, "expression"), &c.expression);
    }
    for (i, (v, raw)) in compiled.variables.iter().zip(entries(spec, "variables")).enumerate() {
        check(format!("spec.variables[{i}].expression"), text(raw, "expression"), &v.expression);
    }
    for (i, (v, raw)) in compiled.validations.iter().zip(entries(spec, "validations")).enumerate() {
        check(format!("spec.validations[{i}].expression"), text(raw, "expression"), &v.expression);
        if let Some(m) = &v.message_expression {
            check(format!("spec.validations[{i}].messageExpression"), text(raw, "messageExpression"), m);
        }
    }
    for (i, (a, raw)) in compiled.audit_annotations.iter().zip(entries(spec, "auditAnnotations")).enumerate() {
        check(
            format!("spec.auditAnnotations[{i}].valueExpression"),
            text(raw, "valueExpression"),
            &a.value_expression,
        );
    }
    errors
}

/// Compile the `matchConditions` of an admission webhook (no params, no variables).
pub fn compile_webhook_match_conditions(webhook: &Json) -> Vec<NamedExpression> {
    let env = Environment {
        has_params: false,
        variables: None,
    };
    entries(Some(webhook), "matchConditions")
        .iter()
        .map(|c| NamedExpression {
            name: text(c, "name").to_owned(),
            expression: Expression::compile(text(c, "expression"), &env, &[Type::Bool]),
        })
        .collect()
}

#[cfg(test)]
mod tests;

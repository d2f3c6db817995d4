//! Evaluating a compiled policy for one request under one binding: params collected
//! as the binding's `paramRef` says, match conditions, validations (message
//! expressions evaluated from what the validations left of the cost budget), audit
//! annotations, then the binding's `validationActions` (upstream's
//! `validating/dispatcher.go` and `validator.go`).

use super::environment::{admission_request, dynamic, dynamic_map, namespace_value, objects};
use super::{CompiledPolicy, Expression, FailurePolicy, NamedExpression};
use crate::admission::matching::{Matched, Request};
use crate::cel::eval::{Activation, COST_LIMIT_MESSAGE};
use crate::cel::value::{Map, Value};
use crate::cel::{MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES, PER_CALL_LIMIT, RUNTIME_COST_BUDGET};
use crate::rest::object::Object;
use crate::selection::LabelSelector;
use crate::status::{ApiError, Cause};
use crate::validation::go_json_string;
use serde_json::Value as Json;
use std::rc::Rc;

/// The key of the audit annotation an `Audit` validation action writes.
pub const VALIDATION_FAILURE_ANNOTATION: &str = "validation.policy.admission.k8s.io/validation_failure";
/// Audit annotation values are cut to this many bytes.
const MAX_AUDIT_ANNOTATION_VALUE_LENGTH: usize = 10 * 1024;
const OUT_OF_BUDGET: &str = "validation failed due to running out of cost budget, no further validation rules will be run";

/// What a policy is evaluated against.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub request: &'a Request<'a>,
    /// The resource and kind the policy's constraints matched
    /// (`matching::policy_matches`): `request.resource` and `request.kind`.
    pub matched: &'a Matched,
    /// The namespace the request is in, when it is in one (not for a request on a
    /// namespace itself).
    pub namespace: Option<&'a Object>,
}

/// The objects of the policy's `paramKind`, as the caller reads them.
pub trait ParamLookup {
    /// Whether the param kind is namespaced; `None` when the kind is not served.
    fn namespaced(&self) -> Option<bool>;
    /// Every object (in `namespace` for a namespaced kind).
    fn list(&self, namespace: &str) -> Vec<&Object>;
    /// The object named `name` (in `namespace` for a namespaced kind).
    fn get(&self, namespace: &str, name: &str) -> Option<&Object> {
        self.list(namespace).into_iter().find(|o| meta_str(o, "name") == name)
    }
}

/// Of `objects`, those a param lookup from `namespace` sees: all of a cluster-scoped
/// kind, those in `namespace` of a namespaced one.
pub(crate) fn params_in<'o>(namespaced: Option<bool>, objects: impl Iterator<Item = &'o Object>, namespace: &str) -> Vec<&'o Object> {
    let namespaced = namespaced == Some(true);
    objects.filter(|o| !namespaced || meta_str(o, "namespace") == namespace).collect()
}

/// Param objects held in a slice.
#[derive(Clone, Copy, Debug)]
pub struct ParamObjects<'a> {
    /// `None`: the param kind is not served.
    pub namespaced: Option<bool>,
    pub objects: &'a [Object],
}

fn meta_str<'o>(o: &'o Object, key: &str) -> &'o str {
    o.get("metadata").and_then(|m| m.get(key)).and_then(Json::as_str).unwrap_or("")
}

impl ParamLookup for ParamObjects<'_> {
    fn namespaced(&self) -> Option<bool> {
        self.namespaced
    }
    fn list(&self, namespace: &str) -> Vec<&Object> {
        params_in(self.namespaced, self.objects.iter(), namespace)
    }
}

/// A refusal: of the policy's configuration (no binding) or of a binding's
/// evaluation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    pub policy: String,
    pub binding: Option<String>,
    pub message: String,
    /// The validation's `reason` (`Invalid` when none).
    pub reason: Option<String>,
}

impl Denial {
    /// What the client reads (upstream's dispatcher message).
    pub fn message(&self) -> String {
        match &self.binding {
            Some(b) => format!(
                "ValidatingAdmissionPolicy '{}' with binding '{b}' denied request: {}",
                self.policy, self.message
            ),
            None => format!("ValidatingAdmissionPolicy '{}' denied request: {}", self.policy, self.message),
        }
    }

    /// The Status refusing `request`: upstream's `admission.NewForbidden` with the
    /// reason and code of the validation and the message as a cause.
    pub fn to_api_error(&self, request: &Request) -> ApiError {
        let a = &request.attributes;
        let name = if !a.name.is_empty() {
            a.name.to_owned()
        } else {
            let from_object = request
                .object
                .map(|o| (meta_str(o, "name"), meta_str(o, "generateName")))
                .map(|(n, g)| if n.is_empty() { g } else { n })
                .unwrap_or("");
            if from_object.is_empty() { "Unknown".to_owned() } else { from_object.to_owned() }
        };
        let message = self.message();
        let mut error = ApiError::forbidden(a.group, a.resource, &name, &message);
        let (reason, code) = match self.reason.as_deref() {
            Some("Forbidden") => ("Forbidden", 403),
            Some("Unauthorized") => ("Unauthorized", 401),
            Some("RequestEntityTooLarge") => ("RequestEntityTooLarge", 413),
            _ => ("Invalid", 422),
        };
        error.reason = reason;
        error.code = code;
        error.details.get_or_insert_with(Default::default).causes.push(Cause {
            kind: String::new(),
            message,
            field: String::new(),
        });
        error
    }
}

/// What one binding of a policy decided for a request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// In order; the first of all policies' refuses the request.
    pub denials: Vec<Denial>,
    /// `Warning` headers.
    pub warnings: Vec<String>,
    /// The policy's audit annotations (keys as the policy writes them).
    pub audit_annotations: Vec<(String, String)>,
    /// Values of the `validation_failure` audit annotation (`Audit` actions).
    pub validation_failures: Vec<String>,
}

/// The audit annotations of one policy's bindings (upstream's
/// `auditAnnotationCollector`): keys prefixed with the policy's name, distinct
/// values of a key joined with ", "; then the first `validation_failure`.
pub fn publish_audit_annotations(policy: &str, decisions: &[Decision]) -> Vec<(String, String)> {
    let mut collected: Vec<(String, Vec<String>)> = Vec::new();
    for (key, value) in decisions.iter().flat_map(|d| &d.audit_annotations) {
        match collected.iter_mut().find(|(k, _)| k == key) {
            Some((_, values)) if values.contains(value) => {}
            Some((_, values)) => values.push(value.clone()),
            None => collected.push((key.clone(), vec![value.clone()])),
        }
    }
    let mut out: Vec<(String, String)> = collected
        .into_iter()
        .map(|(k, values)| (format!("{policy}/{k}"), values.join(", ")))
        .collect();
    if let Some(first) = decisions.iter().flat_map(|d| &d.validation_failures).next() {
        out.push((VALIDATION_FAILURE_ANNOTATION.to_owned(), first.clone()));
    }
    out
}

/// How one expression's evaluation ended.
#[derive(Debug)]
enum Evaluated<'a> {
    Value(Value<'a>),
    /// An evaluation error, in upstream's words.
    Error(String),
}

/// The budget ran out: no further expression runs.
#[derive(Debug)]
struct OutOfBudget;

/// The values expressions see, and the policy's variables evaluated so far (each
/// at most once, before the first expression that reads it).
#[derive(Debug)]
struct Scope<'a> {
    base: Vec<(&'static str, Value<'a>)>,
    variables: &'a [NamedExpression],
    evaluated: Vec<Option<Value<'a>>>,
    /// Whether `variables` is declared (a policy's expressions, not a webhook's).
    declared: bool,
    /// The cost of variables evaluated and not yet charged to a budget.
    pending: u64,
}

impl<'a> Scope<'a> {
    fn new(base: Vec<(&'static str, Value<'a>)>, variables: &'a [NamedExpression], declared: bool) -> Scope<'a> {
        Scope {
            base,
            variables,
            declared,
            evaluated: vec![None; variables.len()],
            pending: 0,
        }
    }

    fn activation(&self) -> Activation<'a> {
        let mut named = self.base.clone();
        if self.declared {
            let entries = self
                .variables
                .iter()
                .zip(&self.evaluated)
                .filter_map(|(v, value)| Some((Value::string(v.name.clone()), value.clone()?)))
                .collect();
            named.push(("variables", Value::Map(Map::Owned(Rc::new(entries)))));
        }
        Activation::named(named)
    }

    fn variable(&mut self, i: usize) {
        if self.evaluated[i].is_some() {
            return;
        }
        let variable = &self.variables[i];
        let value = match &variable.expression.program {
            Err(detail) => Value::error(format!(
                "composited variable {} fails to compile: {detail}",
                go_json_string(&variable.name)
            )),
            Ok(program) => {
                for &dep in variable.expression.reads.iter().filter(|&&d| d < i) {
                    self.variable(dep);
                }
                let activation = self.activation();
                let outcome = program.eval(&activation, PER_CALL_LIMIT);
                self.pending = self.pending.saturating_add(outcome.cost);
                match outcome.value {
                    Ok(v) => v,
                    Err(_) => Value::error(COST_LIMIT_MESSAGE),
                }
            }
        };
        self.evaluated[i] = Some(value);
    }

    /// Evaluate `e`, charging it (and the variables it read) to `budget`.
    fn run(&mut self, e: &'a Expression, budget: &mut u64) -> Result<Evaluated<'a>, OutOfBudget> {
        let program = match &e.program {
            Err(detail) => return Ok(Evaluated::Error(format!("compilation error: {detail}"))),
            Ok(p) => p,
        };
        for &i in &e.reads {
            self.variable(i);
        }
        let activation = self.activation();
        let outcome = program.eval(&activation, PER_CALL_LIMIT);
        let pending = std::mem::take(&mut self.pending);
        *budget = budget.checked_sub(pending).ok_or(OutOfBudget)?;
        *budget = budget.checked_sub(outcome.cost.min(PER_CALL_LIMIT + 1)).ok_or(OutOfBudget)?;
        Ok(match outcome.value {
            Err(_) => Evaluated::Error(format!("expression '{}' resulted in error: {COST_LIMIT_MESSAGE}", e.text)),
            Ok(Value::Error(m)) => Evaluated::Error(format!("expression '{}' resulted in error: {m}", e.text)),
            Ok(v) => Evaluated::Value(v),
        })
    }
}

/// What match conditions decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchConditionsOutcome {
    Match,
    /// A condition was false.
    NoMatch { failed_condition: String },
    /// A condition could not be evaluated and the failure policy is `Fail`.
    Error(String),
}

/// upstream's `utilerrors.NewAggregate(...).Error()`.
fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

fn run_match_conditions<'a>(
    conditions: &'a [NamedExpression],
    failure_policy: FailurePolicy,
    scope: &mut Scope<'a>,
) -> MatchConditionsOutcome {
    let mut budget = RUNTIME_COST_BUDGET as u64;
    let mut errors = Vec::new();
    for c in conditions {
        match scope.run(&c.expression, &mut budget) {
            Err(OutOfBudget) => {
                return match failure_policy {
                    FailurePolicy::Fail => MatchConditionsOutcome::Error(OUT_OF_BUDGET.to_owned()),
                    FailurePolicy::Ignore => MatchConditionsOutcome::NoMatch {
                        failed_condition: String::new(),
                    },
                }
            }
            Ok(Evaluated::Error(e)) => errors.push(e),
            Ok(Evaluated::Value(Value::Bool(false))) => {
                return MatchConditionsOutcome::NoMatch {
                    failed_condition: c.name.clone(),
                }
            }
            Ok(Evaluated::Value(_)) => {}
        }
    }
    match (errors.is_empty(), failure_policy) {
        (true, _) => MatchConditionsOutcome::Match,
        (false, FailurePolicy::Fail) => MatchConditionsOutcome::Error(aggregate(&errors)),
        (false, FailurePolicy::Ignore) => MatchConditionsOutcome::NoMatch {
            failed_condition: String::new(),
        },
    }
}

/// An admission webhook's match conditions (compiled with
/// `compile_webhook_match_conditions`), in order: any false → no match; otherwise
/// an error → the failure policy decides; all true → match (upstream's
/// `matchconditions.matcher.Match`).
pub fn match_conditions(
    conditions: &[NamedExpression],
    failure_policy: FailurePolicy,
    request: &Request,
    matched: &Matched,
) -> MatchConditionsOutcome {
    let request_json = admission_request(request, matched);
    let (object, old) = objects(request);
    let base = vec![
        ("object", object.map(dynamic_map).unwrap_or(Value::Null)),
        ("oldObject", old.map(dynamic_map).unwrap_or(Value::Null)),
        ("request", dynamic(&request_json)),
        ("namespaceObject", Value::Null),
    ];
    let mut scope = Scope::new(base, &[], false);
    run_match_conditions(conditions, failure_policy, &mut scope)
}

/// One validation's result before the binding's actions apply (upstream's
/// `PolicyDecision`).
#[derive(Debug)]
struct PolicyDecision {
    deny: bool,
    message: String,
    reason: Option<String>,
}

/// An audit annotation's result.
#[derive(Debug)]
enum AuditAnnotationResult {
    Publish(String, String),
    Exclude,
    Error(String),
}

#[derive(Debug, Default)]
struct ValidateResult {
    decisions: Vec<PolicyDecision>,
    audit_annotations: Vec<AuditAnnotationResult>,
}

fn error_decision(failure_policy: FailurePolicy, message: String) -> PolicyDecision {
    PolicyDecision {
        deny: failure_policy == FailurePolicy::Fail,
        message,
        reason: None,
    }
}

/// The message of a failed validation: its message expression's string (trimmed,
/// one line, not too long), else its message, else the expression.
fn failure_message(validation: &super::CompiledValidation, message: Option<&Evaluated>) -> String {
    if let Some(Evaluated::Value(Value::String(s))) = message {
        let s = s.trim();
        if !s.is_empty() && s.len() <= MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES && !s.contains('\n') {
            return s.to_owned();
        }
    }
    let message = validation.message.trim();
    if !message.is_empty() {
        return message.to_owned();
    }
    format!("failed expression: {}", validation.expression.text.trim())
}

/// upstream's `validator.Validate` for one param.
fn validate<'a>(policy: &'a CompiledPolicy, base: Vec<(&'static str, Value<'a>)>) -> ValidateResult {
    let fp = policy.failure_policy;
    let mut scope = Scope::new(base, &policy.variables, true);
    match run_match_conditions(&policy.match_conditions, fp, &mut scope) {
        MatchConditionsOutcome::Match => {}
        MatchConditionsOutcome::NoMatch { .. } => return ValidateResult::default(),
        MatchConditionsOutcome::Error(e) => {
            return ValidateResult {
                decisions: vec![error_decision(fp, e)],
                audit_annotations: Vec::new(),
            }
        }
    }
    let mut budget = RUNTIME_COST_BUDGET as u64;
    let mut results = Vec::with_capacity(policy.validations.len());
    for v in &policy.validations {
        match scope.run(&v.expression, &mut budget) {
            Ok(r) => results.push(r),
            Err(OutOfBudget) => {
                return ValidateResult {
                    decisions: vec![error_decision(fp, OUT_OF_BUDGET.to_owned())],
                    audit_annotations: Vec::new(),
                }
            }
        }
    }
    // Message expressions run from what the validations left, each with the others.
    let mut messages: Vec<Option<Evaluated>> = Vec::with_capacity(policy.validations.len());
    let mut messages_out_of_budget = false;
    for v in &policy.validations {
        let m = match (&v.message_expression, messages_out_of_budget) {
            (Some(e), false) => match scope.run(e, &mut budget) {
                Ok(r) => Some(r),
                Err(OutOfBudget) => {
                    messages_out_of_budget = true;
                    None
                }
            },
            _ => None,
        };
        messages.push(m);
    }
    let decisions = policy
        .validations
        .iter()
        .zip(results)
        .zip(&messages)
        .map(|((v, result), message)| match result {
            Evaluated::Error(e) => error_decision(fp, e),
            _ if messages_out_of_budget => error_decision(fp, format!("failed messageExpression: {OUT_OF_BUDGET}")),
            Evaluated::Value(Value::Bool(true)) => PolicyDecision {
                deny: false,
                message: String::new(),
                reason: None,
            },
            Evaluated::Value(_) => PolicyDecision {
                deny: true,
                message: failure_message(v, message.as_ref()),
                reason: Some(v.reason.clone().unwrap_or_else(|| "Invalid".to_owned())),
            },
        })
        .collect();
    let mut budget = RUNTIME_COST_BUDGET as u64;
    let mut audit_annotations = Vec::with_capacity(policy.audit_annotations.len());
    for a in &policy.audit_annotations {
        let result = match scope.run(&a.value_expression, &mut budget) {
            Err(OutOfBudget) => {
                return ValidateResult {
                    decisions: vec![error_decision(fp, OUT_OF_BUDGET.to_owned())],
                    audit_annotations: Vec::new(),
                }
            }
            Ok(Evaluated::Error(e)) => match fp {
                FailurePolicy::Fail => AuditAnnotationResult::Error(e),
                FailurePolicy::Ignore => AuditAnnotationResult::Exclude,
            },
            Ok(Evaluated::Value(Value::String(s))) if s.trim().is_empty() => AuditAnnotationResult::Exclude,
            Ok(Evaluated::Value(Value::String(s))) => AuditAnnotationResult::Publish(a.key.clone(), s.trim().to_owned()),
            Ok(Evaluated::Value(Value::Null)) => AuditAnnotationResult::Exclude,
            Ok(Evaluated::Value(other)) => AuditAnnotationResult::Error(format!(
                "valueExpression '{}' resulted in unsupported return type: {}. Return type must be either string or null.",
                a.value_expression.text,
                other.type_name()
            )),
        };
        audit_annotations.push(result);
    }
    ValidateResult {
        decisions,
        audit_annotations,
    }
}

/// The params a binding evaluates its policy with (upstream's `CollectParams`):
/// `[None]` when the policy has no `paramKind` or the binding no `paramRef`.
fn collect_params<'p>(
    policy: &CompiledPolicy,
    binding_spec: Option<&Json>,
    request_namespace: &str,
    lookup: &'p dyn ParamLookup,
) -> Result<Vec<Option<&'p Object>>, String> {
    let Some(kind) = &policy.param_kind else {
        return Ok(vec![None]);
    };
    let Some(param_ref) = binding_spec.and_then(|s| s.get("paramRef")).filter(|r| r.is_object()) else {
        return Ok(vec![None]);
    };
    let Some(namespaced) = lookup.namespaced() else {
        return Err(format!(
            "paramKind kind `&ParamKind{{APIVersion:{},Kind:{},}}` not known",
            kind.api_version, kind.kind
        ));
    };
    let ref_namespace = param_ref.get("namespace").and_then(Json::as_str).unwrap_or("");
    let namespace = if !namespaced {
        ""
    } else if !ref_namespace.is_empty() {
        ref_namespace
    } else if !request_namespace.is_empty() {
        request_namespace
    } else {
        return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".to_owned());
    };
    if !ref_namespace.is_empty() && !namespaced {
        return Err("paramRef.namespace must not be provided for a cluster-scoped `paramKind`".to_owned());
    }
    let name = param_ref.get("name").and_then(Json::as_str).unwrap_or("");
    let selector = param_ref.get("selector").filter(|s| !s.is_null());
    let params: Vec<&Object> = match (name, selector) {
        ("", None) => return Err("one of name or selector must be provided".to_owned()),
        ("", Some(selector)) => {
            let selector = LabelSelector::from_object(selector)
                .ok_or_else(|| format!("invalid label selector: {}", crate::validation::go_json(selector)))?;
            lookup
                .list(namespace)
                .into_iter()
                .filter(|o| {
                    let labels = o.get("metadata").and_then(|m| m.get("labels")).and_then(Json::as_object);
                    selector.matches_labels(labels)
                })
                .collect()
        }
        (_, Some(_)) => return Err("paramRef.name and paramRef.selector are mutually exclusive".to_owned()),
        (name, None) => lookup.get(namespace, name).into_iter().collect(),
    };
    let deny = param_ref.get("parameterNotFoundAction").and_then(Json::as_str) == Some("Deny");
    if params.is_empty() && deny {
        return Err("no params found for policy binding with `Deny` parameterNotFoundAction".to_owned());
    }
    Ok(params.into_iter().map(Some).collect())
}

/// A param object as CEL sees it: with `apiVersion` and `kind` from `paramKind`
/// when it has none.
fn param_json(policy: &CompiledPolicy, param: &Object) -> Option<Object> {
    let kind = policy.param_kind.as_ref()?;
    if param.contains_key("kind") && param.contains_key("apiVersion") {
        return None;
    }
    let mut p = param.clone();
    p.entry("apiVersion").or_insert_with(|| Json::String(kind.api_version.clone()));
    p.entry("kind").or_insert_with(|| Json::String(kind.kind.clone()));
    Some(p)
}

/// A matched policy that cannot be evaluated at all (upstream's
/// `ConfigurationError` of a policy): its `paramKind` does not parse or is not
/// served. A refusal without a binding under `Fail`; nothing under `Ignore`. The
/// chain asks once per matched policy, before its bindings.
pub fn configuration_error(policy: &CompiledPolicy, params: &dyn ParamLookup) -> Option<Denial> {
    let kind = policy.param_kind.as_ref()?;
    let (group, version) = match kind.api_version.split('/').collect::<Vec<_>>()[..] {
        [v] => ("", v),
        [g, v] => (g, v),
        _ => ("", ""),
    };
    let error = if kind.api_version.split('/').count() > 2 {
        format!(
            "failed to parse paramKind APIVersion: unexpected GroupVersion string: {}",
            kind.api_version
        )
    } else if params.namespaced().is_none() {
        format!(
            "failed to find resource referenced by paramKind: '{group}/{version}, Kind={}'",
            kind.kind
        )
    } else {
        return None;
    };
    (policy.failure_policy == FailurePolicy::Fail).then(|| Denial {
        policy: policy.name.clone(),
        binding: None,
        message: format!("failed to configure policy: {error}"),
        reason: None,
    })
}

/// One ValidatingAdmissionPolicyBinding's decision for a request that the policy
/// and the binding match (upstream's dispatcher, for one binding).
pub fn evaluate(policy: &CompiledPolicy, binding: &Object, input: &Input, params: &dyn ParamLookup) -> Decision {
    let binding_name = meta_str(binding, "name").to_owned();
    let spec = binding.get("spec");
    let mut out = Decision::default();
    let denial = |message: String, reason: Option<String>| Denial {
        policy: policy.name.clone(),
        binding: Some(binding_name.clone()),
        message,
        reason,
    };
    let request = input.request;
    let candidates = match collect_params(policy, spec, request.namespace(), params) {
        Ok(p) => p,
        Err(e) => {
            if policy.failure_policy == FailurePolicy::Fail {
                out.denials.push(denial(format!("failed to configure binding: {e}"), None));
            }
            return out;
        }
    };
    let actions: Vec<&str> = spec
        .and_then(|s| s.get("validationActions"))
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    let request_json = policy.reads_request.then(|| admission_request(request, input.matched));
    let (object, old) = objects(request);
    // A request on a namespace has the namespace's name as its namespace; upstream
    // gives such a request no namespace object.
    let is_namespace = request.kind == ("", "v1", "Namespace");
    let namespace = if is_namespace || !policy.reads_namespace { None } else { input.namespace };
    for param in candidates {
        let owned = param.and_then(|p| param_json(policy, p));
        let base = vec![
            ("object", object.map(dynamic_map).unwrap_or(Value::Null)),
            ("oldObject", old.map(dynamic_map).unwrap_or(Value::Null)),
            ("request", request_json.as_ref().map(dynamic).unwrap_or(Value::Null)),
            ("namespaceObject", namespace.map(namespace_value).unwrap_or(Value::Null)),
            (
                "params",
                match (&owned, param) {
                    (Some(o), _) => dynamic_map(o),
                    (None, Some(p)) => dynamic_map(p),
                    (None, None) => Value::Null,
                },
            ),
        ];
        let result = validate(policy, base);
        for (i, decision) in result.decisions.iter().enumerate() {
            if !decision.deny {
                continue;
            }
            for action in &actions {
                match *action {
                    "Deny" => out.denials.push(denial(decision.message.clone(), decision.reason.clone())),
                    "Warn" => out.warnings.push(format!(
                        "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{binding_name}': {}",
                        policy.name, decision.message
                    )),
                    "Audit" => out.validation_failures.push(validation_failure(
                        &decision.message,
                        policy,
                        spec,
                        &binding_name,
                        i,
                        &actions,
                    )),
                    _ => {}
                }
            }
        }
        for annotation in result.audit_annotations {
            match annotation {
                AuditAnnotationResult::Publish(key, mut value) => {
                    if value.len() > MAX_AUDIT_ANNOTATION_VALUE_LENGTH {
                        let mut end = MAX_AUDIT_ANNOTATION_VALUE_LENGTH;
                        while !value.is_char_boundary(end) {
                            end -= 1;
                        }
                        value.truncate(end);
                    }
                    out.audit_annotations.push((key, value));
                }
                AuditAnnotationResult::Error(e) => out.denials.push(denial(e, None)),
                AuditAnnotationResult::Exclude => {}
            }
        }
    }
    out
}

/// The JSON of a `validation_failure` audit annotation (a list of one failure, in
/// Go's field order and escaping).
fn validation_failure(
    message: &str,
    policy: &CompiledPolicy,
    spec: Option<&Json>,
    binding: &str,
    index: usize,
    actions: &[&str],
) -> String {
    let policy_name = spec
        .and_then(|s| s.get("policyName"))
        .and_then(Json::as_str)
        .unwrap_or(&policy.name);
    let actions: Vec<String> = actions.iter().map(|a| go_json_string(a)).collect();
    format!(
        "[{{\"message\":{},\"policy\":{},\"binding\":{},\"expressionIndex\":{index},\"validationActions\":[{}]}}]",
        go_json_string(message),
        go_json_string(policy_name),
        go_json_string(binding),
        actions.join(",")
    )
}

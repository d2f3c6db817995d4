//! The evaluator: walks a checked expression against `self` (and `oldSelf`),
//! dispatching each call to the first of its checked overloads whose parameters the
//! evaluated arguments fit, and charging cost as it goes the way cel-go's cost
//! tracker does (identifiers and selections 1, literals 0, list and map literals 10
//! and 30, each call its own cost). Past the per-call limit the evaluation stops.
//!
//! `&&` and `||` are commutative over errors: `false && error` is `false` whichever
//! side errs, and an error only surfaces when no side decides the result.

use super::ast::{Expr, ExprKind, Literal, ACCUMULATOR};
use super::checker::{Checked, Reference};
use super::cost::call_cost;
use super::lib::{value_matches, Overload};
use super::stack::StackGuard;
use super::value::{List, Map, Str, Value};
use std::rc::Rc;

/// A checked expression, ready to run.
#[derive(Debug)]
pub struct Program {
    pub expr: Expr,
    pub checked: Checked,
}

/// The variables a rule sees.
#[derive(Clone, Debug)]
pub struct Activation<'a> {
    pub self_value: Value<'a>,
    /// `None` when the rule has no old value to see (creates, uncorrelated values).
    pub old_self: Option<Value<'a>>,
    /// Other variables by name (the admission environment's `object`, `request`,
    /// ...); empty for CRD rules.
    pub named: Vec<(&'static str, Value<'a>)>,
}

impl<'a> Activation<'a> {
    /// An activation of named variables only (no `self`).
    pub fn named(named: Vec<(&'static str, Value<'a>)>) -> Activation<'a> {
        Activation {
            self_value: Value::Null,
            old_self: None,
            named,
        }
    }
}

/// The evaluation went past its cost limit.
#[derive(Debug, PartialEq, Eq)]
pub struct CostLimitExceeded;

/// The result of one evaluation and what it cost.
#[derive(Debug)]
pub struct Outcome<'a> {
    pub value: Result<Value<'a>, CostLimitExceeded>,
    pub cost: u64,
}

/// cel-go's message when a program runs past its cost limit.
pub const COST_LIMIT_MESSAGE: &str = "operation cancelled: actual cost limit exceeded";

impl Program {
    /// Evaluate against `activation`; the program and the values it sees are borrowed
    /// for the same time, so string literals are read in place.
    pub fn eval<'a>(&'a self, activation: &Activation<'a>, limit: u64) -> Outcome<'a> {
        let mut ev = Evaluator {
            program: self,
            activation,
            locals: Vec::new(),
            scratch: Vec::new(),
            cost: 0,
            limit,
            guard: StackGuard::new(),
        };
        let value = ev.eval(&self.expr);
        Outcome { value, cost: ev.cost }
    }
}

struct Evaluator<'v, 'a> {
    program: &'a Program,
    activation: &'v Activation<'a>,
    locals: Vec<(&'a str, Value<'a>)>,
    /// Evaluated arguments of the calls under way.
    scratch: Vec<Value<'a>>,
    cost: u64,
    limit: u64,
    guard: StackGuard,
}

type EvalResult<'a> = Result<Value<'a>, CostLimitExceeded>;

impl<'a> Evaluator<'_, 'a> {
    fn charge(&mut self, cost: u64) -> Result<(), CostLimitExceeded> {
        self.cost = self.cost.saturating_add(cost);
        if self.cost > self.limit {
            Err(CostLimitExceeded)
        } else {
            Ok(())
        }
    }

    fn eval(&mut self, e: &'a Expr) -> EvalResult<'a> {
        if self.guard.exhausted() {
            return Ok(Value::error("max recursion depth exceeded"));
        }
        match &e.kind {
            ExprKind::Literal(lit) => Ok(literal(lit)),
            ExprKind::Ident(name) => {
                self.charge(1)?;
                Ok(self.ident(e.id, name))
            }
            ExprKind::Select {
                operand,
                field,
                test_only,
            } => {
                let target = self.eval(operand)?;
                if !*test_only {
                    self.charge(1)?;
                }
                Ok(select(&target, field, *test_only))
            }
            ExprKind::Call { function, target, args } => self.call(e.id, function, target.as_deref(), args),
            ExprKind::List { elements, optional } => {
                let mut out = Vec::with_capacity(elements.len());
                for (i, el) in elements.iter().enumerate() {
                    let v = self.eval(el)?;
                    if v.is_error() {
                        return Ok(v);
                    }
                    if optional.contains(&i) {
                        match v {
                            Value::Optional(Some(inner)) => out.push((*inner).clone()),
                            Value::Optional(None) => {}
                            other => out.push(other),
                        }
                    } else {
                        out.push(v);
                    }
                }
                self.charge(10)?;
                Ok(Value::list(out))
            }
            ExprKind::Map { entries } => {
                let mut out: Vec<(Value<'a>, Value<'a>)> = Vec::with_capacity(entries.len());
                for entry in entries {
                    let k = self.eval(&entry.key)?;
                    if k.is_error() {
                        return Ok(k);
                    }
                    let v = self.eval(&entry.value)?;
                    if v.is_error() {
                        return Ok(v);
                    }
                    if !matches!(k, Value::String(_) | Value::Int(_) | Value::Uint(_) | Value::Bool(_)) {
                        return Ok(Value::error(format!("unsupported key type: {}", k.type_name())));
                    }
                    let v = if entry.optional {
                        match v {
                            Value::Optional(Some(inner)) => (*inner).clone(),
                            Value::Optional(None) => continue,
                            other => other,
                        }
                    } else {
                        v
                    };
                    if out.iter().any(|(ek, _)| ek.eq_bool(&k)) {
                        return Ok(Value::error(format!("Failed with repeated key: {k}")));
                    }
                    out.push((k, v));
                }
                self.charge(30)?;
                Ok(Value::Map(Map::Owned(Rc::new(out))))
            }
            ExprKind::Struct { .. } => Ok(Value::error("message creation is not supported")),
            ExprKind::Comprehension(c) => {
                let range = self.eval(&c.iter_range)?;
                if range.is_error() {
                    return Ok(range);
                }
                let mut accu = self.eval(&c.accu_init)?;
                let items: Vec<(Value<'a>, Value<'a>)> = match &range {
                    Value::List(l) => l
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (Value::Int(i as i64), v))
                        .collect(),
                    Value::Map(m) => m.keys().into_iter().map(|k| (k.clone(), k)).collect(),
                    _ => return Ok(Value::no_such_overload()),
                };
                let is_map = matches!(range, Value::Map(_));
                for (first, second) in items {
                    let base = self.locals.len();
                    // The accumulator moves into the scope (no second reference), so
                    // `@result + [x]` can append in place (see `accumulate`).
                    self.locals.push((&c.accu_var, accu));
                    match &c.iter_var2 {
                        Some(v2) => {
                            let value = if is_map {
                                match &range {
                                    Value::Map(m) => m.find(&first).unwrap_or(Value::Null),
                                    _ => Value::Null,
                                }
                            } else {
                                second
                            };
                            self.locals.push((&c.iter_var, first));
                            self.locals.push((v2, value));
                        }
                        None => self.locals.push((&c.iter_var, second)),
                    }
                    let cond = self.eval(&c.loop_condition);
                    let go_on = match cond {
                        Ok(Value::Bool(false)) => false,
                        Ok(_) => true,
                        Err(e) => {
                            self.locals.truncate(base);
                            return Err(e);
                        }
                    };
                    if !go_on {
                        accu = std::mem::replace(&mut self.locals[base].1, Value::Null);
                        self.locals.truncate(base);
                        break;
                    }
                    let step = self.eval(&c.loop_step);
                    self.locals.truncate(base);
                    accu = step?;
                }
                self.locals.push((&c.accu_var, accu));
                let result = self.eval(&c.result);
                self.locals.pop();
                result
            }
        }
    }

    fn ident(&self, id: u32, name: &str) -> Value<'a> {
        if let Some((_, v)) = self.locals.iter().rev().find(|(n, _)| *n == name) {
            return v.clone();
        }
        match self.program.checked.refs.get(id as usize) {
            Some(Reference::TypeName(t)) => return Value::Type(Rc::from(type_value_name(t))),
            Some(Reference::Var) | None | Some(_) => {}
        }
        if let Some((_, v)) = self.activation.named.iter().find(|(n, _)| *n == name) {
            return v.clone();
        }
        match name {
            "self" => self.activation.self_value.clone(),
            "oldSelf" => match &self.activation.old_self {
                Some(v) => v.clone(),
                None => Value::error("no such attribute(s): oldSelf"),
            },
            _ => Value::error(format!("no such attribute(s): {name}")),
        }
    }

    fn call(&mut self, id: u32, function: &str, target: Option<&'a Expr>, args: &'a [Expr]) -> EvalResult<'a> {
        match function {
            "_&&_" | "_||_" => {
                let stop = function == "_||_";
                let mut error: Option<Value<'a>> = None;
                for arg in args {
                    match self.eval(arg)? {
                        Value::Bool(b) if b == stop => return Ok(Value::Bool(stop)),
                        Value::Bool(_) => {}
                        Value::Error(e) => {
                            error.get_or_insert(Value::Error(e));
                        }
                        _ => {
                            error.get_or_insert(Value::no_such_overload());
                        }
                    }
                }
                return Ok(error.unwrap_or(Value::Bool(!stop)));
            }
            "_?_:_" => {
                return match self.eval(&args[0])? {
                    Value::Bool(true) => self.eval(&args[1]),
                    Value::Bool(false) => self.eval(&args[2]),
                    e @ Value::Error(_) => Ok(e),
                    _ => Ok(Value::no_such_overload()),
                };
            }
            "@not_strictly_false" => {
                let v = self.eval(&args[0])?;
                self.charge(1)?;
                return Ok(match v {
                    Value::Bool(b) => Value::Bool(b),
                    _ => Value::Bool(true),
                });
            }
            "or" | "orValue" if target.is_some() => {
                let t = self.eval(target.expect("checked above"))?;
                match t {
                    Value::Optional(Some(v)) => {
                        return Ok(if function == "or" { Value::Optional(Some(v)) } else { (*v).clone() });
                    }
                    Value::Optional(None) => return self.eval(&args[0]),
                    // Not an optional: fall through to ordinary dispatch.
                    _ => {}
                }
            }
            _ => {}
        }
        if let Some(v) = self.accumulate(id, function, target, args)? {
            return Ok(v);
        }
        // Arguments go on a scratch stack shared by all calls (no allocation per call).
        let base = self.scratch.len();
        let outcome = self.call_with_scratch(id, function, target, args, base);
        self.scratch.truncate(base);
        outcome
    }

    fn call_with_scratch(
        &mut self,
        id: u32,
        function: &str,
        target: Option<&'a Expr>,
        args: &'a [Expr],
        base: usize,
    ) -> EvalResult<'a> {
        if let Some(t) = target {
            let v = self.eval(t)?;
            self.scratch.push(v);
        }
        for arg in args {
            let v = self.eval(arg)?;
            self.scratch.push(v);
        }
        let values = &self.scratch[base..];
        // Errors propagate: the first erroneous argument is the result.
        if let Some(err) = values.iter().find(|v| v.is_error()) {
            return Ok(err.clone());
        }
        let Some((overload, imp)) = self.resolve(id, values) else {
            return Ok(no_such_overload(function, values));
        };
        let result = imp(values);
        let cost = call_cost(function, overload.id, values, &result);
        self.charge(cost)?;
        Ok(result)
    }
}

impl<'a> Evaluator<'_, 'a> {
    /// The first of the call's checked overloads whose parameters the evaluated
    /// arguments fit, and its implementation.
    fn resolve(&self, id: u32, values: &[Value<'a>]) -> Option<(&'static Overload, super::lib::Imp)> {
        let overloads: &[&'static Overload] = match self.program.checked.refs.get(id as usize) {
            Some(Reference::Overloads(o)) => o,
            _ => &[],
        };
        let overload = overloads
            .iter()
            .find(|o| o.params.len() == values.len() && o.params.iter().zip(values).all(|(t, v)| value_matches(v, t)))?;
        Some((overload, overload.imp?))
    }

    /// `@result + [x]` and `cel.@mapInsert(@result, k, v)` of the projection macros:
    /// the accumulator is taken out of its scope and extended in place, so building a
    /// list of n elements costs n steps, not n² copies. `None` when the call is not
    /// one of these or the accumulator is shared.
    fn accumulate(
        &mut self,
        id: u32,
        function: &str,
        target: Option<&'a Expr>,
        args: &'a [Expr],
    ) -> Result<Option<Value<'a>>, CostLimitExceeded> {
        if target.is_some() || !matches!(function, "_+_" | "cel.@mapInsert") {
            return Ok(None);
        }
        let Some(ExprKind::Ident(name)) = args.first().map(|a| &a.kind) else {
            return Ok(None);
        };
        if name != ACCUMULATOR {
            return Ok(None);
        }
        let Some(slot) = self.locals.iter().rposition(|(n, _)| *n == name.as_str()) else {
            return Ok(None);
        };
        let unique = match &self.locals[slot].1 {
            Value::List(List::Owned(rc)) => Rc::strong_count(rc) == 1 && function == "_+_",
            Value::Map(Map::Owned(rc)) => Rc::strong_count(rc) == 1 && function == "cel.@mapInsert",
            _ => false,
        };
        if !unique {
            return Ok(None);
        }
        let mut accu = std::mem::replace(&mut self.locals[slot].1, Value::Null);
        self.charge(1)?;
        let mut rest = Vec::with_capacity(args.len() - 1);
        for arg in &args[1..] {
            let v = self.eval(arg)?;
            if v.is_error() {
                return Ok(Some(v));
            }
            rest.push(v);
        }
        let result = match (&mut accu, rest.as_slice()) {
            (Value::List(List::Owned(rc)), [Value::List(more)]) => {
                let items = Rc::get_mut(rc).expect("checked unique");
                items.extend(more.iter());
                accu
            }
            (Value::Map(Map::Owned(rc)), [key, value]) => {
                let entries = Rc::get_mut(rc).expect("checked unique");
                if entries.iter().any(|(k, _)| k.eq_bool(key)) {
                    Value::error(format!("insert failed: key {key} already exists"))
                } else {
                    entries.push((key.clone(), value.clone()));
                    accu
                }
            }
            _ => {
                // Another overload: dispatch as usual with the accumulator back in front.
                let mut values = vec![accu];
                values.extend(rest);
                match self.resolve(id, &values) {
                    Some((_, imp)) => imp(&values),
                    None => no_such_overload(function, &values),
                }
            }
        };
        self.charge(1)?;
        Ok(Some(result))
    }
}

/// The error of a call no overload fits at run time, as cel-go words it: operators
/// (one implementation over the arguments' traits) say only "no such overload",
/// functions name themselves and the arguments' types.
fn no_such_overload<'a>(function: &str, values: &[Value<'a>]) -> Value<'a> {
    if function.starts_with('_') || function.starts_with('@') || function == "!_" || function == "-_" {
        return Value::no_such_overload();
    }
    let types: Vec<&str> = values.iter().map(Value::type_name).collect();
    Value::error(format!("no such overload: {function}({})", types.join(", ")))
}

fn literal<'a>(lit: &'a Literal) -> Value<'a> {
    match lit {
        Literal::Null => Value::Null,
        Literal::Bool(b) => Value::Bool(*b),
        Literal::Int(i) => Value::Int(*i),
        Literal::Uint(u) => Value::Uint(*u),
        Literal::Double(d) => Value::Double(*d),
        Literal::String(s) => Value::String(Str::Borrowed(s)),
        Literal::Bytes(b) => Value::Bytes(Rc::from(b.as_slice())),
    }
}

/// The name `type()` gives values of the type an identifier names.
fn type_value_name(ident: &str) -> &str {
    match ident {
        "google.protobuf.Duration" | "google.protobuf.Timestamp" => ident,
        other => other,
    }
}

/// `operand.field`, or `has(operand.field)`.
fn select<'a>(target: &Value<'a>, field: &str, test_only: bool) -> Value<'a> {
    match target {
        Value::Error(_) => target.clone(),
        Value::Map(m) => match m.find_str(field) {
            Some(v) if test_only => {
                let _ = v;
                Value::Bool(true)
            }
            Some(v) => v,
            None if test_only => Value::Bool(false),
            None => Value::error(format!("no such key: {field}")),
        },
        Value::Optional(opt) => match opt {
            None => Value::Optional(None),
            Some(inner) => match select(inner, field, test_only) {
                Value::Error(_) if !test_only => Value::Optional(None),
                v => Value::Optional(Some(Rc::new(v))),
            },
        },
        _ => Value::no_such_overload(),
    }
}

/// `operand.?field`: the field if present, as an optional.
pub(super) fn optional_select<'a>(target: &Value<'a>, field: &str) -> Value<'a> {
    match target {
        Value::Map(m) => match m.find_str(field) {
            Some(v) => Value::Optional(Some(Rc::new(v))),
            None => Value::Optional(None),
        },
        Value::Optional(None) => Value::Optional(None),
        Value::Optional(Some(inner)) => optional_select(inner, field),
        Value::Error(_) => target.clone(),
        _ => Value::no_such_overload(),
    }
}

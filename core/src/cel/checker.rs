//! Type-checking, as cel-go's checker does it: every identifier must be declared,
//! every field selected must exist on its object type, every call must match one
//! overload of its function (type parameters bound across arguments), list and map
//! literals must be homogeneous. Errors carry cel-go's wording and the position of
//! the offending node; the result records each node's type and each call's matching
//! overloads, which the cost estimator and the evaluator use.

use super::ast::{Expr, ExprKind, Literal, SourceInfo};
use super::decl::DeclType;
use super::issues::Issues;
use super::lib::{Library, Overload};
use super::stack::StackGuard;
use super::types::{most_general, Mapping, Type};
use std::collections::HashMap;
use std::sync::Arc;

/// What an identifier or call resolved to.
#[derive(Clone, Debug, Default)]
pub enum Reference {
    #[default]
    None,
    /// A variable (`self`, an iteration variable).
    Var,
    /// A type name used as a value (`int`).
    TypeName(String),
    /// The overloads a call may dispatch to.
    Overloads(Vec<&'static Overload>),
}

/// The checked form of an expression.
#[derive(Debug)]
pub struct Checked {
    /// Type of each node, by id.
    pub types: Vec<Type>,
    pub refs: Vec<Reference>,
    /// Whether the expression reads `oldSelf` (a transition rule).
    pub uses_old_self: bool,
}

impl Checked {
    pub fn type_of(&self, id: u32) -> &Type {
        self.types.get(id as usize).unwrap_or(&Type::Dyn)
    }
}

/// The declarations an expression is checked against.
pub struct Env<'d> {
    /// Variables (`self`, `oldSelf`) and their types.
    pub variables: Vec<(&'static str, Type)>,
    /// Object types by name, for field selection.
    pub objects: HashMap<String, &'d Arc<DeclType>>,
    /// Object types declared by their fields rather than by a schema node (the
    /// admission environment's `kubernetes.AdmissionRequest`, `variables`).
    pub structs: HashMap<String, Vec<(String, Type)>>,
}

/// The type a type name denotes when used as a value (`int`, `list`).
fn type_ident(name: &str) -> Option<Type> {
    let t = match name {
        "bool" => Type::Bool,
        "bytes" => Type::Bytes,
        "double" => Type::Double,
        "int" => Type::Int,
        "list" => Type::list(Type::Dyn),
        "map" => Type::map(Type::Dyn, Type::Dyn),
        "null_type" => Type::Null,
        "string" => Type::String,
        "type" => Type::Type(None),
        "uint" => Type::Uint,
        "google.protobuf.Duration" => Type::Duration,
        "google.protobuf.Timestamp" => Type::Timestamp,
        _ => return None,
    };
    Some(Type::Type(Some(Box::new(t))))
}

pub fn check(expr: &mut Expr, source: &SourceInfo, next_id: u32, env: &Env) -> Result<Checked, Issues> {
    let mut c = Checker {
        env,
        lib: Library::get(),
        source,
        types: vec![Type::Dyn; next_id as usize],
        refs: vec![Reference::None; next_id as usize],
        mapping: Mapping::default(),
        scopes: Vec::new(),
        issues: Issues::default(),
        fresh: 0,
        uses_old_self: false,
        guard: StackGuard::new(),
    };
    c.check(expr);
    if !c.issues.is_empty() {
        return Err(c.issues);
    }
    let Checker {
        mut types,
        refs,
        mapping,
        uses_old_self,
        ..
    } = c;
    for t in types.iter_mut() {
        *t = mapping.substitute(t, true);
    }
    let checked = Checked {
        types,
        refs,
        uses_old_self,
    };
    let mut issues = Issues::default();
    homogeneous_literals(expr, &checked, source, &mut issues);
    literal_arguments(expr, source, &mut issues);
    if issues.is_empty() {
        Ok(checked)
    } else {
        Err(issues)
    }
}

struct Checker<'e, 'd> {
    env: &'e Env<'d>,
    lib: &'static Library,
    source: &'e SourceInfo,
    types: Vec<Type>,
    refs: Vec<Reference>,
    mapping: Mapping,
    /// Comprehension variables, innermost last.
    scopes: Vec<(String, Type)>,
    issues: Issues,
    fresh: usize,
    uses_old_self: bool,
    guard: StackGuard,
}

impl Checker<'_, '_> {
    fn offset(&self, id: u32) -> Option<u32> {
        self.source.offset_of(id)
    }

    fn error(&mut self, id: u32, message: String) {
        let offset = self.offset(id);
        self.issues.push(offset, message);
    }

    fn set_type(&mut self, id: u32, t: Type) {
        if let Some(slot) = self.types.get_mut(id as usize) {
            *slot = t;
        }
    }

    fn get_type(&self, id: u32) -> Type {
        self.types.get(id as usize).cloned().unwrap_or(Type::Dyn)
    }

    fn set_ref(&mut self, id: u32, r: Reference) {
        if let Some(slot) = self.refs.get_mut(id as usize) {
            *slot = r;
        }
    }

    fn fresh_var(&mut self) -> Type {
        let t = Type::Param(format!("_var{}", self.fresh));
        self.fresh += 1;
        t
    }

    fn lookup_ident(&self, name: &str) -> Option<(Type, Reference)> {
        if let Some((_, t)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return Some((t.clone(), Reference::Var));
        }
        if let Some((_, t)) = self.env.variables.iter().find(|(n, _)| *n == name) {
            return Some((t.clone(), Reference::Var));
        }
        type_ident(name).map(|t| (t, Reference::TypeName(name.to_owned())))
    }

    fn check(&mut self, e: &mut Expr) {
        let id = e.id;
        if self.guard.exhausted() {
            self.set_type(id, Type::Error);
            self.error(id, "max recursion depth exceeded".to_owned());
            return;
        }
        match &mut e.kind {
            ExprKind::Literal(lit) => {
                let t = match lit {
                    Literal::Null => Type::Null,
                    Literal::Bool(_) => Type::Bool,
                    Literal::Int(_) => Type::Int,
                    Literal::Uint(_) => Type::Uint,
                    Literal::Double(_) => Type::Double,
                    Literal::String(_) => Type::String,
                    Literal::Bytes(_) => Type::Bytes,
                };
                self.set_type(id, t);
            }
            ExprKind::Ident(name) => {
                let name = name.clone();
                match self.lookup_ident(&name) {
                    Some((t, r)) => {
                        if name == "oldSelf" && matches!(r, Reference::Var) && !self.scopes.iter().any(|(n, _)| n == "oldSelf") {
                            self.uses_old_self = true;
                        }
                        self.set_type(id, t);
                        self.set_ref(id, r);
                    }
                    None => {
                        self.set_type(id, Type::Error);
                        self.error(id, format!("undeclared reference to '{name}' (in container '')"));
                    }
                }
            }
            ExprKind::Select { .. } => self.check_select(e),
            ExprKind::Call { .. } => self.check_call(e),
            ExprKind::List { elements, optional } => {
                let optional = optional.clone();
                let mut elem_type: Option<Type> = None;
                for (i, el) in elements.iter_mut().enumerate() {
                    self.check(el);
                    let mut t = self.get_type(el.id);
                    if optional.contains(&i) {
                        match t.unwrap_optional() {
                            Some(inner) => t = inner.clone(),
                            None if t == Type::Dyn => {}
                            None => {
                                let msg = format!("expected type '{}' but found '{}'", Type::optional(t.clone()), t);
                                self.error(el.id, msg);
                            }
                        }
                    }
                    elem_type = Some(self.join_types(elem_type, t));
                }
                let elem = elem_type.unwrap_or_else(|| self.fresh_var());
                self.set_type(id, Type::list(elem));
            }
            ExprKind::Map { entries } => {
                let mut key_type: Option<Type> = None;
                let mut value_type: Option<Type> = None;
                for entry in entries.iter_mut() {
                    self.check(&mut entry.key);
                    let kt = self.get_type(entry.key.id);
                    key_type = Some(self.join_types(key_type, kt));
                    self.check(&mut entry.value);
                    let mut vt = self.get_type(entry.value.id);
                    if entry.optional {
                        match vt.unwrap_optional() {
                            Some(inner) => vt = inner.clone(),
                            None if vt == Type::Dyn => {}
                            None => {
                                let msg = format!("expected type '{}' but found '{}'", Type::optional(vt.clone()), vt);
                                self.error(entry.value.id, msg);
                            }
                        }
                    }
                    value_type = Some(self.join_types(value_type, vt));
                }
                let (k, v) = match (key_type, value_type) {
                    (Some(k), Some(v)) => (k, v),
                    _ => (self.fresh_var(), self.fresh_var()),
                };
                self.set_type(id, Type::map(k, v));
            }
            ExprKind::Struct { name, fields } => {
                for f in fields.iter_mut() {
                    self.check(&mut f.value);
                }
                let name = name.clone();
                self.set_type(id, Type::Error);
                self.error(id, format!("undeclared reference to '{name}' (in container '')"));
            }
            ExprKind::Comprehension(_) => self.check_comprehension(e),
        }
    }

    /// The element type of a literal so far and one more element: mixed literals are
    /// `dyn` to the checker; the homogeneity check after checking reports them.
    fn join_types(&mut self, previous: Option<Type>, current: Type) -> Type {
        let Some(previous) = previous else { return current };
        if self.mapping.is_assignable(&previous, &current) {
            return most_general(&previous, &current);
        }
        Type::Dyn
    }

    /// `a.b.c` as a qualified name, if it is a chain of identifiers.
    fn qualified_name(e: &Expr) -> Option<String> {
        match &e.kind {
            ExprKind::Ident(name) => Some(name.clone()),
            ExprKind::Select {
                operand,
                field,
                test_only: false,
            } => Self::qualified_name(operand).map(|q| format!("{q}.{field}")),
            _ => None,
        }
    }

    fn check_select(&mut self, e: &mut Expr) {
        let id = e.id;
        // A qualified identifier (`google.protobuf.Duration`) resolves as one name.
        if let Some(q) = Self::qualified_name(e) {
            if q.contains('.') && self.scopes.iter().all(|(n, _)| !q.starts_with(&format!("{n}."))) {
                if let Some(t) = type_ident(&q) {
                    self.set_type(id, t);
                    self.set_ref(id, Reference::TypeName(q.clone()));
                    e.kind = ExprKind::Ident(q);
                    return;
                }
            }
        }
        let ExprKind::Select {
            operand,
            field,
            test_only,
        } = &mut e.kind
        else {
            unreachable!("called on a select")
        };
        let field = field.clone();
        let test_only = *test_only;
        self.check(operand);
        let operand_type = self.mapping.substitute(&self.get_type(operand.id), false);
        let mut t = self.select_field_type(id, &operand_type, &field, false);
        if test_only {
            t = Type::Bool;
        }
        let t = self.mapping.substitute(&t, false);
        self.set_type(id, t);
    }

    fn select_field_type(&mut self, id: u32, operand_type: &Type, field: &str, optional: bool) -> Type {
        let (target, is_opt) = match operand_type.unwrap_optional() {
            Some(inner) => (inner.clone(), true),
            None => (operand_type.clone(), false),
        };
        let result = match &target {
            Type::Map(_, v) => (**v).clone(),
            Type::Object(name) if self.env.structs.contains_key(name) => {
                match self.env.structs[name].iter().find(|(f, _)| f == field) {
                    Some((_, t)) => t.clone(),
                    None => {
                        self.error(id, format!("undefined field '{field}'"));
                        Type::Error
                    }
                }
            }
            Type::Object(name) => match self.env.objects.get(name) {
                Some(decl) => match decl.field(field) {
                    Some(f) => f.decl.cel_type(),
                    None => {
                        self.error(id, format!("undefined field '{field}'"));
                        Type::Error
                    }
                },
                None => {
                    self.error(id, format!("undefined field '{field}'"));
                    Type::Error
                }
            },
            Type::Param(_) => {
                self.mapping.is_assignable(&Type::Dyn, &target);
                Type::Dyn
            }
            t if t.is_dyn_or_error() => Type::Dyn,
            other => {
                self.error(id, format!("type '{other}' does not support field selection"));
                Type::Dyn
            }
        };
        if is_opt || optional {
            Type::optional(result)
        } else {
            result
        }
    }

    fn check_call(&mut self, e: &mut Expr) {
        let id = e.id;
        let ExprKind::Call { function, target, args } = &mut e.kind else {
            unreachable!("called on a call")
        };
        let function = function.clone();
        if function == "_?._" {
            for arg in args.iter_mut() {
                self.check(arg);
            }
            let operand_type = self.mapping.substitute(&self.get_type(args[0].id), false);
            let field = match &args[1].kind {
                ExprKind::Literal(Literal::String(s)) => s.clone(),
                _ => {
                    self.error(args[1].id, "unsupported optional field selection".to_owned());
                    return;
                }
            };
            let t = self.select_field_type(id, &operand_type, &field, true);
            let t = self.mapping.substitute(&t, false);
            self.set_type(id, t);
            let overloads = self.lib.function("_?._").map(|f| f.overloads.iter().collect()).unwrap_or_default();
            self.set_ref(id, Reference::Overloads(overloads));
            return;
        }
        // `optional.none()`, `sets.contains(...)`: a member call on a qualified name
        // may be a namespaced global function.
        if let Some(t) = target.as_deref() {
            if let Some(q) = Self::qualified_name(t) {
                let qualified = format!("{q}.{function}");
                let shadowed = self.lookup_ident(q.split('.').next().unwrap_or("")).is_some();
                if !shadowed {
                    if let Some(f) = self.lib.function(&qualified) {
                        let mut args = std::mem::take(args);
                        for arg in args.iter_mut() {
                            self.check(arg);
                        }
                        self.resolve(id, f.name, &f.overloads, None, &args);
                        e.kind = ExprKind::Call {
                            function: qualified,
                            target: None,
                            args,
                        };
                        return;
                    }
                }
            }
        }
        for arg in args.iter_mut() {
            self.check(arg);
        }
        if let Some(t) = target.as_deref_mut() {
            self.check(t);
        }
        let Some(f) = self.lib.function(&function) else {
            self.set_type(id, Type::Error);
            self.error(id, format!("undeclared reference to '{function}' (in container '')"));
            return;
        };
        let target_type = target.as_deref().map(|t| t.id);
        let arg_ids: Vec<u32> = args.iter().map(|a| a.id).collect();
        self.resolve_ids(id, f.name, &f.overloads, target_type, &arg_ids);
    }

    fn resolve(&mut self, id: u32, name: &str, overloads: &'static [Overload], target: Option<u32>, args: &[Expr]) {
        let arg_ids: Vec<u32> = args.iter().map(|a| a.id).collect();
        self.resolve_ids(id, name, overloads, target, &arg_ids);
    }

    fn resolve_ids(&mut self, id: u32, name: &str, overloads: &'static [Overload], target: Option<u32>, args: &[u32]) {
        let mut arg_types: Vec<Type> = Vec::new();
        if let Some(t) = target {
            arg_types.push(self.get_type(t));
        }
        arg_types.extend(args.iter().map(|a| self.get_type(*a)));

        if name == "_&&_" || name == "_||_" {
            let mut ok = true;
            for (i, t) in arg_types.iter().enumerate() {
                if !self.mapping.is_assignable(&Type::Bool, t) {
                    let msg = format!("expected type 'bool' but found '{t}'");
                    self.error(args[i], msg);
                    ok = false;
                }
            }
            if ok {
                self.set_type(id, Type::Bool);
                self.set_ref(id, Reference::Overloads(overloads.iter().collect()));
            } else {
                self.set_type(id, Type::Error);
            }
            return;
        }

        let mut result: Option<Type> = None;
        let mut matched: Vec<&'static Overload> = Vec::new();
        for overload in overloads {
            if overload.member != target.is_some() || overload.params.len() != arg_types.len() {
                continue;
            }
            // Fresh type variables for this overload's parameters.
            let mut names: Vec<String> = Vec::new();
            for p in overload.params.iter().chain(std::iter::once(&overload.result)) {
                collect_params(p, &mut names);
            }
            let fresh: HashMap<String, Type> = names.into_iter().map(|n| (n, self.fresh_var())).collect();
            let params: Vec<Type> = overload.params.iter().map(|p| instantiate(p, &fresh)).collect();
            let result_type = instantiate(&overload.result, &fresh);
            if self.mapping.is_assignable_list(&params, &arg_types) {
                matched.push(overload);
                let r = self.mapping.substitute(&result_type, false);
                result = Some(match result {
                    None => r,
                    Some(prev) if prev == Type::Dyn || prev == r => prev,
                    Some(_) => Type::Dyn,
                });
            }
        }
        match result {
            Some(t) => {
                self.set_type(id, t);
                self.set_ref(id, Reference::Overloads(matched));
            }
            None => {
                let shown: Vec<String> = arg_types.iter().map(|t| self.mapping.substitute(t, true).to_string()).collect();
                let signature = if target.is_some() {
                    format!("{}.({})", shown[0], shown[1..].join(", "))
                } else {
                    format!("({})", shown.join(", "))
                };
                self.set_type(id, Type::Error);
                self.error(id, format!("found no matching overload for '{name}' applied to '{signature}'"));
            }
        }
    }

    fn check_comprehension(&mut self, e: &mut Expr) {
        let id = e.id;
        let ExprKind::Comprehension(c) = &mut e.kind else {
            unreachable!("called on a comprehension")
        };
        self.check(&mut c.iter_range);
        self.check(&mut c.accu_init);
        let range_type = self.mapping.substitute(&self.get_type(c.iter_range.id), false);
        let accu_type = self.get_type(c.accu_init.id);
        self.scopes.push((c.accu_var.clone(), accu_type.clone()));
        let two = c.iter_var2.is_some();
        let (var_type, var2_type) = match &range_type {
            Type::List(elem) => {
                if two {
                    (Type::Int, (**elem).clone())
                } else {
                    ((**elem).clone(), Type::Dyn)
                }
            }
            Type::Map(k, v) => ((**k).clone(), (**v).clone()),
            Type::Dyn | Type::Error | Type::Param(_) => {
                self.mapping.is_assignable(&Type::Dyn, &range_type);
                (Type::Dyn, Type::Dyn)
            }
            other => {
                let msg = format!(
                    "expression of type '{other}' cannot be range of a comprehension (must be list, map, or dynamic)"
                );
                self.error(c.iter_range.id, msg);
                (Type::Error, Type::Error)
            }
        };
        self.scopes.push((c.iter_var.clone(), var_type));
        if let Some(v2) = &c.iter_var2 {
            self.scopes.push((v2.clone(), var2_type));
        }
        self.check(&mut c.loop_condition);
        self.assert_type(c.loop_condition.id, &Type::Bool);
        self.check(&mut c.loop_step);
        self.assert_type(c.loop_step.id, &accu_type);
        self.scopes.pop();
        if two {
            self.scopes.pop();
        }
        self.check(&mut c.result);
        self.scopes.pop();
        let t = self.mapping.substitute(&self.get_type(c.result.id), false);
        self.set_type(id, t);
    }

    fn assert_type(&mut self, id: u32, t: &Type) {
        let actual = self.get_type(id);
        if !self.mapping.is_assignable(t, &actual) {
            let msg = format!("expected type '{t}' but found '{actual}'");
            self.error(id, msg);
        }
    }
}

/// `t` with its type parameters replaced by the given variables.
fn instantiate(t: &Type, fresh: &HashMap<String, Type>) -> Type {
    match t {
        Type::Param(n) => fresh.get(n).cloned().unwrap_or_else(|| t.clone()),
        Type::List(e) => Type::list(instantiate(e, fresh)),
        Type::Map(k, v) => Type::map(instantiate(k, fresh), instantiate(v, fresh)),
        Type::Opaque(name, ps) => Type::Opaque(name.clone(), ps.iter().map(|p| instantiate(p, fresh)).collect()),
        Type::Type(Some(inner)) => Type::Type(Some(Box::new(instantiate(inner, fresh)))),
        other => other.clone(),
    }
}

fn collect_params(t: &Type, out: &mut Vec<String>) {
    match t {
        Type::Param(n) => {
            if !out.contains(n) {
                out.push(n.clone());
            }
        }
        Type::List(e) => collect_params(e, out),
        Type::Map(k, v) => {
            collect_params(k, out);
            collect_params(v, out);
        }
        Type::Opaque(_, ps) => ps.iter().for_each(|p| collect_params(p, out)),
        Type::Type(Some(t)) => collect_params(t, out),
        _ => {}
    }
}

/// Types are "equivalent" for the homogeneity check when equal, treating parameters
/// as `dyn` (cel-go's `IsEquivalentType`).
fn equivalent(a: &Type, b: &Type) -> bool {
    a == b
}

/// cel-go's homogeneous-aggregate-literal validation: every element of a list
/// literal, every key and every value of a map literal, of one type (lists and maps
/// inside `format()` arguments are exempt).
fn homogeneous_literals(e: &Expr, checked: &Checked, source: &SourceInfo, issues: &mut Issues) {
    fn walk(e: &Expr, checked: &Checked, source: &SourceInfo, issues: &mut Issues, exempt: bool) {
        let exempt = exempt || matches!(&e.kind, ExprKind::Call { function, .. } if function == "format");
        if !exempt {
            match &e.kind {
                ExprKind::List { elements, optional } => {
                    let mut first: Option<Type> = None;
                    for (i, el) in elements.iter().enumerate() {
                        let mut t = checked.type_of(el.id).clone();
                        if optional.contains(&i) {
                            if let Some(inner) = t.unwrap_optional() {
                                t = inner.clone();
                            }
                        }
                        match &first {
                            None => first = Some(t),
                            Some(f) if !equivalent(f, &t) => {
                                issues.push(source.offset_of(el.id), format!("expected type '{f}' but found '{t}'"));
                                break;
                            }
                            _ => {}
                        }
                    }
                }
                ExprKind::Map { entries } => {
                    let mut first: Option<(Type, Type)> = None;
                    for entry in entries {
                        let kt = checked.type_of(entry.key.id).clone();
                        let mut vt = checked.type_of(entry.value.id).clone();
                        if entry.optional {
                            if let Some(inner) = vt.unwrap_optional() {
                                vt = inner.clone();
                            }
                        }
                        match &first {
                            None => first = Some((kt, vt)),
                            Some((fk, fv)) => {
                                if !equivalent(fk, &kt) {
                                    issues.push(source.offset_of(entry.key.id), format!("expected type '{fk}' but found '{kt}'"));
                                }
                                if !equivalent(fv, &vt) {
                                    issues.push(source.offset_of(entry.value.id), format!("expected type '{fv}' but found '{vt}'"));
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        for child in e.children() {
            walk(child, checked, source, issues, exempt);
        }
    }
    walk(e, checked, source, issues, false);
}

/// cel-go's literal validators (Kubernetes enables them from 1.29): a constant
/// argument of `duration()`, `timestamp()` and `matches()` must be valid.
fn literal_arguments(e: &Expr, source: &SourceInfo, issues: &mut Issues) {
    if let ExprKind::Call { function, target, args } = &e.kind {
        let literal = |i: usize| match args.get(i).map(|a| &a.kind) {
            Some(ExprKind::Literal(Literal::String(s))) => Some((s.as_str(), args[i].id)),
            _ => None,
        };
        match (function.as_str(), target.is_some()) {
            ("duration", false) => {
                if let Some((s, id)) = literal(0) {
                    if super::time::parse_duration(s).is_none() {
                        issues.push(source.offset_of(id), "invalid duration argument");
                    }
                }
            }
            ("timestamp", false) => {
                if let Some((s, id)) = literal(0) {
                    if super::time::parse_date_time(s).is_none() {
                        issues.push(source.offset_of(id), "invalid timestamp argument");
                    }
                }
            }
            ("matches", _) => {
                let index = if target.is_some() { 0 } else { 1 };
                if let Some((s, id)) = literal(index) {
                    if super::lib::compile_regex(s).is_err() {
                        issues.push(source.offset_of(id), "invalid matches argument");
                    }
                }
            }
            _ => {}
        }
    }
    for child in e.children() {
        literal_arguments(child, source, issues);
    }
}

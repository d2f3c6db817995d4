//! What an expression costs: statically, the worst case cel-go's estimator computes
//! (upstream refuses a CRD whose rule is estimated past its limits), and at run
//! time, what each call costs as cel-go's tracker and Kubernetes' library count it.
//!
//! The static estimate works on the checked expression: each node gets a path from
//! `self` (`self.spec.items.@items`), sizes come from the schema along that path
//! (the `maxLength`/`maxItems`/`maxProperties` limits, or what fits in the largest
//! request), and each call is charged by its overload's rule (string traversals at
//! 0.1 per character, regexes at 0.25 per pattern character, comprehensions the
//! range's size times the cost of an iteration).

use super::ast::{Expr, ExprKind, Literal, ACCUMULATOR};
use super::checker::{Checked, Reference};
use super::decl::DeclType;
use super::lib::Overload;
use super::stack::StackGuard;
use super::types::Type;
use super::value::Value;
use std::collections::HashMap;

const STRING_TRAVERSAL_COST_FACTOR: f64 = 0.1;
const REGEX_STRING_LENGTH_COST_FACTOR: f64 = 0.25;
const SELECT_AND_IDENT_COST: u64 = 1;
const LIST_CREATE_BASE_COST: u64 = 10;
const MAP_CREATE_BASE_COST: u64 = 30;
const STRUCT_CREATE_BASE_COST: u64 = 40;
/// The largest regex of a named format (`format.dns1123Label()`...).
pub const MAX_NAME_FORMAT_REGEX_SIZE: u64 = 128;

/// A range of sizes or costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub min: u64,
    pub max: u64,
}

const UNKNOWN: Estimate = Estimate { min: 0, max: u64::MAX };

impl Estimate {
    pub const fn fixed(v: u64) -> Estimate {
        Estimate { min: v, max: v }
    }

    fn add(self, o: Estimate) -> Estimate {
        Estimate {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    fn multiply(self, o: Estimate) -> Estimate {
        Estimate {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }

    fn factor(self, f: f64) -> Estimate {
        Estimate {
            min: multiply_by_factor(self.min, f),
            max: multiply_by_factor(self.max, f),
        }
    }

    fn union(self, o: Estimate) -> Estimate {
        Estimate {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

fn multiply_by_factor(x: u64, f: f64) -> u64 {
    let xf = x as f64;
    if xf > 0.0 && f > 0.0 && xf > u64::MAX as f64 / f {
        return u64::MAX;
    }
    let c = (xf * f).ceil();
    if c >= 18_446_744_073_709_551_616.0 {
        u64::MAX
    } else {
        c as u64
    }
}

/// Sizes of the entries of a list or map built by the expression.
#[derive(Clone, Copy, Debug)]
struct EntrySize {
    is_list: bool,
    key: Estimate,
    val: Estimate,
}

#[derive(Clone, Debug)]
struct LocalVar {
    path: Vec<String>,
    size: Option<Estimate>,
    entry: Option<EntrySize>,
}

/// The worst-case cost of `expr` evaluated against a node of type `root`.
pub fn estimate(expr: &Expr, checked: &Checked, root: &DeclType) -> Estimate {
    let mut c = Coster {
        checked,
        root,
        paths: HashMap::new(),
        sizes: HashMap::new(),
        entries: HashMap::new(),
        locals: HashMap::new(),
        guard: StackGuard::new(),
    };
    c.cost(expr)
}

struct Coster<'c> {
    checked: &'c Checked,
    root: &'c DeclType,
    paths: HashMap<u32, Vec<String>>,
    sizes: HashMap<u32, Estimate>,
    entries: HashMap<u32, EntrySize>,
    locals: HashMap<String, Vec<LocalVar>>,
    guard: StackGuard,
}

/// What the cost rule of a call needs of an argument.
#[derive(Clone, Debug)]
struct Node {
    path: Option<Vec<String>>,
    ty: Type,
    size: Option<Estimate>,
    literal_int: Option<i64>,
}

impl Coster<'_> {
    fn ty(&self, e: &Expr) -> Type {
        self.checked.type_of(e.id).clone()
    }

    fn local(&self, name: &str) -> Option<&LocalVar> {
        self.locals.get(name).and_then(|s| s.last())
    }

    fn push_local(&mut self, name: &str, var: LocalVar) {
        self.locals.entry(name.to_owned()).or_default().push(var);
    }

    fn pop_local(&mut self, name: &str) {
        if let Some(s) = self.locals.get_mut(name) {
            s.pop();
        }
    }

    fn path(&self, e: &Expr) -> Vec<String> {
        if let ExprKind::Ident(name) = &e.kind {
            if let Some(v) = self.local(name) {
                return v.path.clone();
            }
        }
        self.paths.get(&e.id).cloned().unwrap_or_default()
    }

    fn cost(&mut self, e: &Expr) -> Estimate {
        if self.guard.exhausted() {
            // Too deep to estimate: assume the worst.
            return UNKNOWN;
        }
        match &e.kind {
            ExprKind::Literal(_) => Estimate::fixed(0),
            ExprKind::Ident(name) => {
                let path = match self.local(name) {
                    Some(v) => v.path.clone(),
                    None => vec![name.clone()],
                };
                self.paths.insert(e.id, path);
                Estimate::fixed(SELECT_AND_IDENT_COST)
            }
            ExprKind::Select {
                operand,
                field,
                test_only,
            } => {
                if *test_only {
                    // Kubernetes charges nothing for the presence test itself.
                    return self.cost(operand);
                }
                let mut sum = self.cost(operand);
                if matches!(self.ty(operand), Type::Map(..) | Type::Object(_) | Type::Param(_)) {
                    sum = sum.add(Estimate::fixed(SELECT_AND_IDENT_COST));
                }
                let mut path = self.path(operand);
                path.push(field.clone());
                self.paths.insert(e.id, path);
                sum
            }
            ExprKind::Call { .. } => self.cost_call(e),
            ExprKind::List { elements, .. } => {
                let mut sum = Estimate::fixed(0);
                let mut item = Estimate {
                    min: if elements.is_empty() { 0 } else { u64::MAX },
                    max: 0,
                };
                for el in elements {
                    sum = sum.add(self.cost(el));
                    item = item.union(self.size_or_unknown(el));
                }
                self.entries.insert(
                    e.id,
                    EntrySize {
                        is_list: true,
                        key: Estimate::fixed(1),
                        val: item,
                    },
                );
                sum.add(Estimate::fixed(LIST_CREATE_BASE_COST))
            }
            ExprKind::Map { entries } => {
                let mut sum = Estimate::fixed(0);
                let empty = entries.is_empty();
                let mut key = Estimate {
                    min: if empty { 0 } else { u64::MAX },
                    max: 0,
                };
                let mut val = key;
                for entry in entries {
                    sum = sum.add(self.cost(&entry.key));
                    sum = sum.add(self.cost(&entry.value));
                    key = key.union(self.size_or_unknown(&entry.key));
                    val = val.union(self.size_or_unknown(&entry.value));
                }
                self.entries.insert(e.id, EntrySize { is_list: false, key, val });
                sum.add(Estimate::fixed(MAP_CREATE_BASE_COST))
            }
            ExprKind::Struct { fields, .. } => {
                let mut sum = Estimate::fixed(0);
                for f in fields {
                    sum = sum.add(self.cost(&f.value));
                }
                sum.add(Estimate::fixed(STRUCT_CREATE_BASE_COST))
            }
            ExprKind::Comprehension(c) => {
                let is_bind = matches!(&c.iter_range.kind, ExprKind::List { elements, .. } if elements.is_empty())
                    && matches!(c.loop_condition.kind, ExprKind::Literal(Literal::Bool(false)))
                    && c.accu_var != "__result__";
                let mut sum = self.cost(&c.iter_range).add(self.cost(&c.accu_init));
                let accu = LocalVar {
                    path: self.path(&c.accu_init),
                    size: self.compute_size(&c.accu_init),
                    entry: self.entry_size(&c.accu_init),
                };
                self.push_local(&c.accu_var, accu);
                if is_bind {
                    sum = sum.add(self.cost(&c.result));
                    self.pop_local(&c.accu_var);
                    if let Some(s) = self.compute_size(&c.result) {
                        self.sizes.insert(e.id, s);
                    }
                    if let Some(en) = self.entry_size(&c.result) {
                        self.entries.insert(e.id, en);
                    }
                    return sum;
                }
                let range_entry = self.entry_size(&c.iter_range);
                let range_is_list = match range_entry {
                    Some(en) => en.is_list,
                    None => matches!(self.ty(&c.iter_range), Type::List(_)),
                };
                let range_path = self.path(&c.iter_range);
                let with = |s: &str| {
                    let mut p = range_path.clone();
                    p.push(s.to_owned());
                    p
                };
                match &c.iter_var2 {
                    Some(v2) => {
                        let key = LocalVar {
                            path: with(if range_is_list { "@indices" } else { "@keys" }),
                            size: range_entry.map(|en| en.key),
                            entry: None,
                        };
                        let value = LocalVar {
                            path: with(if range_is_list { "@items" } else { "@values" }),
                            size: range_entry.map(|en| en.val),
                            entry: None,
                        };
                        self.push_local(&c.iter_var, key);
                        self.push_local(v2, value);
                    }
                    None => {
                        let single = if range_is_list {
                            LocalVar {
                                path: with("@items"),
                                size: range_entry.map(|en| en.val),
                                entry: None,
                            }
                        } else {
                            LocalVar {
                                path: with("@keys"),
                                size: range_entry.map(|en| en.key),
                                entry: None,
                            }
                        };
                        self.push_local(&c.iter_var, single);
                    }
                }
                let loop_cost = self.cost(&c.loop_condition);
                let step_cost = self.cost(&c.loop_step);
                self.pop_local(&c.iter_var);
                if let Some(v2) = &c.iter_var2 {
                    self.pop_local(v2);
                }
                sum = sum.add(self.cost(&c.result));
                self.pop_local(&c.accu_var);
                let range_count = self.size_or_unknown(&c.iter_range);
                sum = sum.add(range_count.multiply(step_cost.add(loop_cost)));
                match &c.accu_init.kind {
                    ExprKind::Literal(_) => {
                        if let Some(s) = self.compute_size(&c.accu_init) {
                            self.sizes.insert(e.id, s);
                        }
                    }
                    ExprKind::List { .. } | ExprKind::Map { .. } => {
                        self.sizes.insert(e.id, range_count);
                        if let Some(en) = self.entry_size(&c.loop_step) {
                            self.entries.insert(e.id, en);
                        }
                    }
                    _ => {}
                }
                sum
            }
        }
    }

    fn node(&mut self, e: &Expr) -> Node {
        let mut path = Some(self.path(e));
        if path.as_ref().is_some_and(|p| p.first().is_some_and(|f| f == ACCUMULATOR || f == "__result__")) {
            path = None;
        }
        Node {
            path,
            ty: self.ty(e),
            size: self.compute_size(e),
            literal_int: match e.kind {
                ExprKind::Literal(Literal::Int(i)) => Some(i),
                _ => None,
            },
        }
    }

    fn cost_call(&mut self, e: &Expr) -> Estimate {
        let ExprKind::Call { function, target, args } = &e.kind else {
            unreachable!("called on a call")
        };
        if function == "dyn" && args.len() == 1 {
            let c = self.cost(&args[0]);
            if let Some(s) = self.compute_size(&args[0]) {
                self.sizes.insert(e.id, s);
            }
            if let Some(en) = self.entry_size(&args[0]) {
                self.entries.insert(e.id, en);
            }
            return Estimate::fixed(1).add(c);
        }
        let mut arg_costs = Vec::with_capacity(args.len());
        let mut arg_nodes = Vec::with_capacity(args.len());
        for arg in args {
            arg_costs.push(self.cost(arg));
            arg_nodes.push(self.node(arg));
        }
        let overloads: Vec<&'static Overload> = match self.checked.refs.get(e.id as usize) {
            Some(Reference::Overloads(o)) => o.clone(),
            _ => Vec::new(),
        };
        if overloads.is_empty() {
            return Estimate::fixed(0);
        }
        let mut sum = Estimate::fixed(0);
        let mut target_node = None;
        if let Some(t) = target {
            sum = sum.add(self.cost(t));
            target_node = Some(self.node(t));
        }
        let mut fn_cost = Estimate { min: u64::MAX, max: 0 };
        let mut result_size: Option<Estimate> = None;
        for overload in &overloads {
            let (cost, size) = self.function_cost(e, args, function, overload.id, target_node.as_ref(), &arg_nodes, &arg_costs);
            fn_cost = fn_cost.union(cost);
            if let Some(s) = size {
                result_size = Some(result_size.map_or(s, |r| r.union(s)));
            }
            match overload.id {
                "index_list" | "index_map" => {
                    result_size = self.entry_size(&args[0]).map(|en| en.val);
                    let mut path = self.path(&args[0]);
                    path.push(if overload.id == "index_list" { "@items" } else { "@values" }.to_owned());
                    self.paths.insert(e.id, path);
                }
                _ => {}
            }
            if result_size.is_none() {
                result_size = self.compute_size(e);
            }
        }
        if let Some(s) = result_size {
            self.sizes.insert(e.id, s);
        }
        sum.add(fn_cost)
    }

    /// The size an argument node has: computed, or from the schema along its path.
    fn node_size(&self, n: &Node) -> Estimate {
        n.size.or_else(|| n.path.as_ref().and_then(|p| self.schema_size(p))).unwrap_or(UNKNOWN)
    }

    #[allow(clippy::too_many_arguments)]
    fn function_cost(
        &mut self,
        e: &Expr,
        args: &[Expr],
        function: &str,
        overload: &str,
        target: Option<&Node>,
        nodes: &[Node],
        arg_costs: &[Estimate],
    ) -> (Estimate, Option<Estimate>) {
        let arg_sum = arg_costs.iter().fold(Estimate::fixed(0), |a, c| a.add(*c));
        if let Some((cost, size)) = self.kubernetes_call_cost(function, overload, target, nodes) {
            return (cost.add(arg_sum), size);
        }
        let size_of = |s: &Self, i: usize| s.node_size(&nodes[i]);
        let target_size = |s: &Self| target.map(|t| s.node_size(t)).unwrap_or(UNKNOWN);
        match overload {
            "string_format" if target.is_some() => {
                return (target_size(self).factor(STRING_TRAVERSAL_COST_FACTOR).add(arg_sum), None);
            }
            "string_to_bytes" if nodes.len() == 1 => {
                let sz = size_of(self, 0);
                let size = Estimate {
                    min: sz.min,
                    max: sz.max.saturating_mul(4),
                };
                return (sz.factor(STRING_TRAVERSAL_COST_FACTOR).add(arg_sum), Some(size));
            }
            "bytes_to_string" if nodes.len() == 1 => {
                let sz = size_of(self, 0);
                let size = Estimate {
                    min: sz.min / 4,
                    max: sz.max,
                };
                return (sz.factor(STRING_TRAVERSAL_COST_FACTOR).add(arg_sum), Some(size));
            }
            "strings_quote" if nodes.len() == 1 => {
                let sz = size_of(self, 0);
                let size = Estimate {
                    min: sz.min.saturating_add(2),
                    max: sz.max.saturating_mul(2).saturating_add(2),
                };
                return (sz.factor(STRING_TRAVERSAL_COST_FACTOR).add(arg_sum), Some(size));
            }
            "starts_with_string" | "ends_with_string" if nodes.len() == 1 => {
                return (size_of(self, 0).factor(STRING_TRAVERSAL_COST_FACTOR).add(arg_sum), None);
            }
            "in_list" if nodes.len() == 2 => {
                return (size_of(self, 1).factor(1.0).add(arg_sum), None);
            }
            "matches_string" if target.is_some() && nodes.len() == 1 => {
                let str_cost = target_size(self).add(Estimate::fixed(1)).factor(STRING_TRAVERSAL_COST_FACTOR);
                let regex_cost = size_of(self, 0).factor(REGEX_STRING_LENGTH_COST_FACTOR);
                return (str_cost.multiply(regex_cost).add(arg_sum), None);
            }
            "contains_string" if target.is_some() && nodes.len() == 1 => {
                let str_cost = target_size(self).factor(STRING_TRAVERSAL_COST_FACTOR);
                let sub_cost = size_of(self, 0).factor(STRING_TRAVERSAL_COST_FACTOR);
                return (str_cost.multiply(sub_cost).add(arg_sum), None);
            }
            "logical_or" | "logical_and" => {
                let (lhs, rhs) = (arg_costs[0], arg_costs[1]);
                return (
                    Estimate {
                        min: lhs.min,
                        max: lhs.add(rhs).max,
                    },
                    None,
                );
            }
            "conditional" => {
                let size = size_of(self, 1).union(size_of(self, 2));
                if let (Some(a), Some(b)) = (self.entry_size(&args[1]), self.entry_size(&args[2])) {
                    self.entries.insert(
                        e.id,
                        EntrySize {
                            is_list: a.is_list,
                            key: a.key.union(b.key),
                            val: a.val.union(b.val),
                        },
                    );
                }
                let cost = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
                return (cost, Some(size));
            }
            "add_string" | "add_bytes" | "add_list" if nodes.len() == 2 => {
                let size = size_of(self, 0).add(size_of(self, 1));
                if let (Some(a), Some(b)) = (self.entry_size(&args[0]), self.entry_size(&args[1])) {
                    self.entries.insert(
                        e.id,
                        EntrySize {
                            is_list: b.is_list,
                            key: b.key.union(a.key),
                            val: b.val.union(a.val),
                        },
                    );
                }
                if overload == "add_list" {
                    return (Estimate::fixed(1).add(arg_sum), Some(size));
                }
                return (size.factor(STRING_TRAVERSAL_COST_FACTOR).add(arg_sum), Some(size));
            }
            _ => {}
        }
        let is_sized_comparison = overload == "equals"
            || overload == "not_equals"
            || ((overload.starts_with("less") || overload.starts_with("greater"))
                && (overload.ends_with("_string") || overload.ends_with("_bytes")));
        if is_sized_comparison && nodes.len() == 2 {
            let (l, r) = (size_of(self, 0), size_of(self, 1));
            let smallest = l.max.min(r.max);
            let min = u64::from(smallest > 0);
            return (
                Estimate { min, max: smallest }.factor(STRING_TRAVERSAL_COST_FACTOR).add(arg_sum),
                None,
            );
        }
        (Estimate::fixed(1).add(arg_sum), None)
    }

    /// Kubernetes' estimates for its own functions (its `CostEstimator`).
    fn kubernetes_call_cost(
        &self,
        function: &str,
        overload: &str,
        target: Option<&Node>,
        args: &[Node],
    ) -> Option<(Estimate, Option<Estimate>)> {
        let size = |n: &Node| self.node_size(n);
        let one = Some((Estimate::fixed(1), None));
        match function {
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
                let t = target?;
                if let Type::List(elem) = &t.ty {
                    let mut el_cost = Estimate::fixed(1);
                    if matches!(**elem, Type::String | Type::Bytes) {
                        let el_path = t.path.as_ref().map(|p| {
                            let mut p = p.clone();
                            p.push("@items".to_owned());
                            p
                        });
                        let el_size = el_path.and_then(|p| self.schema_size(&p)).unwrap_or(UNKNOWN);
                        el_cost = el_cost.add(el_size.factor(STRING_TRAVERSAL_COST_FACTOR));
                    }
                    Some((size(t).multiply(el_cost), None))
                } else {
                    Some((size(t).factor(STRING_TRAVERSAL_COST_FACTOR), None))
                }
            }
            "url" if args.len() == 1 => {
                let sz = size(&args[0]);
                Some((sz.factor(STRING_TRAVERSAL_COST_FACTOR), Some(sz)))
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" => {
                let sz = size(target?);
                Some((sz.factor(STRING_TRAVERSAL_COST_FACTOR), Some(sz)))
            }
            "replace" if args.len() >= 2 => {
                let sz = size(target?);
                let (to_replace, with) = (size(&args[0]), size(&args[1]));
                let (count_max, retained_max) = replace_bound(sz.max, to_replace.min, with.max <= to_replace.min);
                let (count_min, retained_min) = replace_bound(sz.min, to_replace.max, to_replace.max <= with.min);
                let count = Estimate { min: count_min, max: count_max };
                let retained = Estimate { min: retained_min, max: retained_max };
                let result = count.multiply(with).add(retained);
                Some((sz.factor(2.0 * STRING_TRAVERSAL_COST_FACTOR), Some(result)))
            }
            "split" => {
                let sz = size(target?);
                let max = args.get(1).and_then(|a| a.literal_int).map(|i| i as u64).unwrap_or(sz.max);
                Some((sz.factor(2.0 * STRING_TRAVERSAL_COST_FACTOR), Some(Estimate { min: 0, max })))
            }
            "join" => {
                let t = target?;
                let list_size = size(t);
                let mut sz = Estimate::fixed(0);
                if let Type::List(_) = &t.ty {
                    let el_path = t.path.as_ref().map(|p| {
                        let mut p = p.clone();
                        p.push("@items".to_owned());
                        p
                    });
                    let el_size = el_path.and_then(|p| self.schema_size(&p)).unwrap_or(UNKNOWN);
                    sz = list_size.multiply(el_size);
                }
                if let Some(sep) = args.first() {
                    let sep_size = size(sep);
                    let seps = Estimate {
                        min: list_size.min.saturating_sub(1),
                        max: list_size.max.saturating_sub(1),
                    };
                    sz = sz.add(sep_size.multiply(seps));
                }
                Some((sz.factor(STRING_TRAVERSAL_COST_FACTOR), Some(sz)))
            }
            "find" | "findAll" if !args.is_empty() => {
                let sz = size(target?);
                let str_cost = sz.add(Estimate::fixed(1)).factor(STRING_TRAVERSAL_COST_FACTOR);
                let regex_cost = size(&args[0]).factor(REGEX_STRING_LENGTH_COST_FACTOR);
                Some((str_cost.multiply(regex_cost), Some(Estimate { min: 0, max: sz.max })))
            }
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" => {
                target?;
                Some((size(args.first()?).factor(STRING_TRAVERSAL_COST_FACTOR), None))
            }
            "ip" => {
                target?;
                if overload == "cidr_ip" || args.is_empty() {
                    return one;
                }
                Some((size(&args[0]).factor(STRING_TRAVERSAL_COST_FACTOR), None))
            }
            "ip.isCanonical" => {
                target?;
                Some((size(args.first()?).factor(2.0 * STRING_TRAVERSAL_COST_FACTOR), None))
            }
            "masked" | "prefixLength" | "family" | "isUnspecified" | "isLoopback" | "isLinkLocalMulticast"
            | "isLinkLocalUnicast" | "isGlobalUnicast" | "format.named" | "sign" | "asInteger" | "isInteger"
            | "asApproximateFloat" | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub" | "getScheme"
            | "getHostname" | "getHost" | "getPort" | "getEscapedPath" | "getQuery" => one,
            "containsIP" | "containsCIDR" if !args.is_empty() => {
                target?;
                let ip = Estimate { min: 4, max: 16 };
                let mut cost = ip.add(ip).factor(STRING_TRAVERSAL_COST_FACTOR);
                if function == "containsCIDR" {
                    cost = cost.add(ip.factor(STRING_TRAVERSAL_COST_FACTOR)).add(Estimate::fixed(1));
                }
                if overload.ends_with("_string") {
                    cost = cost.add(size(&args[0]).factor(STRING_TRAVERSAL_COST_FACTOR));
                }
                Some((cost, None))
            }
            "validate" => {
                target?;
                let sz = size(args.first()?);
                Some((
                    sz.factor(STRING_TRAVERSAL_COST_FACTOR)
                        .factor(MAX_NAME_FORMAT_REGEX_SIZE as f64 * REGEX_STRING_LENGTH_COST_FACTOR),
                    None,
                ))
            }
            "_==_" if args.len() == 2 && args[0].ty == args[1].ty => match &args[0].ty {
                Type::Opaque(name, _) if name == "net.IP" || name == "net.CIDR" => one,
                Type::Object(name) if name == "kubernetes.Quantity" => one,
                Type::Object(name) if name == "kubernetes.NamedFormat" => {
                    Some((Estimate { min: 1, max: 64 }.factor(STRING_TRAVERSAL_COST_FACTOR), None))
                }
                Type::Object(name) if name == "kubernetes.URL" => {
                    let sz = args[1].size.unwrap_or(Estimate::fixed(1));
                    Some((Estimate { min: 1, max: sz.max }.factor(STRING_TRAVERSAL_COST_FACTOR), None))
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn size_or_unknown(&mut self, e: &Expr) -> Estimate {
        self.compute_size(e).unwrap_or(UNKNOWN)
    }

    fn compute_size(&mut self, e: &Expr) -> Option<Estimate> {
        if let Some(s) = self.sizes.get(&e.id) {
            return Some(*s);
        }
        if let Some(s) = literal_size(e) {
            return Some(s);
        }
        let path = self.path(e);
        if let Some(s) = self.schema_size(&path) {
            self.sizes.insert(e.id, s);
            return Some(s);
        }
        if is_scalar(&self.ty(e)) {
            return Some(Estimate::fixed(1));
        }
        if let ExprKind::Ident(name) = &e.kind {
            if let Some(v) = self.local(name) {
                return v.size;
            }
        }
        None
    }

    fn entry_size(&self, e: &Expr) -> Option<EntrySize> {
        if let Some(en) = self.entries.get(&e.id) {
            return Some(*en);
        }
        if let ExprKind::Ident(name) = &e.kind {
            if let Some(v) = self.local(name) {
                return v.entry;
            }
        }
        None
    }

    /// The size bound the schema gives the value at `path` (the first element, the
    /// variable, is the node the rule sits on).
    fn schema_size(&self, path: &[String]) -> Option<Estimate> {
        if path.is_empty() {
            return None;
        }
        let mut node: &DeclType = self.root;
        for name in &path[1..] {
            node = match name.as_str() {
                "@items" | "@values" => node.elem()?,
                // Map keys are strings of no declared length.
                "@keys" => {
                    if let super::decl::DeclKind::Map { .. } = node.kind {
                        return Some(Estimate::fixed(0));
                    }
                    return None;
                }
                field => &node.field(field)?.decl,
            };
        }
        Some(Estimate {
            min: 0,
            max: node.max_elements.max(0) as u64,
        })
    }
}

/// One bound of `replace()`'s result (Kubernetes' estimate): how many replacements
/// of `to_replace` characters a string of `size` may see, and how much of it is kept
/// as it is (all of it when `keeps`: the bound is reached without replacing).
fn replace_bound(size: u64, to_replace: u64, keeps: bool) -> (u64, u64) {
    if to_replace == 0 {
        (size.saturating_add(1), size)
    } else if keeps {
        (0, size)
    } else {
        ((size as f64 / to_replace as f64).ceil() as u64, 0)
    }
}

fn literal_size(e: &Expr) -> Option<Estimate> {
    let v = match &e.kind {
        ExprKind::Literal(Literal::String(s)) => s.chars().count() as u64,
        ExprKind::Literal(Literal::Bytes(b)) => b.len() as u64,
        ExprKind::Literal(_) => 1,
        ExprKind::List { elements, .. } => elements.len() as u64,
        ExprKind::Map { entries } => entries.len() as u64,
        _ => return None,
    };
    Some(Estimate::fixed(v))
}

fn is_scalar(t: &Type) -> bool {
    match t {
        Type::Bool | Type::Double | Type::Duration | Type::Int | Type::Timestamp | Type::Uint => true,
        Type::Opaque(..) => t.unwrap_optional().is_some_and(is_scalar),
        _ => false,
    }
}

/// What one call costs at run time (Kubernetes' rules for its functions, cel-go's
/// for the standard ones, 1 otherwise).
pub fn call_cost(function: &str, overload: &str, args: &[Value], result: &Value) -> u64 {
    let size = |i: usize| args.get(i).map(Value::cost_size).unwrap_or(1);
    let traversal = |i: usize| (size(i) as f64 * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64;
    match function {
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
            return args.first().map(traversal_cost).unwrap_or(0);
        }
        "url" | "lowerAscii" | "upperAscii" | "substring" | "trim" | "cidr" | "isIP" | "isCIDR" | "quantity"
        | "isQuantity" => return traversal(0),
        "replace" | "split" => return (size(0) as f64 * 2.0 * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64,
        "join" => return (result.cost_size() as f64 * 2.0 * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64,
        "find" | "findAll" => {
            let str_cost = ((1.0 + size(0) as f64) * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64;
            let regex_cost = (size(1) as f64 * REGEX_STRING_LENGTH_COST_FACTOR).ceil() as u64;
            return str_cost.saturating_mul(regex_cost);
        }
        "ip" => return if overload == "cidr_ip" { 1 } else { traversal(0) },
        "ip.isCanonical" => return (size(0) as f64 * 2.0 * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64,
        "masked" | "prefixLength" | "family" | "isUnspecified" | "isLoopback" | "isLinkLocalMulticast"
        | "isLinkLocalUnicast" | "isGlobalUnicast" | "format.named" | "sign" | "asInteger" | "isInteger"
        | "asApproximateFloat" | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub" | "getScheme"
        | "getHostname" | "getHost" | "getPort" | "getEscapedPath" | "getQuery" => return 1,
        "containsIP" | "containsCIDR" => {
            let cidr = size(0);
            let mut cost = ((cidr + cidr) as f64 * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64;
            if function == "containsCIDR" {
                cost += (cidr as f64 * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64 + 1;
            }
            if overload.ends_with("_string") {
                cost += traversal(1);
            }
            return cost;
        }
        "validate" => {
            let str_cost = ((1.0 + size(1) as f64) * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64;
            let regex_size = match args.first() {
                Some(Value::Format(f)) => f.max_regex_size as f64,
                _ => MAX_NAME_FORMAT_REGEX_SIZE as f64,
            };
            return str_cost * (regex_size * REGEX_STRING_LENGTH_COST_FACTOR).ceil() as u64;
        }
        "_==_" => {
            if matches!(
                args.first(),
                Some(Value::Quantity(_) | Value::Ip(_) | Value::Cidr(_) | Value::Format(_) | Value::Url(_))
            ) {
                return 1;
            }
        }
        _ => {}
    }
    match overload {
        "starts_with_string" | "ends_with_string" | "string_to_bytes" | "bytes_to_string" | "strings_quote"
        | "string_format" => traversal(0),
        "in_list" => size(1),
        "add_string" | "add_bytes" => ((size(0) + size(1)) as f64 * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64,
        "matches_string" => {
            let str_cost = ((1.0 + size(0) as f64) * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64;
            let regex_cost = (size(1) as f64 * REGEX_STRING_LENGTH_COST_FACTOR).ceil() as u64;
            str_cost.saturating_mul(regex_cost)
        }
        "contains_string" => traversal(0).saturating_mul(traversal(1)),
        o if o == "equals"
            || o == "not_equals"
            || ((o.starts_with("less") || o.starts_with("greater")) && (o.ends_with("_string") || o.ends_with("_bytes"))) =>
        {
            (size(0).min(size(1)) as f64 * STRING_TRAVERSAL_COST_FACTOR).ceil() as u64
        }
        _ => 1,
    }
}

/// Kubernetes' cost of one pass over a value (list functions).
fn traversal_cost(v: &Value) -> u64 {
    match v {
        Value::String(s) => (s.len() as f64 * STRING_TRAVERSAL_COST_FACTOR) as u64,
        Value::Bytes(b) => (b.len() as f64 * STRING_TRAVERSAL_COST_FACTOR) as u64,
        Value::List(l) => l.iter().map(|i| traversal_cost(&i)).fold(0u64, u64::saturating_add),
        Value::Map(m) => m
            .entries()
            .iter()
            .map(|(k, v)| traversal_cost(k).saturating_add(traversal_cost(v)))
            .fold(0u64, u64::saturating_add),
        _ => 1,
    }
}

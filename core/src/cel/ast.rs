//! The parsed form of an expression: a tree of [`Expr`] nodes, each with an id that
//! keys its source position (for error messages) and, after checking, its type and the
//! overloads its call may dispatch to.
//!
//! Macros (`has`, `all`, `exists`, `map`, ...) are expanded by the parser into
//! presence tests and comprehensions, as cel-go expands them: the cost estimator and
//! the evaluator only ever see the expanded forms.

/// The name of the accumulator a macro's comprehension folds into (cel-go's hidden
/// accumulator name, which no user identifier can spell).
pub const ACCUMULATOR: &str = "@result";

/// One node of an expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub id: u32,
    pub kind: ExprKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    Ident(String),
    /// `operand.field`; with `test_only` it is `has(operand.field)`.
    Select {
        operand: Box<Expr>,
        field: String,
        test_only: bool,
    },
    /// A function or operator (`_+_`, `_[_]`, `size`); `target` is set for the
    /// receiver style `target.function(args)`.
    Call {
        function: String,
        target: Option<Box<Expr>>,
        args: Vec<Expr>,
    },
    /// `[a, ?b]`: `optional` holds the indexes of the `?` elements.
    List { elements: Vec<Expr>, optional: Vec<usize> },
    Map { entries: Vec<MapEntry> },
    /// `Name{field: value}`: a message, which no Kubernetes environment declares.
    Struct { name: String, fields: Vec<StructField> },
    Comprehension(Box<Comprehension>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct MapEntry {
    pub id: u32,
    pub key: Expr,
    pub value: Expr,
    pub optional: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructField {
    pub id: u32,
    pub name: String,
    pub value: Expr,
    pub optional: bool,
}

/// A fold over a list or map: the expansion of the quantifier and projection macros.
#[derive(Clone, Debug, PartialEq)]
pub struct Comprehension {
    pub iter_var: String,
    /// The second variable of the two-variable forms (`all(k, v, ...)`).
    pub iter_var2: Option<String>,
    pub iter_range: Expr,
    pub accu_var: String,
    pub accu_init: Expr,
    pub loop_condition: Expr,
    pub loop_step: Expr,
    pub result: Expr,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(String),
    Bytes(Vec<u8>),
}

impl Expr {
    pub fn call(&self) -> Option<(&str, Option<&Expr>, &[Expr])> {
        match &self.kind {
            ExprKind::Call {
                function,
                target,
                args,
            } => Some((function, target.as_deref(), args)),
            _ => None,
        }
    }

    /// Every direct child, in source order.
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Literal(_) | ExprKind::Ident(_) => Vec::new(),
            ExprKind::Select { operand, .. } => vec![operand],
            ExprKind::Call { target, args, .. } => target.iter().map(|t| &**t).chain(args).collect(),
            ExprKind::List { elements, .. } => elements.iter().collect(),
            ExprKind::Map { entries } => entries.iter().flat_map(|e| [&e.key, &e.value]).collect(),
            ExprKind::Struct { fields, .. } => fields.iter().map(|f| &f.value).collect(),
            ExprKind::Comprehension(c) => vec![
                &c.iter_range,
                &c.accu_init,
                &c.loop_condition,
                &c.loop_step,
                &c.result,
            ],
        }
    }
}

/// Where each node starts in the source, by id, and where lines start: what an error
/// message needs to say `<input>:line:column` and print the offending line.
#[derive(Clone, Debug, Default)]
pub struct SourceInfo {
    /// Code point offset of each node, indexed by id (ids start at 1).
    pub offsets: Vec<u32>,
    /// Code point offsets at which lines 2, 3, ... start.
    pub line_starts: Vec<u32>,
}

impl SourceInfo {
    /// The 1-based line and 0-based column of a code point offset.
    pub fn location(&self, offset: u32) -> (usize, usize) {
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let start = if line == 0 { 0 } else { self.line_starts[line - 1] };
        (line + 1, (offset - start) as usize)
    }

    pub fn offset_of(&self, id: u32) -> Option<u32> {
        self.offsets.get(id as usize).copied()
    }
}

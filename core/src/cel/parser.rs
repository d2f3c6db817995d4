//! A precedence-climbing parser for CEL's grammar (cel-go's `CEL.g4`), building the
//! [`ast`](super::ast) with macros expanded.
//!
//! Limits are cel-go's: an expression of more than 100,000 code points is refused,
//! and nesting deeper than 250 (parentheses, calls, operator chains, member
//! accesses) stops the parse, so nothing downstream (checker, cost, evaluator) can
//! recurse without bound. Syntax errors are worded as ANTLR words them for the common
//! cases (`mismatched input '<EOF>' expecting {...}`); the parse stops at the first.

use super::ast::{Comprehension, Expr, ExprKind, Literal, MapEntry, SourceInfo, StructField, ACCUMULATOR};
use super::issues::{line_starts, Issues};
use super::lexer::{tokenize, Tok, Token};
use super::stack::StackGuard;

/// cel-go's default limit on the size of an expression.
pub const MAX_CODE_POINTS: usize = 100_000;
/// cel-go's default limit on the parser's recursion.
pub const MAX_DEPTH: usize = 250;

/// What ANTLR lists when it expected the start of an expression.
const EXPR_START: &str = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/// Identifiers cel-go keeps for itself.
const RESERVED: &[&str] = &[
    "as", "break", "const", "continue", "else", "false", "for", "function", "if", "import", "in", "let", "loop",
    "package", "namespace", "null", "return", "true", "var", "void", "while",
];

/// A parsed expression and the positions of its nodes.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub expr: Expr,
    pub source: SourceInfo,
    /// One past the largest id in use.
    pub next_id: u32,
}

/// Parse `text`; on failure, the issues say why.
pub fn parse(text: &str) -> Result<Parsed, Issues> {
    let mut issues = Issues::default();
    let chars: Vec<char> = text.chars().collect();
    if chars.len() > MAX_CODE_POINTS {
        issues.push(
            None,
            format!(
                "expression code point size exceeds limit: size: {}, limit {}",
                chars.len(),
                MAX_CODE_POINTS
            ),
        );
        return Err(issues);
    }
    let tokens = tokenize(&chars, &mut issues);
    let mut parser = Parser {
        tokens,
        pos: 0,
        offsets: vec![0],
        depth: 0,
        guard: StackGuard::new(),
        issues,
    };
    let result = parser.start();
    let Parser { offsets, mut issues, .. } = parser;
    match result {
        Ok(expr) if issues.is_empty() => Ok(Parsed {
            expr,
            next_id: offsets.len() as u32,
            source: SourceInfo {
                offsets,
                line_starts: line_starts(text),
            },
        }),
        Ok(_) => Err(issues),
        Err(Stop(offset, message)) => {
            issues.push(offset, message);
            Err(issues)
        }
    }
}

/// Why the parse stopped: a message at a position.
#[derive(Debug)]
struct Stop(Option<u32>, String);

type PResult<T> = Result<T, Stop>;

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    /// Offset of each node by id; id 0 is unused.
    offsets: Vec<u32>,
    depth: usize,
    guard: StackGuard,
    issues: Issues,
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.pos]
    }

    fn peek_at(&self, ahead: usize) -> &Token {
        &self.tokens[(self.pos + ahead).min(self.tokens.len() - 1)]
    }

    fn next(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if &self.peek().tok == tok {
            self.next();
            true
        } else {
            false
        }
    }

    fn new_id(&mut self, offset: u32) -> u32 {
        self.offsets.push(offset);
        (self.offsets.len() - 1) as u32
    }

    fn node(&mut self, offset: u32, kind: ExprKind) -> Expr {
        Expr { id: self.new_id(offset), kind }
    }

    fn error<T>(&self, offset: Option<u32>, message: impl Into<String>) -> PResult<T> {
        Err(Stop(offset, message.into()))
    }

    /// ANTLR's wording for an unexpected token: "extraneous" when dropping it would
    /// let the parse go on, "mismatched" otherwise.
    fn unexpected<T>(&self, expecting: &str) -> PResult<T> {
        let t = self.peek();
        let word = if t.tok != Tok::Eof && self.peek_at(1).tok == Tok::Eof && expecting == "<EOF>" {
            "extraneous"
        } else {
            "mismatched"
        };
        self.error(
            Some(t.start),
            format!("Syntax error: {word} input '{}' expecting {expecting}", t.text),
        )
    }

    fn expect(&mut self, tok: Tok, shown: &str) -> PResult<Token> {
        if self.peek().tok == tok {
            Ok(self.next())
        } else {
            self.unexpected(shown)
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH || self.guard.exhausted() {
            return self.error(None, format!("expression recursion limit exceeded: {MAX_DEPTH}"));
        }
        Ok(())
    }

    fn leave(&mut self, levels: usize) {
        self.depth -= levels;
    }

    fn start(&mut self) -> PResult<Expr> {
        let e = self.expr()?;
        if self.peek().tok != Tok::Eof {
            return self.unexpected("<EOF>");
        }
        Ok(e)
    }

    fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let cond = self.logical(true)?;
        let result = if self.peek().tok == Tok::Question {
            self.ternary(cond)?
        } else {
            cond
        };
        self.leave(1);
        Ok(result)
    }

    fn ternary(&mut self, cond: Expr) -> PResult<Expr> {
        let q = self.next().start;
        let if_true = self.logical(true)?;
        self.expect(Tok::Colon, "':'")?;
        let if_false = self.expr()?;
        let id = self.new_id(q);
        Ok(Expr {
            id,
            kind: call("_?_:_", vec![cond, if_true, if_false]),
        })
    }

    /// `||` (`or`) or `&&` terms; the terms are folded into a balanced tree as cel-go
    /// does, so a long chain stays shallow.
    fn logical(&mut self, or: bool) -> PResult<Expr> {
        let op = if or { Tok::Or } else { Tok::And };
        let first = if or { self.logical(false)? } else { self.binary(0)? };
        if self.peek().tok != op {
            return Ok(first);
        }
        let mut terms = vec![Some(first)];
        let mut ops = Vec::new();
        while self.peek().tok == op {
            ops.push(self.next().start);
            terms.push(Some(if or { self.logical(false)? } else { self.binary(0)? }));
        }
        let function = if or { "_||_" } else { "_&&_" };
        Ok(self.balanced(function, &mut terms, &ops, 0, ops.len() - 1))
    }

    fn balanced(&mut self, function: &str, terms: &mut [Option<Expr>], ops: &[u32], lo: usize, hi: usize) -> Expr {
        let mid = (lo + hi).div_ceil(2);
        let left = if mid == lo {
            terms[mid].take().expect("term used once")
        } else {
            self.balanced(function, terms, ops, lo, mid - 1)
        };
        let right = if mid == hi {
            terms[mid + 1].take().expect("term used once")
        } else {
            self.balanced(function, terms, ops, mid + 1, hi)
        };
        let id = self.new_id(ops[mid]);
        Expr {
            id,
            kind: call(function, vec![left, right]),
        }
    }

    /// Relations (level 0), then `+`/`-` (1), then `*`/`/`/`%` (2), all left
    /// associative: precedence climbing.
    fn binary(&mut self, level: u8) -> PResult<Expr> {
        let mut lhs = if level < 2 { self.binary(level + 1)? } else { self.unary()? };
        let mut levels = 0;
        while let Some(function) = binary_operator(&self.peek().tok, level) {
            self.enter()?;
            levels += 1;
            let at = self.next().start;
            let rhs = if level < 2 { self.binary(level + 1)? } else { self.unary()? };
            lhs = self.node(at, call(function, vec![lhs, rhs]));
        }
        self.leave(levels);
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        let (op, function) = match self.peek().tok {
            Tok::Not => (Tok::Not, "!_"),
            // A minus directly before a number is the number's sign.
            Tok::Minus if !self.sign_of_number() => (Tok::Minus, "-_"),
            _ => return self.member(),
        };
        let first = self.peek().start;
        let mut count = 0;
        while self.peek().tok == op && !(op == Tok::Minus && self.sign_of_number()) {
            self.next();
            count += 1;
        }
        let operand = self.member()?;
        if count % 2 == 0 {
            return Ok(operand);
        }
        Ok(self.node(first, call(function, vec![operand])))
    }

    fn sign_of_number(&self) -> bool {
        matches!(self.peek_at(1).tok, Tok::Int(_) | Tok::Float(_))
    }

    fn member(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        let mut levels = 0;
        loop {
            e = match self.peek().tok {
                Tok::Dot => {
                    self.enter()?;
                    levels += 1;
                    self.dot(e)?
                }
                Tok::LBracket => {
                    self.enter()?;
                    levels += 1;
                    self.index(e)?
                }
                _ => break,
            };
        }
        self.leave(levels);
        Ok(e)
    }

    /// `e.field`, `e.?field` or `e.function(args)`.
    fn dot(&mut self, e: Expr) -> PResult<Expr> {
        let dot = self.next().start;
        let optional = self.eat(&Tok::Question);
        let name = self.field_name(optional)?;
        if !optional && self.peek().tok == Tok::LParen {
            let open = self.next().start;
            let args = self.expr_list(Tok::RParen)?;
            self.expect(Tok::RParen, "')'")?;
            return self.call_or_macro(open, &name, Some(e), args);
        }
        if optional {
            let field = self.node(dot, ExprKind::Literal(Literal::String(name)));
            return Ok(self.node(dot, call("_?._", vec![e, field])));
        }
        Ok(self.node(
            dot,
            ExprKind::Select {
                operand: Box::new(e),
                field: name,
                test_only: false,
            },
        ))
    }

    /// `e[index]` or `e[?index]`.
    fn index(&mut self, e: Expr) -> PResult<Expr> {
        let open = self.next().start;
        let optional = self.eat(&Tok::Question);
        let index = self.expr()?;
        self.expect(Tok::RBracket, "']'")?;
        let function = if optional { "_[?_]" } else { "_[_]" };
        Ok(self.node(open, call(function, vec![e, index])))
    }

    /// The identifier after `.` (or `.?`): a plain identifier (escaped ones are not
    /// enabled).
    fn field_name(&mut self, optional: bool) -> PResult<String> {
        if let Tok::Ident(name) = &self.peek().tok {
            let name = name.clone();
            self.next();
            return Ok(name);
        }
        self.field_name_error(optional)
    }

    /// ANTLR's words: after `.` its prediction of a select or a member call fails
    /// (naming the input from the dot on); after `.?` only a select fits, and its
    /// identifier fails alone.
    #[inline(never)]
    fn field_name_error<T>(&self, optional: bool) -> PResult<T> {
        let t = self.peek();
        match t.tok {
            Tok::EscIdent(_) => self.error(Some(t.start), "unsupported syntax: '`'"),
            _ if optional => self.error(Some(t.start), format!("Syntax error: no viable alternative at input '{}'", t.text)),
            Tok::Eof => self.error(Some(t.start), "Syntax error: no viable alternative at input '.'"),
            _ => self.error(Some(t.start), format!("Syntax error: no viable alternative at input '.{}'", t.text)),
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        match self.peek().tok {
            Tok::Dot | Tok::Ident(_) => self.ident_or_call(),
            Tok::LParen => {
                self.next();
                let e = self.expr()?;
                self.expect(Tok::RParen, "')'")?;
                Ok(e)
            }
            Tok::LBracket => self.list(),
            Tok::LBrace => self.map(),
            _ => self.atom(),
        }
    }

    fn ident_or_call(&mut self) -> PResult<Expr> {
        let start = self.peek().start;
        let leading = if self.peek().tok == Tok::Dot {
            self.next();
            if !matches!(self.peek().tok, Tok::Ident(_)) {
                return self.no_viable_alternative(start);
            }
            "."
        } else {
            ""
        };
        let id_start = self.peek().start;
        let Tok::Ident(name) = self.next().tok else { unreachable!("checked by the caller") };
        let name = format!("{leading}{name}");
        if self.peek().tok == Tok::LParen {
            if RESERVED.contains(&name.as_str()) {
                return self.error(Some(id_start), format!("reserved identifier: {name}"));
            }
            let open = self.next().start;
            let args = self.expr_list(Tok::RParen)?;
            self.expect(Tok::RParen, "')'")?;
            return self.call_or_macro(open, &name, None, args);
        }
        if self.peek().tok == Tok::LBrace || (self.peek().tok == Tok::Dot && self.is_message_name()) {
            return self.message(name);
        }
        if RESERVED.contains(&name.as_str()) {
            return self.error(Some(id_start), format!("reserved identifier: {name}"));
        }
        Ok(self.node(id_start, ExprKind::Ident(name)))
    }

    #[inline(never)]
    fn no_viable_alternative<T>(&self, start: u32) -> PResult<T> {
        let n = &self.peek().text;
        self.error(Some(start), format!("Syntax error: no viable alternative at input '.{n}'"))
    }

    fn list(&mut self) -> PResult<Expr> {
        let start = self.next().start;
        let mut optional = Vec::new();
        let elements = self.entries(Tok::RBracket, "']'", |p, i| {
            if p.eat(&Tok::Question) {
                optional.push(i);
            }
            p.expr()
        })?;
        Ok(self.node(start, ExprKind::List { elements, optional }))
    }

    fn map(&mut self) -> PResult<Expr> {
        let start = self.next().start;
        let entries = self.entries(Tok::RBrace, "'}'", |p, _| {
            let optional = p.eat(&Tok::Question);
            let key = p.expr()?;
            let colon = p.expect(Tok::Colon, "':'")?.start;
            let value = p.expr()?;
            let id = p.new_id(colon);
            Ok(MapEntry {
                id,
                key,
                value,
                optional,
            })
        })?;
        Ok(self.node(start, ExprKind::Map { entries }))
    }

    /// Comma-separated entries up to `close` (a trailing comma allowed), one nesting
    /// level deeper.
    fn entries<T>(&mut self, close: Tok, shown: &str, mut entry: impl FnMut(&mut Self, usize) -> PResult<T>) -> PResult<Vec<T>> {
        self.enter()?;
        let mut out = Vec::new();
        while self.peek().tok != close {
            out.push(entry(self, out.len())?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(close, shown)?;
        self.leave(1);
        Ok(out)
    }

    /// Literals, and the errors of tokens that cannot start an expression.
    #[inline(never)]
    fn atom(&mut self) -> PResult<Expr> {
        let t = self.next();
        match &t.tok {
            Tok::Minus => {
                // Only reached for a minus before a number: a signed literal.
                let n = self.next();
                self.number(&n, t.start, true)
            }
            Tok::Int(_) | Tok::Uint(_) | Tok::Float(_) => self.number(&t, t.start, false),
            Tok::Str(Ok(s)) => Ok(self.node(t.start, ExprKind::Literal(Literal::String(s.clone())))),
            Tok::Bytes(Ok(b)) => Ok(self.node(t.start, ExprKind::Literal(Literal::Bytes(b.clone())))),
            Tok::Str(Err(e)) | Tok::Bytes(Err(e)) => self.error(Some(t.start), e.clone()),
            Tok::True => Ok(self.node(t.start, ExprKind::Literal(Literal::Bool(true)))),
            Tok::False => Ok(self.node(t.start, ExprKind::Literal(Literal::Bool(false)))),
            Tok::Null => Ok(self.node(t.start, ExprKind::Literal(Literal::Null))),
            Tok::EscIdent(_) => self.error(Some(t.start), format!("Syntax error: mismatched input '{}' expecting {EXPR_START}", t.text)),
            _ => {
                // Report at the unexpected token (the cursor moved past it).
                let word = if t.tok != Tok::Eof && self.is_extraneous_before_expr_at(0) { "extraneous" } else { "mismatched" };
                self.error(Some(t.start), format!("Syntax error: {word} input '{}' expecting {EXPR_START}", t.text))
            }
        }
    }

    /// Whether the token `ahead` of the cursor could start an expression (ANTLR then
    /// drops the unexpected token before it and says "extraneous").
    fn is_extraneous_before_expr_at(&self, ahead: usize) -> bool {
        matches!(
            self.peek_at(ahead).tok,
            Tok::LBracket
                | Tok::LBrace
                | Tok::LParen
                | Tok::Dot
                | Tok::Minus
                | Tok::Not
                | Tok::True
                | Tok::False
                | Tok::Null
                | Tok::Int(_)
                | Tok::Uint(_)
                | Tok::Float(_)
                | Tok::Str(_)
                | Tok::Bytes(_)
                | Tok::Ident(_)
        )
    }

    /// After an identifier and a dot: `a.b.c{` names a message.
    fn is_message_name(&self) -> bool {
        let mut i = self.pos;
        while self.tokens.get(i).map(|t| &t.tok) == Some(&Tok::Dot)
            && matches!(self.tokens.get(i + 1).map(|t| &t.tok), Some(Tok::Ident(_)))
        {
            i += 2;
        }
        i > self.pos && self.tokens.get(i).map(|t| &t.tok) == Some(&Tok::LBrace)
    }

    fn message(&mut self, mut name: String) -> PResult<Expr> {
        while self.eat(&Tok::Dot) {
            let Tok::Ident(part) = self.next().tok else { unreachable!("checked by is_message_name") };
            name.push('.');
            name.push_str(&part);
        }
        let open = self.expect(Tok::LBrace, "'{'")?;
        let fields = self.entries(Tok::RBrace, "'}'", |p, _| {
            let optional = p.eat(&Tok::Question);
            let name = match p.peek().tok.clone() {
                Tok::Ident(f) => {
                    p.next();
                    f
                }
                _ => return p.unexpected("{'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}"),
            };
            let colon = p.expect(Tok::Colon, "':'")?.start;
            let value = p.expr()?;
            let id = p.new_id(colon);
            Ok(StructField {
                id,
                name,
                value,
                optional,
            })
        })?;
        Ok(self.node(open.start, ExprKind::Struct { name, fields }))
    }

    fn number(&mut self, t: &Token, start: u32, negative: bool) -> PResult<Expr> {
        let sign = if negative { "-" } else { "" };
        let lit = match &t.tok {
            Tok::Int(text) => {
                let parsed = match text.strip_prefix("0x") {
                    Some(hex) => i64::from_str_radix(&format!("{sign}{hex}"), 16),
                    None => format!("{sign}{text}").parse::<i64>(),
                };
                match parsed {
                    Ok(v) => Literal::Int(v),
                    Err(_) => return self.error(Some(start), "invalid int literal"),
                }
            }
            Tok::Uint(text) => {
                let parsed = match text.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => text.parse::<u64>(),
                };
                match parsed {
                    Ok(v) => Literal::Uint(v),
                    Err(_) => return self.error(Some(start), "invalid uint literal"),
                }
            }
            Tok::Float(text) => match format!("{sign}{text}").parse::<f64>() {
                Ok(v) => Literal::Double(v),
                Err(_) => return self.error(Some(start), "invalid double literal"),
            },
            _ => return self.error(Some(t.start), format!("Syntax error: mismatched input '{}' expecting {EXPR_START}", t.text)),
        };
        Ok(self.node(start, ExprKind::Literal(lit)))
    }

    fn expr_list(&mut self, close: Tok) -> PResult<Vec<Expr>> {
        let mut args = Vec::new();
        if self.peek().tok == close {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if !self.eat(&Tok::Comma) {
                return Ok(args);
            }
        }
    }

    fn call_or_macro(&mut self, offset: u32, function: &str, target: Option<Expr>, args: Vec<Expr>) -> PResult<Expr> {
        match super::macros::expand(self, offset, function, target, args)? {
            Ok(expr) => Ok(expr),
            Err((target, args)) => {
                let id = self.new_id(offset);
                Ok(Expr {
                    id,
                    kind: ExprKind::Call {
                        function: function.to_owned(),
                        target: target.map(Box::new),
                        args,
                    },
                })
            }
        }
    }
}

/// The operator of `tok` at precedence `level` (relations, additive, multiplicative).
fn binary_operator(tok: &Tok, level: u8) -> Option<&'static str> {
    Some(match (level, tok) {
        (0, Tok::Lt) => "_<_",
        (0, Tok::Le) => "_<=_",
        (0, Tok::Gt) => "_>_",
        (0, Tok::Ge) => "_>=_",
        (0, Tok::Eq) => "_==_",
        (0, Tok::Ne) => "_!=_",
        (0, Tok::In) => "@in",
        (1, Tok::Plus) => "_+_",
        (1, Tok::Minus) => "_-_",
        (2, Tok::Star) => "_*_",
        (2, Tok::Slash) => "_/_",
        (2, Tok::Percent) => "_%_",
        _ => return None,
    })
}

fn call(function: &str, args: Vec<Expr>) -> ExprKind {
    ExprKind::Call {
        function: function.to_owned(),
        target: None,
        args,
    }
}

/// What macro expansion needs of the parser: fresh ids at a position, and errors.
pub(super) trait MacroHelper {
    fn id_at(&mut self, offset: u32) -> u32;
    fn offset_of(&self, id: u32) -> u32;
}

impl MacroHelper for Parser {
    fn id_at(&mut self, offset: u32) -> u32 {
        self.new_id(offset)
    }

    fn offset_of(&self, id: u32) -> u32 {
        self.offsets[id as usize]
    }
}

impl From<(Option<u32>, String)> for Stop {
    fn from((offset, message): (Option<u32>, String)) -> Stop {
        Stop(offset, message)
    }
}

/// Builders for the nodes a macro expands to, all placed at the macro call.
pub(super) struct Builder<'p> {
    pub parser: &'p mut dyn MacroHelper,
    pub offset: u32,
}

impl Builder<'_> {
    pub fn node(&mut self, kind: ExprKind) -> Expr {
        Expr {
            id: self.parser.id_at(self.offset),
            kind,
        }
    }

    pub fn accu(&mut self) -> Expr {
        self.node(ExprKind::Ident(ACCUMULATOR.to_owned()))
    }

    pub fn ident(&mut self, name: &str) -> Expr {
        self.node(ExprKind::Ident(name.to_owned()))
    }

    pub fn lit(&mut self, lit: Literal) -> Expr {
        self.node(ExprKind::Literal(lit))
    }

    pub fn call(&mut self, function: &str, args: Vec<Expr>) -> Expr {
        self.node(call(function, args))
    }

    pub fn member(&mut self, function: &str, target: Expr, args: Vec<Expr>) -> Expr {
        self.node(ExprKind::Call {
            function: function.to_owned(),
            target: Some(Box::new(target)),
            args,
        })
    }

    pub fn list(&mut self, elements: Vec<Expr>) -> Expr {
        self.node(ExprKind::List {
            elements,
            optional: Vec::new(),
        })
    }

    pub fn map(&mut self) -> Expr {
        self.node(ExprKind::Map { entries: Vec::new() })
    }

    #[allow(clippy::too_many_arguments)]
    pub fn fold(
        &mut self,
        iter_range: Expr,
        iter_var: &str,
        iter_var2: Option<&str>,
        accu_var: &str,
        accu_init: Expr,
        loop_condition: Expr,
        loop_step: Expr,
        result: Expr,
    ) -> Expr {
        self.node(ExprKind::Comprehension(Box::new(Comprehension {
            iter_var: iter_var.to_owned(),
            iter_var2: iter_var2.map(str::to_owned),
            iter_range,
            accu_var: accu_var.to_owned(),
            accu_init,
            loop_condition,
            loop_step,
            result,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text).unwrap_err().render(text)
    }

    #[test]
    fn precedence_and_associativity() {
        let p = parse("1 + 2 * 3 == 7 && !x || y ? a : b").unwrap();
        let (f, _, args) = p.expr.call().unwrap();
        assert_eq!(f, "_?_:_");
        let (f, _, or_args) = args[0].call().unwrap();
        assert_eq!(f, "_||_");
        let (f, _, _) = or_args[0].call().unwrap();
        assert_eq!(f, "_&&_");
    }

    #[test]
    fn negative_literals_and_negation() {
        assert_eq!(parse("-9223372036854775808").unwrap().expr.kind, ExprKind::Literal(Literal::Int(i64::MIN)));
        let p = parse("-x").unwrap();
        assert_eq!(p.expr.call().unwrap().0, "-_");
        let p = parse("!!x").unwrap();
        assert_eq!(p.expr.kind, ExprKind::Ident("x".into()));
    }

    #[test]
    fn syntax_errors_as_antlr_words_them() {
        assert_eq!(
            err("self.x =="),
            format!("ERROR: <input>:1:10: Syntax error: mismatched input '<EOF>' expecting {EXPR_START}\n | self.x ==\n | .........^")
        );
        assert_eq!(err("a b"), "ERROR: <input>:1:3: Syntax error: extraneous input 'b' expecting <EOF>\n | a b\n | ..^");
        assert_eq!(err("if"), "ERROR: <input>:1:1: reserved identifier: if\n | if\n | ^");
        // As kube-apiserver v1.33 answered a policy's messageExpression.
        assert_eq!(err("object."), "ERROR: <input>:1:8: Syntax error: no viable alternative at input '.'\n | object.\n | .......^");
        assert_eq!(err("a.(b)"), "ERROR: <input>:1:3: Syntax error: no viable alternative at input '.('\n | a.(b)\n | ..^");
    }

    #[test]
    fn deep_nesting_is_refused() {
        let deep = format!("{}1{}", "(".repeat(300), ")".repeat(300));
        assert_eq!(err(&deep), "ERROR: <input>:-1:0: expression recursion limit exceeded: 250");
        let long = vec!["1"; 300].join(" + ");
        assert!(parse(&long).is_err());
        let ands = vec!["true"; 5000].join(" && ");
        assert!(parse(&ands).is_ok(), "a long && chain is balanced, not deep");
    }

    #[test]
    fn size_limit() {
        let big = "1".repeat(MAX_CODE_POINTS + 1);
        assert!(err(&big).contains("expression code point size exceeds limit: size: 100001, limit 100000"));
    }
}


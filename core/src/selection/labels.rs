//! Label selectors, parsed as apimachinery's `labels.Parse` parses them: the same
//! lexer (bytes, whitespace, the special symbols `= ! ( ) , > <`), the same grammar,
//! the same requirement checks and the same error wording, so a client sees exactly
//! the 400 message kube-apiserver would send.
//!
//! ```text
//! <selector>    ::= <requirement> | <requirement> "," <selector>
//! <requirement> ::= [!] KEY [ ("in" | "notin") "(" VALUES ")" | ("=" | "==" | "!=" | ">" | "<") VALUE ]
//! ```

use crate::schema::go_quote;
use std::collections::BTreeSet;

/// How a requirement relates its key and values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `key`: the label is set.
    Exists,
    /// `!key`: the label is not set.
    DoesNotExist,
    /// `key=value`
    Equals,
    /// `key==value`
    DoubleEquals,
    /// `key!=value`: not set, or set to another value.
    NotEquals,
    /// `key in (a,b)`
    In,
    /// `key notin (a,b)`: not set, or set to none of the values.
    NotIn,
    /// `key>5`: set to an integer greater than the value.
    GreaterThan,
    /// `key<5`: set to an integer less than the value.
    LessThan,
}

/// One clause of a label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub operator: Operator,
    /// Sorted and without duplicates (upstream keeps them in a string set).
    pub values: Vec<String>,
}

impl Requirement {
    /// Whether labels (looked up with `label`) satisfy this requirement.
    pub fn matches<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.operator {
            Operator::Exists => label(&self.key).is_some(),
            Operator::DoesNotExist => label(&self.key).is_none(),
            Operator::Equals | Operator::DoubleEquals | Operator::In => {
                label(&self.key).is_some_and(has)
            }
            Operator::NotEquals | Operator::NotIn => !label(&self.key).is_some_and(has),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(have), [want]) = (label(&self.key), self.values.as_slice()) else {
                    return false;
                };
                match (have.parse::<i64>(), want.parse::<i64>()) {
                    (Ok(have), Ok(want)) if self.operator == Operator::GreaterThan => have > want,
                    (Ok(have), Ok(want)) => have < want,
                    _ => false,
                }
            }
        }
    }
}

/// A parsed label selector: every requirement must hold. Empty selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// Sorted by key, as upstream sorts them.
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parse `selector`; the error is the text kube-apiserver puts in its 400 Status.
    pub fn parse(selector: &str) -> Result<LabelSelector, String> {
        let mut parser = Parser {
            items: lex(selector.as_bytes()),
            position: 0,
        };
        let mut requirements = parser.parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// A metav1 `LabelSelector` object (`matchLabels`, `matchExpressions`); `None`
    /// when it is not one (an unknown operator, `In` without values). An empty one
    /// selects everything, as upstream's `LabelSelectorAsSelector` reads it.
    pub fn from_object(selector: &serde_json::Value) -> Option<LabelSelector> {
        use serde_json::Value;
        let selector = selector.as_object()?;
        let mut requirements = Vec::new();
        let match_labels = selector.get("matchLabels").and_then(Value::as_object);
        for (key, value) in match_labels.into_iter().flatten() {
            requirements.push(Requirement {
                key: key.clone(),
                operator: Operator::Equals,
                values: vec![value.as_str().unwrap_or("").to_owned()],
            });
        }
        let expressions = selector.get("matchExpressions").and_then(Value::as_array);
        for expression in expressions.into_iter().flatten() {
            let key = expression.get("key").and_then(Value::as_str).unwrap_or("");
            let mut values: Vec<String> = expression
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            values.sort();
            values.dedup();
            let operator = match expression.get("operator").and_then(Value::as_str) {
                Some("In") => Operator::In,
                Some("NotIn") => Operator::NotIn,
                Some("Exists") => Operator::Exists,
                Some("DoesNotExist") => Operator::DoesNotExist,
                _ => return None,
            };
            let needs_values = matches!(operator, Operator::In | Operator::NotIn);
            if needs_values == values.is_empty() {
                return None;
            }
            requirements.push(Requirement {
                key: key.to_owned(),
                operator,
                values,
            });
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Some(LabelSelector { requirements })
    }

    /// Whether an object with these `metadata.labels` is selected.
    pub fn matches_labels(&self, labels: Option<&serde_json::Map<String, serde_json::Value>>) -> bool {
        let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(serde_json::Value::as_str);
        self.requirements.iter().all(|r| r.matches(label))
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether labels (looked up with `label`) satisfy every requirement.
    pub fn matches<'a>(&self, label: impl Fn(&str) -> Option<&'a str> + Copy) -> bool {
        self.requirements.iter().all(|r| r.matches(label))
    }
}

/// The selector in its canonical text (upstream's `String()`): requirements by key,
/// values sorted; it parses back to the same selector.
impl std::fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let values = self.values.join(",");
        match self.operator {
            Operator::Exists => write!(f, "{}", self.key),
            Operator::DoesNotExist => write!(f, "!{}", self.key),
            Operator::Equals => write!(f, "{}={values}", self.key),
            Operator::DoubleEquals => write!(f, "{}=={values}", self.key),
            Operator::NotEquals => write!(f, "{}!={values}", self.key),
            Operator::In => write!(f, "{} in ({values})", self.key),
            Operator::NotIn => write!(f, "{} notin ({values})", self.key),
            Operator::GreaterThan => write!(f, "{}>{values}", self.key),
            Operator::LessThan => write!(f, "{}<{values}", self.key),
        }
    }
}

// ---------------------------------------------------------------------------------
// Lexer

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    /// Never produced in practice (every special symbol is a token on its own), but
    /// upstream's lexer has the case and so does this one.
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &[u8]) -> Option<Token> {
    Some(match s {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::DoesNotExist,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"in" => Token::In,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"notin" => Token::NotIn,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

struct Item {
    token: Token,
    literal: String,
}

/// Upstream reads bytes and treats a NUL byte as the end of the input at the place it
/// is met: a NUL inside an identifier or operator ends that token and is skipped, a NUL
/// where a token would start ends the selector.
struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    /// The next byte, 0 at the end.
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos -= 1;
    }

    fn identifier_or_keyword(&mut self) -> Item {
        let mut buffer = Vec::new();
        loop {
            let b = self.read();
            if b == 0 {
                break;
            }
            if is_special(b) || is_whitespace(b) {
                self.unread();
                break;
            }
            buffer.push(b);
        }
        let token = keyword(&buffer).unwrap_or(Token::Identifier);
        Item {
            token,
            literal: text(&buffer),
        }
    }

    /// The longest operator starting here, extended one byte at a time while the bytes
    /// so far still spell a token.
    fn special_symbol(&mut self) -> Item {
        let mut buffer = Vec::new();
        let mut last: Option<(Token, usize)> = None;
        loop {
            let b = self.read();
            if b == 0 {
                break;
            }
            if !is_special(b) {
                self.unread();
                break;
            }
            buffer.push(b);
            match keyword(&buffer) {
                Some(t) => last = Some((t, buffer.len())),
                None if last.is_some() => {
                    self.unread();
                    break;
                }
                None => {}
            }
        }
        match last {
            Some((token, len)) => Item {
                token,
                literal: text(&buffer[..len]),
            },
            None => Item {
                token: Token::Error,
                literal: format!("error expected: keyword found '{}'", text(&buffer)),
            },
        }
    }

    fn lex(&mut self) -> Item {
        let mut b = self.read();
        while is_whitespace(b) {
            b = self.read();
        }
        if b == 0 {
            return Item {
                token: Token::EndOfString,
                literal: String::new(),
            };
        }
        self.unread();
        if is_special(b) {
            self.special_symbol()
        } else {
            self.identifier_or_keyword()
        }
    }
}

/// Token text. Tokens split only at ASCII bytes, so a slice of UTF-8 stays UTF-8.
fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn lex(s: &[u8]) -> Vec<Item> {
    let mut lexer = Lexer { s, pos: 0 };
    let mut items = Vec::new();
    loop {
        let item = lexer.lex();
        let end = item.token == Token::EndOfString;
        items.push(item);
        if end {
            return items;
        }
    }
}

// ---------------------------------------------------------------------------------
// Parser

/// Where the parser is: `in` and `notin` are keywords only where an operator may
/// stand; as keys and values they are identifiers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<Item>,
    position: usize,
}

/// The operators named in "expected: ..." messages, in upstream's order and spelling.
const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

impl Parser {
    fn token_at(&self, at: usize, context: Context) -> (Token, &str) {
        // The lexer always ends with EndOfString and the parser stops there.
        let item = &self.items[at.min(self.items.len() - 1)];
        let token = match item.token {
            Token::In | Token::NotIn if context == Context::Values => Token::Identifier,
            t => t,
        };
        (token, &item.literal)
    }

    fn lookahead(&self, context: Context) -> (Token, String) {
        let (t, l) = self.token_at(self.position, context);
        (t, l.to_owned())
    }

    fn consume(&mut self, context: Context) -> (Token, String) {
        let r = self.lookahead(context);
        self.position += 1;
        r
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (token, literal) = self.lookahead(Context::Values);
            match token {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{literal}', expected: !, identifier, or 'end of string'"
                    ))
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (key, operator) = self.key_and_inferred_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = operator {
            return new_requirement(key, op, Vec::new());
        }
        let operator = self.operator()?;
        let values = match operator {
            Operator::In | Operator::NotIn => self.values()?,
            _ => self.exact_value()?,
        };
        new_requirement(key, operator, values.into_iter().collect())
    }

    /// The key, and the operator when the requirement is `key` or `!key`.
    fn key_and_inferred_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut operator = None;
        let (mut token, mut literal) = self.consume(Context::Values);
        if token == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (token, literal) = self.consume(Context::Values);
        }
        if token != Token::Identifier {
            return Err(format!("found '{literal}', expected: identifier"));
        }
        let errs = label_key_errors(&literal);
        if !errs.is_empty() {
            return Err(invalid("<nil>", &literal, &errs));
        }
        let (next, _) = self.lookahead(Context::Values);
        if matches!(next, Token::EndOfString | Token::Comma) && operator.is_none() {
            operator = Some(Operator::Exists);
        }
        Ok((literal, operator))
    }

    fn operator(&mut self) -> Result<Operator, String> {
        let (token, literal) = self.consume(Context::KeyAndOperator);
        Ok(match token {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => return Err(format!("found '{literal}', expected: {BINARY_OPERATORS}")),
        })
    }

    /// `( a, b, ... )`; empty entries stand for the empty value.
    fn values(&mut self) -> Result<BTreeSet<String>, String> {
        let (token, literal) = self.consume(Context::Values);
        if token != Token::OpenPar {
            // Upstream's wording has no comma here.
            return Err(format!("found '{literal}' expected: '('"));
        }
        let (token, literal) = self.lookahead(Context::Values);
        match token {
            Token::Identifier | Token::Comma => {
                let set = self.identifiers()?;
                let (token, _) = self.consume(Context::Values);
                if token != Token::ClosedPar {
                    return Err(format!("found '{literal}', expected: ')'"));
                }
                Ok(set)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(format!(
                "found '{literal}', expected: ',', ')' or identifier"
            )),
        }
    }

    fn identifiers(&mut self) -> Result<BTreeSet<String>, String> {
        let mut set = BTreeSet::new();
        loop {
            let (token, literal) = self.consume(Context::Values);
            match token {
                Token::Identifier => {
                    set.insert(literal);
                    let (next, next_literal) = self.lookahead(Context::Values);
                    match next {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(set),
                        _ => return Err(format!("found '{next_literal}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        set.insert(String::new()); // "(,"
                    }
                    let (next, _) = self.lookahead(Context::Values);
                    if next == Token::ClosedPar {
                        set.insert(String::new()); // ",)"
                        return Ok(set);
                    }
                    if next == Token::Comma {
                        // ",,": upstream takes the second comma here too, so "(a,,)"
                        // then meets ")" where it wants a value.
                        self.consume(Context::Values);
                        set.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{literal}', expected: ',', or identifier")),
            }
        }
    }

    /// The one value after `=`, `==`, `!=`, `>` or `<`; nothing at all means "".
    fn exact_value(&mut self) -> Result<BTreeSet<String>, String> {
        let (token, _) = self.lookahead(Context::Values);
        if matches!(token, Token::EndOfString | Token::Comma) {
            return Ok(BTreeSet::from([String::new()]));
        }
        let (token, literal) = self.consume(Context::Values);
        if token == Token::Identifier {
            return Ok(BTreeSet::from([literal]));
        }
        Err(format!("found '{literal}', expected: identifier"))
    }
}

/// A requirement checked as upstream's `NewRequirement` checks it (the key was checked
/// already); several problems are reported together as an aggregate.
fn new_requirement(
    key: String,
    operator: Operator,
    values: Vec<String>,
) -> Result<Requirement, String> {
    let mut errs = Vec::new();
    match operator {
        Operator::In | Operator::NotIn if values.is_empty() => errs.push(
            "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty".to_owned(),
        ),
        Operator::Equals | Operator::DoubleEquals | Operator::NotEquals if values.len() != 1 => {
            errs.push(format!(
                "values: Invalid value: {}: exact-match compatibility requires one single value",
                go_string_slice(&values)
            ))
        }
        Operator::GreaterThan | Operator::LessThan => {
            if values.len() != 1 {
                errs.push(format!(
                    "values: Invalid value: {}: for 'Gt', 'Lt' operators, exactly one value is required",
                    go_string_slice(&values)
                ));
            }
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(invalid(
                        &format!("values[{i}]"),
                        v,
                        &["for 'Gt', 'Lt' operators, the value must be an integer"],
                    ));
                }
            }
        }
        _ => {}
    }
    for (i, v) in values.iter().enumerate() {
        let problems = label_value_errors(v);
        if !problems.is_empty() {
            errs.push(invalid(&format!("values[{i}][{key}]"), v, &problems));
        }
    }
    if errs.is_empty() {
        Ok(Requirement {
            key,
            operator,
            values,
        })
    } else {
        Err(aggregate(errs))
    }
}

/// A field error as `field.Invalid(path, value, detail).Error()` prints it.
fn invalid(path: &str, value: &str, problems: &[impl AsRef<str>]) -> String {
    let detail: Vec<&str> = problems.iter().map(AsRef::as_ref).collect();
    format!(
        "{path}: Invalid value: {}: {}",
        go_quote(value),
        detail.join("; ")
    )
}

/// Go's `%#v` of a `[]string`.
fn go_string_slice(values: &[String]) -> String {
    let inner: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[]string{{{}}}", inner.join(", "))
}

/// An error list as `utilerrors.NewAggregate(...).Error()` prints it: one message
/// alone, several (duplicates dropped) in brackets.
fn aggregate(errs: Vec<String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in errs {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    if seen.len() == 1 {
        seen.pop().unwrap_or_default()
    } else {
        format!("[{}]", seen.join(", "))
    }
}

// ---------------------------------------------------------------------------------
// Label syntax

/// Problems with `key` as a label key in a selector (apimachinery's `IsQualifiedName`);
/// empty when valid.
pub fn label_key_errors(key: &str) -> Vec<String> {
    crate::validation::names::qualified_name(key)
}

/// Problems with `value` as a label value (apimachinery's `IsValidLabelValue`).
pub fn label_value_errors(value: &str) -> Vec<String> {
    crate::validation::names::label_value(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(s: &str) -> LabelSelector {
        LabelSelector::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    fn err(s: &str) -> String {
        LabelSelector::parse(s).expect_err(s)
    }

    fn req(key: &str, operator: Operator, values: &[&str]) -> Requirement {
        Requirement {
            key: key.to_owned(),
            operator,
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    fn matches(selector: &str, labels: &[(&str, &str)]) -> bool {
        let map: HashMap<&str, &str> = labels.iter().copied().collect();
        parse(selector).matches(|k| map.get(k).copied())
    }

    #[test]
    fn every_operator_parses() {
        use Operator::*;
        let cases: &[(&str, Requirement)] = &[
            ("a", req("a", Exists, &[])),
            ("!a", req("a", DoesNotExist, &[])),
            ("a=b", req("a", Equals, &["b"])),
            ("a==b", req("a", DoubleEquals, &["b"])),
            ("a!=b", req("a", NotEquals, &["b"])),
            ("a in (c,b)", req("a", In, &["b", "c"])),
            ("a notin (b)", req("a", NotIn, &["b"])),
            ("a>5", req("a", GreaterThan, &["5"])),
            ("a<5", req("a", LessThan, &["5"])),
            ("a=", req("a", Equals, &[""])),
            ("a in ()", req("a", In, &[""])),
            ("a in (,b)", req("a", In, &["", "b"])),
            ("a in (b,)", req("a", In, &["", "b"])),
            ("a in (b,,c)", req("a", In, &["", "b", "c"])),
            ("a in (b,,,)", req("a", In, &["", "b"])),
            ("a in (,,,b)", req("a", In, &["", "b"])),
            ("a in (b,b)", req("a", In, &["b"])),
            (
                "example.com/a-b_c.d=x.y-z_1",
                req("example.com/a-b_c.d", Equals, &["x.y-z_1"]),
            ),
            // `in` and `notin` are plain words where keys and values stand.
            ("in in (in,notin)", req("in", In, &["in", "notin"])),
            ("notin=in", req("notin", Equals, &["in"])),
        ];
        for (text, want) in cases {
            assert_eq!(
                parse(text).requirements(),
                std::slice::from_ref(want),
                "{text}"
            );
        }
    }

    #[test]
    fn whitespace_and_order() {
        let s = parse(" \tz = 1 ,\n a in ( x , y ) ,!b\r");
        let keys: Vec<&str> = s.requirements().iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["a", "b", "z"]);
        assert!(parse("").is_empty());
        assert!(parse("  ").is_empty());
        assert_eq!(parse("a=b,a!=c").requirements().len(), 2);
    }

    #[test]
    fn grammar_errors_have_upstream_wording() {
        let ops = "in, notin, =, ==, !=, gt, lt";
        let cases: &[(&str, String)] = &[
            (
                ",",
                "found ',', expected: !, identifier, or 'end of string'".into(),
            ),
            (
                "=a",
                "found '=', expected: !, identifier, or 'end of string'".into(),
            ),
            ("a,", "found '', expected: identifier after ','".into()),
            ("a,,b", "found ',', expected: identifier after ','".into()),
            (
                "a=b c",
                "found 'c', expected: ',' or 'end of string'".into(),
            ),
            ("!a=b", "found '=', expected: ',' or 'end of string'".into()),
            (
                "a b",
                format!("unable to parse requirement: found 'b', expected: {ops}"),
            ),
            (
                "a (",
                format!("unable to parse requirement: found '(', expected: {ops}"),
            ),
            (
                "!!a",
                "unable to parse requirement: found '!', expected: identifier".into(),
            ),
            (
                "a in b",
                "unable to parse requirement: found 'b' expected: '('".into(),
            ),
            (
                "a in (b",
                "unable to parse requirement: found '', expected: ',' or ')'".into(),
            ),
            (
                "a in (b c)",
                "unable to parse requirement: found 'c', expected: ',' or ')'".into(),
            ),
            (
                "a in (b,,)",
                "unable to parse requirement: found ')', expected: ',', or identifier".into(),
            ),
            (
                "a in (,,)",
                "unable to parse requirement: found ')', expected: ',', or identifier".into(),
            ),
            (
                "a in (=)",
                "unable to parse requirement: found '=', expected: ',', ')' or identifier".into(),
            ),
            (
                "a in (,=)",
                "unable to parse requirement: found '=', expected: ',', or identifier".into(),
            ),
            (
                "a in (",
                "unable to parse requirement: found '', expected: ',', ')' or identifier".into(),
            ),
            (
                "a=(",
                "unable to parse requirement: found '(', expected: identifier".into(),
            ),
            (
                "a===b",
                "unable to parse requirement: found '=', expected: identifier".into(),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(&err(text), want, "{text:?}");
        }
    }

    #[test]
    fn key_and_value_errors_have_upstream_wording() {
        let name = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        assert_eq!(
            err("-a=b"),
            format!("unable to parse requirement: <nil>: Invalid value: \"-a\": {name}")
        );
        assert_eq!(
            err("/a"),
            "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part must be non-empty"
        );
        assert_eq!(
            err("A.com/"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"A.com/\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); name part must be non-empty; {name}"
            )
        );
        assert!(err("a/b/c").starts_with(
            "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name must consist of"
        ));
        assert!(err("a/b/c").ends_with(
            " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ));
        let long = "k".repeat(64);
        assert!(err(&long).contains("name part must be no more than 63 characters"));

        let value = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
        assert_eq!(
            err("app=a/b"),
            format!("unable to parse requirement: values[0][app]: Invalid value: \"a/b\": {value}")
        );
        assert_eq!(
            err("app in (ok,-x,_y)"),
            format!(
                "unable to parse requirement: [values[0][app]: Invalid value: \"-x\": {value}, values[1][app]: Invalid value: \"_y\": {value}]"
            )
        );
        assert_eq!(
            err(&format!("app={}", "v".repeat(64))),
            format!(
                "unable to parse requirement: values[0][app]: Invalid value: \"{}\": must be no more than 63 characters",
                "v".repeat(64)
            )
        );
        assert_eq!(
            err("n>x"),
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        // A negative number is an integer but not a label value.
        assert!(err("n>-1").starts_with(
            "unable to parse requirement: values[0][n]: Invalid value: \"-1\": a valid label"
        ));
        assert_eq!(
            err("n<"),
            "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        // A key is quoted as Go quotes it.
        assert!(err("a\"b").starts_with(
            "unable to parse requirement: <nil>: Invalid value: \"a\\\"b\": name part"
        ));
    }

    #[test]
    fn nul_bytes_end_the_input_where_a_token_would_start() {
        assert_eq!(
            parse("a \0=b").requirements(),
            [req("a", Operator::Exists, &[])]
        );
        assert_eq!(
            err("a\0b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
    }

    #[test]
    fn matching() {
        let l = [("app", "web"), ("tier", "front"), ("n", "7"), ("empty", "")];
        assert!(matches("", &l));
        assert!(matches("app", &l));
        assert!(!matches("!app", &l));
        assert!(matches("!nope", &l));
        assert!(matches("app=web", &l) && matches("app==web", &l));
        assert!(!matches("app=db", &l));
        assert!(matches("app!=db", &l) && matches("nope!=db", &l));
        assert!(!matches("app!=web", &l));
        assert!(matches("app in (db,web)", &l) && !matches("nope in (db,web)", &l));
        assert!(matches("app notin (db)", &l) && matches("nope notin (db)", &l));
        assert!(!matches("app notin (web)", &l));
        assert!(
            matches("n>6", &l)
                && !matches("n>7", &l)
                && matches("n<8", &l)
                && !matches("nope>1", &l)
        );
        assert!(
            !matches("app>1", &l),
            "a label that is not an integer never compares"
        );
        assert!(matches("empty=", &l) && matches("empty in ()", &l) && !matches("nope=", &l));
        assert!(matches("app=web,tier=front", &l) && !matches("app=web,tier=back", &l));
    }

    #[test]
    fn printed_selectors_parse_back() {
        for text in [
            "",
            "a",
            "!a",
            "a=b",
            "a==b",
            "a!=",
            "b in (y,x,)",
            "b notin ()",
            "n>1",
            "n<2",
            "z,!y,x=1",
        ] {
            let s = parse(text);
            assert_eq!(parse(&s.to_string()), s, "{text} -> {s}");
        }
        assert_eq!(parse("z=1, b in (y,x)").to_string(), "b in (x,y),z=1");
    }

    #[test]
    fn label_syntax() {
        assert!(label_key_errors("app").is_empty());
        assert!(label_key_errors("k8s.io/app-name_1.x").is_empty());
        assert!(label_key_errors("a").is_empty());
        assert_eq!(label_key_errors("").len(), 2);
        assert!(label_value_errors("").is_empty());
        assert!(label_value_errors("A_b-c.9").is_empty());
        assert_eq!(label_value_errors("a b").len(), 1);
    }
}

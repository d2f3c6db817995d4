//! Templates read as client-go's `jsonpath.Parser` reads them: text, and actions in
//! braces made of fields (`.a`, `..a`, `.*`), brackets (`[0]`, `[1:3]`, `[*]`,
//! `['a.b']`, unions `[0,2]`, filters `[?(@.x=="y")]`), quoted text, numbers, booleans
//! and the identifiers `range` and `end`. The grammar is upstream's, quirks included
//! (a key in `['…']` is split at its dots; `\` escapes one character of a field name);
//! the errors are worded as upstream words them.
//!
//! Upstream's parser recurses once per token; this one loops, and only the nested
//! parts (union members, bracketed keys, filter sides) recurse, at most
//! [`MAX_NESTING`] deep.

/// How deep bracketed parts may nest: far beyond any path a person writes.
const MAX_NESTING: usize = 16;

/// One step of a template.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    /// An action: its steps, each applied to what the one before found.
    List(Vec<Node>),
    /// Literal text (outside actions, or quoted inside one).
    Text(String),
    /// `.name`: a key of a map.
    Field(String),
    /// A bare word: `range`, `end`, or one evaluation rejects.
    Identifier(String),
    /// `[start:end:step]`, `[n]`, `[*]`.
    Array([Param; 3]),
    /// `[?(left op right)]`, or `[?(left)]` (the left side exists).
    Filter { left: Vec<Node>, right: Vec<Node>, operator: String },
    Int(i64),
    Float(f64),
    Bool(bool),
    /// `.*`
    Wildcard,
    /// `..`
    Recursive,
    /// `[a,b]`: each member's results in turn.
    Union(Vec<Vec<Node>>),
}

/// One bound of a slice, as upstream's `ParamsEntry`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Param {
    pub value: i64,
    /// Written (or implied) in the template.
    pub known: bool,
    /// The end of `[n]`, implied as `n + 1`.
    pub derived: bool,
}

/// Where the parser is in a template (upstream's `pos`, `start` and `width`, in bytes).
struct Parser<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    width: usize,
    depth: usize,
}

/// The nodes of `template`, or upstream's error.
pub(crate) fn parse(template: &str) -> Result<Vec<Node>, String> {
    parse_nested(template, 0)
}

fn parse_nested(template: &str, depth: usize) -> Result<Vec<Node>, String> {
    if depth > MAX_NESTING {
        return Err("jsonpath nested too deeply".to_owned());
    }
    let mut parser = Parser { input: template, pos: 0, start: 0, width: 0, depth };
    parser.parse_text()
}

/// The steps of one action written without its braces (upstream's `parseAction`: a
/// union member, a bracketed key, a side of a filter).
fn parse_action(text: &str, depth: usize) -> Result<Vec<Node>, String> {
    let mut root = parse_nested(&format!("{{{text}}}"), depth + 1)?;
    match root.first_mut() {
        Some(Node::List(nodes)) => Ok(std::mem::take(nodes)),
        _ => Ok(Vec::new()),
    }
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    fn next(&mut self) -> Option<char> {
        let c = self.rest().chars().next();
        self.width = c.map_or(0, char::len_utf8);
        self.pos += self.width;
        c
    }

    fn backup(&mut self) {
        self.pos -= self.width;
    }

    fn peek(&mut self) -> Option<char> {
        self.rest().chars().next()
    }

    fn consume(&mut self) -> &'a str {
        let text = &self.input[self.start..self.pos];
        self.start = self.pos;
        text
    }

    /// The byte two before the cursor: upstream's test for an escaped quote.
    fn escaped(&self) -> bool {
        self.pos >= 2 && self.input.as_bytes()[self.pos - 2] == b'\\'
    }

    fn parse_text(&mut self) -> Result<Vec<Node>, String> {
        let mut root = Vec::new();
        loop {
            if self.rest().starts_with('{') {
                if self.pos > self.start {
                    root.push(Node::Text(self.consume().to_owned()));
                }
                self.pos += 1;
                self.consume();
                root.push(Node::List(self.parse_inside_action()?));
                continue;
            }
            if self.next().is_none() {
                break;
            }
        }
        if self.pos > self.start {
            root.push(Node::Text(self.consume().to_owned()));
        }
        Ok(root)
    }

    /// The steps of an action, up to and past its closing brace.
    fn parse_inside_action(&mut self) -> Result<Vec<Node>, String> {
        let mut cur = Vec::new();
        loop {
            if self.rest().starts_with('}') {
                self.pos += 1;
                self.consume();
                return Ok(cur);
            }
            if self.rest().starts_with("[?(") {
                self.parse_filter(&mut cur)?;
                continue;
            }
            if self.rest().starts_with("..") {
                self.parse_recursive(&mut cur)?;
                continue;
            }
            match self.next() {
                None | Some('\r' | '\n') => return Err("unclosed action".to_owned()),
                Some(' ' | '@' | '$') => {
                    self.consume();
                }
                Some('[') => self.parse_array(&mut cur)?,
                Some(quote @ ('"' | '\'')) => self.parse_quote(&mut cur, quote)?,
                Some('.') => self.parse_field(&mut cur),
                Some(c) if c == '+' || c == '-' || is_digit(c) => {
                    self.backup();
                    self.parse_number(&mut cur)?;
                }
                Some(c) if is_alphanumeric(c) => {
                    self.backup();
                    self.parse_identifier(&mut cur);
                }
                Some(c) => return Err(format!("unrecognized character in action: {}", go_unicode(c))),
            }
        }
    }

    fn parse_identifier(&mut self, cur: &mut Vec<Node>) {
        while !is_terminator(self.next()) {}
        self.backup();
        let word = self.consume();
        cur.push(match word {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            _ => Node::Identifier(word.to_owned()),
        });
    }

    fn parse_recursive(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        if cur.last() == Some(&Node::Recursive) {
            return Err("invalid multiple recursive descent".to_owned());
        }
        self.pos += 2;
        self.consume();
        cur.push(Node::Recursive);
        if self.peek().is_some_and(is_alphanumeric) {
            self.parse_field(cur);
        }
        Ok(())
    }

    fn parse_number(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        loop {
            match self.next() {
                Some(c) if c == '.' || is_digit(c) => {}
                _ => break,
            }
        }
        self.backup();
        let text = self.consume();
        // Go's Atoi, then ParseFloat (which refuses what overflows to infinity).
        if let Ok(i) = text.parse::<i64>() {
            cur.push(Node::Int(i));
        } else if let Some(f) = text.parse::<f64>().ok().filter(|f| f.is_finite()) {
            cur.push(Node::Float(f));
        } else {
            return Err(format!("cannot parse number {text}"));
        }
        Ok(())
    }

    fn parse_array(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated array".to_owned()),
                Some(']') => break,
                Some(_) => {}
            }
        }
        let consumed = self.consume();
        let text = match &consumed[1..consumed.len() - 1] {
            "*" => ":",
            text => text,
        };
        let depth = self.depth;

        let members: Vec<&str> = text.split(',').collect();
        if members.len() > 1 {
            let union = members
                .iter()
                .map(|m| parse_action(&format!("[{}]", m.trim_matches(' ')), depth))
                .collect::<Result<Vec<_>, _>>()?;
            cur.push(Node::Union(union));
            return Ok(());
        }

        // A quoted key: upstream reads it as a field path, dots and all.
        if let Some(key) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')).filter(|k| !k.contains('\'')) {
            cur.extend(parse_action(&format!(".{key}"), depth)?);
            return Ok(());
        }

        let params = slice_params(text)?;
        cur.push(Node::Array(params));
        Ok(())
    }

    fn parse_filter(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        self.pos += 3;
        self.consume();
        // A ')' ends the filter outside the first quoted part (upstream pairs only one).
        let (mut begin, mut end, mut pair) = (false, false, '\0');
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated filter".to_owned()),
                Some(quote @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = quote;
                    } else if !self.escaped() && quote == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                Some(_) => {}
            }
        }
        if self.next() != Some(']') {
            return Err("unclosed array expect ]".to_owned());
        }
        let consumed = self.consume();
        let text = &consumed[..consumed.len() - 2];
        let depth = self.depth;
        match split_comparison(text) {
            None => cur.push(Node::Filter {
                left: parse_action(text, depth)?,
                right: Vec::new(),
                operator: "exists".to_owned(),
            }),
            Some((left, operator, right)) => cur.push(Node::Filter {
                left: parse_action(left, depth)?,
                right: parse_action(right, depth)?,
                operator: operator.to_owned(),
            }),
        }
        Ok(())
    }

    fn parse_quote(&mut self, cur: &mut Vec<Node>, quote: char) -> Result<(), String> {
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated quoted string".to_owned()),
                Some(c) if c == quote && !self.escaped() => break,
                Some(_) => {}
            }
        }
        let quoted = self.consume();
        match unquote(quoted) {
            Some(text) => cur.push(Node::Text(text)),
            None => return Err(format!("unquote string {quoted} error invalid syntax")),
        }
        Ok(())
    }

    fn parse_field(&mut self, cur: &mut Vec<Node>) {
        self.consume();
        loop {
            match self.next() {
                // A backslash takes the next character into the name, whatever it is.
                Some('\\') => {
                    self.next();
                }
                c if is_terminator(c) => {
                    self.backup();
                    break;
                }
                _ => {}
            }
        }
        let name = self.consume();
        cur.push(match name {
            "*" => Node::Wildcard,
            _ => Node::Field(name.replace('\\', "")),
        });
    }
}

/// `left op right` of a filter, as upstream's `^([^!<>=]+)([!<>=]+)(.+?)$` splits it.
fn split_comparison(text: &str) -> Option<(&str, &str, &str)> {
    let is_operator = |c: char| matches!(c, '!' | '<' | '>' | '=');
    let op_start = text.find(is_operator).filter(|&i| i > 0)?;
    let op_len = text[op_start..].find(|c| !is_operator(c)).unwrap_or(text.len() - op_start);
    // The right side needs a character: the regexp gives it the operator's last one
    // when nothing follows.
    let op_len = match text.len() - op_start - op_len {
        0 if op_len > 1 => op_len - 1,
        0 => return None,
        _ => op_len,
    };
    let right = &text[op_start + op_len..];
    (!right.contains('\n')).then_some((&text[..op_start], &text[op_start..op_start + op_len], right))
}

/// The three bounds of `[start:end:step]` (upstream's `^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$`).
fn slice_params(text: &str) -> Result<[Param; 3], String> {
    let invalid = || format!("invalid array index {text}");
    let mut groups: [Option<&str>; 3] = [None; 3];
    let mut rest = text;
    for (i, group) in groups.iter_mut().enumerate() {
        let body_start = usize::from(i > 0);
        if i > 0 && !rest.starts_with(':') {
            break;
        }
        let body = &rest[body_start..];
        let sign = usize::from(body.starts_with('-'));
        let digits = body[sign..].find(|c: char| !c.is_ascii_digit()).unwrap_or(body.len() - sign);
        let len = body_start + sign + digits;
        *group = Some(&rest[..len]);
        rest = &rest[len..];
    }
    if !rest.is_empty() {
        return Err(invalid());
    }
    let mut params = [Param::default(); 3];
    for i in 0..3 {
        let written = groups[i].unwrap_or("");
        if written.is_empty() {
            if i == 1 {
                params[1] = Param { value: params[0].value.wrapping_add(1), known: true, derived: true };
            }
            continue;
        }
        let number = if i > 0 { &written[1..] } else { written };
        if i > 0 && number.is_empty() {
            continue;
        }
        let value = number.parse::<i64>().map_err(|_| format!("array index {number} is not a number"))?;
        params[i] = Param { value, known: true, derived: false };
    }
    Ok(params)
}

/// A quoted string's text, as upstream's `UnquoteExtend` reads it: Go's escapes, in
/// single or double quotes. A byte escape above 0x7f (which Go would keep as a raw
/// byte) becomes U+FFFD, since the text must stay UTF-8.
fn unquote(quoted: &str) -> Option<String> {
    let quote = quoted.chars().next()?;
    if quoted.len() < 2 || !quoted.ends_with(quote) || !matches!(quote, '"' | '\'') {
        return None;
    }
    let inner = &quoted[1..quoted.len() - 1];
    if !inner.contains(['\\', quote]) {
        return Some(inner.to_owned());
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == quote {
            return None;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escape = chars.next()?;
        let mut hex = |n: usize| -> Option<u32> {
            (0..n).try_fold(0u32, |v, _| Some(v * 16 + chars.next()?.to_digit(16)?))
        };
        let decoded = match escape {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\\' => '\\',
            '\'' | '"' if escape == quote => escape,
            'x' => byte_char(hex(2)?),
            'u' => char::from_u32(hex(4)?)?,
            'U' => char::from_u32(hex(8)?)?,
            '0'..='7' => {
                let more = (chars.next()?.to_digit(8)?, chars.next()?.to_digit(8)?);
                let value = escape.to_digit(8)? * 64 + more.0 * 8 + more.1;
                if value > 255 {
                    return None;
                }
                byte_char(value)
            }
            _ => return None,
        };
        out.push(decoded);
    }
    Some(out)
}

fn byte_char(value: u32) -> char {
    if value < 0x80 {
        char::from(value as u8)
    } else {
        char::REPLACEMENT_CHARACTER
    }
}

/// Go's `isTerminator`: what ends a field name or a word (`None` is the end of input).
fn is_terminator(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => matches!(c, ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'),
    }
}

/// Go's `unicode.IsDigit` (as near as the standard library comes).
fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric())
}

/// Go's `isAlphaNumeric`: `_`, a letter or a digit.
fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || is_digit(c)
}

/// A rune as Go's `%#U` prints it: `U+002A '*'`, without the quoted form when it
/// does not print.
fn go_unicode(c: char) -> String {
    let printable = c == ' ' || !(c.is_control() || c.is_whitespace() || ('\u{e000}'..='\u{f8ff}').contains(&c));
    if printable {
        format!("U+{:04X} '{c}'", c as u32)
    } else {
        format!("U+{:04X}", c as u32)
    }
}

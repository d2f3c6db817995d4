//! Tokens of CEL's grammar (cel-go's `CEL.g4` lexer rules): operators, punctuation,
//! literals with their escapes decoded, identifiers. A character no rule accepts is
//! reported as ANTLR reports it (`token recognition error at: '#'`) and skipped.

use super::issues::Issues;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Eq,
    Ne,
    In,
    Lt,
    Le,
    Ge,
    Gt,
    And,
    Or,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Dot,
    Comma,
    Minus,
    Not,
    Question,
    Colon,
    Plus,
    Star,
    Slash,
    Percent,
    True,
    False,
    Null,
    /// Digits (decimal, or hex with its `0x`), unsigned suffix removed.
    Int(String),
    Uint(String),
    Float(String),
    /// Decoded text, or the escape error cel-go reports for it.
    Str(Result<String, String>),
    Bytes(Result<Vec<u8>, String>),
    Ident(String),
    /// A backquoted identifier, which the Kubernetes environments do not enable.
    EscIdent(String),
    Eof,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    /// Code point offset of the first character.
    pub start: u32,
    /// The source text, as ANTLR quotes it in messages.
    pub text: String,
}

/// Split `chars` into tokens (ending with `Eof`), reporting unrecognised characters.
pub fn tokenize(chars: &[char], issues: &mut Issues) -> Vec<Token> {
    let mut lexer = Lexer { chars, pos: 0, tokens: Vec::new() };
    lexer.run(issues);
    lexer.tokens
}

struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    tokens: Vec<Token>,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn push(&mut self, tok: Tok, start: usize) {
        let text: String = self.chars[start..self.pos].iter().collect();
        self.tokens.push(Token { tok, start: start as u32, text });
    }

    fn run(&mut self, issues: &mut Issues) {
        while let Some(c) = self.peek(0) {
            let start = self.pos;
            if matches!(c, ' ' | '\t' | '\r' | '\n' | '\u{c}') {
                self.pos += 1;
                continue;
            }
            if c == '/' && self.peek(1) == Some('/') {
                while let Some(c) = self.peek(0) {
                    if c == '\n' {
                        break;
                    }
                    self.pos += 1;
                }
                continue;
            }
            if let Some(tok) = self.operator() {
                self.push(tok, start);
                continue;
            }
            if c.is_ascii_digit() || (c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit())) {
                let tok = self.number();
                self.push(tok, start);
                continue;
            }
            if matches!(c, 'r' | 'R') && matches!(self.peek(1), Some('"' | '\'')) {
                self.pos += 1;
                if let Some(raw) = self.string_body(true) {
                    self.push(Tok::Str(Ok(raw)), start);
                    continue;
                }
                self.pos = start;
            } else if matches!(c, 'b' | 'B') {
                let raw = matches!(self.peek(1), Some('r' | 'R')) && matches!(self.peek(2), Some('"' | '\''));
                if raw || matches!(self.peek(1), Some('"' | '\'')) {
                    self.pos += if raw { 2 } else { 1 };
                    if let Some(body) = self.string_body(raw) {
                        let bytes = if raw {
                            Ok(body.into_bytes())
                        } else {
                            unescape(&body, true).map(|s| s.into_iter().collect())
                        };
                        self.push(Tok::Bytes(bytes), start);
                        continue;
                    }
                    self.pos = start;
                }
            }
            if c == '"' || c == '\'' {
                if let Some(body) = self.string_body(false) {
                    let text = unescape(&body, false).map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
                    self.push(Tok::Str(text), start);
                    continue;
                }
                // An unterminated string: ANTLR reports what it consumed up to the end of the line.
                let mut end = self.pos + 1;
                while end < self.chars.len() && !matches!(self.chars[end], '\n' | '\r') {
                    end += 1;
                }
                let text: String = self.chars[self.pos..end].iter().collect();
                issues.push(Some(start as u32), format!("Syntax error: token recognition error at: '{text}'"));
                self.pos = end;
                continue;
            }
            if c.is_ascii_alphabetic() || c == '_' {
                while self.peek(0).is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                let word: String = self.chars[start..self.pos].iter().collect();
                let tok = match word.as_str() {
                    "true" => Tok::True,
                    "false" => Tok::False,
                    "null" => Tok::Null,
                    "in" => Tok::In,
                    _ => Tok::Ident(word),
                };
                self.push(tok, start);
                continue;
            }
            if c == '`' {
                let mut end = self.pos + 1;
                while end < self.chars.len()
                    && (self.chars[end].is_ascii_alphanumeric() || matches!(self.chars[end], '_' | '.' | '-' | '/' | ' '))
                {
                    end += 1;
                }
                if end > self.pos + 1 && self.chars.get(end) == Some(&'`') {
                    self.pos = end + 1;
                    let name: String = self.chars[start + 1..end].iter().collect();
                    self.push(Tok::EscIdent(name), start);
                    continue;
                }
                let text: String = self.chars[start..(end + 1).min(self.chars.len())].iter().collect();
                issues.push(Some(start as u32), format!("Syntax error: token recognition error at: '{text}'"));
                self.pos = (end + 1).min(self.chars.len()).max(start + 1);
                continue;
            }
            // `|` and `&` alone are the start of `||`/`&&` that did not complete.
            let text: String = if matches!(c, '|' | '&') {
                self.chars[start..(start + 2).min(self.chars.len())].iter().collect()
            } else {
                c.to_string()
            };
            issues.push(Some(start as u32), format!("Syntax error: token recognition error at: '{text}'"));
            self.pos += text.chars().count().max(1);
        }
        self.tokens.push(Token {
            tok: Tok::Eof,
            start: self.chars.len() as u32,
            text: "<EOF>".to_owned(),
        });
    }

    fn operator(&mut self) -> Option<Tok> {
        let c = self.peek(0)?;
        let next = self.peek(1);
        let (tok, len) = match (c, next) {
            ('=', Some('=')) => (Tok::Eq, 2),
            ('!', Some('=')) => (Tok::Ne, 2),
            ('<', Some('=')) => (Tok::Le, 2),
            ('>', Some('=')) => (Tok::Ge, 2),
            ('&', Some('&')) => (Tok::And, 2),
            ('|', Some('|')) => (Tok::Or, 2),
            ('<', _) => (Tok::Lt, 1),
            ('>', _) => (Tok::Gt, 1),
            ('[', _) => (Tok::LBracket, 1),
            (']', _) => (Tok::RBracket, 1),
            ('{', _) => (Tok::LBrace, 1),
            ('}', _) => (Tok::RBrace, 1),
            ('(', _) => (Tok::LParen, 1),
            (')', _) => (Tok::RParen, 1),
            ('.', Some(d)) if d.is_ascii_digit() => return None,
            ('.', _) => (Tok::Dot, 1),
            (',', _) => (Tok::Comma, 1),
            ('-', _) => (Tok::Minus, 1),
            ('!', _) => (Tok::Not, 1),
            ('?', _) => (Tok::Question, 1),
            (':', _) => (Tok::Colon, 1),
            ('+', _) => (Tok::Plus, 1),
            ('*', _) => (Tok::Star, 1),
            ('/', _) => (Tok::Slash, 1),
            ('%', _) => (Tok::Percent, 1),
            _ => return None,
        };
        self.pos += len;
        Some(tok)
    }

    fn digits(&mut self, hex: bool) -> usize {
        let start = self.pos;
        while self.peek(0).is_some_and(|c| if hex { c.is_ascii_hexdigit() } else { c.is_ascii_digit() }) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// NUM_INT, NUM_UINT or NUM_FLOAT, longest match first as ANTLR does.
    fn number(&mut self) -> Tok {
        let start = self.pos;
        if self.peek(0) == Some('0') && self.peek(1) == Some('x') && self.peek(2).is_some_and(|c| c.is_ascii_hexdigit()) {
            self.pos += 2;
            self.digits(true);
            let text: String = self.chars[start..self.pos].iter().collect();
            if matches!(self.peek(0), Some('u' | 'U')) {
                self.pos += 1;
                return Tok::Uint(text);
            }
            return Tok::Int(text);
        }
        let mut float = false;
        if self.peek(0) == Some('.') {
            self.pos += 1;
            self.digits(false);
            float = true;
        } else {
            self.digits(false);
            if self.peek(0) == Some('.') && self.peek(1).is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
                self.digits(false);
                float = true;
            }
        }
        if matches!(self.peek(0), Some('e' | 'E')) {
            let mark = self.pos;
            self.pos += 1;
            if matches!(self.peek(0), Some('+' | '-')) {
                self.pos += 1;
            }
            if self.digits(false) > 0 {
                float = true;
            } else {
                self.pos = mark;
            }
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        if float {
            return Tok::Float(text);
        }
        if matches!(self.peek(0), Some('u' | 'U')) {
            self.pos += 1;
            return Tok::Uint(text);
        }
        Tok::Int(text)
    }

    /// The body of a quoted string starting at the quote under the cursor (single or
    /// triple quoted), escapes left in place; `None` when it does not terminate.
    fn string_body(&mut self, raw: bool) -> Option<String> {
        let quote = self.peek(0)?;
        let triple = self.peek(1) == Some(quote) && self.peek(2) == Some(quote);
        let open = if triple { 3 } else { 1 };
        let mut i = self.pos + open;
        let mut body = String::new();
        loop {
            let c = *self.chars.get(i)?;
            if c == quote && (!triple || (self.chars.get(i + 1) == Some(&quote) && self.chars.get(i + 2) == Some(&quote))) {
                self.pos = i + open;
                return Some(body);
            }
            if !triple && matches!(c, '\n' | '\r') {
                return None;
            }
            if c == '\\' && !raw {
                body.push(c);
                let next = *self.chars.get(i + 1)?;
                body.push(next);
                i += 2;
                continue;
            }
            body.push(if c == '\r' { '\n' } else { c });
            i += 1;
        }
    }
}

/// Decode the escapes of a string (`bytes`: `\x`/octal escapes are raw bytes, not code
/// points) into UTF-8 bytes.
pub fn unescape(body: &str, bytes: bool) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    let mut buf = [0u8; 4];
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let Some(e) = chars.next() else {
            return Err("unable to unescape string, found '\\' as last character".to_owned());
        };
        let simple = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            '`' => Some('`'),
            '?' => Some('?'),
            _ => None,
        };
        if let Some(s) = simple {
            out.extend_from_slice(s.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let mut take = |n: usize, radix: u32| -> Result<u32, String> {
            let mut v = 0u32;
            for _ in 0..n {
                let d = chars
                    .next()
                    .and_then(|c| c.to_digit(radix))
                    .ok_or_else(|| "unable to unescape string".to_owned())?;
                v = v * radix + d;
            }
            Ok(v)
        };
        match e {
            'x' | 'X' => {
                let v = take(2, 16)?;
                push_code(&mut out, v, bytes)?;
            }
            'u' => {
                let v = take(4, 16)?;
                push_unicode(&mut out, v)?;
            }
            'U' => {
                let v = take(8, 16)?;
                push_unicode(&mut out, v)?;
            }
            '0'..='3' => {
                let v = (e as u32 - '0' as u32) * 64 + take(2, 8)?;
                push_code(&mut out, v, bytes)?;
            }
            _ => return Err("unable to unescape string".to_owned()),
        }
    }
    Ok(out)
}

fn push_code(out: &mut Vec<u8>, v: u32, bytes: bool) -> Result<(), String> {
    if bytes {
        out.push(v as u8);
        Ok(())
    } else {
        push_unicode(out, v)
    }
}

fn push_unicode(out: &mut Vec<u8>, v: u32) -> Result<(), String> {
    let c = char::from_u32(v).ok_or_else(|| "invalid unicode code point".to_owned())?;
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        let chars: Vec<char> = s.chars().collect();
        let mut issues = Issues::default();
        tokenize(&chars, &mut issues).into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers_strings_and_operators() {
        assert_eq!(
            toks("1 2u 0x1F 1.5e3 .5 1e2 'a\\n' b'\\xff' r'\\d' self.x<=3"),
            vec![
                Tok::Int("1".into()),
                Tok::Uint("2".into()),
                Tok::Int("0x1F".into()),
                Tok::Float("1.5e3".into()),
                Tok::Float(".5".into()),
                Tok::Float("1e2".into()),
                Tok::Str(Ok("a\n".into())),
                Tok::Bytes(Ok(vec![0xff])),
                Tok::Str(Ok("\\d".into())),
                Tok::Ident("self".into()),
                Tok::Dot,
                Tok::Ident("x".into()),
                Tok::Le,
                Tok::Int("3".into()),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn triple_quoted_strings_span_lines() {
        assert_eq!(toks("'''a\nb'''"), vec![Tok::Str(Ok("a\nb".into())), Tok::Eof]);
    }

    #[test]
    fn unknown_characters_are_reported_and_skipped() {
        let chars: Vec<char> = "a # b".chars().collect();
        let mut issues = Issues::default();
        let tokens = tokenize(&chars, &mut issues);
        assert_eq!(tokens.len(), 3);
        assert_eq!(issues.errors[0].message, "Syntax error: token recognition error at: '#'");
    }
}

//! Go's regular expressions (RE2 syntax, package `regexp`) on the `regex` crate, for
//! everything in a CRD that holds one: schemas' `pattern`, and CEL's `matches()`,
//! `find()` and `findAll()`.
//!
//! The two share their syntax, but a few escapes mean something else: Go's `\d`, `\w`,
//! `\s` and `\b` are ASCII-only where Rust's are Unicode-aware, so they are rewritten to
//! their ASCII classes; Go's `\Q…\E` literal text is escaped; octal escapes (`\123`)
//! are allowed as Go allows them. A pattern that does not parse is refused with Go's
//! words (`error parsing regexp: missing closing ): `(a``), read from the
//! `regex-syntax` parser's error.

use regex::{Regex, RegexBuilder};
use regex_syntax::ast::{self, ErrorKind};


/// Check that `pattern` compiles as Go's `regexp` compiles it; Go's error text when
/// it does not.
pub(crate) fn check(pattern: &str) -> Result<(), String> {
    build(pattern).map(|_| ())
}

/// Go's words for why `pattern` does not parse, read from the `regex-syntax` parser
/// (which reads Go's syntax nearly alike); `None` when it parses.
fn go_words(pattern: &str) -> Option<String> {
    let parsed = match ast::parse::Parser::new().parse(pattern) {
        Ok(parsed) => parsed,
        Err(e) => return Some(go_error(pattern, &e)),
    };
    let e = regex_syntax::hir::translate::Translator::new().translate(pattern, &parsed).err()?;
    let span = e.span();
    Some(format!(
        "error parsing regexp: invalid character class range: `{}`",
        &pattern[span.start.offset..span.end.offset]
    ))
}

/// Go's `regexp/syntax` error for what the Rust parser found.
fn go_error(pattern: &str, e: &ast::Error) -> String {
    let span = e.span();
    let mut at = &pattern[span.start.offset..span.end.offset];
    if at.is_empty() {
        // A zero-width span sits before the offending character.
        let next = pattern[span.start.offset..].chars().next().map_or(0, char::len_utf8);
        at = &pattern[span.start.offset..span.start.offset + next];
    }
    let from = &pattern[span.start.offset..];
    let (code, expr) = match e.kind() {
        ErrorKind::GroupUnclosed => ("missing closing )", pattern),
        ErrorKind::GroupUnopened => ("unexpected )", pattern),
        ErrorKind::ClassUnclosed => ("missing closing ]", from),
        ErrorKind::ClassRangeInvalid | ErrorKind::ClassRangeLiteral => ("invalid character class range", at),
        ErrorKind::ClassEscapeInvalid | ErrorKind::EscapeUnrecognized | ErrorKind::EscapeHexEmpty
        | ErrorKind::EscapeHexInvalid | ErrorKind::EscapeHexInvalidDigit => ("invalid escape sequence", at),
        ErrorKind::EscapeUnexpectedEof => ("trailing backslash at end of expression", ""),
        ErrorKind::RepetitionMissing => ("missing argument to repetition operator", at),
        ErrorKind::RepetitionCountInvalid | ErrorKind::RepetitionCountDecimalEmpty
        | ErrorKind::RepetitionCountUnclosed | ErrorKind::DecimalEmpty | ErrorKind::DecimalInvalid => {
            ("invalid repeat count", at)
        }
        ErrorKind::GroupNameEmpty | ErrorKind::GroupNameInvalid | ErrorKind::GroupNameUnexpectedEof
        | ErrorKind::GroupNameDuplicate { .. } => ("invalid named capture", at),
        ErrorKind::UnicodeClassInvalid => ("invalid character class range", at),
        ErrorKind::NestLimitExceeded(_) => ("expression nests too deeply", pattern),
        _ => ("invalid or unsupported Perl syntax", at),
    };
    format!("error parsing regexp: {code}: `{expr}`")
}

/// `pattern` compiled with Go's meaning, or Go's words for why it does not compile.
/// Matching takes linear time, and a pattern's program is bounded (1 MiB), so no
/// pattern can stall a request.
pub(crate) fn build(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(&go_to_rust(pattern)).octal(true).size_limit(1 << 20).build().map_err(|e| {
        go_words(pattern).unwrap_or_else(|| format!("error parsing regexp: {}", first_line(&e.to_string())))
    })
}

/// The `regex` crate's errors span lines (a caret diagram); keep the gist.
fn first_line(message: &str) -> String {
    message
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("error:"))
        .map(|l| l.trim_start().trim_start_matches("error:").trim().to_owned())
        .unwrap_or_else(|| message.lines().next().unwrap_or_default().to_owned())
}

/// Rewrite the escapes whose meaning differs between Go and Rust.
pub(crate) fn go_to_rust(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    // Just after `[` or `[^`, where a `]` is a literal.
    let mut class_start = false;
    while let Some(c) = chars.next() {
        let at_start = std::mem::take(&mut class_start);
        match c {
            '\\' => {
                let Some(e) = chars.next() else {
                    out.push('\\');
                    break;
                };
                match (e, in_class) {
                    ('d', false) => out.push_str("[0-9]"),
                    ('d', true) => out.push_str("0-9"),
                    ('w', false) => out.push_str("[0-9A-Za-z_]"),
                    ('w', true) => out.push_str("0-9A-Za-z_"),
                    ('s', false) => out.push_str(r"[\t\n\f\r ]"),
                    ('s', true) => out.push_str(r"\t\n\f\r "),
                    ('D', _) => out.push_str("[^0-9]"),
                    ('W', _) => out.push_str("[^0-9A-Za-z_]"),
                    ('S', _) => out.push_str(r"[^\t\n\f\r ]"),
                    ('b', false) => out.push_str(r"(?-u:\b)"),
                    ('B', false) => out.push_str(r"(?-u:\B)"),
                    ('Q', _) => {
                        let mut literal = String::new();
                        while let Some(l) = chars.next() {
                            if l == '\\' && chars.peek() == Some(&'E') {
                                chars.next();
                                break;
                            }
                            literal.push(l);
                        }
                        out.push_str(&regex::escape(&literal));
                    }
                    (e, _) => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                class_start = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    chars.next();
                    out.push('^');
                }
            }
            '[' if in_class && chars.peek() == Some(&':') => {
                // A POSIX class (`[:alpha:]`) inside a class: copy it whole.
                out.push('[');
                for p in chars.by_ref() {
                    out.push(p);
                    if p == ']' {
                        break;
                    }
                }
            }
            '[' => out.push_str(r"\["),
            ']' if in_class && !at_start => {
                in_class = false;
                out.push(']');
            }
            ']' if in_class => out.push_str(r"\]"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_patterns_are_refused_in_gos_words() {
        assert!(check("^[a-z]+(-[a-z]+)*$").is_ok());
        assert_eq!(check("(abc").unwrap_err(), "error parsing regexp: missing closing ): `(abc`");
        assert_eq!(check("abc)").unwrap_err(), "error parsing regexp: unexpected ): `abc)`");
        assert_eq!(check("a[bc").unwrap_err(), "error parsing regexp: missing closing ]: `[bc`");
        assert_eq!(check("*a").unwrap_err(), "error parsing regexp: missing argument to repetition operator: `*`");
    }

    fn matches(pattern: &str, text: &str) -> bool {
        build(pattern).unwrap().is_match(text)
    }

    #[test]
    fn perl_classes_are_ascii_as_in_go() {
        let digits = build(r"^\d+$").unwrap();
        assert_eq!(digits.is_match("123"), true);
        assert_eq!(digits.is_match("١٢٣"), false, "Arabic-Indic digits are not \\d in Go");
        let word = build(r"^[\w-]+$").unwrap();
        assert_eq!(word.is_match("a-b_c"), true);
        assert_eq!(word.is_match("é"), false);
        assert_eq!(matches(r"^\D$", "é"), true);
        assert_eq!(matches(r"^[^\d]$", "x"), true);
        assert_eq!(matches(r"a\sb", "a\u{a0}b"), false);
        assert_eq!(matches(r"\bx\b", "a x b"), true);
    }

    #[test]
    fn literal_text_and_classes_with_brackets() {
        assert_eq!(matches(r"^\Q1+1\E$", "1+1"), true);
        assert_eq!(matches(r"^[]a]+$", "]a"), true);
        assert_eq!(matches(r"^[[:alpha:]]+$", "abc"), true);
        assert_eq!(matches(r"^[a[]+$", "a["), true);
        assert!(build("(a").is_err());
    }
}

//! `pattern`: a Go regular expression (RE2 syntax) matched with the `regex` crate.
//!
//! The two share their syntax, but a few escapes mean something else: Go's `\d`, `\w`,
//! `\s` and `\b` are ASCII-only where Rust's are Unicode-aware, so they are rewritten to
//! their ASCII classes; Go's `\Q…\E` literal text is escaped; octal escapes (`\123`)
//! are allowed as Go allows them. Everything else is given to `regex` as it is.
//!
//! A pattern is compiled on its first use, so serving a CRD stays cheap.

use regex::{Regex, RegexBuilder};
use std::sync::OnceLock;

/// A `pattern` keyword.
#[derive(Debug)]
pub(crate) struct Pattern {
    /// As the schema writes it (messages quote it).
    pub source: Box<str>,
    compiled: OnceLock<Result<Regex, String>>,
}

impl Pattern {
    pub fn new(source: &str) -> Pattern {
        Pattern { source: source.into(), compiled: OnceLock::new() }
    }

    /// Whether `text` contains a match; the compile error when the pattern is not one.
    pub fn is_match(&self, text: &str) -> Result<bool, &str> {
        let compiled = self.compiled.get_or_init(|| {
            RegexBuilder::new(&go_to_rust(&self.source))
                .octal(true)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| e.to_string())
        });
        match compiled {
            Ok(re) => Ok(re.is_match(text)),
            Err(e) => Err(e),
        }
    }
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
    fn perl_classes_are_ascii_as_in_go() {
        let digits = Pattern::new(r"^\d+$");
        assert_eq!(digits.is_match("123"), Ok(true));
        assert_eq!(digits.is_match("١٢٣"), Ok(false), "Arabic-Indic digits are not \\d in Go");
        let word = Pattern::new(r"^[\w-]+$");
        assert_eq!(word.is_match("a-b_c"), Ok(true));
        assert_eq!(word.is_match("é"), Ok(false));
        assert_eq!(Pattern::new(r"^\D$").is_match("é"), Ok(true));
        assert_eq!(Pattern::new(r"^[^\d]$").is_match("x"), Ok(true));
        assert_eq!(Pattern::new(r"a\sb").is_match("a\u{a0}b"), Ok(false));
        assert_eq!(Pattern::new(r"\bx\b").is_match("a x b"), Ok(true));
    }

    #[test]
    fn literal_text_and_classes_with_brackets() {
        assert_eq!(Pattern::new(r"^\Q1+1\E$").is_match("1+1"), Ok(true));
        assert_eq!(Pattern::new(r"^[]a]+$").is_match("]a"), Ok(true));
        assert_eq!(Pattern::new(r"^[[:alpha:]]+$").is_match("abc"), Ok(true));
        assert_eq!(Pattern::new(r"^[a[]+$").is_match("a["), Ok(true));
        assert!(Pattern::new("(a").is_match("a").is_err());
    }
}

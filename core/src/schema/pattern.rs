//! `pattern` of an OpenAPI schema: a regular expression in Go's RE2 syntax, which the
//! Rust `regex-syntax` parser reads nearly alike. A pattern that does not compile is
//! refused with Go's words (`error parsing regexp: missing closing ): `(a``).

use regex_syntax::ast::{self, ErrorKind};

/// Check that `pattern` compiles; Go's error text when it does not.
pub(crate) fn compile(pattern: &str) -> Result<(), String> {
    let parsed = ast::parse::Parser::new().parse(pattern).map_err(|e| go_error(pattern, &e))?;
    regex_syntax::hir::translate::Translator::new()
        .translate(pattern, &parsed)
        .map(|_| ())
        .map_err(|e| {
            let span = e.span();
            format!(
                "error parsing regexp: invalid character class range: `{}`",
                &pattern[span.start.offset..span.end.offset]
            )
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_patterns_are_refused_in_gos_words() {
        assert!(compile("^[a-z]+(-[a-z]+)*$").is_ok());
        assert_eq!(compile("(abc").unwrap_err(), "error parsing regexp: missing closing ): `(abc`");
        assert_eq!(compile("abc)").unwrap_err(), "error parsing regexp: unexpected ): `abc)`");
        assert_eq!(compile("a[bc").unwrap_err(), "error parsing regexp: missing closing ]: `[bc`");
        assert_eq!(compile("*a").unwrap_err(), "error parsing regexp: missing argument to repetition operator: `*`");
    }
}

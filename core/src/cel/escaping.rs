//! Property names as rules spell them: Kubernetes' escaping of names that are not CEL
//! identifiers (`foo-bar` is `foo__dash__bar`, `namespace` is `__namespace__`), and
//! back.

/// Words CEL reserves; a property with such a name is reached as `__name__`.
const RESERVED: &[&str] = &[
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if", "import",
    "let", "loop", "package", "namespace", "return", "var", "void", "while",
];

/// The CEL name of a property, or `None` when it has no CEL spelling (it starts with
/// a digit or holds a character other than letters, digits, `_`, `-`, `.` and `/`).
pub fn escape(name: &str) -> Option<String> {
    let first = name.chars().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')) {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '_' if chars.peek() == Some(&'_') => {
                chars.next();
                out.push_str("__underscores__");
            }
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c => out.push(c),
        }
    }
    Some(out)
}

/// The property name a CEL name stands for, or `None` when it is not a valid escape.
pub fn unescape(escaped: &str) -> Option<String> {
    let mut out = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while let Some(start) = rest.find("__") {
        let after = &rest[start + 2..];
        // `__xyz__` where xyz holds no underscore.
        let Some(end) = after.find("__") else { break };
        let word = &after[..end];
        if word.is_empty() || word.contains('_') {
            out.push_str(&rest[..start + 1]);
            rest = &rest[start + 1..];
            continue;
        }
        out.push_str(&rest[..start]);
        match word {
            "underscores" => out.push_str("__"),
            "dot" => out.push('.'),
            "dash" => out.push('-'),
            "slash" => out.push('/'),
            w if RESERVED.contains(&w) => {
                if word.len() + 4 != escaped.len() {
                    return None;
                }
                out.push_str(w);
            }
            _ => return None,
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_kubernetes_does() {
        assert_eq!(escape("foo").as_deref(), Some("foo"));
        assert_eq!(escape("foo-bar").as_deref(), Some("foo__dash__bar"));
        assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
        assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("1a"), None);
        assert_eq!(escape("a b"), None);
        assert_eq!(escape(""), None);
    }

    #[test]
    fn unescape_reverses() {
        for name in ["foo", "foo-bar", "a.b/c", "a__b", "namespace", "x_y"] {
            assert_eq!(unescape(&escape(name).unwrap()).as_deref(), Some(name), "{name}");
        }
        assert_eq!(unescape("__bogus__"), None);
    }
}

//! Field selectors, parsed as apimachinery's `fields.ParseSelector` parses them:
//! comma-separated terms `field=value`, `field==value` or `field!=value`, where a value
//! may carry `\,`, `\=` and `\\`. Terms are sorted before they are read, so the first
//! error reported is the first bad term in sorted order, as upstream reports it.

/// How a term compares a field with its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldOperator {
    /// `=` or `==`
    Equals,
    /// `!=`
    NotEquals,
}

/// One `field op value` term, the value unescaped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldTerm {
    pub field: String,
    pub operator: FieldOperator,
    pub value: String,
}

impl FieldTerm {
    /// Whether a field whose value is `have` ("" when the object has no such field)
    /// satisfies the term.
    pub fn matches(&self, have: &str) -> bool {
        (have == self.value) == (self.operator == FieldOperator::Equals)
    }
}

/// A parsed field selector: every term must hold. Empty selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// In sorted order of the terms' text.
    pub terms: Vec<FieldTerm>,
}

impl FieldSelector {
    /// Parse `selector`; the error is the text kube-apiserver puts in its 400 Status.
    pub fn parse(selector: &str) -> Result<FieldSelector, String> {
        let mut parts = split_terms(selector);
        parts.sort_unstable();
        let mut terms = Vec::with_capacity(parts.len());
        for part in parts.into_iter().filter(|p| !p.is_empty()) {
            let Some((field, operator, raw)) = split_term(part) else {
                return Err(format!(
                    "invalid selector: '{selector}'; can't understand '{part}'"
                ));
            };
            terms.push(FieldTerm {
                field: field.to_owned(),
                operator,
                value: unescape_value(raw)?,
            });
        }
        Ok(FieldSelector { terms })
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// The selector in its canonical text (upstream's `String()`): terms in order, values
/// escaped; it parses back to the same selector.
impl std::fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = match t.operator {
                FieldOperator::Equals => "=",
                FieldOperator::NotEquals => "!=",
            };
            write!(f, "{}{op}{}", t.field, escape_value(&t.value))?;
        }
        Ok(())
    }
}

/// The terms between unescaped commas; an escaped comma stays in its term, backslash
/// and all.
fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::with_capacity(1);
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in selector.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// The field, operator and raw value of a term, split at the first operator found
/// scanning from the left (`!=`, then `==`, then `=` at each position).
fn split_term(term: &str) -> Option<(&str, FieldOperator, &str)> {
    const OPERATORS: [(&str, FieldOperator); 3] = [
        ("!=", FieldOperator::NotEquals),
        ("==", FieldOperator::Equals),
        ("=", FieldOperator::Equals),
    ];
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (op, operator) in OPERATORS {
            if let Some(value) = rest.strip_prefix(op) {
                return Some((&term[..i], operator, value));
            }
        }
    }
    None
}

/// A value with its escapes resolved; a stray `,` or `=`, or a `\` before anything but
/// `\`, `,` and `=`, is an error worded as upstream words it.
fn unescape_value(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_owned());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                ));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // Go prints the rune with %v: its code point in decimal.
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ))
            }
            c => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_owned());
    }
    Ok(out)
}

/// A value escaped so that it reads back as itself (apimachinery's `EscapeValue`).
pub fn escape_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use FieldOperator::*;

    fn term(field: &str, operator: FieldOperator, value: &str) -> FieldTerm {
        FieldTerm {
            field: field.into(),
            operator,
            value: value.into(),
        }
    }

    fn parse(s: &str) -> Vec<FieldTerm> {
        FieldSelector::parse(s)
            .unwrap_or_else(|e| panic!("{s:?}: {e}"))
            .terms
    }

    #[test]
    fn operators_and_order() {
        assert_eq!(parse("a=1"), [term("a", Equals, "1")]);
        assert_eq!(parse("a==1"), [term("a", Equals, "1")]);
        assert_eq!(parse("a!=1"), [term("a", NotEquals, "1")]);
        assert_eq!(parse("a="), [term("a", Equals, "")]);
        assert_eq!(parse("=x"), [term("", Equals, "x")]);
        assert_eq!(
            parse("z=1,a!=2,,m==3"),
            [
                term("a", NotEquals, "2"),
                term("m", Equals, "3"),
                term("z", Equals, "1")
            ]
        );
        assert!(parse("").is_empty());
        assert!(parse(",,").is_empty());
        // No trimming: whitespace belongs to the field and the value.
        assert_eq!(parse(" a = b "), [term(" a ", Equals, " b ")]);
    }

    #[test]
    fn escapes() {
        assert_eq!(parse(r"a=x\,y"), [term("a", Equals, "x,y")]);
        assert_eq!(parse(r"a=x\=y"), [term("a", Equals, "x=y")]);
        assert_eq!(parse(r"a=x\\y"), [term("a", Equals, r"x\y")]);
        assert_eq!(
            parse(r"a=x\\,b=2"),
            [term("a", Equals, r"x\"), term("b", Equals, "2")]
        );
        assert_eq!(parse(r"a!=\,"), [term("a", NotEquals, ",")]);
        for v in ["plain", "a,b", "x=y", r"back\slash", r"\,=\"] {
            assert_eq!(
                parse(&format!("f={}", escape_value(v))),
                [term("f", Equals, v)],
                "{v}"
            );
        }
    }

    #[test]
    fn printed_selectors_parse_back() {
        for text in [
            "",
            "a=1",
            "b!=2,a==1",
            r"a=x\,y\=z\\",
            r"f\,g=1",
            "=",
            "!=x",
        ] {
            let s = FieldSelector::parse(text).unwrap();
            let mut again = FieldSelector::parse(&s.to_string()).unwrap().terms;
            let mut terms = s.terms.clone();
            again.sort_by(|a, b| (&a.field, &a.value).cmp(&(&b.field, &b.value)));
            terms.sort_by(|a, b| (&a.field, &a.value).cmp(&(&b.field, &b.value)));
            assert_eq!(again, terms, "{text} -> {s}");
        }
    }

    #[test]
    fn errors_have_upstream_wording() {
        let err = |s: &str| FieldSelector::parse(s).expect_err(s);
        assert_eq!(err("a"), "invalid selector: 'a'; can't understand 'a'");
        assert_eq!(
            err("b=1,a"),
            "invalid selector: 'b=1,a'; can't understand 'a'"
        );
        assert_eq!(
            err("a<1"),
            "invalid selector: 'a<1'; can't understand 'a<1'"
        );
        assert_eq!(
            err("a=b=c"),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            err(r"a=\x"),
            r"invalid field selector: invalid escape sequence: \x"
        );
        assert_eq!(
            err(r"a=x\"),
            r"invalid field selector: invalid escape sequence: \"
        );
        // Sorted first: the bad escape in "a=…" is met before the bad term "b".
        assert_eq!(
            err(r"b,a=\q"),
            r"invalid field selector: invalid escape sequence: \q"
        );
    }

    #[test]
    fn matching() {
        assert!(term("f", Equals, "x").matches("x"));
        assert!(!term("f", Equals, "x").matches(""));
        assert!(term("f", NotEquals, "x").matches(""));
        assert!(!term("f", NotEquals, "x").matches("x"));
        assert!(term("f", Equals, "").matches(""));
    }
}

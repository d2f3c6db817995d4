//! Why Go's `encoding/json` refuses a document, in its words, for the validation
//! messages that quote it (a docker configuration Secret that is not a JSON object).

/// Why Go's `json.Unmarshal` would not read `bytes` into a `map[string]interface{}`;
/// `None` when it would (`null` included).
pub fn as_object(bytes: &[u8]) -> Option<String> {
    let value: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return Some(syntax(bytes, &e)),
    };
    let found = match value {
        serde_json::Value::Null | serde_json::Value::Object(_) => return None,
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
    };
    Some(format!("json: cannot unmarshal {found} into Go value of type map[string]interface {{}}"))
}

/// A syntax error as Go's scanner words it: the character it stopped at and what it
/// was looking for.
fn syntax(bytes: &[u8], e: &serde_json::Error) -> String {
    if e.is_eof() {
        return "unexpected end of JSON input".to_owned();
    }
    let offending = byte_at(bytes, e.line(), e.column());
    let text = e.to_string();
    let context = if text.starts_with("key must be a string") {
        "looking for beginning of object key string"
    } else if text.starts_with("expected `:`") {
        "after object key"
    } else if text.starts_with("expected `,` or `}`") {
        "after object key:value pair"
    } else if text.starts_with("expected `,` or `]`") {
        "after array element"
    } else if text.starts_with("trailing characters") {
        "after top-level value"
    } else if text.starts_with("invalid escape") {
        "in string escape code"
    } else if text.starts_with("control character") {
        "in string literal"
    } else {
        "looking for beginning of value"
    };
    match offending {
        Some(c) => format!("invalid character {} {context}", quote_char(c)),
        None => "unexpected end of JSON input".to_owned(),
    }
}

/// The character at a 1-based line and column (serde counts columns in bytes).
fn byte_at(bytes: &[u8], line: usize, column: usize) -> Option<char> {
    let start: usize = bytes
        .split(|b| *b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    let at = start + column.saturating_sub(1);
    let rest = bytes.get(at..)?;
    let text = String::from_utf8_lossy(&rest[..rest.len().min(4)]).into_owned();
    text.chars().next()
}

/// A character as Go's scanner quotes it.
fn quote_char(c: char) -> String {
    match c {
        '\'' => "'\\''".to_owned(),
        '"' => "'\"'".to_owned(),
        c if c.is_control() => format!("'\\x{:02x}'", c as u32),
        c => format!("'{c}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::as_object;

    #[test]
    fn go_words_for_bad_documents() {
        assert_eq!(as_object(b"{}"), None);
        assert_eq!(as_object(b"null"), None);
        assert_eq!(as_object(b"{not json").unwrap(), "invalid character 'n' looking for beginning of object key string");
        assert_eq!(as_object(b"").unwrap(), "unexpected end of JSON input");
        assert_eq!(as_object(b"{\"a\" 1}").unwrap(), "invalid character '1' after object key");
        assert_eq!(as_object(b"[1]").unwrap(), "json: cannot unmarshal array into Go value of type map[string]interface {}");
        assert_eq!(as_object(b"{} x").unwrap(), "invalid character 'x' after top-level value");
    }
}

//! A rule's `fieldPath`: a JSON path of field and map accesses (`.spec.ports`,
//! `['key with.dots']`) that must name a place in the schema, as upstream's
//! `ValidFieldPath` checks it; its normalized form is where a failing rule's error
//! is reported.

use serde_json::Value as Json;

/// The normalized form of `path` under `schema` (`spec.labels[app]`), or why it is not
/// a valid path there.
pub fn valid_field_path(path: &str, schema: &Json) -> Result<String, String> {
    let tokens = tokenize(path);
    let mut out = String::new();
    let mut node = schema;
    let mut it = tokens.into_iter();
    while let Some(tok) = it.next() {
        let name = match tok.as_str() {
            "[" => {
                let Some(quoted) = it.next() else {
                    return Err("unexpected end of JSON path".to_owned());
                };
                if quoted.len() < 2 || !quoted.starts_with('\'') || !quoted.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {quoted}"));
                }
                let name = unescape_single_quote(&quoted[1..quoted.len() - 1])
                    .map_err(|e| format!("invalid string literal: {e}"))?;
                match it.next() {
                    None => return Err("unexpected end of JSON path".to_owned()),
                    Some(close) if close != "]" => return Err(format!("expected ] but got {close}")),
                    Some(_) => {}
                }
                name
            }
            "." => match it.next() {
                None => return Err("unexpected end of JSON path".to_owned()),
                Some(name) => name,
            },
            other => return Err(format!("expected [ or . but got: {other}")),
        };
        if let Some(properties) = node.get("properties").and_then(Json::as_object) {
            node = properties.get(&name).ok_or_else(|| "does not refer to a valid field".to_owned())?;
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&name);
        } else if let Some(additional) = node.get("additionalProperties").filter(|a| a.is_object()) {
            node = additional;
            out.push('[');
            out.push_str(&name);
            out.push(']');
        } else {
            return Err("does not refer to a valid field".to_owned());
        }
    }
    Ok(out)
}

/// Split into `.`, `[`, `]` and the text between them; a token starting with a single
/// quote runs to the next unescaped quote, delimiters included.
fn tokenize(path: &str) -> Vec<String> {
    let chars: Vec<char> = path.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\'' {
            let mut j = i + 1;
            while j < chars.len() && !(chars[j] == '\'' && chars[j - 1] != '\\') {
                j += 1;
            }
            let end = (j + 1).min(chars.len());
            tokens.push(chars[i..end].iter().collect());
            i = end;
            continue;
        }
        if matches!(chars[i], '.' | '[' | ']') {
            tokens.push(chars[i].to_string());
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && !matches!(chars[j], '.' | '[' | ']') {
            j += 1;
        }
        tokens.push(chars[i..j].iter().collect());
        i = j;
    }
    tokens
}

fn unescape_single_quote(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(d) = chars.next() else {
            out.push('\\');
            break;
        };
        out.push(match d {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            other => return Err(format!("invalid escape char \\{other}")),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_must_name_fields_of_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"a.b": {"type": "string"}, "c": {"type": "string"}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}}
        }});
        assert_eq!(valid_field_path(".spec.c", &schema).as_deref(), Ok("spec.c"));
        assert_eq!(valid_field_path(".spec['a.b']", &schema).as_deref(), Ok("spec.a.b"));
        assert_eq!(valid_field_path(".labels['x/y']", &schema).as_deref(), Ok("labels[x/y]"));
        assert_eq!(valid_field_path(".spec.d", &schema), Err("does not refer to a valid field".to_owned()));
        assert_eq!(valid_field_path("spec", &schema), Err("expected [ or . but got: spec".to_owned()));
        assert_eq!(valid_field_path(".spec[c]", &schema), Err("expected single quoted string but got c".to_owned()));
        assert_eq!(valid_field_path(".spec.", &schema), Err("unexpected end of JSON path".to_owned()));
    }
}

//! Paths to a field of a structural schema, as CEL rules' `fieldPath` and a CRD's
//! `selectableFields` name them (upstream's `cel.ValidFieldPath`): `.spec.size`,
//! `.spec['x.y']`, `.metadata.labels.app`.

use super::Structural;
use crate::validation::FieldPath;

/// The field `json_path` names in `schema`, and its path; upstream's reason when it
/// names none. `allow_brackets`: `['name']` may be used.
pub(crate) fn resolve<'s>(
    json_path: &str,
    schema: Option<&'s Structural>,
    allow_brackets: bool,
) -> Result<(FieldPath, Option<&'s Structural>), String> {
    let tokens = tokens(json_path);
    let mut path = FieldPath::default();
    let mut node = schema;
    let mut i = 0;
    while i < tokens.len() {
        match tokens[i] {
            "[" => {
                if !allow_brackets {
                    return Err("array notation is not allowed".to_owned());
                }
                let name = tokens.get(i + 1).ok_or("unexpected end of JSON path")?;
                if name.len() < 2 || !name.starts_with('\'') || !name.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {name}"));
                }
                let name = unescape(&name[1..name.len() - 1]).map_err(|e| format!("invalid string literal: {e}"))?;
                (path, node) = step(path, node, &name)?;
                match tokens.get(i + 2) {
                    None => return Err("unexpected end of JSON path".to_owned()),
                    Some(&"]") => {}
                    Some(other) => return Err(format!("expected ] but got {other}")),
                }
                i += 3;
            }
            "." => {
                let name = tokens.get(i + 1).ok_or("unexpected end of JSON path")?;
                (path, node) = step(path, node, name)?;
                i += 2;
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok((path, node))
}

/// Into the field `name` of `node`: a property, or an entry of a map.
fn step<'s>(path: FieldPath, node: Option<&'s Structural>, name: &str) -> Result<(FieldPath, Option<&'s Structural>), String> {
    let invalid = || "does not refer to a valid field".to_owned();
    let node = node.ok_or_else(invalid)?;
    if !node.properties.is_empty() {
        let field = node.properties.get(name).ok_or_else(invalid)?;
        Ok((path.child(name), Some(field)))
    } else if let Some(additional) = &node.additional_properties {
        Ok((path.key(name), additional.schema.as_deref()))
    } else {
        Err(invalid())
    }
}

/// The path split at `.`, `[` and `]`, single-quoted names kept whole.
fn tokens(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\'' {
            let mut j = i + 1;
            while j < b.len() && !(b[j] == b'\'' && b[j - 1] != b'\\') {
                j += 1;
            }
            let end = (j + 1).min(b.len());
            out.push(&s[i..end]);
            i = end;
        } else if matches!(b[i], b'.' | b'[' | b']') {
            out.push(&s[i..i + 1]);
            i += 1;
        } else {
            let start = i;
            while i < b.len() && !matches!(b[i], b'.' | b'[' | b']') {
                i += 1;
            }
            out.push(&s[start..i]);
        }
    }
    out
}

/// CEL's escapes in a single-quoted name.
fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = match chars.next() {
            Some('a') => '\u{7}',
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('v') => '\u{b}',
            Some('\'') => '\'',
            Some('\\') => '\\',
            Some(other) => return Err(format!("invalid escape char \\{other}")),
            None => return Err("invalid escape char \\".to_owned()),
        };
        out.push(escaped);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_resolve_through_properties_and_maps() {
        let s = Structural::from_json(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "integer"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}})).unwrap();
        let (path, found) = resolve(".spec.size", Some(&s), false).unwrap();
        assert_eq!(path.as_str(), "spec.size");
        assert_eq!(found.unwrap().generic.ty, "integer");
        let (path, _) = resolve(".spec.labels['a.b']", Some(&s), true).unwrap();
        assert_eq!(path.as_str(), "spec.labels[a.b]");
        assert_eq!(resolve(".spec.nope", Some(&s), false).unwrap_err(), "does not refer to a valid field");
        assert_eq!(resolve("spec", Some(&s), false).unwrap_err(), "expected [ or . but got: spec");
        assert_eq!(resolve(".spec['size']", Some(&s), false).unwrap_err(), "array notation is not allowed");
        assert_eq!(resolve(".", Some(&s), false).unwrap_err(), "unexpected end of JSON path");
    }
}

//! Values printed as Go prints the decoded JSON (`map[string]interface{}` and friends)
//! with `%v`, `%#v`, `%s`, `reflect.TypeOf` and `json.Marshal`: kube-apiserver words
//! strategic merge patch errors and custom resource validation errors that way and
//! prints JSONPath results (printer columns, selectable fields) that way, and clients
//! show them as they are.

use crate::schema::go_quote;
use serde_json::{Map, Value};

/// The Go type a decoded JSON value has (integers are kept as `int64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GoType {
    Map,
    Slice,
    String,
    Int,
    Float,
    Bool,
    Nil,
}

impl GoType {
    pub(crate) fn of(value: &Value) -> GoType {
        match value {
            Value::Object(_) => GoType::Map,
            Value::Array(_) => GoType::Slice,
            Value::String(_) => GoType::String,
            Value::Number(n) if n.as_i64().is_some() => GoType::Int,
            Value::Number(_) => GoType::Float,
            Value::Bool(_) => GoType::Bool,
            Value::Null => GoType::Nil,
        }
    }

    /// As `reflect.Type.String()` prints it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            GoType::Map => "map[string]interface {}",
            GoType::Slice => "[]interface {}",
            GoType::String => "string",
            GoType::Int => "int64",
            GoType::Float => "float64",
            GoType::Bool => "bool",
            GoType::Nil => "<nil>",
        }
    }

    /// Maps and slices cannot be compared or hashed in Go.
    pub(crate) fn comparable(self) -> bool {
        !matches!(self, GoType::Map | GoType::Slice)
    }
}

/// `fmt.Sprintf("%v", value)`.
pub(crate) fn v(value: &Value) -> String {
    let mut out = String::new();
    write(&mut out, value, false);
    out
}

/// `fmt.Sprintf("%s", value)`: strings as they are, other scalars marked as a bad verb.
pub(crate) fn s(value: &Value) -> String {
    let mut out = String::new();
    write(&mut out, value, true);
    out
}

/// `fmt.Sprint` of a slice of lists (`[[a b] [c]]`).
pub(crate) fn lists(lists: &[&[Value]]) -> String {
    let inner: Vec<String> = lists
        .iter()
        .map(|items| v(&Value::Array(items.to_vec())))
        .collect();
    format!("[{}]", inner.join(" "))
}

/// `fmt.Sprintf("%v", map)`.
pub(crate) fn v_object(map: &Map<String, Value>) -> String {
    let mut out = String::new();
    write_map(&mut out, map, false);
    out
}

fn write_map(out: &mut String, map: &Map<String, Value>, s_verb: bool) {
    // fmt prints maps with their keys sorted; serde_json's map is sorted already.
    out.push_str("map[");
    for (i, (key, item)) in map.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(key);
        out.push(':');
        write(out, item, s_verb);
    }
    out.push(']');
}

fn write(out: &mut String, value: &Value, s_verb: bool) {
    match value {
        Value::Object(map) => write_map(out, map, s_verb),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write(out, item, s_verb);
            }
            out.push(']');
        }
        Value::String(text) => out.push_str(text),
        scalar if s_verb => {
            let ty = GoType::of(scalar).name();
            match scalar {
                Value::Null => out.push_str("%!s(<nil>)"),
                _ => out.push_str(&format!("%!s({ty}={})", scalar_v(scalar))),
            }
        }
        scalar => out.push_str(&scalar_v(scalar)),
    }
}

fn scalar_v(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(text) => text.clone(),
        Value::Object(_) | Value::Array(_) => v(value),
    }
}

/// `fmt.Sprintf("%#v", value)`: Go syntax, as field errors print a map or slice value
/// (`map[string]interface {}{"a":1}`).
pub(crate) fn sharp_v(value: &Value) -> String {
    let mut out = String::new();
    write_sharp(&mut out, value, true);
    out
}

/// `top`: the value itself rather than an element, where a nil prints as `<nil>`.
fn write_sharp(out: &mut String, value: &Value, top: bool) {
    match value {
        Value::Object(map) => {
            out.push_str("map[string]interface {}{");
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&go_quote(key));
                out.push(':');
                write_sharp(out, item, false);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push_str("[]interface {}{");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_sharp(out, item, false);
            }
            out.push('}');
        }
        Value::String(text) => out.push_str(&go_quote(text)),
        Value::Null if top => out.push_str("<nil>"),
        Value::Null => out.push_str("interface {}(nil)"),
        scalar => out.push_str(&scalar_v(scalar)),
    }
}

/// A float64 as `%v` prints it: `%g` with the fewest digits that read back the same,
/// in exponent form below 1e-4 and from 1e+06 on (Go's threshold for shortest `%g`).
pub(crate) fn float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Rust's `{:e}` gives the same shortest digits: `d.ddde-x`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let point = exp + 1; // digits before the decimal point
    let body = if point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    };
    if negative {
        format!("-{body}")
    } else {
        body
    }
}

/// `json.Marshal(value)`: compact, keys sorted (serde_json's map is sorted already),
/// `<`, `>`, `&`, U+2028 and U+2029 escaped, and floats as Go's encoder writes them.
pub(crate) fn json(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value);
    out
}

/// `json.Marshal(map)`.
pub(crate) fn json_object(map: &Map<String, Value>) -> String {
    let mut out = String::new();
    write_json_object(&mut out, map);
    out
}

fn write_json_object(out: &mut String, map: &Map<String, Value>) {
    out.push('{');
    for (i, (key, item)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_string(out, key);
        out.push(':');
        write_json(out, item);
    }
    out.push('}');
}

fn write_json(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) => write_json_object(out, map),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item);
            }
            out.push(']');
        }
        Value::String(text) => json_string(out, text),
        Value::Number(n) => match n.as_i64() {
            Some(i) => out.push_str(&i.to_string()),
            None => out.push_str(&json_float(n.as_f64().unwrap_or(0.0))),
        },
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
    }
}

fn json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        if let Some(escape) = shared_escape(c) {
            out.push_str(escape);
            continue;
        }
        match c {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The escapes Go's `%q` and its JSON encoder write alike: the double quote, the
/// backslash, and the control characters that have a letter of their own in both.
pub(crate) fn shared_escape(c: char) -> Option<&'static str> {
    Some(match c {
        '"' => "\\\"",
        '\\' => "\\\\",
        '\n' => "\\n",
        '\r' => "\\r",
        '\t' => "\\t",
        '\u{8}' => "\\b",
        '\u{c}' => "\\f",
        _ => return None,
    })
}

/// A float64 as Go's JSON encoder writes it: plain digits from 1e-6 up to 1e21, the
/// exponent form outside (`1e+21`, `1e-7`).
pub(crate) fn json_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let sci = format!("{f:e}");
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        // Go writes at least two exponent digits, then drops the zero of `e-0d`.
        return match exp.abs() {
            e if e < 10 && exp < 0 => format!("{mantissa}e-{e}"),
            e => format!("{mantissa}e{sign}{e:02}"),
        };
    }
    // Rust's `Display` gives the shortest digits that read back, never an exponent.
    let plain = format!("{f}");
    if plain == "-0" {
        "-0".to_owned()
    } else {
        plain
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prints_like_go() {
        assert_eq!(
            v(&json!({"b": [1, "x", null], "a": {"c": true}})),
            "map[a:map[c:true] b:[1 x <nil>]]"
        );
        assert_eq!(s(&json!({"a": 1, "b": "x"})), "map[a:%!s(int64=1) b:x]");
        assert_eq!(s(&json!(null)), "%!s(<nil>)");
        assert_eq!(s(&json!(1.5)), "%!s(float64=1.5)");
        assert_eq!(
            lists(&[&[json!("a"), json!("b")], &[json!(1)]]),
            "[[a b] [1]]"
        );
        assert_eq!(
            sharp_v(&json!({"a": 1, "b": ["x", null], "c": {}})),
            r#"map[string]interface {}{"a":1, "b":[]interface {}{"x", interface {}(nil)}, "c":map[string]interface {}{}}"#
        );
        assert_eq!(sharp_v(&json!(null)), "<nil>");
        assert_eq!(json(&json!({"b": 1.0, "a": "<x>"})), r#"{"a":"\u003cx\u003e","b":1}"#);
        assert_eq!(json(&json!(1e21)), "1e+21");
        assert_eq!(json(&json!(0.0000001)), "1e-7");
        assert_eq!(json(&json!(2.5)), "2.5");
        for (f, want) in [
            (1.5, "1.5"),
            (100000.0, "100000"),
            (1e6, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (123.456, "123.456"),
        ] {
            assert_eq!(float(f), want, "{f}");
        }
    }

    #[test]
    fn marshals_like_go() {
        assert_eq!(
            json(&json!({"b": [1, 2.5, null, true], "a": {"c": "x<y>&z\u{2028}\n\u{1}"}})),
            r#"{"a":{"c":"x\u003cy\u003e\u0026z\u2028\n\u0001"},"b":[1,2.5,null,true]}"#
        );
        for (f, want) in [
            (2.0, "2"),
            (0.75, "0.75"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (-2.5e-10, "-2.5e-10"),
        ] {
            assert_eq!(json_float(f), want, "{f}");
        }
    }
}

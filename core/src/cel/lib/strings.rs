//! cel-go's `strings` extension at version 2, as Kubernetes enables it: `charAt`,
//! `indexOf`, `lastIndexOf`, `lowerAscii`, `upperAscii`, `replace`, `split`,
//! `substring`, `trim`, `join`, `format` and `strings.quote`. Indexes count code
//! points, not bytes.

use super::sig::list;
use super::standard::format_g;
use super::Library;
use crate::cel::types::Type as Ty;
use crate::cel::value::Value;

pub(super) fn register(lib: &mut Library) {
    use Ty::*;
    lib.member("charAt", "string_char_at_int", vec![String, Int], String, |v| match (&v[0], &v[1]) {
        (Value::String(s), Value::Int(i)) => {
            let chars: Vec<char> = s.chars().collect();
            match usize::try_from(*i) {
                Ok(i) if i < chars.len() => Value::string(chars[i].to_string()),
                Ok(i) if i == chars.len() => Value::string(""),
                _ => Value::error(format!("index out of range: {i}")),
            }
        }
        _ => Value::no_such_overload(),
    });
    lib.member("indexOf", "string_index_of_string", vec![String, String], Int, |v| index_of(v, 0, false));
    lib.member("indexOf", "string_index_of_string_int", vec![String, String, Int], Int, |v| match v[2] {
        Value::Int(off) => index_of(v, off, false),
        _ => Value::no_such_overload(),
    });
    lib.member("lastIndexOf", "string_last_index_of_string", vec![String, String], Int, |v| {
        let len = match &v[0] {
            Value::String(s) => s.chars().count() as i64,
            _ => return Value::no_such_overload(),
        };
        match &v[1] {
            Value::String(sub) if sub.is_empty() => Value::Int(len),
            _ => index_of(v, len - 1, true),
        }
    });
    lib.member("lastIndexOf", "string_last_index_of_string_int", vec![String, String, Int], Int, |v| match v[2] {
        Value::Int(off) => index_of(v, off, true),
        _ => Value::no_such_overload(),
    });
    lib.member("lowerAscii", "string_lower_ascii", vec![String], String, |v| map_str(v, |s| s.to_ascii_lowercase()));
    lib.member("upperAscii", "string_upper_ascii", vec![String], String, |v| map_str(v, |s| s.to_ascii_uppercase()));
    lib.member("trim", "string_trim", vec![String], String, |v| map_str(v, |s| s.trim().to_owned()));
    lib.member("replace", "string_replace_string_string", vec![String, String, String], String, |v| replace(v, -1));
    lib.member("replace", "string_replace_string_string_int", vec![String, String, String, Int], String, |v| {
        match v[3] {
            Value::Int(n) => replace(v, n),
            _ => Value::no_such_overload(),
        }
    });
    lib.member("split", "string_split_string", vec![String, String], list(String), |v| split(v, -1));
    lib.member("split", "string_split_string_int", vec![String, String, Int], list(String), |v| match v[2] {
        Value::Int(n) => split(v, n),
        _ => Value::no_such_overload(),
    });
    lib.member("substring", "string_substring_int", vec![String, Int], String, |v| match (&v[0], &v[1]) {
        (Value::String(s), Value::Int(start)) => substring(s, *start, None),
        _ => Value::no_such_overload(),
    });
    lib.member("substring", "string_substring_int_int", vec![String, Int, Int], String, |v| {
        match (&v[0], &v[1], &v[2]) {
            (Value::String(s), Value::Int(start), Value::Int(end)) => substring(s, *start, Some(*end)),
            _ => Value::no_such_overload(),
        }
    });
    lib.member("join", "list_join", vec![list(String)], String, |v| join(v, ""));
    lib.member("join", "list_join_string", vec![list(String), String], String, |v| match &v[1] {
        Value::String(sep) => join(v, &sep.to_string()),
        _ => Value::no_such_overload(),
    });
    lib.member("format", "string_format", vec![String, list(Dyn)], String, format);
    lib.global("strings.quote", "strings_quote", vec![String], String, |v| match &v[0] {
        Value::String(s) => Value::string(quote(s)),
        _ => Value::no_such_overload(),
    });
}

fn map_str<'a>(v: &[Value<'a>], f: fn(&str) -> String) -> Value<'a> {
    match &v[0] {
        Value::String(s) => Value::string(f(s)),
        _ => Value::no_such_overload(),
    }
}

/// cel-go's `indexOf(sub, offset)` / `lastIndexOf(sub, offset)` over code points.
fn index_of<'a>(v: &[Value<'a>], offset: i64, last: bool) -> Value<'a> {
    let (Value::String(s), Value::String(sub)) = (&v[0], &v[1]) else {
        return Value::no_such_overload();
    };
    if sub.is_empty() {
        return Value::Int(offset);
    }
    if offset < 0 {
        return Value::error(format!("index out of range: {offset}"));
    }
    let runes: Vec<char> = s.chars().collect();
    let subs: Vec<char> = sub.chars().collect();
    let off = offset as usize;
    if off >= runes.len() {
        return Value::Int(-1);
    }
    let matches_at = |i: usize| i + subs.len() <= runes.len() && runes[i..i + subs.len()] == subs[..];
    if last {
        let start = off.min(runes.len().saturating_sub(subs.len()));
        if subs.len() > runes.len() {
            return Value::Int(-1);
        }
        (0..=start).rev().find(|&i| matches_at(i)).map_or(Value::Int(-1), |i| Value::Int(i as i64))
    } else {
        (off..runes.len()).find(|&i| matches_at(i)).map_or(Value::Int(-1), |i| Value::Int(i as i64))
    }
}

/// Go's `strings.Replace`: `n < 0` replaces every occurrence.
fn replace<'a>(v: &[Value<'a>], n: i64) -> Value<'a> {
    let (Value::String(s), Value::String(old), Value::String(new)) = (&v[0], &v[1], &v[2]) else {
        return Value::no_such_overload();
    };
    if n < 0 {
        Value::string(s.replace(&**old, new))
    } else {
        Value::string(s.replacen(&**old, new, n as usize))
    }
}

/// Go's `strings.SplitN`: an empty separator splits into code points, `n == 0`
/// yields nothing, `n < 0` no limit.
fn split<'a>(v: &[Value<'a>], n: i64) -> Value<'a> {
    let (Value::String(s), Value::String(sep)) = (&v[0], &v[1]) else {
        return Value::no_such_overload();
    };
    if n == 0 {
        return Value::list(Vec::new());
    }
    let parts: Vec<String> = if sep.is_empty() {
        let chars: Vec<char> = s.chars().collect();
        let limit = if n < 0 { chars.len() } else { (n as usize).min(chars.len()) };
        let mut out: Vec<String> = chars.iter().take(limit.saturating_sub(1)).map(|c| c.to_string()).collect();
        if limit > 0 {
            out.push(chars[limit - 1..].iter().collect());
        }
        out
    } else if n < 0 {
        s.split(&**sep).map(str::to_owned).collect()
    } else {
        s.splitn(n as usize, &**sep).map(str::to_owned).collect()
    };
    Value::list(parts.into_iter().map(Value::string).collect())
}

fn substring<'a>(s: &str, start: i64, end: Option<i64>) -> Value<'a> {
    let runes: Vec<char> = s.chars().collect();
    let len = runes.len() as i64;
    if let Some(end) = end {
        if start > end {
            return Value::error(format!("invalid substring range. start: {start}, end: {end}"));
        }
    }
    if start < 0 || start > len {
        return Value::error(format!("index out of range: {start}"));
    }
    let end = end.unwrap_or(len);
    if end < 0 || end > len {
        return Value::error(format!("index out of range: {end}"));
    }
    Value::string(runes[start as usize..end as usize].iter().collect::<String>())
}

fn join<'a>(v: &[Value<'a>], sep: &str) -> Value<'a> {
    let Value::List(l) = &v[0] else { return Value::no_such_overload() };
    let mut out = String::new();
    for (i, item) in l.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        match item {
            Value::String(s) => out.push_str(&s),
            other => return Value::error(format!("join: invalid input: {other}")),
        }
    }
    Value::string(out)
}

/// `strings.quote`: a double-quoted literal with CEL escapes.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The most decimals `format()` prints.
const MAX_PRECISION: usize = 1000;

/// `"...".format([args])`: the clauses `%s`, `%d`, `%f`, `%e`, `%x`, `%X`, `%o`,
/// `%b` (with `.N` precision for floats) and `%%`.
fn format<'a>(v: &[Value<'a>]) -> Value<'a> {
    let (Value::String(pattern), Value::List(args)) = (&v[0], &v[1]) else {
        return Value::no_such_overload();
    };
    let mut out = String::new();
    let mut chars = pattern.chars().peekable();
    let mut index = 0usize;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut precision: Option<usize> = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            precision = match digits.parse::<usize>() {
                // Bounded so a rule cannot ask for a gigabyte of zeros.
                Ok(p) if p <= MAX_PRECISION => Some(p),
                Ok(_) => return Value::error(format!("precision exceeds the limit of {MAX_PRECISION}")),
                Err(_) => return Value::error("error while parsing precision: unable to find end of precision specifier"),
            };
        }
        let Some(clause) = chars.next() else {
            return Value::error("unexpected end of format string");
        };
        if index >= args.len() {
            return Value::error(format!("index {index} out of range"));
        }
        let arg = args.get(index);
        index += 1;
        let formatted = match clause {
            's' => format_s(&arg),
            'd' => match arg {
                Value::Int(i) => Ok(i.to_string()),
                Value::Uint(u) => Ok(u.to_string()),
                Value::Double(d) if d.is_nan() => Ok("NaN".to_owned()),
                Value::Double(d) if d.is_infinite() => Ok(if d > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()),
                other => Err(format!(
                    "error during formatting: decimal clause can only be used on integers, was given {}",
                    other.type_name()
                )),
            },
            'f' | 'e' => match as_f64(&arg) {
                Some(d) if d.is_nan() => Ok("NaN".to_owned()),
                Some(d) if d.is_infinite() => Ok(if d > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()),
                Some(d) => {
                    let p = precision.unwrap_or(6);
                    Ok(if clause == 'f' { format!("{d:.p$}") } else { go_exp(d, p) })
                }
                None => Err(format!(
                    "error during formatting: {} clause can only be used on doubles, was given {}",
                    if clause == 'f' { "fixed-point" } else { "scientific" },
                    arg.type_name()
                )),
            },
            'x' | 'X' | 'o' | 'b' => match &arg {
                Value::Int(i) => Ok(radix(*i < 0, i.unsigned_abs(), clause)),
                Value::Uint(u) => Ok(radix(false, *u, clause)),
                Value::String(s) if matches!(clause, 'x' | 'X') => Ok(hex_bytes(s.as_bytes(), clause == 'X')),
                Value::Bytes(b) if matches!(clause, 'x' | 'X') => Ok(hex_bytes(b, clause == 'X')),
                other => Err(format!(
                    "error during formatting: only integers{} can be formatted with {clause}, was given {}",
                    if matches!(clause, 'x' | 'X') { ", byte buffers, and strings" } else { "" },
                    other.type_name()
                )),
            },
            other => Err(format!("could not parse formatting clause: unrecognized formatting clause \"{other}\"")),
        };
        match formatted {
            Ok(s) => out.push_str(&s),
            Err(e) => return Value::error(e),
        }
    }
    if index < args.len() {
        return Value::error(format!(
            "too many arguments supplied to string.format (expected {index}, got {})",
            args.len()
        ));
    }
    Value::string(out)
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Double(d) => Some(*d),
        Value::Int(i) => Some(*i as f64),
        Value::Uint(u) => Some(*u as f64),
        _ => None,
    }
}

fn format_s(v: &Value) -> Result<String, String> {
    Ok(match v {
        Value::String(s) => s.to_string(),
        Value::Double(d) => format_g(*d),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::List(l) => {
            let parts: Result<Vec<String>, String> = l
                .iter()
                .map(|i| match &i {
                    Value::String(s) => Ok(format!("{:?}", &**s)),
                    other => format_s(other),
                })
                .collect();
            format!("[{}]", parts?.join(", "))
        }
        Value::Map(m) => {
            let mut entries: Vec<(String, String)> = Vec::new();
            for (k, v) in m.entries() {
                let key = match &k {
                    Value::String(s) => format!("{:?}", &**s),
                    other => format_s(other)?,
                };
                let value = match &v {
                    Value::String(s) => format!("{:?}", &**s),
                    other => format_s(other)?,
                };
                entries.push((key, value));
            }
            entries.sort();
            let parts: Vec<String> = entries.into_iter().map(|(k, v)| format!("{k}: {v}")).collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => other.to_string(),
    })
}

fn radix(negative: bool, magnitude: u64, clause: char) -> String {
    let digits = match clause {
        'x' => format!("{magnitude:x}"),
        'X' => format!("{magnitude:X}"),
        'o' => format!("{magnitude:o}"),
        _ => format!("{magnitude:b}"),
    };
    if negative {
        format!("-{digits}")
    } else {
        digits
    }
}

fn hex_bytes(b: &[u8], upper: bool) -> String {
    b.iter()
        .map(|x| if upper { format!("{x:02X}") } else { format!("{x:02x}") })
        .collect()
}

/// Go's `%e`: at least two exponent digits.
fn go_exp(d: f64, precision: usize) -> String {
    let s = format!("{d:.precision$e}");
    let (mantissa, exp) = s.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("integer exponent");
    format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

//! CEL's standard library: operators, `size`, type conversions, string tests,
//! `matches`, and the calendar accessors of timestamps and durations, with
//! cross-type numeric comparisons enabled (as Kubernetes enables them since 1.28).
//! Integer arithmetic is checked: overflow is an error, as in cel-go.

use super::sig::{a, b, list_a, map_ab};
use super::{Imp, Library};
use crate::cel::time::{parse_date_time, parse_duration, parse_zone, Civil, Duration as Span, Timestamp as Instant};
use crate::cel::types::Type as Ty;
use crate::cel::value::Value;
use std::cmp::Ordering;
use std::rc::Rc;

pub(super) fn register(lib: &mut Library) {
    use Ty::*;
    lib.special("_?_:_", "conditional", false, vec![Bool, a(), a()], a());
    lib.special("_&&_", "logical_and", false, vec![Bool, Bool], Bool);
    lib.special("_||_", "logical_or", false, vec![Bool, Bool], Bool);
    lib.special("@not_strictly_false", "not_strictly_false", false, vec![Bool], Bool);
    lib.global("!_", "logical_not", vec![Bool], Bool, |v| match &v[0] {
        Value::Bool(b) => Value::Bool(!b),
        _ => Value::no_such_overload(),
    });
    lib.global("_==_", "equals", vec![a(), a()], Bool, |v| v[0].equals(&v[1]));
    lib.global("_!=_", "not_equals", vec![a(), a()], Bool, |v| match v[0].equals(&v[1]) {
        Value::Bool(b) => Value::Bool(!b),
        other => other,
    });

    lib.global("-_", "negate_int64", vec![Int], Int, |v| match v[0] {
        Value::Int(i) => i.checked_neg().map(Value::Int).unwrap_or_else(int_overflow),
        _ => Value::no_such_overload(),
    });
    lib.global("-_", "negate_double", vec![Double], Double, |v| match v[0] {
        Value::Double(d) => Value::Double(-d),
        _ => Value::no_such_overload(),
    });

    lib.global("_+_", "add_bytes", vec![Bytes, Bytes], Bytes, add);
    lib.global("_+_", "add_double", vec![Double, Double], Double, add);
    lib.global("_+_", "add_duration_duration", vec![Duration, Duration], Duration, add);
    lib.global("_+_", "add_duration_timestamp", vec![Duration, Timestamp], Timestamp, add);
    lib.global("_+_", "add_timestamp_duration", vec![Timestamp, Duration], Timestamp, add);
    lib.global("_+_", "add_int64", vec![Int, Int], Int, add);
    lib.global("_+_", "add_list", vec![list_a(), list_a()], list_a(), add);
    lib.global("_+_", "add_string", vec![String, String], String, add);
    lib.global("_+_", "add_uint64", vec![Uint, Uint], Uint, add);
    lib.global("_-_", "subtract_double", vec![Double, Double], Double, sub);
    lib.global("_-_", "subtract_duration_duration", vec![Duration, Duration], Duration, sub);
    lib.global("_-_", "subtract_int64", vec![Int, Int], Int, sub);
    lib.global("_-_", "subtract_timestamp_duration", vec![Timestamp, Duration], Timestamp, sub);
    lib.global("_-_", "subtract_timestamp_timestamp", vec![Timestamp, Timestamp], Duration, sub);
    lib.global("_-_", "subtract_uint64", vec![Uint, Uint], Uint, sub);
    lib.global("_*_", "multiply_double", vec![Double, Double], Double, mul);
    lib.global("_*_", "multiply_int64", vec![Int, Int], Int, mul);
    lib.global("_*_", "multiply_uint64", vec![Uint, Uint], Uint, mul);
    lib.global("_/_", "divide_double", vec![Double, Double], Double, div);
    lib.global("_/_", "divide_int64", vec![Int, Int], Int, div);
    lib.global("_/_", "divide_uint64", vec![Uint, Uint], Uint, div);
    lib.global("_%_", "modulo_int64", vec![Int, Int], Int, rem);
    lib.global("_%_", "modulo_uint64", vec![Uint, Uint], Uint, rem);

    comparisons(lib);

    lib.global("_[_]", "index_list", vec![list_a(), Int], a(), index);
    lib.global("_[_]", "index_map", vec![map_ab(), a()], b(), index);
    lib.global("@in", "in_list", vec![a(), list_a()], Bool, contains_element);
    lib.global("@in", "in_map", vec![a(), map_ab()], Bool, contains_element);

    for (id, inst, t) in [
        ("size_bytes", "bytes_size", Bytes),
        ("size_list", "list_size", list_a()),
        ("size_map", "map_size", map_ab()),
        ("size_string", "string_size", String),
    ] {
        lib.global("size", id, vec![t.clone()], Int, size);
        lib.member("size", inst, vec![t], Int, size);
    }

    conversions(lib);

    lib.member("contains", "contains_string", vec![String, String], Bool, |v| {
        str_test(v, |s, t| s.contains(t))
    });
    lib.member("endsWith", "ends_with_string", vec![String, String], Bool, |v| {
        str_test(v, |s, t| s.ends_with(t))
    });
    lib.member("startsWith", "starts_with_string", vec![String, String], Bool, |v| {
        str_test(v, |s, t| s.starts_with(t))
    });
    lib.global("matches", "matches", vec![String, String], Bool, matches);
    lib.member("matches", "matches_string", vec![String, String], Bool, matches);

    calendar(lib);

    // What the two-variable map macros insert with.
    lib.global("cel.@mapInsert", "cel_@mapInsert_map_key_value", vec![map_ab(), a(), b()], map_ab(), map_insert);
    lib.global("cel.@mapInsert", "cel_@mapInsert_map_map", vec![map_ab(), map_ab()], map_ab(), map_insert);
}

fn map_insert<'a>(v: &[Value<'a>]) -> Value<'a> {
    let Value::Map(m) = &v[0] else { return Value::no_such_overload() };
    let mut entries = m.entries();
    let added: Vec<(Value<'a>, Value<'a>)> = match &v[1..] {
        [key, value] => vec![(key.clone(), value.clone())],
        [Value::Map(other)] => other.entries(),
        _ => return Value::no_such_overload(),
    };
    for (k, val) in added {
        if entries.iter().any(|(ek, _)| ek.eq_bool(&k)) {
            return Value::error(format!("insert failed: key {k} already exists"));
        }
        entries.push((k, val));
    }
    Value::Map(crate::cel::value::Map::Owned(Rc::new(entries)))
}

pub(super) fn int_overflow<'a>() -> Value<'a> {
    Value::error("integer overflow")
}

fn uint_overflow<'a>() -> Value<'a> {
    Value::error("unsigned integer overflow")
}

fn add<'a>(v: &[Value<'a>]) -> Value<'a> {
    match (&v[0], &v[1]) {
        (Value::Int(x), Value::Int(y)) => x.checked_add(*y).map(Value::Int).unwrap_or_else(int_overflow),
        (Value::Uint(x), Value::Uint(y)) => x.checked_add(*y).map(Value::Uint).unwrap_or_else(uint_overflow),
        (Value::Double(x), Value::Double(y)) => Value::Double(x + y),
        (Value::String(x), Value::String(y)) => Value::string(format!("{}{}", &**x, &**y)),
        (Value::Bytes(x), Value::Bytes(y)) => Value::Bytes(Rc::from([&x[..], &y[..]].concat())),
        (Value::List(x), Value::List(y)) => x.concat(y),
        (Value::Duration(x), Value::Duration(y)) => duration_or_overflow(x.checked_add(*y)),
        (Value::Timestamp(t), Value::Duration(d)) | (Value::Duration(d), Value::Timestamp(t)) => {
            timestamp_or_overflow(t.add(*d))
        }
        _ => Value::no_such_overload(),
    }
}

fn sub<'a>(v: &[Value<'a>]) -> Value<'a> {
    match (&v[0], &v[1]) {
        (Value::Int(x), Value::Int(y)) => x.checked_sub(*y).map(Value::Int).unwrap_or_else(int_overflow),
        (Value::Uint(x), Value::Uint(y)) => x.checked_sub(*y).map(Value::Uint).unwrap_or_else(uint_overflow),
        (Value::Double(x), Value::Double(y)) => Value::Double(x - y),
        (Value::Duration(x), Value::Duration(y)) => duration_or_overflow(x.checked_sub(*y)),
        (Value::Timestamp(t), Value::Duration(d)) => timestamp_or_overflow(d.0.checked_neg().and_then(|n| t.add(Span(n)))),
        (Value::Timestamp(x), Value::Timestamp(y)) => duration_or_overflow(x.sub(*y)),
        _ => Value::no_such_overload(),
    }
}

fn duration_or_overflow<'a>(d: Option<Span>) -> Value<'a> {
    d.map(Value::Duration).unwrap_or_else(int_overflow)
}

fn timestamp_or_overflow<'a>(t: Option<Instant>) -> Value<'a> {
    t.map(Value::Timestamp).unwrap_or_else(|| Value::error("timestamp overflow"))
}

fn mul<'a>(v: &[Value<'a>]) -> Value<'a> {
    match (&v[0], &v[1]) {
        (Value::Int(x), Value::Int(y)) => x.checked_mul(*y).map(Value::Int).unwrap_or_else(int_overflow),
        (Value::Uint(x), Value::Uint(y)) => x.checked_mul(*y).map(Value::Uint).unwrap_or_else(uint_overflow),
        (Value::Double(x), Value::Double(y)) => Value::Double(x * y),
        _ => Value::no_such_overload(),
    }
}

fn div<'a>(v: &[Value<'a>]) -> Value<'a> {
    match (&v[0], &v[1]) {
        (Value::Int(_), Value::Int(0)) | (Value::Uint(_), Value::Uint(0)) => Value::error("division by zero"),
        (Value::Int(x), Value::Int(y)) => x.checked_div(*y).map(Value::Int).unwrap_or_else(int_overflow),
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(x / y),
        (Value::Double(x), Value::Double(y)) => Value::Double(x / y),
        _ => Value::no_such_overload(),
    }
}

fn rem<'a>(v: &[Value<'a>]) -> Value<'a> {
    match (&v[0], &v[1]) {
        (Value::Int(_), Value::Int(0)) | (Value::Uint(_), Value::Uint(0)) => Value::error("modulus by zero"),
        (Value::Int(x), Value::Int(y)) => x.checked_rem(*y).map(Value::Int).unwrap_or_else(int_overflow),
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(x % y),
        _ => Value::no_such_overload(),
    }
}

fn comparisons(lib: &mut Library) {
    use Ty::*;
    let kinds: [(&str, Ty, Ty); 14] = [
        ("bool", Bool, Bool),
        ("int64", Int, Int),
        ("int64_double", Int, Double),
        ("int64_uint64", Int, Uint),
        ("uint64", Uint, Uint),
        ("uint64_double", Uint, Double),
        ("uint64_int64", Uint, Int),
        ("double", Double, Double),
        ("double_int64", Double, Int),
        ("double_uint64", Double, Uint),
        ("string", String, String),
        ("bytes", Bytes, Bytes),
        ("timestamp", Timestamp, Timestamp),
        ("duration", Duration, Duration),
    ];
    let ops: [(&'static str, &str, Imp); 4] = [
        ("_<_", "less", |v| compare(v, |o| o == Ordering::Less)),
        ("_<=_", "less_equals", |v| compare(v, |o| o != Ordering::Greater)),
        ("_>_", "greater", |v| compare(v, |o| o == Ordering::Greater)),
        ("_>=_", "greater_equals", |v| compare(v, |o| o != Ordering::Less)),
    ];
    for (op, prefix, imp) in ops {
        for (suffix, l, r) in kinds.iter() {
            // Overload ids are static: leak the few dozen built once per process.
            let id: &'static str = Box::leak(format!("{prefix}_{suffix}").into_boxed_str());
            lib.global(op, id, vec![l.clone(), r.clone()], Bool, imp);
        }
    }
}

fn compare<'a>(v: &[Value<'a>], test: fn(Ordering) -> bool) -> Value<'a> {
    match v[0].compare(&v[1]) {
        Ok(o) => Value::Bool(test(o)),
        Err(e) => e,
    }
}

fn index<'a>(v: &[Value<'a>]) -> Value<'a> {
    match (&v[0], &v[1]) {
        (Value::List(l), Value::Int(i)) => l.index(*i),
        (Value::List(l), Value::Uint(u)) => l.index(i64::try_from(*u).unwrap_or(i64::MAX)),
        (Value::List(l), Value::Double(d)) if d.fract() == 0.0 => l.index(*d as i64),
        (Value::List(_), other) => Value::error(format!("unsupported index type '{}' in list", other.type_name())),
        (Value::Map(m), key) => match m.find(key) {
            Some(v) => v,
            None => Value::error(format!("no such key: {key}")),
        },
        _ => Value::no_such_overload(),
    }
}

fn contains_element<'a>(v: &[Value<'a>]) -> Value<'a> {
    match &v[1] {
        Value::List(l) => Value::Bool(l.iter().any(|e| e.eq_bool(&v[0]))),
        Value::Map(m) => Value::Bool(m.find(&v[0]).is_some()),
        _ => Value::no_such_overload(),
    }
}

fn size<'a>(v: &[Value<'a>]) -> Value<'a> {
    v[0].size().map(Value::Int).unwrap_or_else(Value::no_such_overload)
}

fn str_test<'a>(v: &[Value<'a>], test: fn(&str, &str) -> bool) -> Value<'a> {
    match (&v[0], &v[1]) {
        (Value::String(s), Value::String(t)) => Value::Bool(test(s, t)),
        _ => Value::no_such_overload(),
    }
}

fn matches<'a>(v: &[Value<'a>]) -> Value<'a> {
    match (&v[0], &v[1]) {
        (Value::String(s), Value::String(re)) => match super::compile_regex(re) {
            Ok(re) => Value::Bool(re.is_match(s)),
            Err(e) => Value::error(e),
        },
        _ => Value::no_such_overload(),
    }
}

fn conversions(lib: &mut Library) {
    use Ty::*;
    lib.global("type", "type", vec![a()], Ty::Type(Some(Box::new(a()))), |v| {
        Value::Type(Rc::from(v[0].type_name()))
    });
    lib.global("dyn", "to_dyn", vec![a()], Dyn, |v| v[0].clone());

    lib.global("bool", "bool_to_bool", vec![Bool], Bool, identity);
    lib.global("bool", "string_to_bool", vec![String], Bool, |v| match &v[0] {
        Value::String(s) => match &**s {
            "1" | "t" | "T" | "TRUE" | "true" | "True" => Value::Bool(true),
            "0" | "f" | "F" | "FALSE" | "false" | "False" => Value::Bool(false),
            other => Value::error(format!("strconv.ParseBool: parsing {}: invalid syntax", go_quote(other))),
        },
        _ => Value::no_such_overload(),
    });

    lib.global("bytes", "bytes_to_bytes", vec![Bytes], Bytes, identity);
    lib.global("bytes", "string_to_bytes", vec![String], Bytes, |v| match &v[0] {
        Value::String(s) => Value::Bytes(Rc::from(s.as_bytes())),
        _ => Value::no_such_overload(),
    });

    lib.global("double", "double_to_double", vec![Double], Double, identity);
    lib.global("double", "int64_to_double", vec![Int], Double, to_double);
    lib.global("double", "string_to_double", vec![String], Double, to_double);
    lib.global("double", "uint64_to_double", vec![Uint], Double, to_double);

    lib.global("duration", "duration_to_duration", vec![Duration], Duration, identity);
    lib.global("duration", "int64_to_duration", vec![Int], Duration, |v| match v[0] {
        Value::Int(i) => Value::Duration(Span(i)),
        _ => Value::no_such_overload(),
    });
    lib.global("duration", "string_to_duration", vec![String], Duration, string_to_duration);

    lib.global("int", "int64_to_int64", vec![Int], Int, identity);
    lib.global("int", "double_to_int64", vec![Double], Int, to_int);
    lib.global("int", "duration_to_int64", vec![Duration], Int, to_int);
    lib.global("int", "string_to_int64", vec![String], Int, to_int);
    lib.global("int", "timestamp_to_int64", vec![Timestamp], Int, to_int);
    lib.global("int", "uint64_to_int64", vec![Uint], Int, to_int);

    lib.global("string", "string_to_string", vec![String], String, identity);
    for (id, t) in [
        ("bool_to_string", Bool),
        ("bytes_to_string", Bytes),
        ("double_to_string", Double),
        ("duration_to_string", Duration),
        ("int64_to_string", Int),
        ("timestamp_to_string", Timestamp),
        ("uint64_to_string", Uint),
    ] {
        lib.global("string", id, vec![t], String, to_string);
    }

    lib.global("timestamp", "timestamp_to_timestamp", vec![Timestamp], Timestamp, identity);
    lib.global("timestamp", "int64_to_timestamp", vec![Int], Timestamp, |v| match v[0] {
        Value::Int(i) => Instant::new(i, 0)
            .map(Value::Timestamp)
            .unwrap_or_else(|| Value::error("timestamp overflow")),
        _ => Value::no_such_overload(),
    });
    lib.global("timestamp", "string_to_timestamp", vec![String], Timestamp, string_to_timestamp);

    lib.global("uint", "uint64_to_uint64", vec![Uint], Uint, identity);
    lib.global("uint", "double_to_uint64", vec![Double], Uint, to_uint);
    lib.global("uint", "int64_to_uint64", vec![Int], Uint, to_uint);
    lib.global("uint", "string_to_uint64", vec![String], Uint, to_uint);
}

fn identity<'a>(v: &[Value<'a>]) -> Value<'a> {
    v[0].clone()
}

/// Go's `%q` of a string, as strconv errors print their input.
pub(crate) fn go_quote(s: &str) -> String {
    crate::schema::go_quote(s)
}

fn to_double<'a>(v: &[Value<'a>]) -> Value<'a> {
    match &v[0] {
        Value::Int(i) => Value::Double(*i as f64),
        Value::Uint(u) => Value::Double(*u as f64),
        Value::String(s) => match parse_go_float(s) {
            Some(d) => Value::Double(d),
            None => Value::error(format!("strconv.ParseFloat: parsing {}: invalid syntax", go_quote(s))),
        },
        _ => Value::no_such_overload(),
    }
}

/// Go's `strconv.ParseFloat` accepts `inf`, `infinity`, `nan` in any case.
fn parse_go_float(s: &str) -> Option<f64> {
    let lower = s.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if matches!(body, "inf" | "infinity" | "nan") {
        return lower.replace("infinity", "inf").parse().ok();
    }
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-' | b'_')) {
        return None;
    }
    s.parse().ok()
}

fn to_int<'a>(v: &[Value<'a>]) -> Value<'a> {
    match &v[0] {
        Value::Uint(u) => i64::try_from(*u).map(Value::Int).unwrap_or_else(|_| int_overflow()),
        Value::Double(d) => {
            if d.is_nan() || *d <= -9.223_372_036_854_775_808e18 || *d >= 9.223_372_036_854_775_807e18 {
                int_overflow()
            } else {
                Value::Int(d.trunc() as i64)
            }
        }
        Value::Duration(d) => Value::Int(d.0),
        Value::Timestamp(t) => Value::Int(t.secs),
        Value::String(s) => match s.parse::<i64>() {
            Ok(i) if !s.starts_with('+') || s.len() > 1 => Value::Int(i),
            _ => Value::error(format!(
                "strconv.ParseInt: parsing {}: {}",
                go_quote(s),
                syntax_or_range(s)
            )),
        },
        _ => Value::no_such_overload(),
    }
}

fn syntax_or_range(s: &str) -> &'static str {
    let digits = s.trim_start_matches(['+', '-']);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        "value out of range"
    } else {
        "invalid syntax"
    }
}

fn to_uint<'a>(v: &[Value<'a>]) -> Value<'a> {
    match &v[0] {
        Value::Int(i) => u64::try_from(*i).map(Value::Uint).unwrap_or_else(|_| uint_overflow()),
        Value::Double(d) => {
            if d.is_nan() || *d < 0.0 || *d >= 1.844_674_407_370_955_2e19 {
                uint_overflow()
            } else {
                Value::Uint(d.trunc() as u64)
            }
        }
        Value::String(s) => match s.parse::<u64>() {
            Ok(u) if !s.starts_with('+') => Value::Uint(u),
            _ => Value::error(format!(
                "strconv.ParseUint: parsing {}: {}",
                go_quote(s),
                syntax_or_range(s)
            )),
        },
        _ => Value::no_such_overload(),
    }
}

fn to_string<'a>(v: &[Value<'a>]) -> Value<'a> {
    match &v[0] {
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => Value::string(s),
            Err(_) => Value::error("invalid UTF-8 in bytes, cannot convert to string"),
        },
        Value::String(s) => Value::String(s.clone()),
        other => Value::string(other.to_string()),
    }
}

fn string_to_duration<'a>(v: &[Value<'a>]) -> Value<'a> {
    match &v[0] {
        Value::String(s) => match parse_duration(s) {
            Some(d) => Value::Duration(d),
            None => Value::error(format!("time: invalid duration {}", go_quote(s))),
        },
        _ => Value::no_such_overload(),
    }
}

fn string_to_timestamp<'a>(v: &[Value<'a>]) -> Value<'a> {
    match &v[0] {
        Value::String(s) => match parse_date_time(s) {
            Some(t) => Value::Timestamp(t),
            None => Value::error(format!(
                "parsing time {} as \"2006-01-02T15:04:05Z07:00\": cannot parse {} as \"2006\"",
                go_quote(s),
                go_quote(s)
            )),
        },
        _ => Value::no_such_overload(),
    }
}

/// Go's `%g` of a float64 (shortest representation, exponent past 1e21 or below
/// 1e-4), as `string(double)` prints it.
pub fn format_g(d: f64) -> String {
    if d.is_nan() {
        return "NaN".to_owned();
    }
    if d.is_infinite() {
        return if d > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sci = format!("{d:e}");
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("integer exponent");
    if !(-4..21).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{d}")
}

fn calendar(lib: &mut Library) {
    use Ty::*;
    // Each accessor with and without a time zone argument.
    macro_rules! field {
        ($name:literal, $id:literal, $tz_id:literal, $f:expr) => {
            lib.member($name, $id, vec![Timestamp], Int, |v| civil_field(v, $f));
            lib.member($name, $tz_id, vec![Timestamp, String], Int, |v| civil_field(v, $f));
        };
    }
    field!("getFullYear", "timestamp_to_year", "timestamp_to_year_with_tz", |c, _| c.year);
    field!("getMonth", "timestamp_to_month", "timestamp_to_month_with_tz", |c, _| c.month as i64 - 1);
    field!("getDayOfYear", "timestamp_to_day_of_year", "timestamp_to_day_of_year_with_tz", |c, _| c.day_of_year as i64);
    field!("getDayOfMonth", "timestamp_to_day_of_month", "timestamp_to_day_of_month_with_tz", |c, _| c.day as i64 - 1);
    field!("getDate", "timestamp_to_day_of_month_1_based", "timestamp_to_day_of_month_1_based_with_tz", |c, _| c.day as i64);
    field!("getDayOfWeek", "timestamp_to_day_of_week", "timestamp_to_day_of_week_with_tz", |c, _| c.day_of_week as i64);
    field!("getHours", "timestamp_to_hours", "timestamp_to_hours_with_tz", |c, _| c.hour as i64);
    field!("getMinutes", "timestamp_to_minutes", "timestamp_to_minutes_with_tz", |c, _| c.minute as i64);
    field!("getSeconds", "timestamp_to_seconds", "timestamp_to_seconds_tz", |c, _| c.second as i64);
    field!("getMilliseconds", "timestamp_to_milliseconds", "timestamp_to_milliseconds_with_tz", |_, t| (t.nanos / 1_000_000) as i64);
    lib.member("getHours", "duration_to_hours", vec![Duration], Int, |v| duration_part(v, 3_600_000_000_000));
    lib.member("getMinutes", "duration_to_minutes", vec![Duration], Int, |v| duration_part(v, 60_000_000_000));
    lib.member("getSeconds", "duration_to_seconds", vec![Duration], Int, |v| duration_part(v, 1_000_000_000));
    lib.member("getMilliseconds", "duration_to_milliseconds", vec![Duration], Int, |v| duration_part(v, 1_000_000));
}

/// A calendar field of a timestamp, in UTC or the zone of the second argument.
fn civil_field<'a>(v: &[Value<'a>], field: fn(&Civil, &Instant) -> i64) -> Value<'a> {
    let Value::Timestamp(t) = v[0] else {
        return Value::no_such_overload();
    };
    let zone = match v.get(1) {
        None => 0,
        Some(Value::String(z)) => match parse_zone(z) {
            Some(offset) => offset,
            None => return Value::error(format!("unknown time zone {}", &**z)),
        },
        Some(_) => return Value::no_such_overload(),
    };
    Value::Int(field(&t.civil(zone), &t))
}

fn duration_part<'a>(v: &[Value<'a>], unit: i64) -> Value<'a> {
    match v[0] {
        Value::Duration(d) => Value::Int(d.0 / unit),
        _ => Value::no_such_overload(),
    }
}

#[cfg(test)]
mod tests {
    use super::format_g;

    #[test]
    fn go_g_format() {
        assert_eq!(format_g(1.5), "1.5");
        assert_eq!(format_g(100000.0), "100000");
        assert_eq!(format_g(1e21), "1e+21");
        assert_eq!(format_g(1e-5), "1e-05");
        assert_eq!(format_g(0.0001), "0.0001");
        assert_eq!(format_g(-2.5e-7), "-2.5e-07");
    }
}

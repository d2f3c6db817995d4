//! Kubernetes' list library: `isSorted()`, `sum()`, `min()`, `max()`, `indexOf()`,
//! `lastIndexOf()` on lists of comparable (or summable) elements.

use super::sig::{a, list, list_a};
use super::Library;
use crate::cel::time::Duration;
use crate::cel::types::Type as Ty;
use crate::cel::value::Value;
use std::cmp::Ordering;

pub(super) fn register(lib: &mut Library) {
    use Ty::*;
    let comparable = [
        ("int", Int),
        ("uint", Uint),
        ("double", Double),
        ("bool", Bool),
        ("duration", Duration),
        ("timestamp", Timestamp),
        ("string", String),
        ("bytes", Bytes),
    ];
    for (name, t) in comparable.iter() {
        let leak = |s: std::string::String| -> &'static str { Box::leak(s.into_boxed_str()) };
        lib.member("isSorted", leak(format!("list_{name}_is_sorted_bool")), vec![list(t.clone())], Bool, is_sorted);
        lib.member("max", leak(format!("list_{name}_max_{name}")), vec![list(t.clone())], t.clone(), |v| {
            extreme(v, "max", Ordering::Less)
        });
        lib.member("min", leak(format!("list_{name}_min_{name}")), vec![list(t.clone())], t.clone(), |v| {
            extreme(v, "min", Ordering::Greater)
        });
    }
    lib.member("sum", "list_int_sum_int", vec![list(Int)], Int, |v| sum(v, Value::Int(0)));
    lib.member("sum", "list_uint_sum_uint", vec![list(Uint)], Uint, |v| sum(v, Value::Uint(0)));
    lib.member("sum", "list_double_sum_double", vec![list(Double)], Double, |v| sum(v, Value::Double(0.0)));
    lib.member("sum", "list_duration_sum_duration", vec![list(Duration)], Duration, |v| {
        sum(v, Value::Duration(self::Duration(0)))
    });
    lib.member("indexOf", "list_a_index_of_int", vec![list_a(), a()], Int, |v| index_of(v, false));
    lib.member("lastIndexOf", "list_a_last_index_of_int", vec![list_a(), a()], Int, |v| index_of(v, true));
}

fn is_sorted<'a>(v: &[Value<'a>]) -> Value<'a> {
    let Value::List(l) = &v[0] else { return Value::no_such_overload() };
    let mut prev: Option<Value<'a>> = None;
    for item in l.iter() {
        if let Some(p) = &prev {
            match p.compare(&item) {
                Ok(Ordering::Greater) => return Value::Bool(false),
                Ok(_) => {}
                Err(e) => return e,
            }
        }
        prev = Some(item);
    }
    Value::Bool(true)
}

/// `min()` / `max()`: replace the candidate while it compares as `replace_when`.
fn extreme<'a>(v: &[Value<'a>], name: &str, replace_when: Ordering) -> Value<'a> {
    let Value::List(l) = &v[0] else { return Value::no_such_overload() };
    let mut result: Option<Value<'a>> = None;
    for item in l.iter() {
        result = Some(match result {
            None => item,
            Some(r) => match r.compare(&item) {
                Ok(o) if o == replace_when => item,
                Ok(_) => r,
                Err(e) => return e,
            },
        });
    }
    result.unwrap_or_else(|| Value::error(format!("{name} called on empty list")))
}

fn sum<'a>(v: &[Value<'a>], zero: Value<'a>) -> Value<'a> {
    let Value::List(l) = &v[0] else { return Value::no_such_overload() };
    let mut acc = zero;
    for item in l.iter() {
        acc = match (&acc, &item) {
            (Value::Int(x), Value::Int(y)) => match x.checked_add(*y) {
                Some(s) => Value::Int(s),
                None => return Value::error("integer overflow"),
            },
            (Value::Uint(x), Value::Uint(y)) => match x.checked_add(*y) {
                Some(s) => Value::Uint(s),
                None => return Value::error("unsigned integer overflow"),
            },
            (Value::Double(x), Value::Double(y)) => Value::Double(x + y),
            (Value::Duration(x), Value::Duration(y)) => match x.checked_add(*y) {
                Some(s) => Value::Duration(s),
                None => return Value::error("integer overflow"),
            },
            _ => return Value::no_such_overload(),
        };
    }
    acc
}

fn index_of<'a>(v: &[Value<'a>], last: bool) -> Value<'a> {
    let Value::List(l) = &v[0] else { return Value::no_such_overload() };
    let n = l.len();
    let found = if last {
        (0..n).rev().find(|&i| l.get(i).eq_bool(&v[1]))
    } else {
        (0..n).find(|&i| l.get(i).eq_bool(&v[1]))
    };
    Value::Int(found.map(|i| i as i64).unwrap_or(-1))
}

//! Optional values (cel-go's optional library, enabled by Kubernetes since 1.28):
//! `optional.of()`, `optional.none()`, `optional.ofNonZeroValue()`, `hasValue()`,
//! `value()`, `or()`, `orValue()`, the `.?field` and `[?key]` selections, and the
//! optional forms of indexing.

use super::sig::{a, b, list, list_a, map_ab};
use super::Library;
use crate::cel::eval::optional_select;
use crate::cel::types::Type as Ty;
use crate::cel::value::Value;
use std::rc::Rc;

pub(super) fn register(lib: &mut Library) {
    use Ty::*;
    let opt = Ty::optional;
    lib.global("optional.of", "optional_of", vec![a()], opt(a()), |v| Value::Optional(Some(Rc::new(v[0].clone()))));
    lib.global("optional.ofNonZeroValue", "optional_ofNonZeroValue", vec![a()], opt(a()), |v| {
        if is_zero(&v[0]) {
            Value::Optional(None)
        } else {
            Value::Optional(Some(Rc::new(v[0].clone())))
        }
    });
    lib.global("optional.none", "optional_none", Vec::new(), opt(a()), |_| Value::Optional(None));
    lib.member("value", "optional_value", vec![opt(a())], a(), |v| match &v[0] {
        Value::Optional(Some(inner)) => (**inner).clone(),
        Value::Optional(None) => Value::error("optional.none() dereference"),
        _ => Value::no_such_overload(),
    });
    lib.member("hasValue", "optional_hasValue", vec![opt(a())], Bool, |v| match &v[0] {
        Value::Optional(o) => Value::Bool(o.is_some()),
        _ => Value::no_such_overload(),
    });
    // `or` and `orValue` short-circuit in the evaluator; these run when they cannot.
    lib.member("or", "optional_or_optional", vec![opt(a()), opt(a())], opt(a()), |v| match &v[0] {
        Value::Optional(Some(_)) => v[0].clone(),
        Value::Optional(None) => v[1].clone(),
        _ => Value::no_such_overload(),
    });
    lib.member("orValue", "optional_orValue_value", vec![opt(a()), a()], a(), |v| match &v[0] {
        Value::Optional(Some(inner)) => (**inner).clone(),
        Value::Optional(None) => v[1].clone(),
        _ => Value::no_such_overload(),
    });
    lib.global("_?._", "select_optional_field", vec![Dyn, String], opt(a()), |v| match &v[1] {
        Value::String(field) => optional_select(&v[0], field),
        _ => Value::no_such_overload(),
    });
    lib.global("_[?_]", "list_optindex_optional_int", vec![list_a(), Int], opt(a()), opt_index);
    lib.global("_[?_]", "optional_list_optindex_optional_int", vec![opt(list_a()), Int], opt(a()), opt_index);
    lib.global("_[?_]", "map_optindex_optional_value", vec![map_ab(), a()], opt(b()), opt_index);
    lib.global("_[?_]", "optional_map_optindex_optional_value", vec![opt(map_ab()), a()], opt(b()), opt_index);
    lib.global("_[_]", "optional_list_index_int", vec![opt(list_a()), Int], opt(a()), opt_index);
    lib.global("_[_]", "optional_map_index_value", vec![opt(map_ab()), a()], opt(b()), opt_index);
    lib.member("first", "list_first", vec![list_a()], opt(a()), |v| match &v[0] {
        Value::List(l) if l.is_empty() => Value::Optional(None),
        Value::List(l) => Value::Optional(Some(Rc::new(l.get(0)))),
        _ => Value::no_such_overload(),
    });
    lib.member("last", "list_last", vec![list_a()], opt(a()), |v| match &v[0] {
        Value::List(l) if l.is_empty() => Value::Optional(None),
        Value::List(l) => Value::Optional(Some(Rc::new(l.get(l.len() - 1)))),
        _ => Value::no_such_overload(),
    });
    lib.global("optional.unwrap", "optional_unwrap", vec![list(opt(a()))], list_a(), unwrap);
    lib.member("unwrapOpt", "optional_unwrapOpt", vec![list(opt(a()))], list_a(), unwrap);
}

fn unwrap<'a>(v: &[Value<'a>]) -> Value<'a> {
    let Value::List(l) = &v[0] else { return Value::no_such_overload() };
    let mut out = Vec::new();
    for item in l.iter() {
        match item {
            Value::Optional(Some(inner)) => out.push((*inner).clone()),
            Value::Optional(None) => {}
            _ => return Value::no_such_overload(),
        }
    }
    Value::list(out)
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Uint(u) => *u == 0,
        Value::Double(d) => *d == 0.0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Map(m) => m.is_empty(),
        Value::Duration(d) => d.0 == 0,
        Value::Timestamp(t) => t.secs == 0 && t.nanos == 0,
        _ => false,
    }
}

/// `x[?k]`: the element as an optional, none when absent (or out of range).
fn opt_index<'a>(v: &[Value<'a>]) -> Value<'a> {
    let target = match &v[0] {
        Value::Optional(None) => return Value::Optional(None),
        Value::Optional(Some(inner)) => (**inner).clone(),
        other => other.clone(),
    };
    match (&target, &v[1]) {
        (Value::List(l), Value::Int(i)) => {
            if *i >= 0 && (*i as usize) < l.len() {
                Value::Optional(Some(Rc::new(l.get(*i as usize))))
            } else {
                Value::Optional(None)
            }
        }
        (Value::Map(m), key) => match m.find(key) {
            Some(found) => Value::Optional(Some(Rc::new(found))),
            None => Value::Optional(None),
        },
        _ => Value::no_such_overload(),
    }
}

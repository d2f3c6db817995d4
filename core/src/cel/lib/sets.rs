//! cel-go's `sets` extension (Kubernetes enables it from 1.29): `sets.contains()`,
//! `sets.equivalent()`, `sets.intersects()` over lists.

use super::sig::list_a;
use super::Library;
use crate::cel::types::Type as Ty;
use crate::cel::value::Value;

pub(super) fn register(lib: &mut Library) {
    lib.global("sets.contains", "list_sets_contains_list", vec![list_a(), list_a()], Ty::Bool, |v| {
        lists(v, |a, b| b.iter().all(|x| a.iter().any(|y| y.eq_bool(x))))
    });
    lib.global("sets.equivalent", "list_sets_equivalent_list", vec![list_a(), list_a()], Ty::Bool, |v| {
        lists(v, |a, b| b.iter().all(|x| a.iter().any(|y| y.eq_bool(x))) && a.iter().all(|x| b.iter().any(|y| y.eq_bool(x))))
    });
    lib.global("sets.intersects", "list_sets_intersects_list", vec![list_a(), list_a()], Ty::Bool, |v| {
        lists(v, |a, b| a.iter().any(|x| b.iter().any(|y| y.eq_bool(x))))
    });
}

fn lists<'a>(v: &[Value<'a>], test: fn(&[Value<'a>], &[Value<'a>]) -> bool) -> Value<'a> {
    match (&v[0], &v[1]) {
        (Value::List(a), Value::List(b)) => {
            let (a, b): (Vec<Value<'a>>, Vec<Value<'a>>) = (a.iter().collect(), b.iter().collect());
            Value::Bool(test(&a, &b))
        }
        _ => Value::no_such_overload(),
    }
}

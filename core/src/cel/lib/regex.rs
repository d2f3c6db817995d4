//! Regular expressions: `matches()` of the standard library and Kubernetes' `find()`
//! and `findAll()`. Patterns are RE2 syntax, with Go's meaning ([`crate::regexp`]); compiled patterns are cached per thread, as a rule usually matches
//! the same literal pattern against many values.

use super::sig::list;
use super::Library;
use crate::cel::types::Type as Ty;
use crate::cel::value::Value;
use std::cell::RefCell;
use std::rc::Rc;

/// A compiled pattern, or Go's wording of why it does not compile.
pub fn compile_regex(pattern: &str) -> Result<Rc<regex::Regex>, String> {
    const CACHE: usize = 32;
    thread_local! {
        static COMPILED: RefCell<Vec<(String, Rc<regex::Regex>)>> = const { RefCell::new(Vec::new()) };
    }
    if let Some(hit) = COMPILED.with(|c| c.borrow().iter().find(|(p, _)| p == pattern).map(|(_, r)| r.clone())) {
        return Ok(hit);
    }
    let re = Rc::new(crate::regexp::build(pattern)?);
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE {
            c.remove(0);
        }
        c.push((pattern.to_owned(), re.clone()));
    });
    Ok(re)
}

pub(super) fn register(lib: &mut Library) {
    use Ty::*;
    lib.member("find", "string_find_string", vec![String, String], String, |v| match (&v[0], &v[1]) {
        (Value::String(s), Value::String(re)) => match compile_regex(re) {
            Ok(re) => Value::string(re.find(s).map(|m| m.as_str()).unwrap_or("")),
            Err(e) => Value::error(format!("Illegal regex: {e}")),
        },
        _ => Value::no_such_overload(),
    });
    lib.member("findAll", "string_find_all_string", vec![String, String], list(String), |v| find_all(v, -1));
    lib.member("findAll", "string_find_all_string_int", vec![String, String, Int], list(String), |v| match v[2] {
        Value::Int(n) => find_all(v, n),
        _ => Value::no_such_overload(),
    });
}

fn find_all<'a>(v: &[Value<'a>], n: i64) -> Value<'a> {
    let (Value::String(s), Value::String(re)) = (&v[0], &v[1]) else {
        return Value::no_such_overload();
    };
    let re = match compile_regex(re) {
        Ok(re) => re,
        Err(e) => return Value::error(format!("Illegal regex: {e}")),
    };
    // Go: a negative n means all matches, zero none.
    let limit = if n < 0 { usize::MAX } else { n as usize };
    Value::list(re.find_iter(s).take(limit).map(|m| Value::string(m.as_str())).collect())
}

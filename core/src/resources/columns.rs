//! The columns a kind's Table shows between Name and Age, as kube-apiserver's printers
//! show them, and the small readers their cells are made with.

use super::customresources::PrinterColumns;
use crate::rest::object::Object;
use serde_json::{json, Value};

/// The columns of a kind's Tables.
#[derive(Clone, Copy, Debug)]
pub enum Columns<'a> {
    /// A built-in kind's, fixed: these between Name and Age.
    Builtin(&'static [Column]),
    /// A built-in kind's whose row is laid out otherwise: these after Name, with Age
    /// before the column `age_at` names (after them all when it is their count), or
    /// no Age at all (`None`).
    Laid { columns: &'static [Column], age_at: Option<usize> },
    /// A custom resource's: after Name, those its CRD version declares (Age among
    /// them when it declares none).
    Declared(&'a PrinterColumns),
}

/// A column: its header, type, and how to compute a cell from an object.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub name: &'static str,
    /// The column's type as a Table names it: `string`, `integer`.
    pub kind: &'static str,
    pub description: &'static str,
    pub cell: fn(&Object) -> Value,
}

/// The value at `path` of `obj`.
pub fn at<'a>(obj: &'a Object, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter().try_fold(obj.get(*first)?, |v, p| v.get(p))
}

/// The integer at `path`, 0 when absent.
pub fn int_at(obj: &Object, path: &[&str]) -> i64 {
    at(obj, path).and_then(Value::as_i64).unwrap_or(0)
}

/// The string at `path` as a cell, "" when absent.
pub fn str_at(obj: &Object, path: &[&str]) -> Value {
    Value::String(at(obj, path).and_then(Value::as_str).unwrap_or("").to_owned())
}

/// How many entries the map or list at `path` has.
pub fn count_at(obj: &Object, path: &[&str]) -> Value {
    let n = match at(obj, path) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    };
    json!(n)
}

//! What a template finds, and how Go prints and compares it.
//!
//! Upstream evaluates over Go values decoded from JSON (`map[string]interface{}`,
//! `[]interface{}`, `string`, `int64`, `float64`, `bool`, nil) plus the literals of the
//! template (Go `int`, `float64`, `bool`, `string`) and the bytes of a string a `*` or
//! `..` walks into (`uint8`). The difference matters: a printer column of type
//! `integer` shows an `int64` but not an `int`, and `==` compares a `uint8` with an
//! `int` but not with a `float64`.

use crate::gofmt;
use serde_json::{Map, Value};

/// One result of a template.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Item<'a> {
    /// A value of the data.
    Json(&'a Value),
    /// The data itself, when it is an object (read without making it a `Value`).
    Object(&'a Map<String, Value>),
    /// Quoted text of the template.
    Text(&'a str),
    /// An integer of the template (Go `int`).
    Int(i64),
    /// A number with a point in the template.
    Float(f64),
    /// `true` or `false` in the template.
    Bool(bool),
    /// One byte of a string (Go `uint8`).
    Byte(u8),
}

/// The kinds Go's template comparisons tell apart (`basicKind`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Basic<'a> {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(&'a str),
}

impl<'a> Item<'a> {
    /// Whether the item is null in the data.
    pub fn is_null(&self) -> bool {
        matches!(self, Item::Json(Value::Null))
    }

    /// The item as a map of the data, if it is one.
    pub(super) fn as_map(&self) -> Option<&'a Map<String, Value>> {
        match *self {
            Item::Json(Value::Object(map)) | Item::Object(map) => Some(map),
            _ => None,
        }
    }

    /// The item as `fmt.Fprint` prints it, maps and lists as `json.Marshal` writes them
    /// (upstream's `PrintResults`); null prints `null`.
    pub fn text(&self) -> String {
        match self {
            Item::Json(v @ (Value::Object(_) | Value::Array(_))) => gofmt::json(v),
            Item::Json(Value::Null) => "null".to_owned(),
            Item::Json(v) => gofmt::v(v),
            Item::Object(map) => gofmt::json_object(map),
            Item::Text(s) => (*s).to_owned(),
            Item::Int(i) => i.to_string(),
            Item::Float(f) => gofmt::float(*f),
            Item::Bool(b) => b.to_string(),
            Item::Byte(b) => b.to_string(),
        }
    }

    /// The item as `fmt.Sprint` prints it (maps as `map[k:v]`).
    pub fn sprint(&self) -> String {
        match self {
            Item::Json(v) => gofmt::v(v),
            Item::Object(map) => gofmt::v_object(map),
            other => other.text(),
        }
    }

    /// Go's type name, as errors print it.
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Item::Json(v) => gofmt::GoType::of(v).name(),
            Item::Object(_) => gofmt::GoType::Map.name(),
            Item::Text(_) => "string",
            Item::Int(_) => "int",
            Item::Float(_) => "float64",
            Item::Bool(_) => "bool",
            Item::Byte(_) => "uint8",
        }
    }

    fn basic(&self) -> Result<Basic<'a>, String> {
        let bad = || Err("invalid type for comparison".to_owned());
        Ok(match *self {
            Item::Json(Value::Bool(b)) => Basic::Bool(*b),
            Item::Bool(b) => Basic::Bool(b),
            Item::Json(Value::String(s)) => Basic::Str(s),
            Item::Text(s) => Basic::Str(s),
            // Decoded JSON keeps an integer as int64 when it fits, else as float64.
            Item::Json(Value::Number(n)) => match n.as_i64() {
                Some(i) => Basic::Int(i),
                None => Basic::Float(n.as_f64().unwrap_or(0.0)),
            },
            Item::Int(i) => Basic::Int(i),
            Item::Float(f) => Basic::Float(f),
            Item::Byte(b) => Basic::Uint(u64::from(b)),
            Item::Json(_) | Item::Object(_) => return bad(),
        })
    }
}

/// `left op right` as a filter compares (text/template's `eq`, `lt` and friends).
pub(super) fn compare(left: &Item<'_>, operator: &str, right: &Item<'_>) -> Result<bool, String> {
    match operator {
        "==" => equal(left, right),
        "!=" => equal(left, right).map(|e| !e),
        "<" => less(left, right),
        "<=" => Ok(less(left, right)? || equal(left, right)?),
        ">" => Ok(!(less(left, right)? || equal(left, right)?)),
        ">=" => less(left, right).map(|l| !l),
        other => Err(format!("unrecognized filter operator {other}")),
    }
}

fn incompatible() -> String {
    "incompatible types for comparison".to_owned()
}

fn equal(left: &Item<'_>, right: &Item<'_>) -> Result<bool, String> {
    Ok(match (left.basic()?, right.basic()?) {
        (Basic::Bool(a), Basic::Bool(b)) => a == b,
        (Basic::Int(a), Basic::Int(b)) => a == b,
        (Basic::Uint(a), Basic::Uint(b)) => a == b,
        (Basic::Float(a), Basic::Float(b)) => a == b,
        (Basic::Str(a), Basic::Str(b)) => a == b,
        (Basic::Int(a), Basic::Uint(b)) | (Basic::Uint(b), Basic::Int(a)) => u64::try_from(a) == Ok(b),
        _ => return Err(incompatible()),
    })
}

fn less(left: &Item<'_>, right: &Item<'_>) -> Result<bool, String> {
    Ok(match (left.basic()?, right.basic()?) {
        (Basic::Bool(_), Basic::Bool(_)) => return Err("invalid type for comparison".to_owned()),
        (Basic::Int(a), Basic::Int(b)) => a < b,
        (Basic::Uint(a), Basic::Uint(b)) => a < b,
        (Basic::Float(a), Basic::Float(b)) => a < b,
        (Basic::Str(a), Basic::Str(b)) => a < b,
        (Basic::Int(a), Basic::Uint(b)) => u64::try_from(a).map_or(true, |a| a < b),
        (Basic::Uint(a), Basic::Int(b)) => u64::try_from(b).is_ok_and(|b| a < b),
        _ => return Err(incompatible()),
    })
}

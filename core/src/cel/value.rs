//! Runtime values. Values read from the object under validation borrow its JSON and
//! its schema node ([`DeclType`]) and are interpreted on access, as upstream's
//! `UnstructuredToVal` wraps unstructured data lazily: a rule on a small field of a
//! large object never converts the rest of it. Values a rule builds itself are
//! owned (reference-counted, single-threaded: one evaluation runs on one thread).
//!
//! Errors are values too (`Value::Error`), so `&&`, `||` and the comprehension
//! macros can absorb them as CEL's commutative logic requires.

use super::decl::{DeclKind, DeclType, ListKind};
use super::lib::{Cidr, FormatDef, Quantity, Url};
use super::time::{Duration, Timestamp};
use serde_json::Value as Json;
use std::cmp::Ordering;
use std::fmt;
use std::net::IpAddr;
use std::rc::Rc;

#[derive(Clone, Debug)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Str<'a>),
    Bytes(Rc<[u8]>),
    Duration(Duration),
    Timestamp(Timestamp),
    List(List<'a>),
    Map(Map<'a>),
    /// A type as a value: what `type(x)` returns and `int`, `string`, ... name.
    Type(Rc<str>),
    Optional(Option<Rc<Value<'a>>>),
    Url(Rc<Url>),
    Ip(IpAddr),
    Cidr(Rc<Cidr>),
    Quantity(Rc<Quantity>),
    Format(&'static FormatDef),
    Error(Rc<str>),
}

/// A string borrowed from the object or built by the rule.
#[derive(Clone, Debug)]
pub enum Str<'a> {
    Borrowed(&'a str),
    Owned(Rc<str>),
}

impl std::ops::Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Str::Borrowed(s) => s,
            Str::Owned(s) => s,
        }
    }
}

#[derive(Clone, Debug)]
pub enum List<'a> {
    /// An array of the object, its items typed by `items`.
    Json {
        items: &'a [Json],
        decl: &'a DeclType,
    },
    Owned(Rc<Vec<Value<'a>>>),
}

#[derive(Clone, Debug)]
pub enum Map<'a> {
    /// An object of the object under its schema: fields by (escaped) property name,
    /// or map entries under `additionalProperties`.
    Json {
        map: &'a serde_json::Map<String, Json>,
        decl: &'a DeclType,
    },
    Owned(Rc<Vec<(Value<'a>, Value<'a>)>>),
}

impl<'a> Value<'a> {
    pub fn error(message: impl Into<String>) -> Value<'a> {
        Value::Error(Rc::from(message.into()))
    }

    pub fn no_such_overload() -> Value<'a> {
        Value::error("no such overload")
    }

    pub fn string(s: impl Into<String>) -> Value<'a> {
        Value::String(Str::Owned(Rc::from(s.into())))
    }

    pub fn list(items: Vec<Value<'a>>) -> Value<'a> {
        Value::List(List::Owned(Rc::new(items)))
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Value::Error(_))
    }

    /// The CEL type name of the value, as `type(x)` names it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null_type",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint",
            Value::Double(_) => "double",
            Value::String(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::Duration(_) => "google.protobuf.Duration",
            Value::Timestamp(_) => "google.protobuf.Timestamp",
            Value::List(_) => "list",
            Value::Map(_) => "map",
            Value::Type(_) => "type",
            Value::Optional(_) => "optional_type",
            Value::Url(_) => "kubernetes.URL",
            Value::Ip(_) => "net.IP",
            Value::Cidr(_) => "net.CIDR",
            Value::Quantity(_) => "kubernetes.Quantity",
            Value::Format(_) => "kubernetes.NamedFormat",
            Value::Error(_) => "error",
        }
    }

    /// The value of an element of the object: how upstream's `UnstructuredToVal`
    /// reads JSON under a schema node.
    pub fn from_json(json: &'a Json, decl: &'a DeclType) -> Value<'a> {
        if json.is_null() {
            return if decl.nullable {
                Value::Null
            } else {
                Value::error("invalid data, got null for schema with nullable=false")
            };
        }
        match &decl.kind {
            DeclKind::Dyn => {
                let (_, map, list) = super::decl::dyn_decls();
                match json {
                    Json::Object(m) => Value::Map(Map::Json { map: m, decl: map }),
                    Json::Array(items) => Value::List(List::Json { items, decl: list }),
                    Json::String(s) => Value::String(Str::Borrowed(s)),
                    Json::Bool(b) => Value::Bool(*b),
                    Json::Number(n) => match n.as_i64() {
                        Some(i) => Value::Int(i),
                        None => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
                    },
                    Json::Null => Value::Null,
                }
            }
            DeclKind::IntOrString => match json {
                Json::String(s) => Value::String(Str::Borrowed(s)),
                Json::Number(n) if n.is_i64() => Value::Int(n.as_i64().unwrap_or_default()),
                _ => Value::error("invalid data, expected XIntOrString value to be either a string or integer"),
            },
            DeclKind::Object { .. } | DeclKind::Map { .. } => match json {
                Json::Object(map) => Value::Map(Map::Json { map, decl }),
                _ => Value::error("invalid data, expected a map for the provided schema with type=object"),
            },
            DeclKind::List { .. } => match json {
                Json::Array(items) => Value::List(List::Json { items, decl }),
                _ => Value::error("invalid data, expected an array for the provided schema with type=array"),
            },
            DeclKind::String => match json {
                Json::String(s) => Value::String(Str::Borrowed(s)),
                other => Value::error(format!("invalid data, expected string, got {}", go_type(other))),
            },
            DeclKind::Bytes => match json {
                Json::String(s) => match super::lib::decode_base64(s) {
                    Some(b) => Value::Bytes(Rc::from(b)),
                    None => Value::error(format!("Invalid byte formatted string {s}: illegal base64 data")),
                },
                other => Value::error(format!("invalid data, expected string, got {}", go_type(other))),
            },
            DeclKind::Duration => match json {
                Json::String(s) => match super::time::parse_openapi_duration(s) {
                    Some(d) => Value::Duration(d),
                    None => Value::error(format!("Invalid duration {s}: time: invalid duration \"{s}\"")),
                },
                other => Value::error(format!("invalid data, expected string, got {}", go_type(other))),
            },
            DeclKind::Date => match json {
                Json::String(s) => match super::time::parse_date(s) {
                    Some(t) => Value::Timestamp(t),
                    None => Value::error(format!("Invalid date formatted string {s}")),
                },
                other => Value::error(format!("invalid data, expected string, got {}", go_type(other))),
            },
            DeclKind::DateTime => match json {
                Json::String(s) => match super::time::parse_date_time(s) {
                    Some(t) => Value::Timestamp(t),
                    None => Value::error(format!("Invalid date-time formatted string {s}")),
                },
                other => Value::error(format!("invalid data, expected string, got {}", go_type(other))),
            },
            DeclKind::Double => match json {
                Json::Number(n) => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
                other => Value::error(format!("invalid data, expected float, got {}", go_type(other))),
            },
            DeclKind::Int => match json {
                Json::Number(n) if n.is_i64() => Value::Int(n.as_i64().unwrap_or_default()),
                other => Value::error(format!("invalid data, expected int, got {}", go_type(other))),
            },
            DeclKind::Bool => match json {
                Json::Bool(b) => Value::Bool(*b),
                other => Value::error(format!("invalid data, expected bool, got {}", go_type(other))),
            },
        }
    }

    /// The number of elements, characters or bytes (`size()`), if it has a size.
    pub fn size(&self) -> Option<i64> {
        Some(match self {
            Value::String(s) => s.chars().count() as i64,
            Value::Bytes(b) => b.len() as i64,
            Value::List(l) => l.len() as i64,
            Value::Map(m) => m.len() as i64,
            _ => return None,
        })
    }

    /// The size the cost model charges for (1 when the value has none).
    pub fn cost_size(&self) -> u64 {
        match self {
            Value::String(s) => s.chars().count() as u64,
            Value::Optional(Some(v)) => v.cost_size(),
            Value::Url(u) => u.text.chars().count() as u64,
            other => other.size().map(|n| n as u64).unwrap_or(1),
        }
    }

    /// CEL's `==`: values of different types are unequal, numbers compare across
    /// int, uint and double.
    pub fn equals(&self, other: &Value<'a>) -> Value<'a> {
        match (self, other) {
            (Value::Error(_), _) => self.clone(),
            (_, Value::Error(_)) => other.clone(),
            _ => Value::Bool(self.eq_bool(other)),
        }
    }

    pub fn eq_bool(&self, other: &Value<'a>) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::String(a), Value::String(b)) => **a == **b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::Duration(a), Value::Duration(b)) => a == b,
            (Value::Timestamp(a), Value::Timestamp(b)) => a == b,
            (Value::Type(a), Value::Type(b)) => a == b,
            (Value::Optional(a), Value::Optional(b)) => match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => a.eq_bool(b),
                _ => false,
            },
            (Value::Url(a), Value::Url(b)) => a.text == b.text,
            (Value::Ip(a), Value::Ip(b)) => a == b,
            (Value::Cidr(a), Value::Cidr(b)) => a == b,
            (Value::Quantity(a), Value::Quantity(b)) => a.cmp(b) == Ordering::Equal,
            (Value::Format(a), Value::Format(b)) => a.name == b.name,
            (Value::List(a), Value::List(b)) => a.equals(b),
            (Value::Map(a), Value::Map(b)) => a.equals(b),
            (a, b) => match (a.as_number(), b.as_number()) {
                (Some(x), Some(y)) => compare_numbers(x, y) == Some(Ordering::Equal),
                _ => false,
            },
        }
    }

    fn as_number(&self) -> Option<Number> {
        match self {
            Value::Int(i) => Some(Number::Int(*i)),
            Value::Uint(u) => Some(Number::Uint(*u)),
            Value::Double(d) => Some(Number::Double(*d)),
            _ => None,
        }
    }

    /// CEL's ordering (`<` and friends, `isSorted`, `min`, `max`): numbers across
    /// types, strings, bytes, bools, durations, timestamps. `Err` carries the error
    /// value to return (NaN, or no overload).
    pub fn compare(&self, other: &Value<'a>) -> Result<Ordering, Value<'a>> {
        match (self, other) {
            (Value::Error(_), _) => Err(self.clone()),
            (_, Value::Error(_)) => Err(other.clone()),
            (Value::Bool(a), Value::Bool(b)) => Ok(a.cmp(b)),
            (Value::String(a), Value::String(b)) => Ok((**a).cmp(&**b)),
            (Value::Bytes(a), Value::Bytes(b)) => Ok(a.cmp(b)),
            (Value::Duration(a), Value::Duration(b)) => Ok(a.cmp(b)),
            (Value::Timestamp(a), Value::Timestamp(b)) => Ok(a.cmp(b)),
            (a, b) => match (a.as_number(), b.as_number()) {
                (Some(x), Some(y)) => compare_numbers(x, y).ok_or_else(|| Value::error("NaN values cannot be ordered")),
                _ => Err(Value::no_such_overload()),
            },
        }
    }
}

#[derive(Clone, Copy)]
enum Number {
    Int(i64),
    Uint(u64),
    Double(f64),
}

fn compare_numbers(a: Number, b: Number) -> Option<Ordering> {
    use Number::*;
    match (a, b) {
        (Int(x), Int(y)) => Some(x.cmp(&y)),
        (Uint(x), Uint(y)) => Some(x.cmp(&y)),
        (Int(x), Uint(y)) => Some(if x < 0 { Ordering::Less } else { (x as u64).cmp(&y) }),
        (Uint(x), Int(y)) => compare_numbers(Int(y), Uint(x)).map(Ordering::reverse),
        (Double(x), Double(y)) => x.partial_cmp(&y),
        (Int(x), Double(y)) => compare_int_double(x, y),
        (Double(x), Int(y)) => compare_int_double(y, x).map(Ordering::reverse),
        (Uint(x), Double(y)) => compare_uint_double(x, y),
        (Double(x), Uint(y)) => compare_uint_double(y, x).map(Ordering::reverse),
    }
}

/// An int against a double without losing precision to a cast, as cel-go does.
fn compare_int_double(i: i64, d: f64) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    if d < -9.223_372_036_854_776e18 {
        return Some(Ordering::Greater);
    }
    if d >= 9.223_372_036_854_776e18 {
        return Some(Ordering::Less);
    }
    let truncated = d.trunc() as i64;
    match i.cmp(&truncated) {
        Ordering::Equal => (0.0).partial_cmp(&(d - d.trunc())),
        other => Some(other),
    }
}

fn compare_uint_double(u: u64, d: f64) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    if d < 0.0 {
        return Some(Ordering::Greater);
    }
    if d >= 1.844_674_407_370_955_2e19 {
        return Some(Ordering::Less);
    }
    let truncated = d.trunc() as u64;
    match u.cmp(&truncated) {
        Ordering::Equal => (0.0).partial_cmp(&(d - d.trunc())),
        other => Some(other),
    }
}

/// How Go's `%T` names a JSON value in upstream's conversion errors.
fn go_type(json: &Json) -> &'static str {
    match json {
        Json::Null => "<nil>",
        Json::Bool(_) => "bool",
        Json::Number(n) if n.is_i64() => "int64",
        Json::Number(_) => "float64",
        Json::String(_) => "string",
        Json::Array(_) => "[]interface {}",
        Json::Object(_) => "map[string]interface {}",
    }
}

impl<'a> List<'a> {
    pub fn len(&self) -> usize {
        match self {
            List::Json { items, .. } => items.len(),
            List::Owned(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element at `i` (caller checks the bounds).
    pub fn get(&self, i: usize) -> Value<'a> {
        match self {
            List::Json { items, decl } => match &decl.kind {
                DeclKind::List { elem, .. } => Value::from_json(&items[i], elem),
                _ => Value::error("invalid array type, expected Items with a non-empty Schema"),
            },
            List::Owned(v) => v[i].clone(),
        }
    }

    /// Indexing as `list[i]` does, with the error of each list kind.
    pub fn index(&self, i: i64) -> Value<'a> {
        if i < 0 || i as usize >= self.len() {
            return match self {
                List::Json { .. } => Value::error(format!("index out of bounds: {i}")),
                List::Owned(_) => Value::error(format!("index '{i}' out of range in list size '{}'", self.len())),
            };
        }
        self.get(i as usize)
    }

    pub fn iter(&self) -> impl Iterator<Item = Value<'a>> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// The list kind of a list of the object (`set` and `map` lists compare without
    /// regard to order).
    fn kind(&self) -> Option<&ListKind> {
        match self {
            List::Json { decl, .. } => match &decl.kind {
                DeclKind::List { kind, .. } => Some(kind),
                _ => None,
            },
            List::Owned(_) => None,
        }
    }

    pub fn equals(&self, other: &List<'a>) -> bool {
        if self.len() != other.len() {
            return false;
        }
        match self.kind() {
            Some(ListKind::Set) => {
                // Every element of the other list is one of ours.
                other.iter().all(|o| self.iter().any(|s| s.eq_bool(&o)))
            }
            Some(ListKind::Map(keys)) => other.iter().all(|o| {
                let key = map_list_key(&o, keys);
                self.iter().any(|s| map_list_key(&s, keys) == key && s.eq_bool(&o))
            }),
            _ => (0..self.len()).all(|i| self.get(i).eq_bool(&other.get(i))),
        }
    }

    /// `a + b`: concatenation; for set lists a union, for map lists an update by key.
    pub fn concat(&self, other: &List<'a>) -> Value<'a> {
        let mut out: Vec<Value<'a>> = self.iter().collect();
        match self.kind() {
            Some(ListKind::Set) => {
                for o in other.iter() {
                    if !out.iter().any(|s| s.eq_bool(&o)) {
                        out.push(o);
                    }
                }
            }
            Some(ListKind::Map(keys)) => {
                for o in other.iter() {
                    let key = map_list_key(&o, keys);
                    match out.iter().position(|s| map_list_key(s, keys) == key) {
                        Some(i) => out[i] = o,
                        None => out.push(o),
                    }
                }
            }
            _ => out.extend(other.iter()),
        }
        Value::list(out)
    }
}

/// The key of an element of a map list, printed (only compared for equality).
fn map_list_key(v: &Value, keys: &[String]) -> String {
    let mut out = String::new();
    for k in keys {
        let field = match v {
            Value::Map(m) => m.find_str(k),
            _ => None,
        };
        out.push('\u{0}');
        match field {
            Some(f) => out.push_str(&format!("{f}")),
            None => out.push_str("<nil>"),
        }
    }
    out
}

impl<'a> Map<'a> {
    pub fn len(&self) -> usize {
        match self {
            Map::Json { map, .. } => map.len(),
            Map::Owned(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether this is an object with declared fields (as opposed to a map).
    pub fn is_object(&self) -> bool {
        matches!(self, Map::Json { decl, .. } if matches!(decl.kind, DeclKind::Object { .. }))
    }

    /// The value under a key. For objects the key is the escaped property name; an
    /// absent (or null) field is not found.
    pub fn find(&self, key: &Value<'a>) -> Option<Value<'a>> {
        match self {
            Map::Json { .. } => match key {
                Value::String(s) => self.find_str(s),
                _ => None,
            },
            Map::Owned(entries) => entries.iter().find(|(k, _)| key_eq(k, key)).map(|(_, v)| v.clone()),
        }
    }

    pub fn find_str(&self, key: &str) -> Option<Value<'a>> {
        match self {
            Map::Json { map, decl } => match &decl.kind {
                DeclKind::Object { fields, .. } => {
                    let field = fields.iter().find(|f| f.cel_name.as_deref() == Some(key))?;
                    let json = map.get(&field.json_name)?;
                    if json.is_null() {
                        return None;
                    }
                    Some(Value::from_json(json, &field.decl))
                }
                DeclKind::Map { elem } => map.get(key).map(|j| Value::from_json(j, elem)),
                _ => None,
            },
            Map::Owned(entries) => entries
                .iter()
                .find(|(k, _)| matches!(k, Value::String(s) if **s == *key))
                .map(|(_, v)| v.clone()),
        }
    }

    /// The keys, as a comprehension over the map sees them (escaped names for objects;
    /// properties the schema does not declare are skipped).
    pub fn keys(&self) -> Vec<Value<'a>> {
        match self {
            Map::Json { map, decl } => match &decl.kind {
                DeclKind::Object { fields, .. } => map
                    .keys()
                    .filter_map(|k| {
                        fields
                            .iter()
                            .find(|f| &f.json_name == k)
                            .and_then(|f| f.cel_name.clone())
                            .map(|n| Value::string(n))
                    })
                    .collect(),
                DeclKind::Map { .. } => map.keys().map(|k| Value::String(Str::Borrowed(k))).collect(),
                _ => Vec::new(),
            },
            Map::Owned(entries) => entries.iter().map(|(k, _)| k.clone()).collect(),
        }
    }

    pub fn entries(&self) -> Vec<(Value<'a>, Value<'a>)> {
        self.keys()
            .into_iter()
            .map(|k| {
                let v = self.find(&k).unwrap_or(Value::Null);
                (k, v)
            })
            .collect()
    }

    pub fn equals(&self, other: &Map<'a>) -> bool {
        if self.len() != other.len() {
            return false;
        }
        match (self, other) {
            // Two objects of the object: field by field on their JSON (fields the
            // schema does not declare compare as JSON).
            (Map::Json { map: a, .. }, Map::Json { map: b, .. }) => a.keys().all(|k| {
                let (Some(x), Some(y)) = (a.get(k), b.get(k)) else { return false };
                match (self.find_json_field(k, x), other.find_json_field(k, y)) {
                    (Some(vx), Some(vy)) => vx.eq_bool(&vy),
                    _ => x == y,
                }
            }),
            _ => self.entries().iter().all(|(k, v)| match other.find(k) {
                Some(ov) => v.eq_bool(&ov),
                None => false,
            }),
        }
    }

    fn find_json_field(&self, json_name: &str, json: &'a Json) -> Option<Value<'a>> {
        match self {
            Map::Json { decl, .. } => match &decl.kind {
                DeclKind::Object { fields, .. } => fields
                    .iter()
                    .find(|f| f.json_name == json_name)
                    .map(|f| Value::from_json(json, &f.decl)),
                DeclKind::Map { elem } => Some(Value::from_json(json, elem)),
                _ => None,
            },
            Map::Owned(_) => None,
        }
    }
}

/// Map keys compare as values, numbers across types.
fn key_eq(a: &Value, b: &Value) -> bool {
    a.eq_bool(b)
}

impl fmt::Display for Value<'_> {
    /// How values print in error messages (`no such key: x`) and in `string()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Uint(u) => write!(f, "{u}"),
            Value::Double(d) => f.write_str(&super::lib::format_g(*d)),
            Value::String(s) => f.write_str(s),
            Value::Bytes(b) => f.write_str(&String::from_utf8_lossy(b)),
            Value::Duration(d) => f.write_str(&d.to_string()),
            Value::Timestamp(t) => f.write_str(&t.to_string()),
            Value::List(l) => {
                f.write_str("[")?;
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Map(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.entries().iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
            Value::Type(t) => f.write_str(t),
            Value::Optional(None) => f.write_str("optional.none()"),
            Value::Optional(Some(v)) => write!(f, "optional.of({v})"),
            Value::Url(u) => f.write_str(&u.text),
            Value::Ip(ip) => write!(f, "{ip}"),
            Value::Cidr(c) => write!(f, "{c}"),
            Value::Quantity(q) => f.write_str(&q.to_string()),
            Value::Format(fd) => f.write_str(fd.name),
            Value::Error(e) => f.write_str(e),
        }
    }
}

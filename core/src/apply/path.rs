//! Paths into an object as managed fields name them: a field of a struct or map, a list
//! item by its key fields, a set item by its value, or a list position.

use serde_json::Value;
use std::cmp::Ordering;
use std::fmt;
use std::ops::Deref;

/// A field name, kept inline when short (most are): walking an object makes one per
/// field, and heap allocations would dominate the cost.
#[derive(Clone)]
pub struct Name(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

const INLINE: usize = 30;

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        if s.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            Name(Repr::Inline {
                len: s.len() as u8,
                bytes,
            })
        } else {
            Name(Repr::Heap(s.into()))
        }
    }
}

impl Name {
    /// The name's bytes: what paths compare by, without checking UTF-8 on every step
    /// of every lookup.
    fn bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => &bytes[..*len as usize],
            Repr::Heap(s) => s.as_bytes(),
        }
    }
}

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        match &self.0 {
            // Copied whole from a `&str`: valid UTF-8 up to `len`.
            Repr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..*len as usize]).unwrap_or_default()
            }
            Repr::Heap(s) => s,
        }
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// One step of a path. Ordered as upstream orders them (fields, then keys, then values,
/// then indexes), so sets iterate and serialize in the same order.
#[derive(Clone, Debug)]
pub enum PathElement {
    /// `f:name`: a field of a struct or a key of a map.
    Field(Name),
    /// `k:{"name":"web"}`: a list item identified by these key fields, sorted by name.
    /// Shared: elements are cloned into every set that holds them.
    Key(std::sync::Arc<[(String, Value)]>),
    /// `v:"x"`: an item of a set.
    Value(Value),
    /// `i:0`: an item of an atomic list, by position.
    Index(usize),
}

impl PathElement {
    pub fn field(name: &str) -> PathElement {
        PathElement::Field(Name::from(name))
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The key as FieldsV1 writes it: `f:name`, `k:{...}`, `v:...`, `i:N`.
    pub fn encode(&self) -> String {
        match self {
            PathElement::Field(name) => {
                // Without the formatting machinery: one per field of every write.
                let mut key = String::with_capacity(2 + name.len());
                key.push_str("f:");
                key.push_str(name);
                key
            }
            PathElement::Key(fields) => {
                // The key fields as a JSON object: they are sorted by name already.
                let mut key = b"k:{".to_vec();
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        key.push(b',');
                    }
                    write_json(&mut key, name);
                    key.push(b':');
                    write_json(&mut key, value);
                }
                key.push(b'}');
                String::from_utf8(key).unwrap_or_default()
            }
            PathElement::Value(value) => {
                let mut key = b"v:".to_vec();
                write_json(&mut key, value);
                String::from_utf8(key).unwrap_or_default()
            }
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Read a FieldsV1 key; `None` for a malformed one, `Some(None)` for a kind of
    /// element this server does not know (skipped, as upstream skips them).
    pub fn decode(text: &str) -> Option<Option<PathElement>> {
        let (kind, rest) = (text.get(..2)?, text.get(2..)?);
        Some(Some(match kind {
            "f:" => PathElement::field(rest),
            "v:" => PathElement::Value(serde_json::from_str(rest).ok()?),
            "i:" => PathElement::Index(rest.parse().ok()?),
            "k:" => {
                let Value::Object(fields) = serde_json::from_str(rest).ok()? else {
                    return None;
                };
                // A BTreeMap: already sorted by name.
                PathElement::Key(fields.into_iter().collect::<Vec<_>>().into())
            }
            _ if kind.ends_with(':') => return Some(None),
            _ => return None,
        }))
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            // Bytes order as UTF-8 strings do.
            (PathElement::Field(a), PathElement::Field(b)) => a.bytes().cmp(b.bytes()),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for ((ak, av), (bk, bv)) in a.iter().zip(b.iter()) {
                    let c = ak.cmp(bk).then_with(|| value_cmp(av, bv));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => value_cmp(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// JSON straight into bytes, without the formatting machinery `Display` goes through.
fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing a string or a `Value` into a Vec cannot fail.
    let _ = serde_json::to_writer(out, value);
}

/// A total order on JSON values: numbers, strings, bools, lists, maps, null.
pub fn value_cmp(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => {
                let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                x.partial_cmp(&y).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (x, y) in x.iter().zip(y) {
                let c = value_cmp(x, y);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            for ((xk, xv), (yk, yv)) in x.iter().zip(y) {
                let c = xk.cmp(yk).then_with(|| value_cmp(xv, yv));
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

/// A whole path, printed as upstream prints it in conflicts:
/// `.spec.containers[name="web"].image`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path(pub Vec<PathElement>);

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for element in &self.0 {
            match element {
                PathElement::Field(name) => write!(f, ".{}", &**name)?,
                PathElement::Key(fields) => {
                    let parts: Vec<String> = fields
                        .iter()
                        .map(|(k, v)| format!("{k}={}", go_value(v)))
                        .collect();
                    write!(f, "[{}]", parts.join(","))?
                }
                PathElement::Value(v) => write!(f, "[={}]", go_value(v))?,
                PathElement::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// A value as upstream prints one in a path: strings quoted, the rest plain.
fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => crate::schema::go_quote(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_value).collect();
            format!("[{}]", items.join(","))
        }
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", go_value(v)))
            .collect(),
        other => other.to_string(),
    }
}

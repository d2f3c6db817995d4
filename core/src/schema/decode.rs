//! Decoding a body against a schema, as kube-apiserver's strict JSON decoding into the Go
//! type does it (sigs.k8s.io/json over encoding/json, case-sensitive):
//!
//! - a value of the wrong type is an error worded as Go's `UnmarshalTypeError`
//!   (`json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of
//!   type int32`); like Go, the first one is reported and decoding goes on;
//! - the types with their own JSON form (`IntOrString`, `Quantity`, `Time`, `MicroTime`)
//!   fail as their `UnmarshalJSON` fails, which stops decoding;
//! - unknown fields are dropped; when strict errors are collected, each unknown field and
//!   each duplicate field is one error (`unknown field "spec.foo"`, `duplicate field
//!   "metadata.name"`), in document order, without repeats, at most 100;
//! - a field given twice keeps Go's result: a later object merges into the earlier one
//!   (Go decodes into the same struct or map), anything else replaces it.
//!
//! The decoder is a serde `DeserializeSeed` driven by the schema, so a JSON body is read
//! once, straight into the `Value` that is stored.

use super::structure::{Schemas, Shape, Ty, TypeId};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Number, Value};
use std::fmt::{self, Write as _};

/// Most strict errors kept, as sigs.k8s.io/json keeps.
const MAX_STRICT_ERRORS: usize = 100;

/// The state of one decode.
pub(crate) struct Cx<'s> {
    schemas: &'s Schemas,
    /// Whether unknown and duplicate fields are reported.
    collect_strict: bool,
    /// The path of the current value as strict errors name it: `spec.containers[0].name`.
    path: String,
    /// The JSON names of the struct fields leading here, as Go's type errors name them
    /// (no map keys, no indexes).
    fields: Vec<&'s str>,
    /// The struct whose field is being decoded.
    go_struct: Option<TypeId>,
    /// Unknown and duplicate fields, in order.
    pub strict: Vec<String>,
    /// The first type error.
    pub error: Option<String>,
    /// An error that stopped decoding (an `UnmarshalJSON` failing).
    pub fatal: Option<String>,
}

impl<'s> Cx<'s> {
    pub fn new(schemas: &'s Schemas, collect_strict: bool) -> Cx<'s> {
        Cx {
            schemas,
            collect_strict,
            path: String::new(),
            fields: Vec::new(),
            go_struct: None,
            strict: Vec::new(),
            error: None,
            fatal: None,
        }
    }

    /// Name strict errors as under `path` (`metadata`): for a value decoded on its own
    /// that sits inside a larger object.
    pub fn at(mut self, path: &str) -> Cx<'s> {
        self.path = path.to_owned();
        self
    }

    /// Decode one value of definition `root` from `de`.
    pub fn decode<'de, D: de::Deserializer<'de>>(
        &mut self,
        root: TypeId,
        de: D,
    ) -> Result<Value, D::Error> {
        Seed {
            cx: self,
            target: Target::Type(root),
        }
        .deserialize(de)
    }

    fn push_key(&mut self, key: &str) -> usize {
        let len = self.path.len();
        if len > 0 {
            self.path.push('.');
        }
        self.path.push_str(key);
        len
    }

    fn strict_error(&mut self, what: &str) {
        if !self.collect_strict || self.strict.len() >= MAX_STRICT_ERRORS {
            return;
        }
        let msg = format!("{what} field {}", go_quote(&self.path));
        if !self.strict.contains(&msg) {
            self.strict.push(msg);
        }
    }

    /// Go's `UnmarshalTypeError` text for a `value` that does not fit `go_type` here.
    fn type_error_text(&self, value: &str, go_type: &str) -> String {
        match self.go_struct {
            Some(s) if !self.fields.is_empty() => format!(
                "json: cannot unmarshal {value} into Go struct field {}.{} of type {go_type}",
                self.schemas.ty(s).go_name(),
                self.fields.join(".")
            ),
            _ => format!("json: cannot unmarshal {value} into Go value of type {go_type}"),
        }
    }

    fn save_error(&mut self, msg: String) {
        if self.error.is_none() {
            self.error = Some(msg);
        }
    }

    fn type_error(&mut self, value: &str, go_type: &str) {
        if self.error.is_none() {
            self.error = Some(self.type_error_text(value, go_type));
        }
    }

    fn fail<E: de::Error>(&mut self, msg: String) -> E {
        self.fatal = Some(msg.clone());
        E::custom(msg)
    }

    fn go_type(&self, ty: &Ty) -> String {
        match ty {
            Ty::String => "string".into(),
            Ty::Bytes => "[]uint8".into(),
            Ty::Int32 => "int32".into(),
            Ty::Int64 => "int64".into(),
            Ty::Float => "float64".into(),
            Ty::Bool => "bool".into(),
            Ty::Ref(id) => self.schemas.ty(*id).go_type(),
            Ty::Array(t) => format!("[]{}", self.go_type(t)),
            Ty::Map(t) => format!("map[string]{}", self.go_type(t)),
            Ty::Any => "interface {}".into(),
        }
    }
}

/// What the value at hand must be.
#[derive(Clone, Copy)]
enum Target<'s> {
    Field(&'s Ty),
    Type(TypeId),
}

impl<'s> Target<'s> {
    fn resolve(self) -> Target<'s> {
        match self {
            Target::Field(Ty::Ref(id)) => Target::Type(*id),
            other => other,
        }
    }
}

struct Seed<'c, 's> {
    cx: &'c mut Cx<'s>,
    target: Target<'s>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

/// A scalar as Go's decoder describes it in errors.
enum Scalar<'a> {
    Bool(bool),
    Number(Number),
    Str(&'a str),
}

impl Seed<'_, '_> {
    /// Check a scalar against the target; the value to store.
    fn scalar<E: de::Error>(self, s: Scalar<'_>) -> Result<Value, E> {
        let cx = self.cx;
        let describe = |s: &Scalar<'_>| match s {
            Scalar::Bool(_) => "bool".to_owned(),
            Scalar::Number(_) => "number".to_owned(),
            Scalar::Str(_) => "string".to_owned(),
        };
        let value = match &s {
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Number(n) => Value::Number(n.clone()),
            Scalar::Str(v) => Value::String((*v).to_owned()),
        };
        match self.target.resolve() {
            Target::Field(ty) => match (ty, &s) {
                (Ty::Any, _) | (Ty::String, Scalar::Str(_)) | (Ty::Bool, Scalar::Bool(_)) => {}
                (Ty::Float, Scalar::Number(_)) => {}
                (Ty::Int32 | Ty::Int64, Scalar::Number(n)) => {
                    if !fits_int(n, matches!(ty, Ty::Int32)) {
                        let t = cx.go_type(ty);
                        cx.type_error(&format!("number {n}"), &t);
                    }
                }
                (Ty::Bytes, Scalar::Str(v)) => {
                    if let Err(at) = check_base64(v) {
                        cx.save_error(format!("illegal base64 data at input byte {at}"));
                    }
                }
                (ty, s) => {
                    let t = cx.go_type(ty);
                    cx.type_error(&describe(s), &t);
                }
            },
            Target::Type(id) => match (&cx.schemas.ty(id).shape, &s) {
                (Shape::Any, _) => {}
                (Shape::Struct(_), s) => {
                    let t = cx.schemas.ty(id).go_type();
                    cx.type_error(&describe(s), &t);
                }
                (Shape::IntOrString, Scalar::Str(_)) => {}
                (Shape::IntOrString, Scalar::Number(n)) if fits_int(n, true) => {}
                (Shape::IntOrString, Scalar::Number(n)) => {
                    let msg = cx.type_error_text(&format!("number {n}"), "int32");
                    return Err(cx.fail(msg));
                }
                (Shape::IntOrString, Scalar::Bool(_)) => {
                    let msg = cx.type_error_text("bool", "int32");
                    return Err(cx.fail(msg));
                }
                (Shape::Quantity, s) => {
                    let text = match s {
                        Scalar::Str(v) => (*v).to_owned(),
                        Scalar::Number(n) => n.to_string(),
                        Scalar::Bool(b) => b.to_string(),
                    };
                    if let Err(msg) = check_quantity(text.trim()) {
                        return Err(cx.fail(msg.to_owned()));
                    }
                }
                (Shape::Time | Shape::MicroTime, Scalar::Str(v)) => {
                    let micro = matches!(cx.schemas.ty(id).shape, Shape::MicroTime);
                    if let Err(msg) = check_time(v, micro) {
                        return Err(cx.fail(msg));
                    }
                }
                (Shape::Time | Shape::MicroTime, s) => {
                    let msg = cx.type_error_text(&describe(s), "string");
                    return Err(cx.fail(msg));
                }
            },
        }
        Ok(value)
    }

    /// A map or sequence where the target takes no such thing: a type error (or the
    /// failure of the type's `UnmarshalJSON`).
    fn mismatch<E: de::Error>(self, what: &str, raw: impl FnOnce() -> String) -> Result<(), E> {
        let cx = self.cx;
        match self.target.resolve() {
            Target::Field(ty) => {
                let t = cx.go_type(ty);
                cx.type_error(what, &t);
                Ok(())
            }
            Target::Type(id) => match &cx.schemas.ty(id).shape {
                Shape::IntOrString => {
                    let msg = cx.type_error_text(what, "int32");
                    Err(cx.fail(msg))
                }
                Shape::Quantity => {
                    let msg = check_quantity(raw().trim())
                        .err()
                        .unwrap_or(QUANTITY_FORMAT);
                    Err(cx.fail(msg.to_owned()))
                }
                Shape::Time | Shape::MicroTime => {
                    let msg = cx.type_error_text(what, "string");
                    Err(cx.fail(msg))
                }
                _ => {
                    let t = cx.schemas.ty(id).go_type();
                    cx.type_error(what, &t);
                    Ok(())
                }
            },
        }
    }
}

fn fits_int(n: &Number, int32: bool) -> bool {
    match n.as_i64() {
        Some(i) if int32 => i32::try_from(i).is_ok(),
        Some(_) => true,
        None => false,
    }
}

impl<'de> Visitor<'de> for Seed<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        self.scalar(Scalar::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.scalar(Scalar::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.scalar(Scalar::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        match Number::from_f64(v) {
            Some(n) => self.scalar(Scalar::Number(n)),
            None => Ok(Value::Null),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.scalar(Scalar::Str(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        // null fits anything: Go leaves the field alone or sets it to nil.
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let element: &Ty = match self.target.resolve() {
            Target::Field(Ty::Array(t)) => t,
            Target::Field(Ty::Any | Ty::Bytes) => {
                return Value::deserialize(de::value::SeqAccessDeserializer::new(seq))
            }
            Target::Type(id) if matches!(self.cx.schemas.ty(id).shape, Shape::Any) => {
                return Value::deserialize(de::value::SeqAccessDeserializer::new(seq));
            }
            _ => {
                // Quantity's message needs the text; anything else only the kind.
                let mut skipped = Vec::new();
                while let Some(v) = seq.next_element::<Value>()? {
                    skipped.push(v);
                }
                self.mismatch("array", || Value::Array(skipped).to_string())?;
                return Ok(Value::Null);
            }
        };
        let cx = self.cx;
        let mut out = Vec::new();
        loop {
            let len = cx.path.len();
            let _ = write!(cx.path, "[{}]", out.len());
            let next = seq.next_element_seed(Seed {
                cx: &mut *cx,
                target: Target::Field(element),
            });
            cx.path.truncate(len);
            match next? {
                Some(v) => out.push(v),
                None => break,
            }
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        match self.target.resolve() {
            Target::Field(Ty::Map(values)) => decode_map(self.cx, values, map),
            Target::Field(Ty::Any) => {
                Value::deserialize(de::value::MapAccessDeserializer::new(map))
            }
            Target::Type(id) => match &self.cx.schemas.ty(id).shape {
                Shape::Struct(fields) => decode_struct(self.cx, id, fields, map),
                Shape::Any => Value::deserialize(de::value::MapAccessDeserializer::new(map)),
                _ => {
                    let skipped = Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
                    self.mismatch("object", || skipped.to_string())?;
                    Ok(Value::Null)
                }
            },
            Target::Field(_) => {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                self.mismatch("object", String::new)?;
                Ok(Value::Null)
            }
        }
    }
}

fn decode_struct<'de, 's, A: MapAccess<'de>>(
    cx: &mut Cx<'s>,
    id: TypeId,
    fields: &'s [(&'static str, Ty)],
    mut map: A,
) -> Result<Value, A::Error> {
    let mut out = Map::new();
    let outer_struct = cx.go_struct;
    while let Some(key) = map.next_key::<String>()? {
        let len = cx.push_key(&key);
        match fields.binary_search_by(|(name, _)| (*name).cmp(key.as_str())) {
            Ok(i) => {
                let (name, ty) = &fields[i];
                cx.fields.push(name);
                cx.go_struct = Some(id);
                let value = map.next_value_seed(Seed {
                    cx: &mut *cx,
                    target: Target::Field(ty),
                });
                cx.fields.pop();
                cx.go_struct = outer_struct;
                let value = value?;
                match out.get_mut(&key) {
                    Some(earlier) => {
                        cx.strict_error("duplicate");
                        go_merge(earlier, value);
                    }
                    None => {
                        out.insert(key, value);
                    }
                }
            }
            Err(_) => {
                cx.strict_error("unknown");
                map.next_value::<IgnoredAny>()?;
            }
        }
        cx.path.truncate(len);
    }
    Ok(Value::Object(out))
}

fn decode_map<'de, 's, A: MapAccess<'de>>(
    cx: &mut Cx<'s>,
    values: &'s Ty,
    mut map: A,
) -> Result<Value, A::Error> {
    let mut out = Map::new();
    while let Some(key) = map.next_key::<String>()? {
        let len = cx.push_key(&key);
        let value = map.next_value_seed(Seed {
            cx: &mut *cx,
            target: Target::Field(values),
        });
        let value = value?;
        if out.insert(key, value).is_some() {
            // Go decodes each map value afresh: the later one replaces the earlier.
            cx.strict_error("duplicate");
        }
        cx.path.truncate(len);
    }
    Ok(Value::Object(out))
}

/// A field given twice: Go decodes the second value into the same struct or map, so
/// objects merge (recursively); anything else replaces.
fn go_merge(earlier: &mut Value, later: Value) {
    match (earlier, later) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(e) if e.is_object() && v.is_object() => go_merge(e, v),
                    _ => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (earlier, later) => *earlier = later,
    }
}

/// A string quoted as Go's `%q` quotes it.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if let Some(escape) = crate::gofmt::shared_escape(c) {
            out.push_str(escape);
            continue;
        }
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

const QUANTITY_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const QUANTITY_NUMERIC: &str = "unable to parse numeric part of quantity";
const QUANTITY_SUFFIX: &str = "unable to parse quantity's suffix";

/// Whether `s` parses as apimachinery's `ParseQuantity` parses it; its error text if not.
pub(crate) fn check_quantity(s: &str) -> Result<(), &'static str> {
    let b = s.as_bytes();
    if b.is_empty() {
        return Err(QUANTITY_FORMAT);
    }
    let end = b.len();
    let mut pos = usize::from(matches!(b[0], b'-' | b'+'));
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        // Only a sign and zeros.
        return Ok(());
    }
    let mut digits = 0;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
        digits += 1;
    }
    if pos < end && b[pos] == b'.' {
        pos += 1;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
            digits += 1;
        }
    }
    // The suffix: letters of the suffix alphabet, then an optional signed integer.
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && matches!(b[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(QUANTITY_FORMAT);
    }
    let suffix = &s[suffix_start..];
    let known = matches!(
        suffix,
        "" | "Ki"
            | "Mi"
            | "Gi"
            | "Ti"
            | "Pi"
            | "Ei"
            | "n"
            | "u"
            | "m"
            | "k"
            | "M"
            | "G"
            | "T"
            | "P"
            | "E"
    );
    let exponent = suffix.len() > 1
        && (suffix.starts_with('e') || suffix.starts_with('E'))
        && suffix[1..].parse::<i64>().is_ok();
    if !known && !exponent {
        return Err(QUANTITY_SUFFIX);
    }
    if digits == 0 {
        // Neither an integer nor a fractional part: "0.", ".", "Ki".
        return Err(QUANTITY_NUMERIC);
    }
    Ok(())
}

/// Whether `s` is standard, padded base64 as Go's `base64.StdEncoding` reads it (line
/// breaks ignored); the offset Go reports if not.
pub(crate) fn check_base64(s: &str) -> Result<(), usize> {
    let b = s.as_bytes();
    let mut quantum = 0usize; // characters of the current 4-character group
    let mut quantum_start = 0usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\r' || c == b'\n' {
            i += 1;
            continue;
        }
        if c == b'=' {
            match quantum {
                0 | 1 => return Err(i),
                2 => {
                    // Needs a second '=' (skipping line breaks).
                    let mut j = i + 1;
                    while j < b.len() && (b[j] == b'\r' || b[j] == b'\n') {
                        j += 1;
                    }
                    if j >= b.len() || b[j] != b'=' {
                        return Err(i);
                    }
                    i = j;
                }
                _ => {}
            }
            // Only line breaks may follow the padding.
            let mut j = i + 1;
            while j < b.len() && (b[j] == b'\r' || b[j] == b'\n') {
                j += 1;
            }
            return if j < b.len() { Err(j) } else { Ok(()) };
        }
        if !(c.is_ascii_alphanumeric() || c == b'+' || c == b'/') {
            return Err(i);
        }
        if quantum == 0 {
            quantum_start = i;
        }
        quantum = (quantum + 1) % 4;
        i += 1;
    }
    if quantum != 0 {
        return Err(quantum_start);
    }
    Ok(())
}

const RFC3339: &str = "2006-01-02T15:04:05Z07:00";
const RFC3339_MICRO: &str = "2006-01-02T15:04:05.000000Z07:00";

/// Whether `v` parses as Go's `time.Parse(time.RFC3339, v)` (or RFC3339Micro) parses it;
/// Go's error text if not.
pub(crate) fn check_time(v: &str, micro: bool) -> Result<(), String> {
    let layout = if micro { RFC3339_MICRO } else { RFC3339 };
    let cannot = |rest: &str, elem: &str| {
        Err(format!(
            "parsing time {} as {}: cannot parse {} as {}",
            go_quote(v),
            go_quote(layout),
            go_quote(rest),
            go_quote(elem)
        ))
    };
    let range = |what: &str| Err(format!("parsing time {}: {what} out of range", go_quote(v)));
    let digits =
        |s: &str, n: usize| s.len() >= n && s.as_bytes()[..n].iter().all(u8::is_ascii_digit);
    let mut rest = v;

    // 2006
    if rest.len() < 4 || !digits(rest, 4) {
        return cannot(rest, "2006");
    }
    let year: i64 = rest[..4].parse().unwrap_or(0);
    rest = &rest[4..];
    let literal = |rest: &mut &str, lit: &str| -> bool {
        if let Some(r) = rest.strip_prefix(lit) {
            *rest = r;
            true
        } else {
            false
        }
    };
    if !literal(&mut rest, "-") {
        return cannot(rest, "-");
    }
    // 01
    if !digits(rest, 2) {
        return cannot(rest, "01");
    }
    let month: u32 = rest[..2].parse().unwrap_or(0);
    rest = &rest[2..];
    if !(1..=12).contains(&month) {
        return range("month");
    }
    if !literal(&mut rest, "-") {
        return cannot(rest, "-");
    }
    // 02
    if !digits(rest, 2) {
        return cannot(rest, "02");
    }
    let day: u32 = rest[..2].parse().unwrap_or(0);
    rest = &rest[2..];
    if !literal(&mut rest, "T") {
        return cannot(rest, "T");
    }
    // 15: one or two digits
    let n = rest.bytes().take(2).take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return cannot(rest, "15");
    }
    let hour: u32 = rest[..n].parse().unwrap_or(0);
    rest = &rest[n..];
    if hour >= 24 {
        return range("hour");
    }
    if !literal(&mut rest, ":") {
        return cannot(rest, ":");
    }
    if !digits(rest, 2) {
        return cannot(rest, "04");
    }
    let minute: u32 = rest[..2].parse().unwrap_or(0);
    rest = &rest[2..];
    if minute >= 60 {
        return range("minute");
    }
    if !literal(&mut rest, ":") {
        return cannot(rest, ":");
    }
    if !digits(rest, 2) {
        return cannot(rest, "05");
    }
    let second: u32 = rest[..2].parse().unwrap_or(0);
    rest = &rest[2..];
    if second >= 60 {
        return range("second");
    }
    if micro {
        // .000000: exactly six digits.
        if !(rest.starts_with('.') || rest.starts_with(',')) || !digits(&rest[1..], 6) {
            return cannot(rest, ".000000");
        }
        rest = &rest[7..];
    } else if (rest.starts_with('.') || rest.starts_with(',')) && digits(&rest[1..], 1) {
        // Fractional seconds are accepted though the layout has none.
        let n = rest[1..].bytes().take_while(u8::is_ascii_digit).count();
        rest = &rest[1 + n..];
    }
    // Z07:00
    if let Some(r) = rest.strip_prefix('Z') {
        rest = r;
    } else {
        let b = rest.as_bytes();
        if b.len() < 6
            || b[3] != b':'
            || !(b[0] == b'+' || b[0] == b'-')
            || !digits(&rest[1..], 2)
            || !digits(&rest[4..], 2)
        {
            return cannot(rest, "Z07:00");
        }
        let hh: u32 = rest[1..3].parse().unwrap_or(0);
        let mm: u32 = rest[4..6].parse().unwrap_or(0);
        rest = &rest[6..];
        if hh > 24 {
            return range("time zone offset hour");
        }
        if mm > 60 {
            return range("time zone offset minute");
        }
    }
    if !rest.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            go_quote(v),
            go_quote(rest)
        ));
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if day < 1 || day > days {
        return range("day");
    }
    Ok(())
}

//! Messages to JSON: what Go's `encoding/json` writes for the value Go's generated
//! protobuf code decodes from the same bytes.
//!
//! A message is read in one flat pass into slots (one per schema field, holding scalars
//! and sub-slices of the input); its JSON is then built from the slots, recursing into
//! sub-messages with the depth counted. Fields repeated on the wire follow protobuf's
//! rules as gogo implements them: the last scalar wins, occurrences of a message merge,
//! repeated fields append.

use base64::Engine as _;
use serde_json::{Map, Number, Value};

use crate::go_types::schema::{Field, Message, Shape, Ty, INLINE, MAP, OE, PTR, REP};
use crate::go_types::table::MESSAGES;
use super::wire::{Reader, FIXED64, LEN, VARINT};
use super::{DecodeError, MAX_DEPTH};

#[derive(Debug, Clone, Copy)]
enum Scalar<'a> {
    Bool(bool),
    I32(i32),
    I64(i64),
    F64(f64),
    /// A string, bytes, or the encoding of a message or map entry.
    Bytes(&'a [u8]),
}

enum Slot<'a> {
    Absent,
    One(Scalar<'a>),
    /// The occurrences of a singular message field, merged in order.
    Msg(Vec<&'a [u8]>),
    /// Repeated elements or map entries.
    Many(Vec<Scalar<'a>>),
}

/// What one decode may still use: how deep it is, and how many more values it may write
/// that are not on the wire.
///
/// Values read from the wire cost at least a byte each, so they are bounded by the body.
/// Values Go writes without any bytes behind them are not: a struct field absent from the
/// wire is written whole, a nil slice or pointer without `omitempty` as `null`. gogo writes
/// every struct field, so real bodies have few such values (a `null` here and there), but
/// a body of empty repeated messages would have Go expand each two-byte element into a
/// whole struct (a `Node` is 60-odd values). Their number is capped at an eighth of the
/// body's size, plus a floor.
pub(super) struct Cx {
    depth: u32,
    unbacked: usize,
}

impl Cx {
    pub(super) fn new(len: usize) -> Cx {
        Cx {
            depth: 0,
            unbacked: len / 8 + 4096,
        }
    }

    /// Spends one value not on the wire.
    fn unbacked(&mut self) -> Result<(), DecodeError> {
        match self.unbacked.checked_sub(1) {
            Some(left) => {
                self.unbacked = left;
                Ok(())
            }
            None => Err(DecodeError::TooLarge),
        }
    }
}

/// The JSON for message `index` encoded as `chunks` (their concatenation, which protobuf
/// defines as merging them), one level deeper than `cx` is.
pub(super) fn message(index: u16, chunks: &[&[u8]], cx: &mut Cx) -> Result<Value, DecodeError> {
    if cx.depth >= MAX_DEPTH {
        return Err(DecodeError::TooDeep);
    }
    cx.depth += 1;
    let out = message_in(index, chunks, cx);
    cx.depth -= 1;
    out
}

fn message_in(index: u16, chunks: &[&[u8]], cx: &mut Cx) -> Result<Value, DecodeError> {
    let msg = &MESSAGES[usize::from(index)];
    let slots = gather(msg, chunks)?;
    match msg.shape {
        Shape::Struct => object(msg, &slots, cx).map(Value::Object),
        Shape::Time => time(msg, chunks, false),
        Shape::MicroTime => time(msg, chunks, true),
        Shape::Duration => {
            let nanos = match slot(msg, &slots, 1) {
                Slot::One(Scalar::I64(n)) => *n,
                _ => 0,
            };
            Ok(Value::String(go_duration(nanos)))
        }
        Shape::Quantity => Ok(match slot(msg, &slots, 1) {
            Slot::One(Scalar::Bytes(s)) => Value::String(string(s)),
            // Go's zero Quantity writes "0".
            _ => Value::String("0".to_owned()),
        }),
        Shape::IntOrString => {
            let kind = match slot(msg, &slots, 1) {
                Slot::One(Scalar::I64(n)) => *n,
                _ => 0,
            };
            match kind {
                0 => Ok(Value::from(match slot(msg, &slots, 2) {
                    Slot::One(Scalar::I32(n)) => *n,
                    _ => 0,
                })),
                1 => Ok(Value::String(match slot(msg, &slots, 3) {
                    Slot::One(Scalar::Bytes(s)) => string(s),
                    _ => String::new(),
                })),
                other => Err(DecodeError::Invalid(format!(
                    "impossible IntOrString type {other}"
                ))),
            }
        }
        Shape::RawExtension | Shape::RawJson | Shape::Json => match slot(msg, &slots, 1) {
            Slot::One(Scalar::Bytes(raw)) if !raw.is_empty() => {
                if msg.shape == Shape::RawExtension && raw.starts_with(super::MAGIC) {
                    // An embedded object a protobuf client encoded with its own serializer.
                    super::decode_at(raw, cx)
                } else {
                    serde_json::from_slice(raw).map_err(|e| {
                        DecodeError::Invalid(format!("{} does not hold JSON: {e}", msg.name))
                    })
                }
            }
            _ => Ok(Value::Null),
        },
        Shape::SchemaOrArray => {
            // {schema = 1, jSONSchemas = 2}
            match slot(msg, &slots, 2) {
                Slot::Many(items) if !items.is_empty() => {
                    list(field(msg, 2), items, cx).map(Value::Array)
                }
                _ => optional_message(field(msg, 1), slot(msg, &slots, 1), cx),
            }
        }
        Shape::SchemaOrBool => {
            // {allows = 1, schema = 2}
            match slot(msg, &slots, 2) {
                Slot::Msg(chunks) => message_of(field(msg, 2), chunks, cx),
                _ => Ok(Value::Bool(matches!(
                    slot(msg, &slots, 1),
                    Slot::One(Scalar::Bool(true))
                ))),
            }
        }
        Shape::StringList => match slot(msg, &slots, 1) {
            Slot::Many(items) if !items.is_empty() => list(field(msg, 1), items, cx).map(Value::Array),
            _ => Ok(Value::Null),
        },
        Shape::SchemaOrStringArray => {
            // {schema = 1, property = 2}
            match slot(msg, &slots, 2) {
                Slot::Many(items) if !items.is_empty() => {
                    list(field(msg, 2), items, cx).map(Value::Array)
                }
                _ => optional_message(field(msg, 1), slot(msg, &slots, 1), cx),
            }
        }
    }
}

fn field(msg: &Message, num: u32) -> &'static Field {
    let fields: &'static [Field] = msg.fields;
    fields
        .iter()
        .find(|f| f.num == num)
        .expect("special messages have their fields")
}

fn slot<'s, 'a>(msg: &Message, slots: &'s [Slot<'a>], num: u32) -> &'s Slot<'a> {
    match msg.fields.iter().position(|f| f.num == num) {
        Some(i) => &slots[i],
        None => &Slot::Absent,
    }
}

fn message_of(f: &Field, chunks: &[&[u8]], cx: &mut Cx) -> Result<Value, DecodeError> {
    match f.ty {
        Ty::M(index) => message(index, chunks, cx),
        _ => unreachable!("message_of on a scalar field"),
    }
}

/// A pointer to a message: `null` when unset.
fn optional_message(f: &Field, s: &Slot, cx: &mut Cx) -> Result<Value, DecodeError> {
    match s {
        Slot::Msg(chunks) => message_of(f, chunks, cx),
        _ => Ok(Value::Null),
    }
}

/// Reads the fields of one message into its slots.
fn gather<'a>(msg: &Message, chunks: &[&'a [u8]]) -> Result<Vec<Slot<'a>>, DecodeError> {
    let mut slots: Vec<Slot<'a>> = msg.fields.iter().map(|_| Slot::Absent).collect();
    for chunk in chunks {
        let mut r = Reader::new(chunk);
        while !r.is_empty() {
            let (num, wire) = r.tag()?;
            let Some(i) = msg.fields.iter().position(|f| f.num == num) else {
                r.skip(wire)?;
                continue;
            };
            let f = &msg.fields[i];
            let wrong = || DecodeError::WrongWireType {
                message: msg.name,
                field: f.json,
                wire,
            };
            if f.has(REP | MAP) {
                let items = match &mut slots[i] {
                    Slot::Many(items) => items,
                    s => {
                        *s = Slot::Many(Vec::new());
                        let Slot::Many(items) = s else { unreachable!() };
                        items
                    }
                };
                match (f.ty, wire) {
                    (Ty::S | Ty::BY | Ty::M(_), LEN) => items.push(Scalar::Bytes(r.bytes()?)),
                    (Ty::S | Ty::BY | Ty::M(_), _) => return Err(wrong()),
                    // Packed numbers (maps only have string, bytes or message values).
                    (_, LEN) => {
                        let mut packed = Reader::new(r.bytes()?);
                        while !packed.is_empty() {
                            items.push(scalar(f.ty, expected_wire(f.ty), &mut packed)?);
                        }
                    }
                    (ty, w) if w == expected_wire(ty) => items.push(scalar(ty, w, &mut r)?),
                    _ => return Err(wrong()),
                }
            } else {
                if wire != expected_wire(f.ty) {
                    return Err(wrong());
                }
                match f.ty {
                    Ty::M(_) => {
                        let bytes = r.bytes()?;
                        match &mut slots[i] {
                            Slot::Msg(chunks) => chunks.push(bytes),
                            s => *s = Slot::Msg(vec![bytes]),
                        }
                    }
                    ty => slots[i] = Slot::One(scalar(ty, wire, &mut r)?),
                }
            }
        }
    }
    Ok(slots)
}

fn expected_wire(ty: Ty) -> u8 {
    match ty {
        Ty::B | Ty::I32 | Ty::I64 => VARINT,
        Ty::D => FIXED64,
        Ty::S | Ty::BY | Ty::M(_) => LEN,
    }
}

fn scalar<'a>(ty: Ty, wire: u8, r: &mut Reader<'a>) -> Result<Scalar<'a>, DecodeError> {
    Ok(match (ty, wire) {
        (Ty::B, VARINT) => Scalar::Bool(r.varint()? != 0),
        // Go truncates a varint to the field's width.
        (Ty::I32, VARINT) => Scalar::I32(r.varint()? as i32),
        (Ty::I64, VARINT) => Scalar::I64(r.varint()? as i64),
        (Ty::D, FIXED64) => Scalar::F64(f64::from_bits(r.fixed64()?)),
        (_, LEN) => Scalar::Bytes(r.bytes()?),
        _ => unreachable!("scalar() is called with the field's own wire type"),
    })
}

/// A Go struct: its fields by `encoding/json`'s rules.
fn object(msg: &Message, slots: &[Slot], cx: &mut Cx) -> Result<Map<String, Value>, DecodeError> {
    let mut out = Map::new();
    for (f, s) in msg.fields.iter().zip(slots) {
        let omitempty = f.has(OE);
        let value = if f.has(REP | MAP) {
            match s {
                Slot::Many(items) if !items.is_empty() => {
                    if f.has(MAP) {
                        Value::Object(map(msg, f, items, cx)?)
                    } else {
                        Value::Array(list(f, items, cx)?)
                    }
                }
                // A nil slice or map.
                _ if omitempty => continue,
                _ => {
                    cx.unbacked()?;
                    Value::Null
                }
            }
        } else if let Ty::M(index) = f.ty {
            match s {
                Slot::Msg(chunks) => message(index, chunks, cx)?,
                // A nil pointer.
                _ if f.has(PTR) => {
                    if omitempty || f.has(INLINE) {
                        continue;
                    }
                    cx.unbacked()?;
                    Value::Null
                }
                // A struct value is always written, zero or not (an embedded one
                // contributes its zero fields).
                _ => {
                    cx.unbacked()?;
                    message(index, &[], cx)?
                }
            }
        } else {
            match s {
                Slot::One(v) => {
                    if omitempty && !f.has(PTR) && is_zero(v) {
                        continue;
                    }
                    scalar_json(msg, f, *v)?
                }
                _ if f.has(PTR) || f.ty == Ty::BY => {
                    // A nil pointer or nil []byte.
                    if omitempty {
                        continue;
                    }
                    cx.unbacked()?;
                    Value::Null
                }
                // Never on the wire: Go's zero value.
                _ if omitempty => continue,
                _ => {
                    cx.unbacked()?;
                    zero(f.ty)
                }
            }
        };
        if f.has(INLINE) {
            // Go promotes an embedded struct's fields; the outer struct's own win.
            if let Value::Object(inner) = value {
                for (k, v) in inner {
                    out.entry(k).or_insert(v);
                }
            }
        } else {
            out.insert(f.json.to_owned(), value);
        }
    }
    Ok(out)
}

fn is_zero(v: &Scalar) -> bool {
    match *v {
        Scalar::Bool(b) => !b,
        Scalar::I32(n) => n == 0,
        Scalar::I64(n) => n == 0,
        Scalar::F64(x) => x == 0.0,
        Scalar::Bytes(b) => b.is_empty(),
    }
}

fn zero(ty: Ty) -> Value {
    match ty {
        Ty::S => Value::String(String::new()),
        Ty::B => Value::Bool(false),
        Ty::I32 | Ty::I64 | Ty::D => Value::from(0),
        Ty::BY | Ty::M(_) => Value::Null,
    }
}

fn scalar_json(msg: &Message, f: &Field, v: Scalar) -> Result<Value, DecodeError> {
    Ok(match (f.ty, v) {
        (_, Scalar::Bool(b)) => Value::Bool(b),
        (_, Scalar::I32(n)) => Value::from(n),
        (_, Scalar::I64(n)) => Value::from(n),
        (_, Scalar::F64(x)) => float(x).ok_or_else(|| {
            DecodeError::Invalid(format!(
                "unsupported value {x} in field {} of {}",
                f.json, msg.name
            ))
        })?,
        (Ty::BY, Scalar::Bytes(b)) => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        (_, Scalar::Bytes(b)) => Value::String(string(b)),
    })
}

/// A float as Go writes it: integral values without a fraction; NaN and infinities are
/// errors in Go's encoder.
fn float(x: f64) -> Option<Value> {
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        return Some(Value::from(x as i64));
    }
    Number::from_f64(x).map(Value::Number)
}

/// Go converts strings to JSON replacing invalid UTF-8 with U+FFFD.
fn string(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn list(f: &Field, items: &[Scalar], cx: &mut Cx) -> Result<Vec<Value>, DecodeError> {
    items
        .iter()
        .map(|item| match (f.ty, item) {
            (Ty::M(index), Scalar::Bytes(b)) => message(index, &[b], cx),
            (Ty::BY, Scalar::Bytes(b)) => Ok(Value::String(
                base64::engine::general_purpose::STANDARD.encode(b),
            )),
            (_, Scalar::Bytes(b)) => Ok(Value::String(string(b))),
            (_, Scalar::Bool(b)) => Ok(Value::Bool(*b)),
            (_, Scalar::I32(n)) => Ok(Value::from(*n)),
            (_, Scalar::I64(n)) => Ok(Value::from(*n)),
            (_, Scalar::F64(x)) => float(*x).ok_or_else(|| {
                DecodeError::Invalid(format!("unsupported value {x} in field {}", f.json))
            }),
        })
        .collect()
}

/// `map<string, T>`: entries are messages {key = 1, value = 2}; the last entry for a key
/// wins, and a missing key or value is its zero value.
fn map(
    msg: &Message,
    f: &Field,
    entries: &[Scalar],
    cx: &mut Cx,
) -> Result<Map<String, Value>, DecodeError> {
    let mut out = Map::new();
    for entry in entries {
        let Scalar::Bytes(entry) = entry else {
            continue;
        };
        let mut r = Reader::new(entry);
        let mut key: &[u8] = &[];
        let mut value: Option<&[u8]> = None;
        while !r.is_empty() {
            let (num, wire) = r.tag()?;
            match num {
                1 | 2 if wire != LEN => {
                    return Err(DecodeError::WrongWireType {
                        message: msg.name,
                        field: f.json,
                        wire,
                    })
                }
                1 => key = r.bytes()?,
                2 => value = Some(r.bytes()?),
                _ => r.skip(wire)?,
            }
        }
        let value = match f.ty {
            Ty::M(index) => message(index, value.as_slice(), cx)?,
            Ty::BY => Value::String(
                base64::engine::general_purpose::STANDARD.encode(value.unwrap_or_default()),
            ),
            _ => Value::String(string(value.unwrap_or_default())),
        };
        out.insert(string(key), value);
    }
    Ok(out)
}

/// `Time` and `MicroTime`: {seconds = 1, nanos = 2}. Their unmarshallers replace the value
/// on each occurrence, so the last one counts; an empty one is the zero time.
fn time(msg: &Message, chunks: &[&[u8]], micro: bool) -> Result<Value, DecodeError> {
    let last = match chunks.last() {
        Some(c) if !c.is_empty() => *c,
        _ => return Ok(Value::Null),
    };
    let slots = gather(msg, &[last])?;
    let seconds = match slot(msg, &slots, 1) {
        Slot::One(Scalar::I64(n)) => *n,
        _ => 0,
    };
    // Time drops the nanoseconds; MicroTime truncates them to microseconds.
    let nanos = match slot(msg, &slots, 2) {
        Slot::One(Scalar::I32(n)) if micro => i64::from(*n) / 1000 * 1000,
        _ => 0,
    };
    let seconds = seconds.saturating_add(nanos.div_euclid(1_000_000_000));
    let nanos = nanos.rem_euclid(1_000_000_000);
    // Go's zero time.Time, 0001-01-01T00:00:00Z, is written as null.
    if seconds == -62_135_596_800 && nanos == 0 {
        return Ok(Value::Null);
    }
    rfc3339(seconds, nanos, micro)
        .map(Value::String)
        .ok_or_else(|| DecodeError::Invalid(format!("{} out of range: {seconds}s", msg.name)))
}

/// `2024-01-02T03:04:05Z`, or with six fractional digits; years 0 to 9999 only.
fn rfc3339(seconds: i64, nanos: i64, micro: bool) -> Option<String> {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    let (y, mo, d) = crate::time::civil_from_days(days);
    if !(0..=9999).contains(&y) {
        return None;
    }
    let (h, mi, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    Some(if micro {
        format!(
            "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:06}Z",
            nanos / 1000
        )
    } else {
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
    })
}

/// Go's `time.Duration.String()`: `1h2m3.5s`, `1.5ms`, `0s`.
pub(super) fn go_duration(d: i64) -> String {
    let mut u = d.unsigned_abs();
    // Built backwards, as Go does.
    let mut buf: Vec<u8> = Vec::with_capacity(32);
    if u < 1_000_000_000 {
        if u == 0 {
            return "0s".to_owned();
        }
        buf.push(b's');
        let prec = if u < 1_000 {
            buf.push(b'n');
            0
        } else if u < 1_000_000 {
            // "µ", U+00B5, reversed.
            buf.extend_from_slice(&[0xb5, 0xc2]);
            3
        } else {
            buf.push(b'm');
            6
        };
        u = frac(&mut buf, u, prec);
        int(&mut buf, u);
    } else {
        buf.push(b's');
        u = frac(&mut buf, u, 9);
        int(&mut buf, u % 60);
        u /= 60;
        if u > 0 {
            buf.push(b'm');
            int(&mut buf, u % 60);
            u /= 60;
            if u > 0 {
                buf.push(b'h');
                int(&mut buf, u);
            }
        }
    }
    if d < 0 {
        buf.push(b'-');
    }
    buf.reverse();
    String::from_utf8(buf).expect("ASCII and µ")
}

/// Pushes (reversed) the fraction of `v / 10^prec` without trailing zeros, and the point
/// when there is a fraction; returns `v / 10^prec`.
fn frac(buf: &mut Vec<u8>, mut v: u64, prec: u32) -> u64 {
    let mut print = false;
    for _ in 0..prec {
        let digit = (v % 10) as u8;
        print = print || digit != 0;
        if print {
            buf.push(b'0' + digit);
        }
        v /= 10;
    }
    if print {
        buf.push(b'.');
    }
    v
}

/// Pushes (reversed) the decimal digits of `v`.
fn int(buf: &mut Vec<u8>, mut v: u64) {
    if v == 0 {
        buf.push(b'0');
        return;
    }
    while v > 0 {
        buf.push(b'0' + (v % 10) as u8);
        v /= 10;
    }
}

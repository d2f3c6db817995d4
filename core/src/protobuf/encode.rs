//! JSON to protobuf: the bytes kube-apiserver writes for an object, as Go's generated
//! (gogo) `Marshal` writes the value Go's `encoding/json` reads from the same JSON.
//!
//! The rules of k8s' generated code: fields in field-number order; a non-pointer scalar
//! is always written, zero or not (a string as `""`, a number as 0, a bool as false); a
//! pointer only when set; `[]byte` only when not nil; a struct value always (a zero one as
//! its zero fields, a zero `Time` as an empty message); repeated numbers unpacked; map
//! entries sorted by key, each with its key and its value (a `[]byte` value only when not
//! nil). JSON `null` is Go's zero value (a nil pointer, slice or map).
//!
//! The types with their own protobuf form: `Time` and `MicroTime` are `{seconds, nanos}`
//! (nothing when zero), `Duration` `{duration}`, `Quantity` its string, `IntOrString`
//! `{type, intVal, strVal}` (all three always), `RawExtension`, `FieldsV1` and
//! apiextensions' `JSON` their raw JSON, `JSONSchemaPropsOr*` their schema or array.

use base64::Engine as _;
use serde_json::Value;

use super::wire::{FIXED64, LEN, VARINT};
use super::{MAGIC, MAX_DEPTH};
use crate::apply::PathElement;
use crate::go_types::response_message_for;
use crate::go_types::schema::{Field, Shape, Ty, INLINE, MAP, PTR, REP};
use crate::go_types::table::MESSAGES;

/// Why an object could not be encoded: it is not of a known kind, or a field holds JSON
/// Go's decoder would refuse for its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError(pub String);

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "protobuf: {}", self.0)
    }
}

impl std::error::Error for EncodeError {}

fn invalid(what: &str, v: &Value) -> EncodeError {
    let mut text = v.to_string();
    if text.len() > 64 {
        let mut end = 64;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    EncodeError(format!("cannot encode {text} as {what}"))
}

/// The body kube-apiserver sends for `object` (which names its `apiVersion` and `kind`):
/// `k8s\0` and a `runtime.Unknown` {typeMeta, raw, contentEncoding "", contentType ""}.
pub fn encode(object: &Value) -> Result<Vec<u8>, EncodeError> {
    let text = |k: &str| object.get(k).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let raw = encode_item(api_version, kind, object)?;
    Ok(envelope(api_version, kind, &raw))
}

fn message_of(api_version: &str, kind: &str) -> Result<u16, EncodeError> {
    response_message_for(api_version, kind)
        .ok_or_else(|| EncodeError(format!("unknown type {api_version}, Kind={kind}")))
}

/// The message of one object of `api_version`/`kind`, without the envelope: what a
/// list holds of each item.
pub fn encode_item(api_version: &str, kind: &str, object: &Value) -> Result<Vec<u8>, EncodeError> {
    let index = message_of(api_version, kind)?;
    let mut raw = Vec::with_capacity(256);
    message(index, Some(object), &mut raw, 0)?;
    Ok(raw)
}

/// The body of a list of `list_kind` written around items already encoded
/// ([`encode_item`]): its `metadata` (a ListMeta, from JSON), then each item, in the
/// list message's field order.
pub fn encode_list(api_version: &str, list_kind: &str, metadata: &Value, items: &[bytes::Bytes]) -> Result<Vec<u8>, EncodeError> {
    let index = message_of(api_version, list_kind)?;
    let fields = MESSAGES[usize::from(index)].fields;
    let field = |name: &str| {
        fields
            .iter()
            .find(|f| f.json == name)
            .ok_or_else(|| EncodeError(format!("{list_kind} has no {name}")))
    };
    let (meta, listed) = (field("metadata")?, field("items")?);
    let Ty::M(meta_index) = meta.ty else {
        return Err(EncodeError(format!("{list_kind}'s metadata is no message")));
    };
    let size: usize = items.iter().map(|i| i.len() + 6).sum();
    let mut raw = Vec::with_capacity(size + 64);
    let write_items = |raw: &mut Vec<u8>| items.iter().for_each(|item| put_bytes(raw, listed.num, item));
    if meta.num < listed.num {
        put_message(&mut raw, meta.num, meta_index, Some(metadata), 0)?;
        write_items(&mut raw);
    } else {
        write_items(&mut raw);
        put_message(&mut raw, meta.num, meta_index, Some(metadata), 0)?;
    }
    Ok(envelope(api_version, list_kind, &raw))
}

/// `k8s\0` and a `runtime.Unknown` {typeMeta, raw, contentEncoding "", contentType ""}
/// around an object's message ([`encode_item`]).
pub fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    put_bytes(&mut type_meta, 1, api_version.as_bytes());
    put_bytes(&mut type_meta, 2, kind.as_bytes());
    let mut out = Vec::with_capacity(raw.len() + type_meta.len() + 16);
    out.extend_from_slice(MAGIC);
    put_bytes(&mut out, 1, &type_meta);
    put_bytes(&mut out, 2, raw);
    put_bytes(&mut out, 3, b"");
    put_bytes(&mut out, 4, b"");
    out
}

/// One frame of a protobuf watch stream: the 4-byte big-endian length of a bare
/// `meta.v1.WatchEvent` {type = 1, object = 2: a `RawExtension` {raw = 1}} whose raw
/// bytes are the object's whole body ([`encode`], magic included), as upstream frames it.
pub fn watch_frame(event_type: &str, object: &Value) -> Result<Vec<u8>, EncodeError> {
    let body = encode(object)?;
    let mut raw = Vec::with_capacity(body.len() + 4);
    put_bytes(&mut raw, 1, &body);
    let mut frame = Vec::with_capacity(raw.len() + event_type.len() + 12);
    frame.extend_from_slice(&[0; 4]);
    put_bytes(&mut frame, 1, event_type.as_bytes());
    put_bytes(&mut frame, 2, &raw);
    let len = u32::try_from(frame.len() - 4).map_err(|_| EncodeError("watch event too large".into()))?;
    frame[..4].copy_from_slice(&len.to_be_bytes());
    Ok(frame)
}

pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_tag(out: &mut Vec<u8>, num: u32, wire: u8) {
    put_varint(out, u64::from(num) << 3 | u64::from(wire));
}

fn put_bytes(out: &mut Vec<u8>, num: u32, b: &[u8]) {
    put_tag(out, num, LEN);
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A varint field; negative numbers are ten bytes, sign-extended, as Go writes them.
fn put_int(out: &mut Vec<u8>, num: u32, v: i64) {
    put_tag(out, num, VARINT);
    put_varint(out, v as u64);
}

/// Field `num` holding message `index` for `v`, written in place: a one-byte length is
/// reserved and, for the rare message of 128 bytes or more, the body moved to make room.
fn put_message(
    out: &mut Vec<u8>,
    num: u32,
    index: u16,
    v: Option<&Value>,
    depth: u32,
) -> Result<(), EncodeError> {
    put_tag(out, num, LEN);
    let at = out.len();
    out.push(0);
    message(index, v, out, depth + 1)?;
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
    } else {
        let mut prefix = Vec::with_capacity(10);
        put_varint(&mut prefix, len as u64);
        let extra = prefix.len() - 1;
        out.resize(out.len() + extra, 0);
        out.copy_within(at + 1..at + 1 + len, at + 1 + extra);
        out[at..at + prefix.len()].copy_from_slice(&prefix);
    }
    Ok(())
}

/// `v` without a JSON `null`, which Go reads as the zero value.
fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

/// The fields of message `index` for the JSON `v` (`None`: Go's zero value).
fn message(
    index: u16,
    v: Option<&Value>,
    out: &mut Vec<u8>,
    depth: u32,
) -> Result<(), EncodeError> {
    if depth >= MAX_DEPTH {
        return Err(EncodeError(format!(
            "messages nested deeper than {MAX_DEPTH}"
        )));
    }
    let msg = &MESSAGES[usize::from(index)];
    let v = present(v);
    let field = |num: u32| {
        msg.fields
            .iter()
            .find(|f| f.num == num)
            .expect("special messages have their fields")
    };
    match msg.shape {
        Shape::Struct => {
            let obj = match v {
                None => None,
                Some(Value::Object(obj)) => Some(obj),
                Some(other) => return Err(invalid(msg.name, other)),
            };
            // Go declaration order, which is mostly the numbers' order.
            let mut sorted: Vec<&Field>;
            let fields: &mut dyn Iterator<Item = &Field> = if msg.fields.is_sorted_by_key(|f| f.num)
            {
                &mut msg.fields.iter()
            } else {
                sorted = msg.fields.iter().collect();
                sorted.sort_by_key(|f| f.num);
                &mut sorted.into_iter()
            };
            for f in fields {
                let value = if f.has(INLINE) {
                    v
                } else {
                    present(obj.and_then(|o| o.get(f.json)))
                };
                struct_field(f, value, out, depth)?;
            }
        }
        Shape::Time | Shape::MicroTime => {
            let Some(v) = v else { return Ok(()) };
            let (seconds, nanos) = v
                .as_str()
                .and_then(crate::time::parse_go_rfc3339)
                .ok_or_else(|| invalid(msg.name, v))?;
            // Go's zero time is written as nothing.
            if seconds == -62_135_596_800 && nanos == 0 {
                return Ok(());
            }
            put_int(out, 1, seconds);
            put_int(out, 2, i64::from(nanos));
        }
        Shape::Duration => {
            let nanos = match v {
                None => 0,
                Some(v) => duration(v).ok_or_else(|| invalid(msg.name, v))?,
            };
            put_int(out, 1, nanos);
        }
        Shape::Quantity => {
            let s = match v {
                None => "0".to_owned(),
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                Some(other) => return Err(invalid(msg.name, other)),
            };
            put_bytes(out, 1, s.as_bytes());
        }
        Shape::IntOrString => {
            let (kind, int, string) = match v {
                None => (0, 0, ""),
                Some(Value::String(s)) => (1, 0, s.as_str()),
                Some(n) => (0, int(n, Ty::I32).ok_or_else(|| invalid(msg.name, n))?, ""),
            };
            put_int(out, 1, kind);
            put_int(out, 2, int);
            put_bytes(out, 3, string.as_bytes());
        }
        Shape::RawExtension | Shape::Json => {
            if let Some(v) = v {
                let raw = serde_json::to_vec(v).expect("a Value serializes");
                put_bytes(out, 1, &raw);
            }
        }
        Shape::RawJson => {
            if let Some(v) = v {
                let mut raw = Vec::new();
                fields_v1(v, &mut raw);
                put_bytes(out, 1, &raw);
            }
        }
        Shape::SchemaOrArray | Shape::SchemaOrStringArray => {
            // {schema = 1, jSONSchemas or property = 2}
            match v {
                None => {}
                Some(Value::Array(_)) => repeated(field(2), v, out, depth)?,
                Some(schema) => struct_field(field(1), Some(schema), out, depth)?,
            }
        }
        Shape::SchemaOrBool => {
            // {allows = 1, schema = 2}: an object is a schema that allows.
            match v {
                None => put_int(out, 1, 0),
                Some(Value::Bool(b)) => put_int(out, 1, i64::from(*b)),
                Some(schema) => {
                    put_int(out, 1, 1);
                    struct_field(field(2), Some(schema), out, depth)?;
                }
            }
        }
        Shape::StringList => repeated(field(1), v, out, depth)?,
    }
    Ok(())
}

/// One field of a struct, `v` being its JSON (`None` when absent or null).
fn struct_field(
    f: &Field,
    v: Option<&Value>,
    out: &mut Vec<u8>,
    depth: u32,
) -> Result<(), EncodeError> {
    if f.has(REP) {
        return repeated(f, v, out, depth);
    }
    if f.has(MAP) {
        return map(f, v, out, depth);
    }
    match (f.ty, v) {
        // A nil pointer, or a nil []byte.
        (_, None) if f.has(PTR) || f.ty == Ty::BY => Ok(()),
        (Ty::M(index), v) => put_message(out, f.num, index, v, depth),
        (ty, v) => scalar(f, ty, v, out),
    }
}

fn repeated(
    f: &Field,
    v: Option<&Value>,
    out: &mut Vec<u8>,
    depth: u32,
) -> Result<(), EncodeError> {
    let items = match v {
        None => return Ok(()),
        Some(Value::Array(items)) => items,
        Some(other) => return Err(invalid(f.json, other)),
    };
    for item in items {
        match f.ty {
            Ty::M(index) => put_message(out, f.num, index, Some(item), depth)?,
            // Every element is written, a nil []byte as an empty one.
            Ty::BY if item.is_null() => put_bytes(out, f.num, b""),
            ty => scalar(f, ty, present(Some(item)), out)?,
        }
    }
    Ok(())
}

/// `map<string, T>`: entries {key = 1, value = 2} in key order.
fn map(f: &Field, v: Option<&Value>, out: &mut Vec<u8>, depth: u32) -> Result<(), EncodeError> {
    let entries = match v {
        None => return Ok(()),
        Some(Value::Object(entries)) => entries,
        Some(other) => return Err(invalid(f.json, other)),
    };
    let mut keys: Vec<&String> = entries.keys().collect();
    keys.sort_unstable();
    let mut entry = Vec::new();
    for key in keys {
        entry.clear();
        put_bytes(&mut entry, 1, key.as_bytes());
        let value = present(entries.get(key.as_str()));
        match f.ty {
            Ty::M(index) => put_message(&mut entry, 2, index, value, depth)?,
            Ty::BY if value.is_none() => {}
            ty => scalar_as(2, f.json, ty, value, &mut entry)?,
        }
        put_bytes(out, f.num, &entry);
    }
    Ok(())
}

fn scalar(f: &Field, ty: Ty, v: Option<&Value>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    scalar_as(f.num, f.json, ty, v, out)
}

/// A scalar (a zero one for `None`) as field `num`.
fn scalar_as(
    num: u32,
    name: &str,
    ty: Ty,
    v: Option<&Value>,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    match (ty, v) {
        (Ty::S, None) => put_bytes(out, num, b""),
        (Ty::S, Some(Value::String(s))) => put_bytes(out, num, s.as_bytes()),
        (Ty::BY, None) => {}
        (Ty::BY, Some(v @ Value::String(s))) => {
            let b = base64::engine::general_purpose::STANDARD
                .decode(s.as_bytes())
                .map_err(|_| invalid(name, v))?;
            put_bytes(out, num, &b);
        }
        (Ty::B, None) => put_int(out, num, 0),
        (Ty::B, Some(Value::Bool(b))) => put_int(out, num, i64::from(*b)),
        (Ty::I32 | Ty::I64, None) => put_int(out, num, 0),
        (Ty::I32 | Ty::I64, Some(v)) => {
            put_int(out, num, int(v, ty).ok_or_else(|| invalid(name, v))?)
        }
        (Ty::D, v) => {
            let x = match v {
                None => 0.0,
                Some(v) => v.as_f64().ok_or_else(|| invalid(name, v))?,
            };
            put_tag(out, num, FIXED64);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        (_, Some(v)) => return Err(invalid(name, v)),
        (Ty::M(_), None) => unreachable!("messages are not scalars"),
    }
    Ok(())
}

/// A JSON number as Go's decoder reads it into an int32 or int64: integral and in range.
fn int(v: &Value, ty: Ty) -> Option<i64> {
    let n = match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            let x = n.as_f64()?;
            (x.fract() == 0.0 && x.abs() < 9.2e18).then_some(x as i64)
        })?,
        _ => return None,
    };
    match ty {
        Ty::I32 => i32::try_from(n).ok().map(i64::from),
        _ => Some(n),
    }
}

/// A Go duration string (`1h0m0s`, `-1.5s`) as nanoseconds.
fn duration(v: &Value) -> Option<i64> {
    let s = v.as_str()?;
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let d = crate::duration::parse_duration(s).ok()?;
    let nanos = i64::try_from(d.as_nanos()).ok()?;
    Some(if negative { -nanos } else { nanos })
}

/// A `FieldsV1` as structured-merge-diff writes it: `"."` first, then the path elements in
/// its order (fields, keys, values, indexes; numbers by value), where a JSON object would
/// have them by string (`k:{"port":443}` before `k:{"port":80}`).
fn fields_v1(v: &Value, out: &mut Vec<u8>) {
    let Value::Object(map) = v else {
        serde_json::to_writer(&mut *out, v).expect("a Value serializes");
        return;
    };
    let mut keys: Vec<(u8, Option<PathElement>, &String)> = map
        .keys()
        .map(|k| match PathElement::decode(k) {
            _ if k == "." => (0, None, k),
            Some(Some(e)) => (1, Some(e), k),
            _ => (2, None, k),
        })
        .collect();
    keys.sort();
    out.push(b'{');
    for (i, (_, _, k)) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, k).expect("a string serializes");
        out.push(b':');
        fields_v1(&map[k.as_str()], out);
    }
    out.push(b'}');
}

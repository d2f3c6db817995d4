//! Built-in objects as kube-apiserver writes them. It decodes every built-in object into
//! its Go type and encodes it back with `encoding/json`, so what clients see (and
//! compare, sometimes as text) follows the Go struct, not the JSON that was sent:
//! fields in the struct's declaration order (`kind`, `apiVersion`, `metadata`, `spec`,
//! `status`), fields without `omitempty` always present with their zero value (a new
//! DaemonSet's `status` counters, a ClusterRole's `rules: null`), struct fields always
//! present (`status: {}`, a container's `resources: {}`), empty `omitempty` values and
//! fields the type does not have gone, map keys sorted, and `<`, `>`, `&`, U+2028 and
//! U+2029 escaped as Go escapes them.
//!
//! The facts come from the Go types' table ([`crate::go_types`]). Objects are written
//! this way once, when they are stored; reads serve the stored bytes. Kinds not in the
//! table (custom resources) are not typed: upstream writes them as maps, with sorted
//! keys, which is what `serde_json` writes.
//!
//! Differences from v1.33 are taken from the recorded oracle ([`OMITTED_WHEN_EMPTY`]):
//! an unset `metadata.creationTimestamp` (in a pod template) and a CRD's unset
//! `status.conditions` are left out rather than written `null`, as the newer server
//! it was recorded from does. And a list or map without `omitempty` sent empty (`[]`)
//! is written `[]`: upstream stores protobuf, which keeps no difference between empty
//! and unset, and answers `null` for it after storage.

use crate::go_types::schema::{Field, Message, Shape, Ty, INLINE, MAP, OE, PTR, REP};
use crate::go_types::table::MESSAGES;
use serde_json::{Map, Value};

/// `value` as Go writes its type (named by its own `apiVersion` and `kind`), or `None`
/// when the kind is not a built-in one.
pub fn encode(value: &Value) -> Option<Vec<u8>> {
    let text = |k: &str| value.get(k).and_then(Value::as_str);
    encode_as(text("apiVersion")?, text("kind")?, value)
}

/// `value` as Go writes the type of `kind` in `api_version` (for list items, which
/// carry neither), or `None` when that kind is not a built-in one.
pub fn encode_as(api_version: &str, kind: &str, value: &Value) -> Option<Vec<u8>> {
    let index = crate::go_types::message_for(api_version, kind)?;
    let mut out = Vec::with_capacity(512);
    message(&mut out, index, Some(value));
    Some(out)
}

/// Make `obj` what Go's decoding into its type and encoding back makes of it (its zero
/// fields in, what the type lacks out), when its kind is a built-in one: so that what
/// is compared before a write (a spec change, a no-op update) is compared as upstream
/// compares typed objects. Returns whether it is a built-in kind.
pub fn normalize(obj: &mut Map<String, Value>) -> bool {
    let value = Value::Object(std::mem::take(obj));
    let written = encode(&value);
    let Value::Object(back) = value else { unreachable!() };
    *obj = match written.and_then(|bytes| serde_json::from_slice(&bytes).ok()) {
        Some(Value::Object(typed)) => typed,
        _ => {
            *obj = back;
            return false;
        }
    };
    true
}

/// `value` as Go writes the message named `name` (`meta.v1.ListMeta`).
pub(crate) fn encode_message(name: &str, value: &Value) -> Option<Vec<u8>> {
    let index = MESSAGES.iter().position(|m| m.name == name)?;
    let mut out = Vec::with_capacity(128);
    message(&mut out, u16::try_from(index).ok()?, Some(value));
    Some(out)
}

/// Message `index` holding `value` (`None`: Go's zero value of it).
fn message(out: &mut Vec<u8>, index: u16, value: Option<&Value>) {
    let msg = &MESSAGES[usize::from(index)];
    match msg.shape {
        Shape::Struct => {
            out.push(b'{');
            let mut first = true;
            let obj = value.and_then(Value::as_object);
            if is_kind(index) {
                type_meta(out, obj, &mut first);
            }
            fields(out, msg, obj, &[], &mut first);
            out.push(b'}');
        }
        // Types with their own JSON form: what was decoded is what Go writes back; the
        // zero value of each is what its marshaller writes for it.
        _ => match value.filter(|v| !v.is_null()) {
            Some(v) => write_value(out, v),
            None => out.extend_from_slice(zero_special(msg.shape)),
        },
    }
}

/// Whether message `index` is a kind's: its Go type embeds `TypeMeta` (which protobuf
/// messages do not carry, so the table has no field for it).
fn is_kind(index: u16) -> bool {
    static KINDS: std::sync::OnceLock<Vec<bool>> = std::sync::OnceLock::new();
    let kinds = KINDS.get_or_init(|| {
        let mut kinds = vec![false; MESSAGES.len()];
        for &(_, _, i) in crate::go_types::table::KINDS {
            kinds[usize::from(i)] = true;
        }
        kinds
    });
    kinds[usize::from(index)]
}

/// The embedded `TypeMeta`: `kind` and `apiVersion`, each left out when empty.
fn type_meta(out: &mut Vec<u8>, obj: Option<&Map<String, Value>>, first: &mut bool) {
    for key in ["kind", "apiVersion"] {
        let Some(value) = obj.and_then(|o| o.get(key)).filter(|v| !zero_scalar(v)) else {
            continue;
        };
        if !std::mem::replace(first, false) {
            out.push(b',');
        }
        write_string(out, key);
        out.push(b':');
        write_value(out, value);
    }
}

fn zero_special(shape: Shape) -> &'static [u8] {
    match shape {
        Shape::Quantity => b"\"0\"",
        Shape::IntOrString => b"0",
        Shape::Duration => b"\"0s\"",
        Shape::SchemaOrBool => b"false",
        _ => b"null",
    }
}

/// The fields of `msg` from `obj` into the object being written; `shadowed` are the
/// names the enclosing struct declares itself (Go lets them win over promoted ones).
fn fields(out: &mut Vec<u8>, msg: &Message, obj: Option<&Map<String, Value>>, shadowed: &[&str], first: &mut bool) {
    for f in msg.fields {
        if f.has(INLINE) {
            if let Ty::M(inner) = f.ty {
                // Few structs embed another: the names that hide its fields are
                // gathered only for those.
                let mut hidden: Vec<&str> = msg.fields.iter().filter(|f| !f.has(INLINE)).map(|f| f.json).collect();
                hidden.extend_from_slice(shadowed);
                fields(out, &MESSAGES[usize::from(inner)], obj, &hidden, first);
            }
            continue;
        }
        if !shadowed.is_empty() && shadowed.contains(&f.json) {
            continue;
        }
        let value = obj.and_then(|o| o.get(f.json)).filter(|v| !v.is_null());
        if !written(msg, f, value) {
            continue;
        }
        if !std::mem::replace(first, false) {
            out.push(b',');
        }
        write_string(out, f.json);
        out.push(b':');
        field_value(out, f, value);
    }
}

/// Whether Go writes field `f` of `msg` holding `value` (`None`: unset or null).
fn written(msg: &Message, f: &Field, value: Option<&Value>) -> bool {
    let omitempty = f.has(OE);
    if f.has(REP | MAP) {
        // Without omitempty a nil slice or map is `null`, an empty one `[]` or `{}`.
        return !(omitempty || omitted_when_empty(msg, f)) || value.is_some_and(|v| !empty_collection(v));
    }
    match (f.ty, value) {
        // A pointer that is set is written, zero or not.
        (_, Some(_)) if f.has(PTR) => true,
        (Ty::M(index), None) => {
            let special = MESSAGES[usize::from(index)].shape;
            if f.has(PTR) {
                !omitempty
            } else if special == Shape::Time && omitted_when_empty(msg, f) {
                false
            } else {
                // A struct value is always written, zero or not.
                true
            }
        }
        (Ty::M(_), Some(_)) => true,
        (_, None) => !omitempty,
        (_, Some(v)) => !(omitempty && zero_scalar(v)),
    }
}

/// Fields the recorded server leaves out when unset although v1.33's Go type has no
/// `omitempty` on them (see the module's note on the recorded oracle).
const OMITTED_WHEN_EMPTY: &[(&str, &str)] = &[
    ("meta.v1.ObjectMeta", "creationTimestamp"),
    ("apiextensions.v1.CustomResourceDefinitionStatus", "conditions"),
];

fn omitted_when_empty(msg: &Message, f: &Field) -> bool {
    OMITTED_WHEN_EMPTY.contains(&(msg.name, f.json))
}

fn empty_collection(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Null => true,
        _ => false,
    }
}

fn zero_scalar(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Null => true,
        _ => false,
    }
}

/// The value of field `f` (known to be written).
fn field_value(out: &mut Vec<u8>, f: &Field, value: Option<&Value>) {
    if f.has(MAP) {
        match value.and_then(Value::as_object) {
            Some(map) => {
                out.push(b'{');
                // `serde_json` keeps keys sorted, as Go writes map keys.
                for (n, (k, v)) in map.iter().enumerate() {
                    if n > 0 {
                        out.push(b',');
                    }
                    write_string(out, k);
                    out.push(b':');
                    element(out, f.ty, Some(v));
                }
                out.push(b'}');
            }
            None => out.extend_from_slice(b"null"),
        }
        return;
    }
    if f.has(REP) {
        match value {
            Some(Value::Array(items)) => {
                out.push(b'[');
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        out.push(b',');
                    }
                    element(out, f.ty, Some(item));
                }
                out.push(b']');
            }
            // Not a list: the decoder let it through, so write it as it is.
            Some(other) if !empty_collection(other) => write_value(out, other),
            _ => out.extend_from_slice(b"null"),
        }
        return;
    }
    match (f.ty, value) {
        (_, None) if f.has(PTR) || f.ty == Ty::BY => out.extend_from_slice(b"null"),
        (ty, v) => element(out, ty, v),
    }
}

/// One value of type `ty` (`None`: its zero value).
fn element(out: &mut Vec<u8>, ty: Ty, value: Option<&Value>) {
    match (ty, value) {
        (Ty::M(index), v) => message(out, index, v.filter(|v| !v.is_null())),
        (_, Some(v)) if !v.is_null() => write_value(out, v),
        (Ty::S, _) => out.extend_from_slice(b"\"\""),
        (Ty::B, _) => out.extend_from_slice(b"false"),
        (Ty::I32 | Ty::I64 | Ty::D, _) => out.push(b'0'),
        (Ty::BY, _) => out.extend_from_slice(b"null"),
    }
}

/// Any JSON value, compact, with Go's string escaping (objects' keys sorted).
fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (n, (k, item)) in map.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write_string(out, k);
                out.push(b':');
                write_value(out, item);
            }
            out.push(b'}');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

/// A JSON string as Go's encoder writes it: HTML-safe, with U+2028 and U+2029 escaped.
pub(crate) fn write_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    // Most strings need no escape: copied whole. (0xE2 starts U+2028 and U+2029.)
    if !bytes.iter().any(|&b| b < 0x20 || matches!(b, b'"' | b'\\' | b'<' | b'>' | b'&' | 0xE2)) {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut start = 0;
    for (i, ch) in s.char_indices() {
        let escape: Option<&[u8]> = match ch {
            '"' => Some(b"\\\""),
            '\\' => Some(b"\\\\"),
            '\n' => Some(b"\\n"),
            '\r' => Some(b"\\r"),
            '\t' => Some(b"\\t"),
            '\u{8}' => Some(b"\\b"),
            '\u{c}' => Some(b"\\f"),
            c if (c as u32) < 0x20 || matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}') => None,
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        match escape {
            Some(e) => out.extend_from_slice(e),
            None => {
                let code = ch as u32;
                out.extend_from_slice(b"\\u");
                for shift in [12, 8, 4, 0] {
                    out.push(HEX[((code >> shift) & 0xf) as usize]);
                }
            }
        }
        start = i + ch.len_utf8();
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Compact JSON indented as Go's `json.Indent` with two spaces does it (`?pretty=true`):
/// one member or element per line, `": "` after keys, empty objects and arrays kept
/// as `{}` and `[]`, no trailing newline.
pub fn indent(compact: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(compact.len() * 3 / 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.resize(out.len() + 2 * depth, b' ');
    };
    let mut i = 0;
    while i < compact.len() {
        let b = compact[i];
        if in_string {
            out.push(b);
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                out.push(b);
            }
            b'{' | b'[' => {
                let close = if b == b'{' { b'}' } else { b']' };
                if compact.get(i + 1) == Some(&close) {
                    out.extend_from_slice(&[b, close]);
                    i += 2;
                    continue;
                }
                out.push(b);
                depth += 1;
                newline(&mut out, depth);
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(b);
            }
            b',' => {
                out.push(b);
                newline(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            b' ' | b'\n' | b'\r' | b'\t' => {}
            _ => out.push(b),
        }
        i += 1;
    }
    out
}

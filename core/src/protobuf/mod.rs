//! Kubernetes' protobuf encoding, read into the JSON the same object would be, and
//! written from it ([`encode`], in `encode.rs`: the bytes kube-apiserver writes).
//!
//! Since client-go 1.31, typed clientsets (and so `kubectl create`, controller-runtime and
//! most Go controllers) send built-in kinds as `application/vnd.kubernetes.protobuf`.
//! Apiary answers in JSON, which those clients accept, but must read their bodies.
//!
//! A body is the magic `k8s\0` and a `runtime.Unknown` message: `typeMeta` (1: {apiVersion
//! = 1, kind = 2}), `raw` (2: the object's own message), `contentEncoding` (3),
//! `contentType` (4). The object's message is its Go type's generated (gogo, proto2)
//! encoding; [`decode`] turns it into exactly what Go's `encoding/json` writes for the value
//! Go's decoder reads from the same bytes: field names, `omitempty`, pointers, inline
//! structs, and the types with their own JSON form (`Time`, `MicroTime`, `Duration`,
//! `Quantity`, `IntOrString`, `RawExtension`, `FieldsV1`, and apiextensions' `JSON` and
//! `JSONSchemaPropsOr*`). Bytes are base64; int64s are numbers.
//!
//! The schema is static data in `go_types/table.rs`, generated from the Kubernetes v1.33 API types
//! for the kinds in the registry (and their lists, `DeleteOptions`, `Scale`, `Eviction`,
//! `Binding`, `TokenRequest` and the connect options), closed over the messages they use.
//!
//! Hostile input is expected: lengths are checked before use, nothing is allocated from a
//! declared size, messages nest at most [`MAX_DEPTH`] deep, the values written without
//! bytes behind them (Go's zero structs) are capped in proportion to the body, and every
//! failure is a [`DecodeError`] whose text fits a 400 Status.

mod encode;

mod json;

mod wire;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod encode_tests;

use std::fmt;

use serde_json::{Map, Value};

pub use encode::{encode, encode_item, encode_list, envelope, watch_frame, EncodeError};
use wire::{Reader, LEN};

/// The media type of Kubernetes' protobuf encoding.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// Whether a Content-Type names Kubernetes' protobuf encoding.
pub fn is_protobuf(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(MEDIA_TYPE))
}

/// The four bytes every body starts with.
pub const MAGIC: &[u8] = b"k8s\x00";

/// How deep messages may nest. A CRD's schema takes two levels per level of properties
/// (the map entry and the schema), so this leaves room for about sixty levels of a
/// real-world schema, while keeping the recursion far from any thread's stack limit.
pub const MAX_DEPTH: u32 = 128;

/// Why a body could not be read. `Display` gives text for a 400 Status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Nothing after the magic (or no body at all).
    Empty,
    /// The body does not start with `k8s\0`.
    NotProtobuf,
    /// A length or value runs past the end of its message.
    Truncated,
    /// A varint longer than ten bytes.
    VarintOverflow,
    /// A field number of zero or beyond 2^31-1.
    InvalidTag,
    /// Wire type 3, 4 (groups), 6 or 7.
    UnsupportedWireType(u8),
    /// A known field with the wire type of another type.
    WrongWireType {
        message: &'static str,
        field: &'static str,
        wire: u8,
    },
    /// Messages nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// The body would make Go write far more values that are not on the wire than its
    /// size warrants: empty repeated messages that expand into whole structs.
    TooLarge,
    /// The envelope names no kind.
    MissingKind,
    /// The envelope names no apiVersion.
    MissingVersion,
    /// The envelope names a type this server has no schema for.
    UnknownType { api_version: String, kind: String },
    /// The envelope declares a content encoding (compression); none is defined.
    UnsupportedContentEncoding(String),
    /// A value Go's JSON encoder would refuse: an IntOrString of an unknown type, a NaN,
    /// a time outside years 0–9999, a `RawExtension` that is not JSON.
    Invalid(String),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("protobuf: ")?;
        match self {
            DecodeError::Empty => f.write_str("empty body"),
            DecodeError::NotProtobuf => f.write_str(
                "body does not appear to be a protobuf message, expected prefix \"k8s\\x00\"",
            ),
            DecodeError::Truncated => f.write_str("truncated message"),
            DecodeError::VarintOverflow => f.write_str("integer overflow"),
            DecodeError::InvalidTag => f.write_str("illegal field tag"),
            DecodeError::UnsupportedWireType(w) => write!(f, "unsupported wire type {w}"),
            DecodeError::WrongWireType {
                message,
                field,
                wire,
            } => write!(f, "wrong wire type {wire} for field {field:?} of {message}"),
            DecodeError::TooDeep => write!(f, "messages nested deeper than {MAX_DEPTH}"),
            DecodeError::TooLarge => f.write_str("body expands to too many JSON values"),
            DecodeError::MissingKind => f.write_str("Object 'Kind' is missing"),
            DecodeError::MissingVersion => f.write_str("Object 'apiVersion' is missing"),
            DecodeError::UnknownType { api_version, kind } => {
                write!(f, "unknown type {api_version}, Kind={kind}")
            }
            DecodeError::UnsupportedContentEncoding(e) => {
                write!(f, "unsupported content encoding {e:?}")
            }
            DecodeError::Invalid(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Decodes a protobuf request body into the JSON object the same object would be in JSON,
/// with `apiVersion` and `kind` set from the envelope.
pub fn decode(body: &[u8]) -> Result<Value, DecodeError> {
    decode_at(body, &mut json::Cx::new(body.len()))
}

/// Whether [`decode`] knows the kind (`DeleteOptions` in any group version).
pub fn supports(api_version: &str, kind: &str) -> bool {
    message_for(api_version, kind).is_some()
}

use crate::go_types::{message_for, response_message_for};

/// [`decode`], also of a body nested in a `RawExtension` of another.
fn decode_at(body: &[u8], cx: &mut json::Cx) -> Result<Value, DecodeError> {
    if body.is_empty() {
        return Err(DecodeError::Empty);
    }
    let Some(envelope) = body.strip_prefix(MAGIC) else {
        return Err(DecodeError::NotProtobuf);
    };
    if envelope.is_empty() {
        return Err(DecodeError::Empty);
    }
    let unknown = Unknown::read(envelope)?;
    if let Some(encoding) = unknown.content_encoding.filter(|e| !e.is_empty()) {
        return Err(DecodeError::UnsupportedContentEncoding(lossy(encoding)));
    }
    let (api_version, kind) = (lossy(unknown.api_version), lossy(unknown.kind));
    if kind.is_empty() {
        return Err(DecodeError::MissingKind);
    }
    if api_version.is_empty() {
        return Err(DecodeError::MissingVersion);
    }
    // Also the kinds only responses hold (a Status), as a client reads them.
    let Some(index) = response_message_for(&api_version, &kind) else {
        return Err(DecodeError::UnknownType { api_version, kind });
    };
    let Value::Object(fields) = json::message(index, &[unknown.raw], cx)? else {
        unreachable!("kinds are structs");
    };
    // TypeMeta first, as Go writes it.
    let mut out = Map::new();
    out.insert("kind".to_owned(), Value::String(kind));
    out.insert("apiVersion".to_owned(), Value::String(api_version));
    out.extend(fields);
    Ok(Value::Object(out))
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `runtime.Unknown`.
struct Unknown<'a> {
    api_version: &'a [u8],
    kind: &'a [u8],
    raw: &'a [u8],
    content_encoding: Option<&'a [u8]>,
}

impl<'a> Unknown<'a> {
    fn read(buf: &'a [u8]) -> Result<Unknown<'a>, DecodeError> {
        let mut out = Unknown {
            api_version: &[],
            kind: &[],
            raw: &[],
            content_encoding: None,
        };
        let mut r = Reader::new(buf);
        while !r.is_empty() {
            let (num, wire) = r.tag()?;
            if !(1..=4).contains(&num) {
                r.skip(wire)?;
                continue;
            }
            if wire != LEN {
                return Err(DecodeError::WrongWireType {
                    message: "runtime.Unknown",
                    field: ["typeMeta", "raw", "contentEncoding", "contentType"][num as usize - 1],
                    wire,
                });
            }
            let value = r.bytes()?;
            match num {
                1 => {
                    // TypeMeta {apiVersion = 1, kind = 2}; occurrences merge.
                    let mut t = Reader::new(value);
                    while !t.is_empty() {
                        let (num, wire) = t.tag()?;
                        match num {
                            1 | 2 if wire != LEN => {
                                return Err(DecodeError::WrongWireType {
                                    message: "runtime.TypeMeta",
                                    field: if num == 1 { "apiVersion" } else { "kind" },
                                    wire,
                                })
                            }
                            1 => out.api_version = t.bytes()?,
                            2 => out.kind = t.bytes()?,
                            _ => t.skip(wire)?,
                        }
                    }
                }
                2 => out.raw = value,
                3 => out.content_encoding = Some(value),
                _ => {} // contentType: the object's own encoding is protobuf by definition
            }
        }
        Ok(out)
    }
}

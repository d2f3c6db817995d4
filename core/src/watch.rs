//! The frames of a watch stream: in JSON one `{"type": …, "object": …}` line per
//! event, in protobuf one length-prefixed `WatchEvent` message per event.

use crate::storage::WatchEvent;
use bytes::Bytes;
use serde_json::Value;

/// The event types of a watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
    Bookmark,
    Error,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
            Self::Bookmark => "BOOKMARK",
            Self::Error => "ERROR",
        }
    }
}

/// What a client without selectors sees of `event`: its type, the object shown and
/// the resourceVersion it carries (a deletion's is the deletion's revision).
fn shown(event: &WatchEvent) -> (EventType, &crate::storage::KeyValue, crate::storage::Revision) {
    match event {
        WatchEvent::Put { kv, prev: None } => (EventType::Added, kv, kv.mod_revision),
        WatchEvent::Put { kv, prev: Some(_) } => (EventType::Modified, kv, kv.mod_revision),
        WatchEvent::Delete { prev, revision } => (EventType::Deleted, prev, *revision),
    }
}

/// The frame of `event` built from the stored bytes without parsing them, for watches
/// that need nothing from the object (plain JSON, no selector).
pub fn spliced_frame(event: &WatchEvent) -> Option<Bytes> {
    let (kind, kv, revision) = shown(event);
    let object = crate::stored_json::serve(&kv.value, revision, false)?;
    let mut out = Vec::with_capacity(object.len() + 40);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_str().as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(&object);
    out.extend_from_slice(b"}\n");
    Some(Bytes::from(out))
}

/// The frame of `event` for a protobuf watch that needs nothing from the object:
/// its stored JSON (with the event's resourceVersion) read once and encoded.
pub fn protobuf_spliced_frame(event: &WatchEvent) -> Option<Bytes> {
    let (kind, kv, revision) = shown(event);
    let object = crate::stored_json::serve(&kv.value, revision, false)?;
    let object: Value = serde_json::from_slice(&object).ok()?;
    crate::protobuf::watch_frame(kind.as_str(), &object).ok().map(Bytes::from)
}

/// One line of a JSON watch stream.
pub fn encode_frame(kind: EventType, object: &Value) -> Bytes {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_str().as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    match crate::typed_json::encode(object) {
        Some(typed) => out.extend_from_slice(&typed),
        None => serde_json::to_writer(&mut out, object).expect("JSON values serialize"),
    }
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

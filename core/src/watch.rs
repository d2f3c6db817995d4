//! The frames of a JSON watch stream (`application/json;stream=watch`): one `{"type": …, "object": …}` line per event.

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

/// The frame of `event` built from the stored bytes without parsing them, for watches
/// that need nothing from the object (plain JSON, no selector).
pub fn spliced_frame(event: &WatchEvent) -> Option<Bytes> {
    let (kind, kv, revision) = match event {
        WatchEvent::Put { kv, prev: None } => (EventType::Added, kv, kv.mod_revision),
        WatchEvent::Put { kv, prev: Some(_) } => (EventType::Modified, kv, kv.mod_revision),
        WatchEvent::Delete { prev, revision } => (EventType::Deleted, prev, *revision),
    };
    let object = crate::stored_json::serve(&kv.value, revision, false)?;
    let mut out = Vec::with_capacity(object.len() + 40);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_str().as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(&object);
    out.extend_from_slice(b"}\n");
    Some(Bytes::from(out))
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

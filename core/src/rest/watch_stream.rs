//! A watch as the client sees it: a chunked response of `{"type": …, "object": …}`
//! frames, one per line, or in protobuf of length-prefixed `WatchEvent` messages.
//!
//! The adapter drives a [`WatchStream`]: it writes [`WatchStream::head`], then the
//! frames of [`WatchStream::take_initial`], then feeds every backend event to
//! [`WatchStream::on_event`] and writes what comes back, asks for
//! [`WatchStream::bookmark`]s on [`WatchStream::bookmark_interval`], and ends the
//! response when the stream [`is_done`](WatchStream::is_done), its
//! [`timeout`](WatchStream::timeout) passes, or the client goes away.

use super::object::{self, Object};
use super::scope::Scope;
use crate::effect::{CallOutcome, Outbound, WatchResponse};
use crate::resources::customresources::conversion_review::Review;
use crate::negotiation::{Format, Shape};
use crate::watch::{encode_frame, spliced_frame, EventType};
use crate::selection::Selection;
use crate::status::ApiError;
use crate::storage::{KeyValue, Revision, StorageError, WatchEvent};
use crate::watch_cache::CachedEvent;
use bytes::Bytes;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

/// How often a watch that allows bookmarks gets one.
pub const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// One open watch.
pub struct WatchStream {
    scope: Scope,
    /// Only this key, for a watch of one object.
    exact_key: Option<String>,
    /// The label and field selectors: objects that stop matching are DELETED for this
    /// client, objects that start matching are ADDED.
    selection: Selection,
    /// Frames to write before any backend event.
    initial: VecDeque<Bytes>,
    /// The newest revision the client has been told about.
    revision: Revision,
    timeout: Duration,
    bookmarks: bool,
    done: bool,
    /// Whether a Table's column definitions have been sent: only the first Table of a
    /// watch carries them, as upstream sends them.
    columns_sent: bool,
    /// An event waiting for its conversion webhook's answer, and the call to make.
    converting: Option<(Converting, Option<Outbound>)>,
}

/// An event of a resource with a conversion webhook, sent for conversion to the served
/// version: its objects (new, then the previous one) come back in the review's answer.
#[derive(Debug)]
struct Converting {
    review: Review,
    event: WatchEvent,
}

impl WatchStream {
    pub(crate) fn new(
        scope: Scope,
        exact_key: Option<String>,
        selection: Selection,
        revision: Revision,
        timeout: Duration,
        bookmarks: bool,
    ) -> WatchStream {
        WatchStream {
            scope,
            exact_key,
            selection,
            initial: VecDeque::new(),
            revision,
            timeout,
            bookmarks,
            done: false,
            columns_sent: false,
            converting: None,
        }
    }

    pub(crate) fn push_initial(&mut self, kind: EventType, obj: &Object) {
        let frame = self.frame(kind, obj);
        self.initial.push_back(frame);
    }

    pub(crate) fn push_initial_bookmark(&mut self, initial_events_end: bool) {
        let frame = self.bookmark_frame(initial_events_end);
        self.initial.push_back(frame);
    }

    /// Whether this watch can write the frames built from stored bytes ([`spliced_frame`]
    /// and its protobuf form): plain objects, no selector.
    fn takes_spliced_frames(&self) -> bool {
        self.scope.output.shape == Shape::Object
            && !self.scope.output.pretty
            && self.selection.is_everything()
            && self.scope.splices()
    }

    /// One frame in the stream's encoding. A value the protobuf encoder refuses (not
    /// of a known kind) ends the watch with an ERROR frame, as an encoder's failure
    /// ends upstream's.
    fn encode(&mut self, kind: EventType, value: &Value) -> Bytes {
        if self.scope.output.format != Format::Protobuf {
            return encode_frame(kind, value);
        }
        match crate::protobuf::watch_frame(kind.as_str(), value) {
            Ok(frame) => Bytes::from(frame),
            Err(e) => {
                self.done = true;
                let status = ApiError::internal(e).to_value();
                crate::protobuf::watch_frame(EventType::Error.as_str(), &status)
                    .map(Bytes::from)
                    .unwrap_or_default()
            }
        }
    }

    fn bookmark_frame(&mut self, initial_events_end: bool) -> Bytes {
        let r = self.scope.resource();
        let mut meta = json!({"resourceVersion": self.revision.to_string()});
        if initial_events_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let obj = json!({"kind": r.kind, "apiVersion": r.api_version(), "metadata": meta});
        // A bookmark's object is transformed as every event's is.
        let obj = match self.scope.output.shape {
            Shape::PartialObjectMetadata(version) => super::partial::object(version, &obj),
            _ => obj,
        };
        self.encode(EventType::Bookmark, &obj)
    }

    fn error_frame(&mut self, error: &ApiError) -> Bytes {
        self.done = true;
        self.encode(EventType::Error, &error.to_value())
    }

    fn frame(&mut self, kind: EventType, obj: &Object) -> Bytes {
        match self.scope.output.shape {
            Shape::Table(version) => {
                let rv = object::meta_str(obj, "resourceVersion").to_owned();
                let mut t = super::table::table(
                    &self.scope,
                    version,
                    std::slice::from_ref(obj),
                    &rv,
                    None,
                );
                if std::mem::replace(&mut self.columns_sent, true) {
                    if let Some(columns) = t.get_mut("columnDefinitions") {
                        *columns = Value::Null;
                    }
                }
                self.encode(kind, &t)
            }
            Shape::PartialObjectMetadata(version) => {
                self.encode(kind, &super::partial::object(version, &Value::Object(obj.clone())))
            }
            // Upstream's transform of one object into a list fails, and its watch then
            // sends the object as it is.
            Shape::Object | Shape::PartialObjectMetadataList(_) => {
                self.encode(kind, &Value::Object(obj.clone()))
            }
        }
    }
}

impl WatchResponse for WatchStream {
    /// The response head: 200 with the stream's content type.
    fn head(&self) -> http::response::Parts {
        let (parts, ()) = http::Response::builder()
            .status(200)
            .header(http::header::CONTENT_TYPE, self.scope.output.watch_content_type())
            .body(())
            .expect("valid head")
            .into_parts();
        parts
    }

    /// How long the watch may run before the server ends it.
    fn timeout(&self) -> Duration {
        self.timeout
    }

    /// How often to ask for a [`WatchStream::bookmark`], if the client wants them.
    fn bookmark_interval(&self) -> Option<Duration> {
        self.bookmarks.then_some(BOOKMARK_INTERVAL)
    }

    /// Whether the watch has ended (after an ERROR event).
    fn is_done(&self) -> bool {
        self.done
    }

    /// The frames to write before the first backend event (the initial state).
    fn take_initial(&mut self) -> Vec<Bytes> {
        self.initial.drain(..).collect()
    }

    /// A backend event (or the backend watch's failure), observed at `now`: the frame to
    /// write, if the client is to see it.
    fn on_event(
        &mut self,
        event: Result<WatchEvent, StorageError>,
        now: SystemTime,
    ) -> Option<Bytes> {
        if self.done {
            return None;
        }
        let event = match event {
            Ok(e) => e,
            Err(e) => return Some(self.on_error(e)),
        };
        self.revision = self.revision.max(event.revision());
        let key = event.key();
        if self.exact_key.as_deref().is_some_and(|k| k != key) {
            return None;
        }
        if self.takes_spliced_frames() && self.scope.output.format == Format::Json {
            if let Some(frame) = spliced_frame(&event) {
                return Some(frame);
            }
        }
        if self.scope.resource().strategy.conversion_webhook().is_some() {
            return self.convert(event, now);
        }
        self.event_frame(event, now)
    }

    /// A cache event, observed at `now`: its shared frame when this watch can use it.
    fn on_cached(
        &mut self,
        event: &CachedEvent,
        now: SystemTime,
    ) -> Option<Bytes> {
        if self.done {
            return None;
        }
        if self.takes_spliced_frames() && self.exact_key.is_none() {
            let shared = match self.scope.output.format {
                Format::Protobuf => event.protobuf_frame(),
                Format::Json | Format::Yaml => event.plain_frame(),
            };
            if let Some(frame) = shared {
                self.revision = self.revision.max(event.event.revision());
                return Some(frame.clone());
            }
        }
        self.on_event(Ok(event.event.clone()), now)
    }

    /// The backend watch could not be opened or broke: an ERROR frame, and the end.
    fn on_error(&mut self, error: StorageError) -> Bytes {
        let status = match error {
            StorageError::Compacted {
                requested,
                compacted,
            } => ApiError::gone(format!(
                "too old resource version: {requested} ({compacted})"
            )),
            other => self.scope.storage_error("", other),
        };
        self.error_frame(&status)
    }

    /// A BOOKMARK frame carrying the newest revision the client has seen.
    fn bookmark(&mut self) -> Option<Bytes> {
        (self.bookmarks && !self.done).then(|| self.bookmark_frame(false))
    }

    fn take_call(&mut self) -> Option<Outbound> {
        self.converting.as_mut().and_then(|(_, call)| call.take())
    }

    fn call_done(&mut self, outcome: CallOutcome, now: SystemTime) -> Option<Bytes> {
        let (Converting { review, event }, _) = self.converting.take()?;
        self.converted(event, review.outcome(outcome), now)
    }
}

impl WatchStream {
    /// The frame of an event whose objects are in the served version.
    fn event_frame(&mut self, event: WatchEvent, now: SystemTime) -> Option<Bytes> {
        // The object as of this event, and (for an update) as it was before, both at
        // this event's revision.
        let decoded = match &event {
            WatchEvent::Put { kv, prev } => decode(&self.scope, kv, kv.mod_revision).and_then(|new| {
                let old = match prev {
                    Some(p) => Some(decode(&self.scope, p, kv.mod_revision)?),
                    None => None,
                };
                Ok((new, old))
            }),
            WatchEvent::Delete { prev, revision } => decode(&self.scope, prev, *revision).map(|old| (old, None)),
        };
        let (obj, old) = match decoded {
            Ok(pair) => pair,
            Err(e) => return Some(self.error_frame(&ApiError::internal(e))),
        };
        let matches = self.selection.matches(&obj);
        let (kind, shown) = match (&event, old) {
            (WatchEvent::Delete { .. }, _) if matches => (EventType::Deleted, obj),
            (WatchEvent::Delete { .. }, _) => return None,
            (_, None) if matches => (EventType::Added, obj),
            (_, None) => return None,
            (_, Some(old)) => match (self.selection.matches(&old), matches) {
                (true, true) => (EventType::Modified, obj),
                (false, true) => (EventType::Added, obj),
                // It left the selection: the client sees its last matching state go,
                // at this event's revision.
                (true, false) => (EventType::Deleted, old),
                (false, false) => return None,
            },
        };
        self.scope.inputs.now = now;
        Some(self.frame(kind, &shown))
    }

    /// Convert an event's objects to the served version through the resource's webhook:
    /// at once when they are in it already, else once the call is answered.
    fn convert(&mut self, event: WatchEvent, now: SystemTime) -> Option<Bytes> {
        let objects: Result<Vec<Value>, String> = event_values(&event)
            .into_iter()
            .map(|v| serde_json::from_slice::<Value>(v).map_err(|e| e.to_string()))
            .collect();
        let objects = match objects {
            Ok(objects) => objects,
            Err(e) => return Some(self.error_frame(&ApiError::internal(e))),
        };
        let hook = self.scope.resource().strategy.conversion_webhook()?;
        let desired = hook.served.clone();
        let list = json!({"apiVersion": hook.stored, "kind": format!("{}List", self.scope.resource().kind), "metadata": {}, "items": objects});
        match super::conversion::convert(&self.scope, list, &desired, 2) {
            Err(e) => Some(self.error_frame(&ApiError::internal(e))),
            Ok(Ok(converted)) => self.converted(event, Ok(converted), now),
            Ok(Err((review, outbound))) => {
                self.converting = Some((Converting { review, event }, Some(outbound)));
                None
            }
        }
    }

    /// The frame of `event` with its objects as converted; an ERROR frame (and the
    /// end of the watch) when conversion failed.
    fn converted(&mut self, mut event: WatchEvent, converted: Result<Value, String>, now: SystemTime) -> Option<Bytes> {
        let items = match converted {
            Ok(mut list) => match list.get_mut("items").map(Value::take) {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            },
            Err(e) => {
                let frame = self.error_frame(&ApiError::internal(e));
                self.done = true;
                return Some(frame);
            }
        };
        for (value, object) in event_values_mut(&mut event).into_iter().zip(items) {
            *value = serde_json::to_vec(&object).unwrap_or_default().into();
        }
        self.event_frame(event, now)
    }
}

/// The stored objects of an event: the new one, then the one before.
fn event_values(event: &WatchEvent) -> Vec<&Bytes> {
    match event {
        WatchEvent::Put { kv, prev } => std::iter::once(kv).chain(prev).map(|kv| &kv.value).collect(),
        WatchEvent::Delete { prev, .. } => vec![&prev.value],
    }
}

fn event_values_mut(event: &mut WatchEvent) -> Vec<&mut Bytes> {
    match event {
        WatchEvent::Put { kv, prev } => std::iter::once(kv).chain(prev.iter_mut()).map(|kv| &mut kv.value).collect(),
        WatchEvent::Delete { prev, .. } => vec![&mut prev.value],
    }
}

/// The object of an event, with the resourceVersion of the event's write.
fn decode(scope: &Scope, kv: &KeyValue, revision: Revision) -> Result<Object, String> {
    let mut obj = scope.read(kv)?;
    object::meta_mut(&mut obj).insert(
        "resourceVersion".into(),
        Value::String(revision.to_string()),
    );
    Ok(obj)
}


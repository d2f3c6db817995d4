//! The watch cache: one backend watch per resource, fanned out to every client watch
//! of that resource.
//!
//! The [`Reflector`](crate::reflector::Reflector) feeds every cache from one list and one backend watch of the whole
//! key space: it [`reset_with`](WatchCache::reset_with)s each cache at the list's
//! revision and [`apply`](WatchCache::apply)s every event to the cache it concerns.
//! Client watches [`subscribe`](WatchCache::subscribe) with their prefix and revision:
//! they get the events of the recent window after that revision, then live ones, each
//! exactly once. Each event's frame for plain JSON watches is encoded once and shared.
//!
//! A subscriber that falls more than its cache's queue limit ([`MAX_QUEUED`] unless
//! configured) events behind is ended with an
//! error (its client watches again from its last revision), so one slow client never
//! holds memory or other clients back. A reset ends every subscriber the same way.

mod subscription;

pub use subscription::Subscription;

use crate::storage::{KeyValue, Revision, StorageError, WatchEvent};
use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// How many recent events the cache keeps for watches that start in the past.
pub const WINDOW: usize = 4096;
/// How many undelivered events one subscriber may have before it is ended, unless
/// configured otherwise.
pub const MAX_QUEUED: usize = 100_000;

/// One change, shared by every subscriber it is delivered to.
pub struct CachedEvent {
    pub event: WatchEvent,
    frame: OnceLock<Option<Bytes>>,
    protobuf_frame: OnceLock<Option<Bytes>>,
}

impl CachedEvent {
    /// The frame a plain JSON watch without selectors writes for this event, encoded
    /// once for all of them (`None` when the stored bytes need the parsing path).
    pub fn plain_frame(&self) -> Option<&Bytes> {
        self.frame
            .get_or_init(|| crate::watch::spliced_frame(&self.event))
            .as_ref()
    }

    /// [`CachedEvent::plain_frame`] for protobuf watches.
    pub fn protobuf_frame(&self) -> Option<&Bytes> {
        self.protobuf_frame
            .get_or_init(|| crate::watch::protobuf_spliced_frame(&self.event))
            .as_ref()
    }
}

/// The cache of one resource.
pub struct WatchCache {
    prefix: String,
    /// How many undelivered events a subscriber may have.
    queue_limit: usize,
    inner: Mutex<Inner>,
    /// Bumped whenever the cached objects change (or the cache syncs or unsyncs):
    /// what is derived from them (the RBAC index) checks it without the lock.
    changes: AtomicU64,
}

struct Inner {
    /// Whether a reflector is feeding the cache.
    synced: bool,
    /// Every object of the resource as of `revision`.
    objects: std::collections::BTreeMap<String, KeyValue>,
    /// The newest revision applied.
    revision: Revision,
    /// Every event after `window_start`, oldest first.
    window: VecDeque<Arc<CachedEvent>>,
    window_start: Revision,
    subscribers: Vec<Arc<Subscription>>,
    /// Objects' protobuf messages as list items, by key, each at the revision and in
    /// the group version it was made for: kept once a protobuf LIST has made them (so
    /// the next is a copy, as a JSON LIST is of the stored bytes), dropped when the
    /// object changes.
    protobuf_items: std::collections::HashMap<String, (Revision, Arc<str>, Bytes)>,
    /// Objects parsed from their JSON, by key, at the revision parsed: admission reads
    /// the same few objects (namespaces, quotas, policies) on every write. Dropped when
    /// the object changes.
    parsed: ParsedObjects,
}

/// Objects parsed from their JSON, by key, with the revision parsed.
type ParsedObjects = std::collections::HashMap<String, (Revision, Arc<crate::rest::object::Object>)>;

impl WatchCache {
    pub fn new(prefix: String) -> WatchCache {
        WatchCache::with_queue_limit(prefix, MAX_QUEUED)
    }

    /// A cache whose subscribers are ended once `queue_limit` events wait for them.
    pub fn with_queue_limit(prefix: String, queue_limit: usize) -> WatchCache {
        WatchCache {
            prefix,
            queue_limit,
            inner: Mutex::new(Inner {
                synced: false,
                objects: std::collections::BTreeMap::new(),
                revision: 0,
                window: VecDeque::new(),
                window_start: 0,
                subscribers: Vec::new(),
                protobuf_items: std::collections::HashMap::new(),
                parsed: std::collections::HashMap::new(),
            }),
            changes: AtomicU64::new(0),
        }
    }

    /// A number that changes whenever the cached objects do; derived state compares
    /// it with the one it was built at.
    pub fn changes(&self) -> u64 {
        self.changes.load(Ordering::Acquire)
    }

    fn changed(&self) {
        self.changes.fetch_add(1, Ordering::AcqRel);
    }

    /// How many objects the cache holds; `None` until a reflector has synced it.
    pub fn object_count(&self) -> Option<usize> {
        let inner = self.lock();
        inner.synced.then_some(inner.objects.len())
    }

    /// The key prefix of the resource this cache holds.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Start over at `revision` (a reflector's first or renewed backend watch): the
    /// window is emptied and every subscriber ended, to watch again.
    pub fn reset(&self, revision: Revision) {
        self.reset_with(Vec::new(), revision);
    }

    /// [`WatchCache::reset`] with the resource's objects as of `revision`, from a list.
    pub fn reset_with(&self, objects: Vec<KeyValue>, revision: Revision) {
        let mut inner = self.lock();
        inner.objects = objects.into_iter().map(|kv| (kv.key.clone(), kv)).collect();
        inner.protobuf_items = std::collections::HashMap::new();
        inner.parsed = std::collections::HashMap::new();
        for s in inner.subscribers.drain(..) {
            s.end(StorageError::Unavailable(
                "the watch cache restarted; watch again".into(),
            ));
        }
        inner.window.clear();
        inner.window_start = revision;
        inner.revision = revision;
        inner.synced = true;
        self.changed();
    }

    /// The reflector lost its backend watch: new watches go to the backend until the
    /// next reset.
    pub fn unsync(&self) {
        self.lock().synced = false;
        self.changed();
    }

    /// Apply one backend event and hand it to every subscriber it concerns.
    pub fn apply(&self, event: WatchEvent) {
        let mut inner = self.lock();
        if !inner.synced || event.revision() <= inner.revision {
            return;
        }
        inner.revision = event.revision();
        match &event {
            WatchEvent::Put { kv, .. } => {
                inner.protobuf_items.remove(&kv.key);
                inner.parsed.remove(&kv.key);
                inner.objects.insert(kv.key.clone(), kv.clone());
            }
            WatchEvent::Delete { prev, .. } => {
                inner.protobuf_items.remove(&prev.key);
                inner.parsed.remove(&prev.key);
                inner.objects.remove(&prev.key);
            }
        }
        self.changed();
        let event = Arc::new(CachedEvent {
            event,
            frame: OnceLock::new(),
            protobuf_frame: OnceLock::new(),
        });
        // A subscription only the cache still holds belongs to a watch that has ended.
        inner
            .subscribers
            .retain(|s| Arc::strong_count(s) > 1 && s.offer(&event));
        inner.window.push_back(event);
        while inner.window.len() > WINDOW {
            if let Some(old) = inner.window.pop_front() {
                inner.window_start = old.event.revision();
            }
        }
    }

    /// The store has reached `revision` with no change to this resource since the
    /// cache's last event (the reflector saw another resource's change at it): a
    /// consistent read up to `revision` can be served from here.
    pub fn advance(&self, revision: Revision) {
        let mut inner = self.lock();
        if inner.synced && revision > inner.revision {
            inner.revision = revision;
        }
    }

    /// Subscribe to every event under `prefix` after revision `after`. `None` when the
    /// cache cannot serve it (not synced, or `after` is older than its window): the
    /// caller watches the backend instead, which has the longer history.
    pub fn subscribe(&self, prefix: &str, after: Revision) -> Option<Arc<Subscription>> {
        let mut inner = self.lock();
        if !inner.synced || after < inner.window_start {
            return None;
        }
        let sub = Arc::new(Subscription::new(prefix, after, self.queue_limit));
        for e in &inner.window {
            sub.offer(e);
        }
        inner.subscribers.push(sub.clone());
        Some(sub)
    }

    /// The objects under `prefix` and the revision they are current at, when the cache
    /// is fed and has reached `at_least`.
    pub fn snapshot(&self, prefix: &str, at_least: Revision) -> Option<(Vec<KeyValue>, Revision)> {
        let inner = self.lock();
        if !inner.synced || inner.revision < at_least {
            return None;
        }
        let items = inner
            .objects
            .range(prefix.to_owned()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(_, kv)| kv.clone())
            .collect();
        Some((items, inner.revision))
    }

    /// The protobuf list items of `api_version` kept for `objects`, each only if kept
    /// at its revision.
    pub fn protobuf_items(&self, objects: &[KeyValue], api_version: &str) -> Vec<Option<Bytes>> {
        let inner = self.lock();
        objects
            .iter()
            .map(|kv| {
                inner
                    .protobuf_items
                    .get(&kv.key)
                    .filter(|(revision, version, _)| *revision == kv.mod_revision && &**version == api_version)
                    .map(|(_, _, item)| item.clone())
            })
            .collect()
    }

    /// Keep protobuf list items made of objects, each only while the cache holds its
    /// object at that revision (so nothing is kept for an object changed or gone).
    pub fn keep_protobuf_items(&self, made: Vec<(&KeyValue, Bytes)>, api_version: &str) {
        let api_version: Arc<str> = Arc::from(api_version);
        let mut inner = self.lock();
        for (kv, item) in made {
            if inner.objects.get(&kv.key).is_some_and(|held| held.mod_revision == kv.mod_revision) {
                inner.protobuf_items.insert(kv.key.clone(), (kv.mod_revision, api_version.clone(), item));
            }
        }
    }

    /// Every object the cache holds, synced or not: the last known state, for what
    /// must decide even while storage is away (authorization, as upstream's
    /// informers keep serving their last list).
    pub fn last_known(&self) -> Vec<KeyValue> {
        self.lock().objects.values().cloned().collect()
    }

    /// Whether the cache holds `key`; `None` while it is not fed, when only storage
    /// can tell.
    pub fn contains(&self, key: &str) -> Option<bool> {
        let inner = self.lock();
        inner.synced.then(|| inner.objects.contains_key(key))
    }

    /// The object stored at `key` (`Some(None)`: there is none); `None` while the cache
    /// is not fed, when only storage can tell.
    pub fn get(&self, key: &str) -> Option<Option<KeyValue>> {
        let inner = self.lock();
        inner.synced.then(|| inner.objects.get(key).cloned())
    }

    /// Every object under `prefix`, parsed (those that parse), each parse kept until
    /// the object changes; `None` while the cache is not fed.
    pub fn parsed(&self, prefix: &str) -> Option<Vec<(KeyValue, Arc<crate::rest::object::Object>)>> {
        self.with_parsed(|objects, parsed| {
            objects
                .range::<str, _>((std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded))
                .take_while(|(k, _)| k.starts_with(prefix))
                .filter_map(|(_, kv)| Some((kv.clone(), parse_kept(parsed, kv)?)))
                .collect()
        })
    }

    /// The object at `key`, parsed as [`WatchCache::parsed`] keeps it: `Some(None)`
    /// when there is none (or it does not parse), `None` while the cache is not fed.
    pub fn parsed_one(&self, key: &str) -> Option<Option<(KeyValue, Arc<crate::rest::object::Object>)>> {
        self.with_parsed(|objects, parsed| objects.get(key).and_then(|kv| Some((kv.clone(), parse_kept(parsed, kv)?))))
    }

    /// `f` of the objects and the parses kept of them; `None` while not fed.
    fn with_parsed<R>(&self, f: impl FnOnce(&std::collections::BTreeMap<String, KeyValue>, &mut ParsedObjects) -> R) -> Option<R> {
        let mut guard = self.lock();
        let inner = &mut *guard;
        inner.synced.then(|| f(&inner.objects, &mut inner.parsed))
    }

    /// How many client watches this cache serves.
    pub fn subscribers(&self) -> usize {
        self.lock().subscribers.len()
    }
}

/// `kv`'s object, parsed once per revision.
fn parse_kept(parsed: &mut ParsedObjects, kv: &KeyValue) -> Option<Arc<crate::rest::object::Object>> {
    if let Some((revision, object)) = parsed.get(&kv.key) {
        if *revision == kv.mod_revision {
            return Some(object.clone());
        }
    }
    let object = Arc::new(crate::rest::object::from_storage(kv).ok()?);
    parsed.insert(kv.key.clone(), (kv.mod_revision, object.clone()));
    Some(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::{Context, Poll};

    fn put(key: &str, rev: Revision, update: bool) -> WatchEvent {
        let kv = KeyValue {
            key: key.to_owned(),
            value: Bytes::from_static(b"{\"metadata\":{}}"),
            create_revision: rev,
            mod_revision: rev,
        };
        WatchEvent::Put {
            prev: update.then(|| kv.clone()),
            kv,
        }
    }

    fn drain(sub: &Subscription) -> Vec<Revision> {
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut out = Vec::new();
        while let Poll::Ready(Ok(e)) = sub.poll_next(&mut cx) {
            out.push(e.event.revision());
        }
        out
    }

    #[test]
    fn subscribers_get_the_window_then_live_events_under_their_prefix() {
        let cache = WatchCache::new("/r/cm/".into());
        cache.reset(10);
        cache.apply(put("/r/cm/a/x", 11, false));
        cache.apply(put("/r/cm/b/y", 12, false));
        let all = cache.subscribe("/r/cm/", 10).unwrap();
        let ns_a = cache.subscribe("/r/cm/a/", 11).unwrap();
        cache.apply(put("/r/cm/a/x", 13, true));
        cache.apply(put("/r/cm/a/x", 13, true)); // a duplicate revision is ignored
        assert_eq!(drain(&all), [11, 12, 13]);
        assert_eq!(drain(&ns_a), [13]);
        assert!(
            cache.subscribe("/r/cm/", 9).is_none(),
            "older than the window"
        );
    }

    #[test]
    fn the_window_is_bounded_and_resets_end_subscribers() {
        let cache = WatchCache::new("/r/cm/".into());
        cache.reset(0);
        for rev in 1..=(WINDOW as u64 + 10) {
            cache.apply(put("/r/cm/a/x", rev, true));
        }
        assert!(cache.subscribe("/r/cm/", 5).is_none());
        let sub = cache.subscribe("/r/cm/", 20).unwrap();
        assert_eq!(drain(&sub).len(), WINDOW - 10);
        cache.reset(10_000);
        let waker = std::task::Waker::noop();
        assert!(matches!(
            sub.poll_next(&mut Context::from_waker(waker)),
            Poll::Ready(Err(_))
        ));
        assert_eq!(cache.subscribers(), 0);
    }

    #[test]
    fn a_subscriber_that_falls_behind_gets_what_was_queued_then_an_error() {
        let cache = WatchCache::with_queue_limit("/r/cm/".into(), 3);
        cache.reset(0);
        let slow = cache.subscribe("/r/cm/", 0).unwrap();
        let quick = cache.subscribe("/r/cm/", 0).unwrap();
        for rev in 1..=5 {
            cache.apply(put("/r/cm/a/x", rev, true));
            if rev <= 3 {
                assert_eq!(drain(&quick), [rev]);
            }
        }
        let waker = std::task::Waker::noop();
        let mut polled = Vec::new();
        while let Poll::Ready(next) = slow.poll_next(&mut Context::from_waker(waker)) {
            let ended = next.is_err();
            polled.push(next.map(|e| e.event.revision()).map_err(|_| ()));
            if ended {
                break;
            }
        }
        assert_eq!(polled, [Ok(1), Ok(2), Ok(3), Err(())], "what was queued before it fell behind, then the end");
        assert_eq!(drain(&quick), [4, 5], "the other subscriber goes on");
    }

    #[test]
    fn a_cache_advanced_past_its_last_event_serves_reads_up_to_there() {
        let cache = WatchCache::new("/r/cm/".into());
        cache.reset(5);
        cache.apply(put("/r/cm/a/x", 6, false));
        assert!(cache.snapshot("/r/cm/", 9).is_none(), "not there yet");
        cache.advance(9);
        let (items, revision) = cache.snapshot("/r/cm/", 9).expect("served");
        assert_eq!((items.len(), revision), (1, 9));
        // A later change of its own still applies, and a stale advance changes nothing.
        cache.apply(put("/r/cm/a/y", 10, false));
        cache.advance(8);
        assert_eq!(cache.snapshot("/r/cm/", 10).map(|(i, r)| (i.len(), r)), Some((2, 10)));
        // Unsynced, it serves nothing and advances nothing.
        cache.unsync();
        cache.advance(20);
        assert!(cache.snapshot("/r/cm/", 0).is_none());
    }

    #[test]
    fn parses_are_kept_until_the_object_changes() {
        let cache = WatchCache::new("/r/cm/".into());
        assert!(cache.parsed("/r/cm/").is_none(), "not fed yet");
        let WatchEvent::Put { kv, .. } = put("/r/cm/a/x", 5, false) else { unreachable!() };
        cache.reset_with(vec![kv], 5);
        let first = cache.parsed("/r/cm/").unwrap();
        let again = cache.parsed_one("/r/cm/a/x").unwrap().unwrap();
        assert!(Arc::ptr_eq(&first[0].1, &again.1), "the same parse");
        cache.apply(put("/r/cm/a/x", 6, true));
        let changed = cache.parsed_one("/r/cm/a/x").unwrap().unwrap();
        assert_eq!(changed.0.mod_revision, 6);
        assert!(!Arc::ptr_eq(&first[0].1, &changed.1), "parsed again once changed");
        assert!(cache.parsed_one("/r/cm/a/y").unwrap().is_none());
    }

    #[test]
    fn snapshots_follow_the_events() {
        let cache = WatchCache::new("/r/cm/".into());
        assert!(cache.snapshot("/r/cm/", 0).is_none(), "not fed yet");
        let WatchEvent::Put { kv, .. } = put("/r/cm/a/x", 5, false) else {
            unreachable!()
        };
        cache.reset_with(vec![kv.clone()], 5);
        cache.apply(put("/r/cm/b/y", 6, false));
        cache.apply(WatchEvent::Delete {
            prev: kv,
            revision: 7,
        });
        let (items, rev) = cache.snapshot("/r/cm/", 7).unwrap();
        assert_eq!(rev, 7);
        assert_eq!(
            items.iter().map(|kv| kv.key.as_str()).collect::<Vec<_>>(),
            ["/r/cm/b/y"]
        );
        assert!(cache.snapshot("/r/cm/a/", 0).unwrap().0.is_empty());
        assert!(cache.snapshot("/r/cm/", 8).is_none(), "not caught up");
    }

    #[test]
    fn dropped_subscribers_are_forgotten() {
        let cache = WatchCache::new("/r/cm/".into());
        cache.reset(0);
        let sub = cache.subscribe("/r/cm/", 0).unwrap();
        drop(sub);
        cache.apply(put("/r/cm/a/x", 1, false));
        assert_eq!(cache.subscribers(), 0);
    }
}

//! The reflector machine under any order of storage outcomes, watch events and times:
//! it never panics; every wait is between the first and the longest backoff, doubling
//! from one failure to the next and starting over after a list and watch that worked;
//! the caches are fresh exactly while it reads its watch, and then hold what the list it
//! accepted and the later events say, all at the newest revision seen.
#![no_main]

use apiary_core::reflector::{Input, Next, Reflector, FIRST_BACKOFF, MAX_BACKOFF};
use apiary_core::storage::{KeyValue, ListPage, StorageError, StorageOutput, WatchEvent};
use apiary_core::{Config, Server};
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

/// Keys of two cached resources, near misses of their prefixes, and keys no cache holds.
const KEYS: [&str; 8] = [
    "/registry/configmaps/default/a",
    "/registry/configmaps/default/b",
    "/registry/configmaps/kube-system/a",
    "/registry/secrets/default/a",
    "/registry/secrets/default/b",
    "/registry/configmapsx/default/a",
    "/registry/no-such-resource/x",
    "/elsewhere/x",
];
const CACHED: [&str; 2] = ["/registry/configmaps/", "/registry/secrets/"];

/// One server for every run: a new reflector marks its caches stale, so nothing a run
/// checks carries over from the one before.
fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| Server::new(Config::default()))
}

fn kv(key: usize, revision: u64) -> KeyValue {
    KeyValue {
        key: KEYS[key % KEYS.len()].to_owned(),
        value: Bytes::from_static(b"{}"),
        create_revision: revision,
        mod_revision: revision,
    }
}

/// What the caches should hold: the accepted list, then every newer event.
#[derive(Default)]
struct Model {
    objects: BTreeMap<String, u64>,
    revision: u64,
}

impl Model {
    fn fill(&mut self, page: &ListPage) {
        self.objects = page
            .items
            .iter()
            .map(|kv| (kv.key.clone(), kv.mod_revision))
            .collect();
        self.revision = page.revision;
    }

    fn apply(&mut self, event: &WatchEvent) {
        if event.revision() <= self.revision {
            return;
        }
        self.revision = event.revision();
        match event {
            WatchEvent::Put { kv, .. } => {
                self.objects.insert(kv.key.clone(), kv.mod_revision);
            }
            WatchEvent::Delete { prev, .. } => {
                self.objects.remove(&prev.key);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let server = server();
    let mut reflector = Reflector::new(server);
    let mut now = Duration::ZERO;
    let mut model = Model::default();
    // The list the reflector took and is opening its watch for.
    let mut opening: Option<ListPage> = None;
    let mut expected_wait = FIRST_BACKOFF;
    let mut was = reflector.next(now);
    let mut bytes = data.iter().copied();
    while let Some(op) = bytes.next() {
        let mut arg = || bytes.next().unwrap_or(0);
        let input = match op % 8 {
            0 => {
                now += Duration::from_millis(u64::from(arg()) * 20);
                None
            }
            1 => {
                let count = arg() % 5;
                let items = (0..count).map(|_| {
                    let b = arg();
                    kv(usize::from(b & 7), u64::from(b >> 3))
                });
                let items: Vec<KeyValue> = items.collect();
                let page = ListPage {
                    items,
                    revision: u64::from(arg()),
                    more: false,
                    remaining: 0,
                };
                Some(Input::Listed(Ok(StorageOutput::Listed(page))))
            }
            2 => Some(Input::Listed(Err(StorageError::Unavailable("down".into())))),
            3 => Some(Input::Listed(Ok(StorageOutput::Compacted))),
            4 => Some(Input::WatchOpened),
            5 => {
                let b = arg();
                Some(Input::Event(WatchEvent::Put {
                    kv: kv(usize::from(b & 7), u64::from(arg())),
                    prev: None,
                }))
            }
            6 => {
                let b = arg();
                Some(Input::Event(WatchEvent::Delete {
                    prev: kv(usize::from(b & 7), 0),
                    revision: u64::from(arg()),
                }))
            }
            _ => Some(Input::WatchEnded(
                (arg() & 1 == 1).then(|| StorageError::Unavailable("cut".into())),
            )),
        };
        if let Some(input) = input {
            // What the model expects of this input, given what the reflector was doing.
            match (&was, &input) {
                (Next::List(_), Input::Listed(Ok(StorageOutput::Listed(page)))) => {
                    opening = Some(page.clone())
                }
                (Next::OpenWatch { .. }, Input::WatchOpened) => {
                    model.fill(opening.as_ref().expect("a list was taken"));
                }
                (Next::ReadWatch, Input::Event(event)) => model.apply(event),
                _ => {}
            }
            reflector.handle(input, now);
        }
        let next = reflector.next(now);
        check(server, &reflector, &next, &model, now);
        match (&was, &next) {
            (Next::Sleep { .. }, Next::Sleep { .. }) => {}
            (_, Next::Sleep { until }) => {
                // Just entered a backoff at `now`.
                let wait = *until - now;
                assert!(wait >= FIRST_BACKOFF && wait <= MAX_BACKOFF, "{wait:?}");
                assert_eq!(wait, expected_wait, "the waits double from the first");
                expected_wait = (expected_wait * 2).min(MAX_BACKOFF);
            }
            (Next::OpenWatch { .. }, Next::ReadWatch) => expected_wait = FIRST_BACKOFF,
            _ => {}
        }
        if let (Next::List(_), Next::OpenWatch { after, .. }) = (&was, &next) {
            assert_eq!(Some(*after), opening.as_ref().map(|p| p.revision));
        }
        was = next;
    }
});

/// The caches are fresh exactly while the reflector reads its watch, and then hold what
/// the model says.
fn check(server: &Server, reflector: &Reflector, next: &Next, model: &Model, now: Duration) {
    let watching = *next == Next::ReadWatch;
    assert_eq!(reflector.revision().is_some(), watching);
    if let Next::Sleep { until } = next {
        assert!(*until > now && *until <= now + MAX_BACKOFF);
    }
    if !watching {
        for cache in server.watch_caches().iter() {
            assert_eq!(cache.object_count(), None, "{} is fresh", cache.prefix());
        }
        return;
    }
    assert_eq!(reflector.revision(), Some(model.revision));
    for prefix in CACHED {
        let cache = server.watch_cache(prefix).expect("a cache");
        let (items, revision) = cache.snapshot(prefix, 0).expect("fresh while watching");
        assert_eq!(revision, model.revision, "{prefix} is behind");
        let held: Vec<(&str, u64)> = items
            .iter()
            .map(|kv| (kv.key.as_str(), kv.mod_revision))
            .collect();
        let expected: Vec<(&str, u64)> = model
            .objects
            .iter()
            .filter(|(key, _)| key.starts_with(prefix))
            .map(|(key, revision)| (key.as_str(), *revision))
            .collect();
        assert_eq!(held, expected, "{prefix} holds the wrong objects");
    }
}

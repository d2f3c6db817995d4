use super::*;
use crate::config::Config;
use crate::storage::KeyValue;
use crate::watch_cache::WatchCache;
use bytes::Bytes;
use std::sync::Arc;

const MS: Duration = Duration::from_millis(1);

fn cache(server: &Server, prefix: &str) -> Arc<WatchCache> {
    server.watch_cache(prefix).expect("a cache").clone()
}

fn kv(key: &str, revision: Revision) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Bytes::from_static(b"{\"metadata\":{}}"),
        create_revision: revision,
        mod_revision: revision,
    }
}

fn listed(items: Vec<KeyValue>, revision: Revision) -> Input {
    Input::Listed(Ok(StorageOutput::Listed(ListPage {
        items,
        revision,
        more: false,
        remaining: 0,
    })))
}

fn put(key: &str, revision: Revision) -> Input {
    Input::Event(WatchEvent::Put {
        kv: kv(key, revision),
        prev: None,
    })
}

/// Whether /readyz/informer-sync passes.
fn informer_synced(server: &Server) -> bool {
    let answer = server
        .health()
        .answer("readyz", crate::health::INFORMER_SYNC, false, &[]);
    answer.status() == 200
}

fn down() -> Input {
    Input::Listed(Err(StorageError::Unavailable("down".into())))
}

/// The keys and revision a cache serves, or `None` while it is stale.
fn served(cache: &WatchCache) -> Option<(Vec<String>, Revision)> {
    let (items, revision) = cache.snapshot(cache.prefix(), 0)?;
    Some((items.into_iter().map(|kv| kv.key).collect(), revision))
}

/// A reflector brought to Watching at `revision`, with `items` listed, at time zero.
fn watching(server: &Server, items: Vec<KeyValue>, revision: Revision) -> Reflector {
    let mut r = Reflector::new(server);
    assert!(matches!(r.next(Duration::ZERO), Next::List(_)));
    r.handle(listed(items, revision), Duration::ZERO);
    r.handle(Input::WatchOpened, Duration::ZERO);
    assert_eq!(r.next(Duration::ZERO), Next::ReadWatch);
    r
}

#[test]
fn it_starts_by_listing_everything_under_the_storage_prefix() {
    let server = Server::new(Config::default());
    let mut r = Reflector::new(&server);
    assert_eq!(
        r.next(Duration::ZERO),
        Next::List(StorageOp::list_latest("/registry/".into()))
    );
}

#[test]
fn failed_lists_back_off_doubling_up_to_the_cap() {
    let server = Server::new(Config::default());
    let mut r = Reflector::new(&server);
    let mut now = Duration::ZERO;
    let mut waits = Vec::new();
    for _ in 0..8 {
        assert!(matches!(r.next(now), Next::List(_)));
        r.handle(down(), now);
        let Next::Sleep { until } = r.next(now) else {
            panic!("a failed list backs off")
        };
        waits.push((until - now).as_millis());
        // Not a moment early.
        assert_eq!(r.next(until - MS), Next::Sleep { until });
        now = until;
    }
    assert_eq!(waits, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    assert!(!informer_synced(&server));
}

#[test]
fn a_list_is_followed_by_a_watch_from_its_revision_then_the_caches_fill() {
    let server = Server::new(Config::default());
    let configmaps = cache(&server, "/registry/configmaps/");
    let secrets = cache(&server, "/registry/secrets/");
    let mut r = Reflector::new(&server);
    r.next(Duration::ZERO);
    let items = vec![
        kv("/registry/configmaps/default/a", 3),
        kv("/registry/secrets/default/s", 5),
        kv("/registry/no-such-resource/x", 6),
    ];
    r.handle(listed(items, 7), Duration::ZERO);
    assert_eq!(
        r.next(Duration::ZERO),
        Next::OpenWatch {
            prefix: "/registry/".into(),
            after: 7
        }
    );
    // Not filled before the watch is open: no cache claims a state nothing follows.
    assert_eq!(served(&configmaps), None);
    r.handle(Input::WatchOpened, Duration::ZERO);
    assert_eq!(r.next(Duration::ZERO), Next::ReadWatch);
    assert_eq!(r.revision(), Some(7));
    assert_eq!(
        served(&configmaps),
        Some((vec!["/registry/configmaps/default/a".into()], 7))
    );
    assert_eq!(
        served(&secrets),
        Some((vec!["/registry/secrets/default/s".into()], 7))
    );
    assert!(informer_synced(&server));
}

#[test]
fn events_go_to_their_cache_and_advance_every_cache() {
    let server = Server::new(Config::default());
    let configmaps = cache(&server, "/registry/configmaps/");
    let secrets = cache(&server, "/registry/secrets/");
    let mut r = watching(&server, vec![kv("/registry/configmaps/default/a", 3)], 7);
    r.handle(put("/registry/configmaps/default/b", 8), Duration::ZERO);
    assert_eq!(
        served(&configmaps),
        Some((
            vec![
                "/registry/configmaps/default/a".into(),
                "/registry/configmaps/default/b".into()
            ],
            8
        ))
    );
    assert_eq!(served(&secrets), Some((vec![], 8)));
    // A change no cache holds still tells every cache how far the store is.
    r.handle(put("/registry/no-such-resource/x", 9), Duration::ZERO);
    r.handle(
        Input::Event(WatchEvent::Delete {
            prev: kv("/registry/configmaps/default/a", 3),
            revision: 10,
        }),
        Duration::ZERO,
    );
    assert_eq!(
        served(&configmaps),
        Some((vec!["/registry/configmaps/default/b".into()], 10))
    );
    assert_eq!(served(&secrets), Some((vec![], 10)));
    assert_eq!(r.revision(), Some(10));
    assert_eq!(r.next(Duration::ZERO), Next::ReadWatch);
}

#[test]
fn a_watch_that_ends_makes_the_caches_stale_then_relists_after_a_backoff() {
    let server = Server::new(Config::default());
    let configmaps = cache(&server, "/registry/configmaps/");
    for why in [None, Some(StorageError::Unavailable("cut off".into()))] {
        let mut r = watching(&server, vec![], 7);
        let subscription = configmaps.subscribe("/registry/configmaps/", 7).unwrap();
        let now = Duration::from_secs(30);
        r.handle(Input::WatchEnded(why), now);
        assert_eq!(served(&configmaps), None);
        assert!(configmaps.subscribe("/registry/configmaps/", 7).is_none());
        assert_eq!(r.revision(), None);
        let until = now + FIRST_BACKOFF;
        assert_eq!(r.next(now), Next::Sleep { until });
        assert!(matches!(r.next(until), Next::List(_)));
        // Once the caches are filled again, the old subscriber is told to watch again.
        r.handle(listed(vec![], 9), until);
        r.handle(Input::WatchOpened, until);
        assert!(matches!(subscription.try_next(), Some(Err(_))));
        // Informer sync stays passed throughout: relists are the storage check's business.
        assert!(informer_synced(&server));
    }
}

#[test]
fn a_watch_that_cannot_be_opened_backs_off_without_filling() {
    let server = Server::new(Config::default());
    let configmaps = cache(&server, "/registry/configmaps/");
    let mut r = Reflector::new(&server);
    r.next(Duration::ZERO);
    r.handle(
        listed(vec![kv("/registry/configmaps/default/a", 3)], 7),
        Duration::ZERO,
    );
    r.handle(
        Input::WatchEnded(Some(StorageError::Compacted {
            requested: 7,
            compacted: 8,
        })),
        Duration::ZERO,
    );
    assert_eq!(
        r.next(Duration::ZERO),
        Next::Sleep {
            until: FIRST_BACKOFF
        }
    );
    assert_eq!(served(&configmaps), None);
    assert!(!informer_synced(&server));
}

#[test]
fn a_list_and_watch_that_work_reset_the_backoff() {
    let server = Server::new(Config::default());
    let mut r = Reflector::new(&server);
    let mut now = Duration::ZERO;
    for _ in 0..4 {
        r.next(now);
        r.handle(down(), now);
        let Next::Sleep { until } = r.next(now) else {
            panic!("backs off")
        };
        now = until;
    }
    assert_eq!(now.as_millis(), 100 + 200 + 400 + 800);
    assert!(matches!(r.next(now), Next::List(_)));
    r.handle(listed(vec![], 1), now);
    r.handle(Input::WatchOpened, now);
    r.handle(Input::WatchEnded(None), now);
    assert_eq!(
        r.next(now),
        Next::Sleep {
            until: now + FIRST_BACKOFF
        }
    );
}

#[test]
fn inputs_out_of_turn_change_nothing() {
    let server = Server::new(Config::default());
    let configmaps = cache(&server, "/registry/configmaps/");
    let mut r = Reflector::new(&server);
    r.handle(put("/registry/configmaps/default/a", 3), Duration::ZERO);
    r.handle(Input::WatchOpened, Duration::ZERO);
    r.handle(Input::WatchEnded(None), Duration::ZERO);
    assert!(matches!(r.next(Duration::ZERO), Next::List(_)));
    assert_eq!(served(&configmaps), None);
    let mut r = watching(&server, vec![], 7);
    r.handle(
        listed(vec![kv("/registry/configmaps/default/a", 3)], 9),
        Duration::ZERO,
    );
    r.handle(Input::WatchOpened, Duration::ZERO);
    assert_eq!(r.next(Duration::ZERO), Next::ReadWatch);
    assert_eq!(served(&configmaps), Some((vec![], 7)));
}

#[test]
fn reads_of_the_watch_map_to_inputs() {
    let event = WatchEvent::Delete {
        prev: kv("/registry/configmaps/default/a", 3),
        revision: 4,
    };
    assert_eq!(Input::read(Some(Ok(event.clone()))), Input::Event(event));
    assert_eq!(Input::read(None), Input::WatchEnded(None));
    let e = StorageError::Unavailable("gone".into());
    assert_eq!(
        Input::read(Some(Err(e.clone()))),
        Input::WatchEnded(Some(e))
    );
}

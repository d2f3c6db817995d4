//! Tests of the memory backend's own workings. The behaviour every backend shares is
//! checked by the conformance suite (`apiary-conformance`, `tests/storage_memory.rs`).

use super::*;
use crate::state::{KeyHistory, Version};
use apiary_core::storage::{KeyValue, ListPage, StorageOutput, WatchEvent, WatchStream};
use bytes::Bytes;
use futures_lite::future::block_on;

fn create(store: &MemoryStore, key: &str, value: &str) -> KeyValue {
    match store.apply(StorageOp::Create {
        key: key.into(),
        value: Bytes::copy_from_slice(value.as_bytes()),
    }) {
        Ok(StorageOutput::Written(kv)) => kv,
        other => panic!("create {key}: {other:?}"),
    }
}

fn update(store: &MemoryStore, key: &str, value: &str, expected: Revision) -> KeyValue {
    match store.apply(StorageOp::Update {
        key: key.into(),
        value: Bytes::copy_from_slice(value.as_bytes()),
        expected_revision: expected,
    }) {
        Ok(StorageOutput::Written(kv)) => kv,
        other => panic!("update {key}: {other:?}"),
    }
}

fn delete(store: &MemoryStore, key: &str) -> Revision {
    match store.apply(StorageOp::Delete {
        key: key.into(),
        expected_revision: None,
    }) {
        Ok(StorageOutput::Deleted { revision, .. }) => revision,
        other => panic!("delete {key}: {other:?}"),
    }
}

fn get(store: &MemoryStore, key: &str) -> Option<KeyValue> {
    match store.apply(StorageOp::Get { key: key.into() }) {
        Ok(StorageOutput::Got { kv, .. }) => kv,
        other => panic!("get {key}: {other:?}"),
    }
}

fn list(
    store: &MemoryStore,
    prefix: &str,
    revision: Option<Revision>,
    start_after: Option<&str>,
    limit: Option<usize>,
) -> Result<ListPage, StorageError> {
    match store.apply(StorageOp::List {
        prefix: prefix.into(),
        revision,
        start_after: start_after.map(Into::into),
        limit,
    }) {
        Ok(StorageOutput::Listed(page)) => Ok(page),
        Ok(other) => panic!("list {prefix}: {other:?}"),
        Err(err) => Err(err),
    }
}

fn compact(store: &MemoryStore, revision: Revision) -> Result<(), StorageError> {
    store
        .apply(StorageOp::Compact { revision })
        .map(|out| assert_eq!(out, StorageOutput::Compacted))
}

fn keys(page: &ListPage) -> Vec<&str> {
    page.items.iter().map(|kv| kv.key.as_str()).collect()
}

fn revisions(events: &[WatchEvent]) -> Vec<Revision> {
    events.iter().map(WatchEvent::revision).collect()
}

/// Every event the watch has ready, without waiting.
fn drain(watch: &mut MemoryWatch) -> Vec<WatchEvent> {
    std::iter::from_fn(|| watch.try_next())
        .map(|event| event.expect("watch event"))
        .collect()
}

fn version(mod_revision: Revision, create_revision: Revision, value: Option<&str>) -> Version {
    Version {
        mod_revision,
        create_revision,
        value: value.map(|v| Bytes::copy_from_slice(v.as_bytes())),
    }
}

#[test]
fn revisions_count_writes_from_one() {
    let store = MemoryStore::new();
    assert_eq!(store.current_revision(), 0);
    assert_eq!(
        store.apply(StorageOp::CurrentRevision),
        Ok(StorageOutput::Revision(0))
    );
    let a = create(&store, "/a", "1");
    assert_eq!((a.create_revision, a.mod_revision), (1, 1));
    let a2 = update(&store, "/a", "2", 1);
    assert_eq!((a2.create_revision, a2.mod_revision), (1, 2));
    assert_eq!(delete(&store, "/a"), 3);
    // Failed writes take no revision.
    assert!(store
        .apply(StorageOp::Update {
            key: "/a".into(),
            value: Bytes::new(),
            expected_revision: 2,
        })
        .is_err());
    // A new incarnation of a deleted key starts a new create revision.
    let a3 = create(&store, "/a", "3");
    assert_eq!((a3.create_revision, a3.mod_revision), (4, 4));
    assert_eq!(store.current_revision(), 4);
    assert_eq!(
        store.apply(StorageOp::Get { key: "/a".into() }),
        Ok(StorageOutput::Got {
            kv: Some(a3),
            revision: 4
        })
    );
}

#[test]
fn tombstones_hide_keys_until_compacted_away() {
    let store = MemoryStore::new();
    create(&store, "/a", "1");
    delete(&store, "/a");
    assert_eq!(get(&store, "/a"), None);
    assert!(list(&store, "/", None, None, None)
        .unwrap()
        .items
        .is_empty());
    {
        let state = store.shared.lock();
        let history = state.history("/a").expect("history kept");
        assert_eq!(history.versions.len(), 2);
        assert_eq!(history.versions[1].value, None);
    }
    compact(&store, 2).unwrap();
    assert!(store.shared.lock().history("/a").is_none());
    assert!(format!("{store:?}").contains("keys: 0"));
}

#[test]
fn key_history_compaction_keeps_what_can_still_be_read() {
    let mut history = KeyHistory {
        versions: vec![
            version(2, 2, Some("a")),
            version(5, 2, Some("b")),
            version(7, 2, None),
            version(9, 9, Some("c")),
        ],
    };
    // Nothing older than revision 1: all kept.
    assert!(history.compact(1));
    assert_eq!(history.versions.len(), 4);
    // At 6 the visible version is the one of revision 5.
    assert!(history.compact(6));
    assert_eq!(
        history
            .versions
            .iter()
            .map(|v| v.mod_revision)
            .collect::<Vec<_>>(),
        [5, 7, 9]
    );
    // At 8 the key is deleted: the tombstone goes too.
    assert!(history.compact(8));
    assert_eq!(history.versions, [version(9, 9, Some("c"))]);
    // The live version always stays.
    assert!(history.compact(20));
    assert_eq!(history.versions, [version(9, 9, Some("c"))]);

    let mut deleted = KeyHistory {
        versions: vec![version(1, 1, Some("a")), version(3, 1, None)],
    };
    assert!(deleted.compact(2));
    assert!(!deleted.compact(3));
}

#[test]
fn list_ranges_pages_and_reads_old_revisions() {
    let store = MemoryStore::new();
    for key in ["/p/a", "/p/b", "/p/c", "/p/d", "/pa", "/o/z", "/q/a"] {
        create(&store, key, key);
    }
    let all = list(&store, "/p/", None, None, None).unwrap();
    assert_eq!(keys(&all), ["/p/a", "/p/b", "/p/c", "/p/d"]);
    assert_eq!((all.revision, all.more, all.remaining), (7, false, 0));

    // A start before the prefix starts at the prefix; one between keys starts after it.
    let page = list(&store, "/p/", None, Some("/o/zz"), Some(2)).unwrap();
    assert_eq!(keys(&page), ["/p/a", "/p/b"]);
    assert_eq!((page.more, page.remaining), (true, 2));
    let page = list(&store, "/p/", None, Some("/p/bb"), Some(1)).unwrap();
    assert_eq!(keys(&page), ["/p/c"]);
    assert_eq!((page.more, page.remaining), (true, 1));
    let page = list(&store, "/p/", None, Some("/p/d"), Some(1)).unwrap();
    assert!(page.items.is_empty());
    assert_eq!((page.more, page.remaining), (false, 0));
    // Past the prefix's keys entirely.
    assert!(list(&store, "/p/", None, Some("/pz"), None)
        .unwrap()
        .items
        .is_empty());
    // A limit of zero returns nothing and counts everything as remaining.
    let page = list(&store, "/p/", None, None, Some(0)).unwrap();
    assert_eq!((page.items.len(), page.more, page.remaining), (0, true, 4));
    // The empty prefix is every key.
    assert_eq!(list(&store, "", None, None, None).unwrap().items.len(), 7);

    update(&store, "/p/a", "new", 1);
    delete(&store, "/p/b");
    let old = list(&store, "/p/", Some(7), None, None).unwrap();
    assert_eq!(old, all);
    let before_any = list(&store, "/p/", Some(2), None, None).unwrap();
    assert_eq!(keys(&before_any), ["/p/a", "/p/b"]);
    assert_eq!(before_any.revision, 2);
    assert!(list(&store, "/p/", Some(0), None, None)
        .unwrap()
        .items
        .is_empty());
    let now = list(&store, "/p/", None, None, None).unwrap();
    assert_eq!(keys(&now), ["/p/a", "/p/c", "/p/d"]);
    assert_eq!(now.items[0].value, "new");
    assert_eq!(now.revision, 9);

    assert_eq!(
        list(&store, "/p/", Some(10), None, None),
        Err(StorageError::FutureRevision {
            requested: 10,
            current: 9
        })
    );
}

#[test]
fn compaction_bounds_and_trims_the_log() {
    let store = MemoryStore::new();
    for i in 0..5 {
        create(&store, &format!("/k/{i}"), "v");
    }
    update(&store, "/k/0", "w", 1);
    assert_eq!(store.shared.lock().log_len(), 6);

    assert_eq!(
        compact(&store, 7),
        Err(StorageError::FutureRevision {
            requested: 7,
            current: 6
        })
    );
    compact(&store, 4).unwrap();
    assert_eq!(store.compacted_revision(), 4);
    assert_eq!(store.shared.lock().log_len(), 2);
    // Compacting again at the same revision changes nothing; below it, fails.
    compact(&store, 4).unwrap();
    assert_eq!(
        compact(&store, 3),
        Err(StorageError::Compacted {
            requested: 3,
            compacted: 4
        })
    );
    assert_eq!(
        list(&store, "/k/", Some(3), None, None),
        Err(StorageError::Compacted {
            requested: 3,
            compacted: 4
        })
    );
    // The compacted revision itself is still readable.
    let at4 = list(&store, "/k/", Some(4), None, None).unwrap();
    assert_eq!(keys(&at4), ["/k/0", "/k/1", "/k/2", "/k/3"]);
    assert_eq!(at4.items[0].value, "v");
    assert_eq!(
        list(&store, "/k/", None, None, None).unwrap().items.len(),
        5
    );

    compact(&store, 6).unwrap();
    assert_eq!(store.shared.lock().log_len(), 0);
    assert_eq!(
        store.shared.lock().history("/k/0").unwrap().versions.len(),
        1
    );
    // Writes go on from where they were.
    assert_eq!(create(&store, "/k/9", "v").mod_revision, 7);
}

#[test]
fn watch_replays_the_log_then_goes_live() {
    let store = MemoryStore::new();
    create(&store, "/w/a", "1");
    create(&store, "/x/a", "1");
    update(&store, "/w/a", "2", 1);
    let mut watch = store.open_watch("/w/", 0).unwrap();
    let mut late = store.open_watch("/w/", 1).unwrap();
    delete(&store, "/w/a");
    create(&store, "/x/b", "1");
    create(&store, "/w/b", "1");

    let events = drain(&mut watch);
    assert_eq!(revisions(&events), [1, 3, 4, 6]);
    let WatchEvent::Put { kv, prev } = &events[1] else {
        panic!("{events:?}")
    };
    assert_eq!(
        (kv.value.as_ref(), prev.as_ref().map(|p| p.mod_revision)),
        (&b"2"[..], Some(1))
    );
    let WatchEvent::Delete { prev, revision } = &events[2] else {
        panic!("{events:?}")
    };
    assert_eq!(
        (prev.value.as_ref(), prev.mod_revision, *revision),
        (&b"2"[..], 3, 4)
    );
    assert_eq!(revisions(&drain(&mut late)), [3, 4, 6]);
    assert!(!watch.is_ended());
}

#[test]
fn watch_ahead_of_the_store_waits_for_its_revision() {
    let store = MemoryStore::new();
    create(&store, "/a", "1");
    let mut watch = store.open_watch("/", 3).unwrap();
    create(&store, "/b", "1");
    create(&store, "/c", "1");
    assert!(drain(&mut watch).is_empty());
    create(&store, "/d", "1");
    assert_eq!(revisions(&drain(&mut watch)), [4]);
}

#[test]
fn watch_after_a_compacted_revision_fails() {
    let store = MemoryStore::new();
    for key in ["/a", "/b", "/c", "/d"] {
        create(&store, key, "1");
    }
    compact(&store, 3).unwrap();
    assert_eq!(
        store.open_watch("/", 2).unwrap_err(),
        StorageError::Compacted {
            requested: 2,
            compacted: 3
        }
    );
    let mut watch = store.open_watch("/", 3).unwrap();
    assert_eq!(revisions(&drain(&mut watch)), [4]);
}

#[test]
fn dropped_watches_unregister() {
    let store = MemoryStore::new();
    let watch = store.open_watch("/", 0).unwrap();
    let other = store.open_watch("/x/", 0).unwrap();
    assert_eq!(store.watcher_count(), 2);
    drop(watch);
    assert_eq!(store.watcher_count(), 1);
    drop(other);
    assert_eq!(store.watcher_count(), 0);
}

#[test]
fn closed_watchers_are_pruned_on_the_next_write() {
    // A watcher whose receiving end went away without unregistering is dropped by the
    // next write, whether the write is under its prefix or not.
    let store = MemoryStore::new();
    for prefix in ["/a/", "/b/"] {
        let (sender, receiver) = async_channel::unbounded();
        store
            .shared
            .lock()
            .register_watcher(prefix, 0, sender, Default::default())
            .unwrap();
        drop(receiver);
    }
    assert_eq!(store.watcher_count(), 2);
    create(&store, "/a/x", "1");
    assert_eq!(store.watcher_count(), 0);
}

#[test]
fn a_watch_that_falls_behind_is_cut_off_with_an_error() {
    let store = MemoryStore::with_watch_backlog(2);
    create(&store, "/a", "1");
    let mut watch = store.open_watch("/", 0).unwrap();
    let mut reader = store.open_watch("/", 0).unwrap();
    create(&store, "/b", "1");
    create(&store, "/c", "1");
    // The reader keeps up; the other watch has 2 unread live events: the third is one
    // too many.
    assert_eq!(revisions(&drain(&mut reader)), [1, 2, 3]);
    create(&store, "/d", "1");
    assert_eq!(store.watcher_count(), 1);
    assert_eq!(revisions(&drain(&mut reader)), [4]);

    block_on(async {
        let mut seen = Vec::new();
        while let Some(Ok(event)) = watch.next().await {
            seen.push(event.revision());
        }
        // Everything it had (the replayed one too), then the error, then the end.
        assert_eq!(seen, [1, 2, 3]);
        assert!(watch.next().await.is_none());
    });
    assert!(watch.is_ended());
}

#[test]
fn a_cut_off_watch_reports_the_error_once() {
    let store = MemoryStore::with_watch_backlog(1);
    let mut watch = store.open_watch("/", 0).unwrap();
    create(&store, "/a", "1");
    create(&store, "/b", "1");
    block_on(async {
        assert_eq!(watch.next().await.unwrap().unwrap().revision(), 1);
        assert!(matches!(
            watch.next().await,
            Some(Err(StorageError::Unavailable(_)))
        ));
        assert!(watch.next().await.is_none());
        assert!(watch.next().await.is_none());
    });
}

#[test]
fn watches_end_when_the_store_is_gone() {
    let store = MemoryStore::new();
    create(&store, "/a", "1");
    let mut watch = store.open_watch("/", 0).unwrap();
    let clone = store.clone();
    drop(store);
    create(&clone, "/b", "1");
    drop(clone);
    block_on(async {
        assert_eq!(watch.next().await.unwrap().unwrap().revision(), 1);
        assert_eq!(watch.next().await.unwrap().unwrap().revision(), 2);
        assert!(watch.next().await.is_none());
    });
}

#[test]
fn live_events_wake_a_waiting_reader() {
    let store = MemoryStore::new();
    let mut watch = store.open_watch("/", 0).unwrap();
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || {
            for i in 0..50 {
                create(&store, &format!("/k{i:02}"), "v");
            }
        })
    };
    let seen = block_on(async {
        let mut seen = Vec::new();
        while seen.len() < 50 {
            seen.push(watch.next().await.unwrap().unwrap().revision());
        }
        seen
    });
    writer.join().unwrap();
    assert_eq!(seen, (1..=50).collect::<Vec<_>>());
}

#[test]
fn watches_opened_during_writes_see_no_gap_or_duplicate() {
    const WRITERS: usize = 3;
    const WRITES: usize = 200;
    let store = MemoryStore::new();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = store.clone();
            std::thread::spawn(move || {
                for i in 0..WRITES {
                    let key = format!("/c/{w}/{i}");
                    let kv = create(&store, &key, "v");
                    if i % 3 == 0 {
                        update(&store, &key, "w", kv.mod_revision);
                    }
                }
            })
        })
        .collect();
    // Open watches from wherever the store happens to be while the writers run.
    let mut watches = Vec::new();
    while watches.len() < 20 {
        let after = store.current_revision();
        watches.push((after, store.open_watch("/c/", after).unwrap()));
        std::thread::yield_now();
    }
    for writer in writers {
        writer.join().unwrap();
    }
    let last = store.current_revision();
    assert_eq!(last as usize, WRITERS * (WRITES + WRITES.div_ceil(3)));
    for (after, mut watch) in watches {
        let seen = revisions(&drain(&mut watch));
        assert_eq!(
            seen,
            ((after + 1)..=last).collect::<Vec<_>>(),
            "after {after}"
        );
    }
}

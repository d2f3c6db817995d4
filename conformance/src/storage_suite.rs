//! The storage conformance suite: what every [`Storage`] backend must do, checked the
//! same way against each of them (memory, sqlite, etcd).
//!
//! Each check is a `pub async fn` taking a fresh store and panicking on the first
//! difference. They assume as little as a real deployment allows:
//!
//! - every check writes under its own unique key prefix (made from the process id, the
//!   time and a counter), so backends that share one key space — an etcd cluster used by
//!   several test runs — can run them, and keys left behind by an earlier run never
//!   clash;
//! - revisions are compared with those the check itself observed, never with fixed
//!   numbers: the store may not start at 0, and other clients may write in between;
//! - no async runtime is assumed: concurrency uses std threads, each driving its own
//!   futures with [`futures_lite::future::block_on`], and waiting on a watch is bounded
//!   by a timer thread, so a missing event fails the check instead of hanging it.
//!
//! [`compaction`] compacts the whole store. On a backend whose key space is shared with
//! other clients, run the checks one at a time with [`run_all`] (which runs compaction
//! last) rather than in parallel, or a list or watch at an old revision in another check
//! may find its revision compacted away.
//!
//! A backend's test file runs the suite with [`run_all`], or gets one `#[test]` per
//! check with [`storage_suite_tests!`](crate::storage_suite_tests):
//!
//! ```ignore
//! apiary_conformance::storage_suite_tests!(apiary_memory::MemoryStore::new());
//! ```

use apiary_core::storage::{
    KeyValue, ListPage, Revision, Storage, StorageError, StorageOp, StorageOutput, WatchEvent,
    WatchStream,
};
use bytes::Bytes;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use futures_lite::future::block_on;

/// How long a check waits for a watch event before failing.
pub const WATCH_TIMEOUT: Duration = Duration::from_secs(20);

/// Run every check, one after the other, each on a fresh store from `make`.
pub async fn run_all<S: Storage>(make: impl Fn() -> S) {
    create_then_get(make()).await;
    create_existing_fails(make()).await;
    update_compare_and_swap(make()).await;
    missing_keys_are_not_found(make()).await;
    delete_with_and_without_precondition(make()).await;
    list_by_prefix(make()).await;
    list_at_older_revision(make()).await;
    list_pages(make()).await;
    watch_history_then_live(make()).await;
    concurrent_watchers_agree(make()).await;
    concurrent_writers(make()).await;
    // Last: it compacts the whole key space.
    compaction(make()).await;
}

/// One `#[test]` per check of the storage suite, each on a fresh store made by the given
/// expression, driven by [`block_on`] (or by the runner given as a second argument: any
/// `fn(impl Future<Output = ()>)`).
///
/// The tests run in parallel; for a backend whose key space is shared with other
/// clients see the note on compaction in the [module docs](crate::storage_suite).
#[macro_export]
macro_rules! storage_suite_tests {
    (@tests ($make:expr, $runner:path) $($check:ident)*) => {
        $(
            #[test]
            fn $check() {
                $runner($crate::storage_suite::$check($make));
            }
        )*
    };
    ($make:expr) => {
        $crate::storage_suite_tests!($make, $crate::storage_suite::block_on);
    };
    ($make:expr, $runner:path) => {
        $crate::storage_suite_tests!(@tests ($make, $runner)
            create_then_get
            create_existing_fails
            update_compare_and_swap
            missing_keys_are_not_found
            delete_with_and_without_precondition
            list_by_prefix
            list_at_older_revision
            list_pages
            watch_history_then_live
            concurrent_watchers_agree
            concurrent_writers
            compaction
        );
    };
}

/// A key prefix no other check, process or earlier run uses, ending in `/`.
pub fn unique_prefix(check: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    format!(
        "/apiary-conformance/{check}/{}-{nanos}-{}/",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

// ---------------------------------------------------------------------------------------
// The checks.

/// A created key reads back with its value and the revision of its creation.
pub async fn create_then_get<S: Storage>(store: S) {
    let p = unique_prefix("create-then-get");
    let before = current_revision(&store).await;

    let value = Bytes::from_static(b"\x00binary \xff value\n");
    let a = create(&store, &format!("{p}a"), value.clone()).await;
    assert_eq!(a.key, format!("{p}a"));
    assert_eq!(a.value, value, "the value round-trips byte for byte");
    assert!(
        a.mod_revision > before,
        "a write takes a revision above the one before it: {a:?}, before {before}"
    );
    assert_eq!(a.create_revision, a.mod_revision, "{a:?}");

    let (got, revision) = get(&store, &a.key).await;
    assert_eq!(got.as_ref(), Some(&a));
    assert!(
        revision >= a.mod_revision,
        "get reads at {revision}, after {a:?}"
    );
    assert!(current_revision(&store).await >= a.mod_revision);

    let b = create(&store, &format!("{p}b"), Bytes::new()).await;
    assert!(b.mod_revision > a.mod_revision, "{b:?} after {a:?}");
    let (got, _) = get(&store, &b.key).await;
    assert_eq!(got, Some(b), "an empty value is a value, not an absent key");

    let (got, _) = get(&store, &format!("{p}missing")).await;
    assert_eq!(got, None);
    // A key is not found by a prefix of it.
    let (got, _) = get(&store, &p).await;
    assert_eq!(got, None);
}

/// Create fails on a key that exists, and works again once it is deleted.
pub async fn create_existing_fails<S: Storage>(store: S) {
    let p = unique_prefix("create-existing");
    let key = format!("{p}a");
    let first = create(&store, &key, "one").await;

    let err = run(&store, create_op(&key, "two")).await.unwrap_err();
    assert_eq!(err, StorageError::AlreadyExists { key: key.clone() });
    assert_eq!(get(&store, &key).await.0, Some(first.clone()), "unchanged");

    delete(&store, &key, None).await;
    let again = create(&store, &key, "three").await;
    assert!(again.mod_revision > first.mod_revision);
    assert_eq!(
        again.create_revision, again.mod_revision,
        "a key created again starts a new life: {again:?}"
    );
    assert_eq!(again.value, "three");
}

/// Update replaces a value only while its mod revision is the expected one.
pub async fn update_compare_and_swap<S: Storage>(store: S) {
    let p = unique_prefix("update-cas");
    let key = format!("{p}a");
    let v1 = create(&store, &key, "v1").await;

    let v2 = update(&store, &key, "v2", v1.mod_revision).await;
    assert_eq!(v2.value, "v2");
    assert_eq!(
        v2.create_revision, v1.create_revision,
        "update keeps the creation"
    );
    assert!(v2.mod_revision > v1.mod_revision, "{v2:?} after {v1:?}");
    assert_eq!(get(&store, &key).await.0, Some(v2.clone()));

    // Stale: still expects v1's revision.
    let err = run(&store, update_op(&key, "v3", v1.mod_revision))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        StorageError::Conflict {
            key: key.clone(),
            current: v2.clone()
        },
        "a stale update reports the current value"
    );
    assert_eq!(get(&store, &key).await.0, Some(v2.clone()), "unchanged");

    // Retrying against the current revision works.
    let v3 = update(&store, &key, "v3", v2.mod_revision).await;
    assert!(v3.mod_revision > v2.mod_revision);
    assert_eq!(v3.create_revision, v1.create_revision);
    // An update that writes the same bytes is still a write.
    let v4 = update(&store, &key, "v3", v3.mod_revision).await;
    assert!(v4.mod_revision > v3.mod_revision);
}

/// Update and delete of a key that does not exist (or no longer does) are NotFound.
pub async fn missing_keys_are_not_found<S: Storage>(store: S) {
    let p = unique_prefix("missing");
    let key = format!("{p}never");
    let not_found = StorageError::NotFound { key: key.clone() };
    assert_eq!(
        run(&store, update_op(&key, "x", 1)).await,
        Err(not_found.clone())
    );
    assert_eq!(
        run(&store, delete_op(&key, None)).await,
        Err(not_found.clone())
    );
    assert_eq!(run(&store, delete_op(&key, Some(1))).await, Err(not_found));

    let gone = format!("{p}gone");
    let kv = create(&store, &gone, "x").await;
    delete(&store, &gone, None).await;
    let not_found = StorageError::NotFound { key: gone.clone() };
    assert_eq!(
        run(&store, update_op(&gone, "y", kv.mod_revision)).await,
        Err(not_found.clone())
    );
    assert_eq!(
        run(&store, delete_op(&gone, None)).await,
        Err(not_found.clone())
    );
    assert_eq!(
        run(&store, delete_op(&gone, Some(kv.mod_revision))).await,
        Err(not_found)
    );
    assert_eq!(get(&store, &gone).await.0, None);
}

/// Delete returns what it removed; with an expected revision it is a compare-and-swap.
pub async fn delete_with_and_without_precondition<S: Storage>(store: S) {
    let p = unique_prefix("delete");

    // Without a precondition.
    let a = create(&store, &format!("{p}a"), "a").await;
    let (prev, revision) = delete(&store, &a.key, None).await;
    assert_eq!(prev, a, "delete returns the value it removed");
    assert!(
        revision > a.mod_revision,
        "the delete is a write of its own"
    );
    assert_eq!(get(&store, &a.key).await.0, None);

    // With a stale precondition: refused, with the current value.
    let b1 = create(&store, &format!("{p}b"), "b1").await;
    let b2 = update(&store, &b1.key, "b2", b1.mod_revision).await;
    assert_eq!(
        run(&store, delete_op(&b1.key, Some(b1.mod_revision))).await,
        Err(StorageError::Conflict {
            key: b1.key.clone(),
            current: b2.clone()
        })
    );
    assert_eq!(
        get(&store, &b1.key).await.0,
        Some(b2.clone()),
        "still there"
    );

    // With the right one.
    let (prev, revision) = delete(&store, &b1.key, Some(b2.mod_revision)).await;
    assert_eq!(prev, b2);
    assert!(revision > b2.mod_revision);
    assert_eq!(get(&store, &b1.key).await.0, None);
    assert!(current_revision(&store).await >= revision);
}

/// List returns the keys under a prefix, in key order, and nothing else.
pub async fn list_by_prefix<S: Storage>(store: S) {
    let base = unique_prefix("list-prefix");
    let p = format!("{base}items/");
    // Created out of order; the list comes back sorted.
    let mut expected = Vec::new();
    for name in ["m", "b", "z", "a/nested", "a", "c-1", "c"] {
        expected.push(create(&store, &format!("{p}{name}"), name).await);
    }
    // Neighbours that share the prefix's text but are not under it.
    for key in [
        format!("{base}items"),
        format!("{base}items-other/a"),
        format!("{base}itemsz"),
        format!("{base}other/a"),
        format!("{base}item/a"),
    ] {
        create(&store, &key, "neighbour").await;
    }
    // A deleted key is not listed.
    let doomed = create(&store, &format!("{p}deleted"), "x").await;
    let (_, last) = delete(&store, &doomed.key, None).await;

    expected.sort_by(|a, b| a.key.cmp(&b.key));
    let page = list(&store, &p, None, None, None).await;
    assert_eq!(
        page.items, expected,
        "every key under the prefix, in key order"
    );
    assert!(!page.more);
    assert_eq!(page.remaining, 0);
    assert!(
        page.revision >= last,
        "read at {}, after {last}",
        page.revision
    );

    let empty = list(&store, &format!("{base}nothing/"), None, None, None).await;
    assert!(empty.items.is_empty());
    assert!(!empty.more);
}

/// A list at an older revision sees the keys as they were then.
pub async fn list_at_older_revision<S: Storage>(store: S) {
    let p = unique_prefix("list-old");
    let a1 = create(&store, &format!("{p}a"), "a1").await;
    let b = create(&store, &format!("{p}b"), "b").await;
    let then = b.mod_revision;

    let a2 = update(&store, &a1.key, "a2", a1.mod_revision).await;
    delete(&store, &b.key, None).await;
    let c = create(&store, &format!("{p}c"), "c").await;

    let old = list(&store, &p, Some(then), None, None).await;
    assert_eq!(old.items, [a1.clone(), b.clone()], "the state at {then}");
    assert_eq!(old.revision, then, "read at the revision asked for");
    assert!(!old.more);

    let before_b = list(&store, &p, Some(a1.mod_revision), None, None).await;
    assert_eq!(before_b.items, [a1]);

    let now = list(&store, &p, None, None, None).await;
    assert_eq!(now.items, [a2, c.clone()]);
    let at_c = list(&store, &p, Some(c.mod_revision), None, None).await;
    assert_eq!(at_c.items, now.items);
    assert_eq!(at_c.revision, c.mod_revision);

    // A revision the store has not reached yet.
    let future = current_revision(&store).await + 1_000_000;
    match run(&store, list_op(&p, Some(future), None, None)).await {
        Err(StorageError::FutureRevision { requested, current }) => {
            assert_eq!(requested, future);
            assert!(current >= c.mod_revision && current < future);
        }
        other => panic!("list at future revision {future}: {other:?}"),
    }
}

/// Paging through 25 keys with a limit, at the first page's revision, gives every key
/// once, with `more` and `remaining` right, even while the keys change in between.
pub async fn list_pages<S: Storage>(store: S) {
    const KEYS: usize = 25;
    const LIMIT: usize = 7;
    let p = unique_prefix("list-pages");
    let mut expected = Vec::new();
    for i in 0..KEYS {
        expected.push(create(&store, &format!("{p}key-{i:02}"), format!("v{i}")).await);
    }
    // A neighbour sorting right after the prefix's keys.
    create(
        &store,
        &format!("{}~", p.trim_end_matches('/')),
        "neighbour",
    )
    .await;

    let mut seen: Vec<KeyValue> = Vec::new();
    let mut at = None;
    let mut pages = 0;
    loop {
        let start_after = seen.last().map(|kv| kv.key.clone());
        let page = list(&store, &p, at, start_after.as_deref(), Some(LIMIT)).await;
        pages += 1;
        let left = KEYS - seen.len();
        assert_eq!(page.items.len(), left.min(LIMIT), "page {pages}");
        assert_eq!(page.more, left > LIMIT, "page {pages}: more");
        assert_eq!(
            page.remaining as usize,
            left.saturating_sub(LIMIT),
            "page {pages}: remaining"
        );
        match at {
            None => at = Some(page.revision),
            Some(at) => assert_eq!(
                page.revision, at,
                "page {pages} read at the first page's revision"
            ),
        }
        seen.extend(page.items);
        if pages == 1 {
            // Changes after the first page do not show in the later ones.
            create(&store, &format!("{p}key-99"), "late").await;
            delete(&store, &expected[20].key, None).await;
            update(
                &store,
                &expected[10].key,
                "changed",
                expected[10].mod_revision,
            )
            .await;
        }
        if !page.more {
            break;
        }
    }
    assert_eq!(pages, KEYS.div_ceil(LIMIT));
    assert_eq!(
        seen, expected,
        "every key once, in order, as of the first page"
    );

    // A page big enough for everything; and the latest state.
    let all = list(&store, &p, None, None, Some(1000)).await;
    assert_eq!(all.items.len(), KEYS, "one deleted, one added");
    assert!(!all.more);
    assert_eq!(all.remaining, 0);
    assert!(all.items.iter().all(|kv| kv.key != expected[20].key));
    assert_eq!(
        all.items.last().map(|kv| kv.value.clone()),
        Some(Bytes::from("late"))
    );

    // Paging from a key that is not there starts after where it would be.
    let page = list(&store, &p, None, Some(&format!("{p}key-04x")), Some(2)).await;
    let keys: Vec<_> = page.items.iter().map(|kv| kv.key.clone()).collect();
    assert_eq!(keys, [format!("{p}key-05"), format!("{p}key-06")]);
    // key-07 … key-24 but the deleted key-20, and key-99.
    assert_eq!(page.remaining, 18);
}

/// A watch from a revision delivers every later change under its prefix, in order,
/// exactly once: first those made before it was opened, then live ones.
pub async fn watch_history_then_live<S: Storage>(store: S) {
    let base = unique_prefix("watch");
    let p = format!("{base}w/");
    let other = format!("{base}other/");
    let mut expected = Vec::new();

    // Before the watch's revision: not delivered.
    let a1 = create(&store, &format!("{p}a"), "a1").await;
    let after = a1.mod_revision;

    // After it, before the watch opens: delivered from history.
    let a2 = update(&store, &a1.key, "a2", a1.mod_revision).await;
    expected.push(put(a2.clone(), Some(a1.clone())));
    let b = create(&store, &format!("{p}b"), "b").await;
    expected.push(put(b.clone(), None));
    create(&store, &format!("{other}x"), "not watched").await;
    create(&store, &format!("{base}w"), "not watched").await;
    let (prev, revision) = delete(&store, &b.key, None).await;
    expected.push(WatchEvent::Delete { prev, revision });

    let mut watch = open_watch(&store, &p, after).await;

    // Live.
    let a3 = update(&store, &a1.key, "a3", a2.mod_revision).await;
    expected.push(put(a3.clone(), Some(a2)));
    create(&store, &format!("{other}y"), "not watched").await;
    let b_again = create(&store, &b.key, "b again").await;
    expected.push(put(b_again, None));
    let (prev, revision) = delete(&store, &a1.key, Some(a3.mod_revision)).await;
    expected.push(WatchEvent::Delete { prev, revision });

    let events = next_events(&mut watch, expected.len(), "watch").await;
    assert_eq!(events, expected);
    expect_only_sentinel_next(&store, &mut watch, &p, "watch").await;

    // A watch from the newest revision sees only what comes after.
    let now = current_revision(&store).await;
    let mut fresh = open_watch(&store, &p, now).await;
    let c = create(&store, &format!("{p}c"), "c").await;
    assert_eq!(
        next_events(&mut fresh, 1, "fresh watch").await,
        [put(c, None)]
    );
}

/// Two watches on one prefix from one revision, opened at different times, deliver the
/// same events in the same order.
pub async fn concurrent_watchers_agree<S: Storage>(store: S) {
    let p = unique_prefix("two-watchers");
    let from = current_revision(&store).await;
    let mut first = open_watch(&store, &p, from).await;

    let mut writes = Vec::new();
    for i in 0..5 {
        writes.push(create(&store, &format!("{p}k{i}"), "v").await.mod_revision);
    }
    // The first watcher reads some live before the second one opens.
    let mut seen_first = next_events(&mut first, 3, "first watch").await;
    let mut second = open_watch(&store, &p, from).await;
    for i in 0..5 {
        let key = format!("{p}k{i}");
        let (kv, _) = get(&store, &key).await;
        let kv = kv.expect("created above");
        writes.push(
            update(&store, &key, "w", kv.mod_revision)
                .await
                .mod_revision,
        );
    }
    let (_, revision) = delete(&store, &format!("{p}k0"), None).await;
    writes.push(revision);

    seen_first.extend(next_events(&mut first, writes.len() - 3, "first watch").await);
    let seen_second = next_events(&mut second, writes.len(), "second watch").await;
    assert_eq!(
        seen_first, seen_second,
        "both watches see the same sequence"
    );
    let revisions: Vec<_> = seen_first.iter().map(WatchEvent::revision).collect();
    assert_eq!(revisions, writes, "the writes, in order, once each");
    expect_only_sentinel_next(&store, &mut first, &p, "first watch").await;
    // The sentinel went to both.
    let extra = next_events(&mut second, 1, "second watch").await;
    assert!(
        matches!(&extra[0], WatchEvent::Put { kv, .. } if kv.key.ends_with("sentinel")),
        "second watch, after its events: {extra:?}"
    );
}

/// Writers on several threads get unique revisions, increasing in each thread's order,
/// and compare-and-swap loses no update.
pub async fn concurrent_writers<S: Storage>(store: S) {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 25;
    let p = unique_prefix("concurrent-writers");
    let counter = format!("{p}counter");
    let start = create(&store, &counter, "0").await;
    let mut watch = open_watch(&store, &p, start.mod_revision).await;

    let store = Arc::new(store);
    let (done_tx, done_rx) = async_channel::unbounded();
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let store = Arc::clone(&store);
            let done = done_tx.clone();
            let counter = counter.clone();
            let p = p.clone();
            std::thread::spawn(move || {
                let revisions = block_on(async {
                    let mut revisions = Vec::new();
                    for i in 0..PER_THREAD {
                        let own = create(&*store, &format!("{p}t{t}/{i:03}"), "v").await;
                        revisions.push(own.mod_revision);
                        revisions.push(increment(&*store, &counter).await);
                    }
                    revisions
                });
                let _ = done.try_send(());
                revisions
            })
        })
        .collect();
    drop(done_tx);
    // Wait without blocking the caller's executor, then collect the results.
    while done_rx.recv().await.is_ok() {}
    let per_thread: Vec<Vec<Revision>> = threads
        .into_iter()
        .map(|thread| thread.join().expect("writer thread"))
        .collect();

    for (t, revisions) in per_thread.iter().enumerate() {
        assert!(
            revisions.windows(2).all(|w| w[0] < w[1]),
            "thread {t}'s writes got increasing revisions: {revisions:?}"
        );
    }
    let mut all: Vec<Revision> = per_thread.concat();
    all.sort_unstable();
    let writes = all.len();
    all.dedup();
    assert_eq!(all.len(), writes, "every write got a revision of its own");
    assert!(all[0] > start.mod_revision);

    let (value, _) = get(&*store, &counter).await;
    let value = value.expect("counter");
    assert_eq!(
        value.value,
        (THREADS * PER_THREAD).to_string(),
        "every increment counted"
    );
    assert!(
        all.binary_search(&value.mod_revision).is_ok(),
        "the counter was last written by one of the increments: {value:?}"
    );

    // The watch saw exactly these writes, in revision order.
    let events = next_events(&mut watch, writes, "watch over the writers").await;
    let seen: Vec<_> = events.iter().map(WatchEvent::revision).collect();
    assert_eq!(seen, all, "the watch delivers every write once, in order");
    let listed = list(&*store, &p, None, None, None).await;
    assert_eq!(listed.items.len(), THREADS * PER_THREAD + 1);
}

/// After compaction, reads and watches at older revisions fail with Compacted; the
/// latest state, the compacted revision itself and later changes are still there.
pub async fn compaction<S: Storage>(store: S) {
    let p = unique_prefix("compaction");
    let a1 = create(&store, &format!("{p}a"), "a1").await;
    let b = create(&store, &format!("{p}b"), "b").await;
    let old = b.mod_revision;
    let a2 = update(&store, &a1.key, "a2", a1.mod_revision).await;
    let c = create(&store, &format!("{p}c"), "c").await;
    let (_, deleted) = delete(&store, &c.key, None).await;
    let at = current_revision(&store).await;
    assert!(at >= deleted);

    assert_eq!(
        run(&store, StorageOp::Compact { revision: at }).await,
        Ok(StorageOutput::Compacted)
    );

    match run(&store, list_op(&p, Some(old), None, None)).await {
        Err(StorageError::Compacted {
            requested,
            compacted,
        }) => {
            assert_eq!(requested, old);
            assert!(
                compacted >= at,
                "compacted up to {compacted}, asked for {at}"
            );
        }
        other => panic!("list at compacted revision {old}: {other:?}"),
    }
    match store.watch(&p, old).await {
        Err(StorageError::Compacted {
            requested,
            compacted,
        }) => {
            assert_eq!(requested, old);
            assert!(compacted >= at);
        }
        Err(other) => panic!("watch after compacted revision {old}: {other:?}"),
        Ok(_) => panic!("watch after compacted revision {old} opened"),
    }
    // Compacting back to an older revision is refused the same way.
    assert!(matches!(
        run(&store, StorageOp::Compact { revision: old }).await,
        Err(StorageError::Compacted { .. })
    ));
    // And so is compacting ahead of the store.
    let future = current_revision(&store).await + 1_000_000;
    assert!(matches!(
        run(&store, StorageOp::Compact { revision: future }).await,
        Err(StorageError::FutureRevision { requested, .. }) if requested == future
    ));

    // The latest state stays, keys last written before the compaction included.
    assert_eq!(get(&store, &b.key).await.0, Some(b.clone()));
    assert_eq!(get(&store, &a1.key).await.0, Some(a2.clone()));
    assert_eq!(get(&store, &c.key).await.0, None);
    let latest = list(&store, &p, None, None, None).await;
    assert_eq!(latest.items, [a2.clone(), b.clone()]);
    // So does the state at the compacted revision itself.
    let at_compaction = list(&store, &p, Some(at), None, None).await;
    assert_eq!(at_compaction.items, latest.items);

    // Writing and watching go on.
    let mut watch = open_watch(&store, &p, at).await;
    let a3 = update(&store, &a1.key, "a3", a2.mod_revision).await;
    assert_eq!(
        next_events(&mut watch, 1, "watch after compaction").await,
        [put(a3, Some(a2))]
    );
}

// ---------------------------------------------------------------------------------------
// Helpers.

fn create_op(key: &str, value: impl Into<Bytes>) -> StorageOp {
    StorageOp::Create {
        key: key.to_owned(),
        value: value.into(),
    }
}

fn update_op(key: &str, value: impl Into<Bytes>, expected_revision: Revision) -> StorageOp {
    StorageOp::Update {
        key: key.to_owned(),
        value: value.into(),
        expected_revision,
    }
}

fn delete_op(key: &str, expected_revision: Option<Revision>) -> StorageOp {
    StorageOp::Delete {
        key: key.to_owned(),
        expected_revision,
    }
}

fn list_op(
    prefix: &str,
    revision: Option<Revision>,
    start_after: Option<&str>,
    limit: Option<usize>,
) -> StorageOp {
    StorageOp::List {
        prefix: prefix.to_owned(),
        revision,
        start_after: start_after.map(str::to_owned),
        limit,
    }
}

fn put(kv: KeyValue, prev: Option<KeyValue>) -> WatchEvent {
    WatchEvent::Put { kv, prev }
}

async fn run<S: Storage>(store: &S, op: StorageOp) -> Result<StorageOutput, StorageError> {
    store.run(op).await
}

async fn create<S: Storage>(store: &S, key: &str, value: impl Into<Bytes>) -> KeyValue {
    match run(store, create_op(key, value)).await {
        Ok(StorageOutput::Written(kv)) => {
            assert_eq!(kv.key, key);
            kv
        }
        other => panic!("create {key}: {other:?}"),
    }
}

async fn update<S: Storage>(
    store: &S,
    key: &str,
    value: impl Into<Bytes>,
    expected: Revision,
) -> KeyValue {
    match run(store, update_op(key, value, expected)).await {
        Ok(StorageOutput::Written(kv)) => {
            assert_eq!(kv.key, key);
            kv
        }
        other => panic!("update {key} at {expected}: {other:?}"),
    }
}

async fn delete<S: Storage>(
    store: &S,
    key: &str,
    expected: Option<Revision>,
) -> (KeyValue, Revision) {
    match run(store, delete_op(key, expected)).await {
        Ok(StorageOutput::Deleted { prev, revision }) => {
            assert_eq!(prev.key, key);
            (prev, revision)
        }
        other => panic!("delete {key} at {expected:?}: {other:?}"),
    }
}

async fn get<S: Storage>(store: &S, key: &str) -> (Option<KeyValue>, Revision) {
    match run(
        store,
        StorageOp::Get {
            key: key.to_owned(),
        },
    )
    .await
    {
        Ok(StorageOutput::Got { kv, revision }) => (kv, revision),
        other => panic!("get {key}: {other:?}"),
    }
}

async fn list<S: Storage>(
    store: &S,
    prefix: &str,
    revision: Option<Revision>,
    start_after: Option<&str>,
    limit: Option<usize>,
) -> ListPage {
    match run(store, list_op(prefix, revision, start_after, limit)).await {
        Ok(StorageOutput::Listed(page)) => page,
        other => panic!("list {prefix} at {revision:?} after {start_after:?}: {other:?}"),
    }
}

async fn current_revision<S: Storage>(store: &S) -> Revision {
    match run(store, StorageOp::CurrentRevision).await {
        Ok(StorageOutput::Revision(revision)) => revision,
        other => panic!("current revision: {other:?}"),
    }
}

/// Add one to the decimal counter at `key` with a compare-and-swap retry loop; returns
/// the revision of the successful write.
async fn increment<S: Storage>(store: &S, key: &str) -> Revision {
    let (current, _) = get(store, key).await;
    let mut current = current.unwrap_or_else(|| panic!("counter {key} missing"));
    loop {
        let n: u64 = std::str::from_utf8(&current.value)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("counter {key} holds {:?}", current.value));
        match run(
            store,
            update_op(key, (n + 1).to_string(), current.mod_revision),
        )
        .await
        {
            Ok(StorageOutput::Written(kv)) => return kv.mod_revision,
            Err(StorageError::Conflict { current: now, .. }) => {
                assert!(
                    now.mod_revision > current.mod_revision,
                    "a conflict reports a newer value: {now:?} after {current:?}"
                );
                current = now;
            }
            other => panic!("increment {key}: {other:?}"),
        }
    }
}

async fn open_watch<S: Storage>(store: &S, prefix: &str, after: Revision) -> S::Watch {
    match store.watch(prefix, after).await {
        Ok(watch) => watch,
        Err(err) => panic!("watch {prefix} after {after}: {err:?}"),
    }
}

/// The next `n` events of a watch, failing if they do not all come within
/// [`WATCH_TIMEOUT`].
async fn next_events<W: WatchStream>(watch: &mut W, n: usize, what: &str) -> Vec<WatchEvent> {
    let mut events = Vec::with_capacity(n);
    let collect = async {
        while events.len() < n {
            match watch.next().await {
                Some(Ok(event)) => events.push(event),
                Some(Err(err)) => return Err(format!("failed: {err:?}")),
                None => return Err("ended".to_owned()),
            }
        }
        Ok(())
    };
    let outcome = within(WATCH_TIMEOUT, collect).await;
    match outcome {
        Some(Ok(())) => events,
        Some(Err(why)) => panic!(
            "{what} {why} after {} of {n} events: {events:?}",
            events.len()
        ),
        None => panic!(
            "{what}: only {} of {n} events within {WATCH_TIMEOUT:?}: {events:?}",
            events.len()
        ),
    }
}

/// Write a sentinel key under `prefix` and check that it is the watch's very next
/// event: nothing extra (a duplicate, another prefix's key) came before it.
async fn expect_only_sentinel_next<S: Storage>(
    store: &S,
    watch: &mut S::Watch,
    prefix: &str,
    what: &str,
) {
    let sentinel = create(store, &format!("{prefix}sentinel"), "end").await;
    let next = next_events(watch, 1, what).await;
    assert_eq!(
        next,
        [put(sentinel, None)],
        "{what}: nothing but the sentinel after the expected events"
    );
}

/// Run `future`, giving up after `timeout` (`None`). The timer is a thread, so this works
/// under any executor, or none.
pub(crate) async fn within<F: Future>(timeout: Duration, future: F) -> Option<F::Output> {
    let (cancel, cancelled) = std::sync::mpsc::channel::<()>();
    let (fire, fired) = async_channel::bounded::<()>(1);
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = cancelled.recv_timeout(timeout) {
            let _ = fire.try_send(());
        }
    });
    let outcome = futures_lite::future::or(async { Some(future.await) }, async {
        let _ = fired.recv().await;
        None
    })
    .await;
    drop(cancel);
    outcome
}

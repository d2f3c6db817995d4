//! What only a file-backed store can get wrong: reopening, foreign or corrupt files,
//! failed batches, and history cleared by compaction. The contract itself is checked
//! by the conformance suite (conformance/tests/storage_sqlite.rs).

use super::*;
use apiary_core::storage::{KeyValue, WatchEvent, WatchStream};
use futures_lite::future::block_on;

fn create(key: &str, value: &str) -> StorageOp {
    StorageOp::Create {
        key: key.to_owned(),
        value: value.to_owned().into(),
    }
}

fn written(outcome: Completion) -> KeyValue {
    match outcome {
        Ok(StorageOutput::Written(kv)) => kv,
        other => panic!("expected a write, got {other:?}"),
    }
}

fn open(path: &Path) -> SqliteStore {
    SqliteStore::open(path, SqliteOptions::default()).expect("open")
}

#[test]
fn a_reopened_store_has_the_same_objects_revisions_and_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let (a, b) = {
        let store = open(&path);
        let a = written(block_on(store.run(create("/r/a", "1"))));
        let b = written(block_on(store.run(create("/r/b", "2"))));
        (a, b)
    };
    let store = open(&path);
    assert_eq!(store.current_revision(), b.mod_revision);
    let got = block_on(store.run(StorageOp::Get { key: "/r/a".into() }));
    assert_eq!(
        got,
        Ok(StorageOutput::Got {
            kv: Some(a.clone()),
            revision: b.mod_revision
        })
    );
    // The next write continues the revision sequence.
    let c = written(block_on(store.run(create("/r/c", "3"))));
    assert_eq!(c.mod_revision, b.mod_revision + 1);
    // A watch from before the restart replays what it missed.
    let mut watch = block_on(store.watch("/r/", a.mod_revision)).unwrap();
    let next = block_on(watch.next()).unwrap().unwrap();
    assert_eq!(next, WatchEvent::Put { kv: b, prev: None });
}

#[test]
fn a_file_that_is_not_a_database_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let garbage = vec![0x5Au8; 64 * 1024];
    std::fs::write(&path, &garbage).unwrap();
    let error = SqliteStore::open(&path, SqliteOptions::default()).unwrap_err();
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("not a database"), "{message}");
    assert!(
        std::fs::read(&path).unwrap() == garbage,
        "the file was changed"
    );
}

#[test]
fn a_corrupt_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        let store = open(&path);
        for i in 0..2000 {
            written(block_on(
                store.run(create(&format!("/r/{i:05}"), &"x".repeat(200))),
            ));
        }
    }
    // Overwrite pages in the middle of the file (past the header).
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 64 * 1024, "{} bytes", bytes.len());
    for byte in &mut bytes[16 * 1024..48 * 1024] {
        *byte = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let error = SqliteStore::open(&path, SqliteOptions::default()).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("corrupt") || message.contains("malformed"),
        "{message}"
    );
    assert!(
        std::fs::read(&path).unwrap() == bytes,
        "the file was changed"
    );
}

#[test]
fn a_foreign_sqlite_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE notes (body TEXT);")
        .unwrap();
    let error = SqliteStore::open(&path, SqliteOptions::default()).unwrap_err();
    assert!(
        error.to_string().contains("not an apiary database"),
        "{error}"
    );
}

#[test]
fn a_write_that_fails_in_a_batch_fails_alone_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let store = open(&path);
    // A real sqlite failure for one key, injected from outside.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON log WHEN NEW.key = CAST('/r/bad' AS BLOB)
             BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END;",
        )
        .unwrap();
    let outcomes = block_on(futures_lite::future::zip(
        futures_lite::future::zip(
            store.run(create("/r/a", "1")),
            store.run(create("/r/bad", "2")),
        ),
        store.run(create("/r/c", "3")),
    ));
    let ((a, bad), c) = outcomes;
    let (a, c) = (written(a), written(c));
    assert!(
        matches!(&bad, Err(StorageError::Internal(m)) if m.contains("refused by test trigger")),
        "{bad:?}"
    );
    // Revisions stay dense: the failed write took none.
    let mut revisions = [a.mod_revision, c.mod_revision];
    revisions.sort();
    assert_eq!(revisions, [1, 2]);
    assert_eq!(store.current_revision(), 2);
    let got = block_on(store.run(StorageOp::Get {
        key: "/r/bad".into(),
    }));
    assert_eq!(
        got,
        Ok(StorageOutput::Got {
            kv: None,
            revision: 2
        })
    );
}

#[test]
fn compaction_clears_replaced_rows_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let store = open(&path);
    let mut kv = written(block_on(store.run(create("/r/a", "0"))));
    for i in 1..=3000 {
        kv = written(block_on(store.run(StorageOp::Update {
            key: "/r/a".into(),
            value: i.to_string().into(),
            expected_revision: kv.mod_revision,
        })));
    }
    let rows = |path: &Path| -> i64 {
        rusqlite::Connection::open(path)
            .unwrap()
            .query_row("SELECT count(*) FROM log", [], |row| row.get(0))
            .unwrap()
    };
    assert_eq!(rows(&path), 3001);
    let at = kv.mod_revision - 10;
    assert_eq!(
        block_on(store.run(StorageOp::Compact { revision: at })),
        Ok(StorageOutput::Compacted)
    );
    // The steps run between batches; small writes let them through.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while rows(&path) > 11 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        rows(&path),
        11,
        "the version visible at {at} and the 10 after it"
    );
    // Lists at the compacted revision and after still answer.
    let listed = block_on(store.run(StorageOp::List {
        prefix: "/r/".into(),
        revision: Some(at),
        start_after: None,
        limit: None,
    }));
    let Ok(StorageOutput::Listed(page)) = listed else {
        panic!("{listed:?}")
    };
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].mod_revision, at);
}

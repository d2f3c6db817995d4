//! The storage conformance suite against the sqlite backend, each check on a database
//! file of its own.

use apiary_conformance::storage_suite;
use apiary_core::storage::{Completion, Revision, Storage, StorageError, StorageOp};
use apiary_sqlite::{SqliteOptions, SqliteStore, SqliteWatch};
use std::sync::Arc;

/// A sqlite store in a temporary directory that lives as long as the store.
#[derive(Clone)]
struct ScratchSqlite {
    store: SqliteStore,
    _dir: Arc<tempfile::TempDir>,
}

fn scratch() -> ScratchSqlite {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = SqliteStore::open(dir.path().join("state.db"), SqliteOptions::default())
        .expect("open sqlite store");
    ScratchSqlite {
        store,
        _dir: Arc::new(dir),
    }
}

impl Storage for ScratchSqlite {
    type Watch = SqliteWatch;

    async fn run(&self, op: StorageOp) -> Completion {
        self.store.run(op).await
    }

    async fn watch(&self, prefix: &str, after: Revision) -> Result<SqliteWatch, StorageError> {
        self.store.watch(prefix, after).await
    }
}

apiary_conformance::storage_suite_tests!(scratch());

/// The whole suite in sequence on one database, as a long-lived store sees it.
#[test]
fn run_all_on_one_database() {
    let store = scratch();
    storage_suite::block_on(storage_suite::run_all(|| store.clone()));
}

/// Random operation sequences against sqlite and the plain reference model; every
/// result must match. `APIARY_MODEL_SEEDS` / `APIARY_MODEL_STEPS` replay or extend.
#[test]
fn model_seeds_0_to_3() {
    storage_suite::block_on(apiary_conformance::model::model_test_seeds(
        scratch,
        0..4,
        2_000,
    ));
}

#[test]
fn model_seeds_4_to_7() {
    storage_suite::block_on(apiary_conformance::model::model_test_seeds(
        scratch,
        4..8,
        2_000,
    ));
}

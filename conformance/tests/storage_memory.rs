//! The storage conformance suite against the in-memory backend.

use apiary_conformance::storage_suite;
use apiary_memory::MemoryStore;

// One test per check, each on its own store.
apiary_conformance::storage_suite_tests!(MemoryStore::new());

/// The whole suite in sequence, as backends that share a key space run it.
#[test]
fn run_all() {
    storage_suite::block_on(storage_suite::run_all(MemoryStore::new));
}

/// The suite makes no assumption about where revisions start: run it on a store that
/// already has history, some of it compacted.
#[test]
fn run_all_on_a_store_with_history() {
    let store = MemoryStore::new();
    storage_suite::block_on(async {
        use apiary_core::storage::{Storage, StorageOp};
        for i in 0..50 {
            store
                .run(StorageOp::Create {
                    key: format!("/elsewhere/{i}"),
                    value: "x".into(),
                })
                .await
                .unwrap();
        }
        store
            .run(StorageOp::Compact { revision: 30 })
            .await
            .unwrap();
    });
    storage_suite::block_on(storage_suite::run_all(|| store.clone()));
}

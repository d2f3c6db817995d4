//! The storage conformance suite against the in-memory backend.

use apiary_conformance::{model, storage_suite};
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

// ---------------------------------------------------------------------------------------
// The randomized model test: long random sequences checked against a reference model.

/// Eight seeds of 2,000 steps, split in two tests so they run in parallel.
#[test]
fn model_seeds_0_to_3() {
    storage_suite::block_on(model::model_test_seeds(MemoryStore::new, 0..4, 2_000));
}

#[test]
fn model_seeds_4_to_7() {
    storage_suite::block_on(model::model_test_seeds(MemoryStore::new, 4..8, 2_000));
}

// The model test must be able to fail: each of these runs it on a memory store with one
// planted bug and checks that it panics, naming the seed.

mod broken {
    use apiary_core::storage::{
        Completion, Revision, Storage, StorageError, StorageOp, StorageOutput, WatchEvent,
        WatchStream,
    };
    use apiary_memory::{MemoryStore, MemoryWatch};

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Bug {
        /// A list page that has more keys after it says one more than there are.
        RemainingOffByOne,
        /// Every watch silently skips its fourth event.
        WatchDropsAnEvent,
        /// Compaction is acknowledged but not done, so old revisions stay readable.
        CompactionIgnored,
    }

    /// A memory store with one bug planted in what it reports.
    pub struct BrokenStore {
        pub inner: MemoryStore,
        pub bug: Bug,
    }

    impl Storage for BrokenStore {
        type Watch = BrokenWatch;

        async fn run(&self, op: StorageOp) -> Completion {
            if self.bug == Bug::CompactionIgnored && matches!(op, StorageOp::Compact { .. }) {
                return Ok(StorageOutput::Compacted);
            }
            let mut completion = self.inner.run(op).await;
            if let (Bug::RemainingOffByOne, Ok(StorageOutput::Listed(page))) =
                (self.bug, &mut completion)
            {
                if page.more {
                    page.remaining += 1;
                }
            }
            completion
        }

        async fn watch(&self, prefix: &str, after: Revision) -> Result<BrokenWatch, StorageError> {
            Ok(BrokenWatch {
                inner: self.inner.watch(prefix, after).await?,
                drop_fourth: self.bug == Bug::WatchDropsAnEvent,
                seen: 0,
            })
        }
    }

    pub struct BrokenWatch {
        inner: MemoryWatch,
        drop_fourth: bool,
        seen: usize,
    }

    impl WatchStream for BrokenWatch {
        async fn next(&mut self) -> Option<Result<WatchEvent, StorageError>> {
            self.seen += 1;
            if self.drop_fourth && self.seen == 4 {
                self.inner.next().await;
                self.seen += 1;
            }
            self.inner.next().await
        }
    }
}

/// Run the model test on a store with `bug` and return its panic message.
fn model_failure(bug: broken::Bug) -> String {
    let store = broken::BrokenStore {
        inner: MemoryStore::new(),
        bug,
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        storage_suite::block_on(model::model_test(store, 1, 1_000))
    }));
    let payload = match outcome {
        Ok(()) => panic!("the model test passed on a store with {bug:?}"),
        Err(payload) => payload,
    };
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        message.contains("model test failed: seed 1, "),
        "{bug:?}: the failure names the seed: {message}"
    );
    message
}

#[test]
fn model_test_catches_a_wrong_remaining_count() {
    let message = model_failure(broken::Bug::RemainingOffByOne);
    assert!(message.contains("step 165 of 1000: List {"), "{message}");
    assert!(message.contains("remaining"), "{message}");
}

#[test]
fn model_test_catches_a_dropped_watch_event() {
    let message = model_failure(broken::Bug::WatchDropsAnEvent);
    assert!(
        message.contains("reading the watches: watch of"),
        "{message}"
    );
    assert!(message.contains("first difference at event 3"), "{message}");
}

#[test]
fn model_test_catches_an_ignored_compaction() {
    let message = model_failure(broken::Bug::CompactionIgnored);
    assert!(message.contains("step 14 of 1000: OpenWatch"), "{message}");
    assert!(message.contains("Compacted {"), "{message}");
}

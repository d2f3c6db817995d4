//! The storage conformance suite and the model test against a real etcd (Debian's
//! etcd-server), started on free loopback ports for each test and stopped after it.

use apiary_conformance::etcd::Etcd;
use apiary_conformance::storage_suite;
use apiary_core::storage::{Completion, Revision, Storage, StorageError, StorageOp};
use apiary_etcd::{EtcdOptions, EtcdStore, EtcdWatch};
use std::sync::Arc;

/// A store on an etcd of its own, which lives as long as the store.
#[derive(Clone)]
struct ScratchEtcd {
    store: EtcdStore,
    _etcd: Arc<Etcd>,
}

fn scratch() -> ScratchEtcd {
    let etcd = Etcd::start();
    let store = EtcdStore::new(EtcdOptions {
        servers: vec![etcd.url()],
        ..Default::default()
    })
    .expect("etcd store");
    ScratchEtcd {
        store,
        _etcd: Arc::new(etcd),
    }
}

impl Storage for ScratchEtcd {
    type Watch = EtcdWatch;

    async fn run(&self, op: StorageOp) -> Completion {
        self.store.run(op).await
    }

    async fn watch(&self, prefix: &str, after: Revision) -> Result<EtcdWatch, StorageError> {
        self.store.watch(prefix, after).await
    }
}

/// Every check in sequence on one etcd (they share its key space; compaction last).
#[test]
fn storage_suite_on_etcd() {
    let store = scratch();
    storage_suite::block_on(storage_suite::run_all(|| store.clone()));
}

/// Random operation sequences against etcd and the plain reference model, each seed on
/// an etcd of its own. `APIARY_MODEL_SEEDS` / `APIARY_MODEL_STEPS` replay or extend.
#[test]
fn model_test_on_etcd() {
    storage_suite::block_on(apiary_conformance::model::model_test_seeds(
        scratch,
        0..3,
        1_000,
    ));
}

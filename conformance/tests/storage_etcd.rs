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

/// Two servers' compactors on one etcd, ticking in turn: one compacts per round, to the
/// revision of the round before, and they keep one count between them.
#[test]
fn compactor_ticks_are_shared_between_servers() {
    use apiary_core::storage::{CompactorTick, StorageOutput};
    let a = scratch();
    let b = EtcdStore::new(EtcdOptions {
        servers: vec![a._etcd.url()],
        ..Default::default()
    })
    .unwrap();
    storage_suite::block_on(async {
        let write = |i: usize| {
            let store = a.store.clone();
            async move {
                store
                    .run(StorageOp::Create {
                        key: format!("/compactor/{i}"),
                        value: "x".into(),
                    })
                    .await
                    .unwrap();
            }
        };
        // First round: A takes the tick (nothing to compact yet), B adopts it.
        let a1 = a
            .store
            .compactor_tick(CompactorTick::default())
            .await
            .unwrap();
        let b1 = b.compactor_tick(CompactorTick::default()).await.unwrap();
        assert_eq!((a1.claim, b1.claim), (1, 1));
        for i in 0..5 {
            write(i).await;
        }
        // Second round: B wins this time and compacts to what it saw in round one.
        let b2 = b.compactor_tick(b1).await.unwrap();
        let a2 = a.store.compactor_tick(a1).await.unwrap();
        assert_eq!((b2.claim, a2.claim), (2, 2));
        let below = StorageOp::List {
            prefix: "/compactor/".into(),
            revision: Some(b1.revision - 1),
            start_after: None,
            limit: None,
        };
        match a.store.run(below).await {
            Err(StorageError::Compacted { compacted, .. }) => assert_eq!(compacted, b1.revision),
            other => panic!(
                "expected history before {} compacted: {other:?}",
                b1.revision
            ),
        }
        // A compacted nothing: history from B's revision on is still there.
        let at = StorageOp::List {
            prefix: "/compactor/".into(),
            revision: Some(b1.revision),
            start_after: None,
            limit: None,
        };
        assert!(matches!(
            a.store.run(at).await,
            Ok(StorageOutput::Listed(_))
        ));
    });
}

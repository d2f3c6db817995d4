//! Apiary's distributed storage backend: an etcd v3 cluster, spoken to in etcd's own
//! protocol (gRPC over HTTP/2 with the `h2` crate, messages declared with prost), on
//! smol, with no tokio runtime.
//!
//! - [`proto`]: the etcd messages used, written by hand (no protoc at build time).
//! - [`grpc`]: a small gRPC client — unary calls and bidirectional streams.
//! - `client`: deadlines, one connection at a time, failing over between endpoints.
//! - `kv`: the storage contract as kube-apiserver maps it onto etcd's KV API.
//! - `watch`: watches as etcd Watch streams.

mod client;
pub mod grpc;
mod kv;
pub mod proto;
mod tls;
mod watch;

pub use tls::TlsFiles;
pub use watch::EtcdWatch;

use apiary_core::storage::{
    CompactorTick, Completion, Revision, Storage, StorageError, StorageOp, StorageOutput,
};
use client::Client;
use grpc::Endpoint;
use kv::Kv;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How an [`EtcdStore`] reaches its cluster.
#[derive(Clone, Debug)]
pub struct EtcdOptions {
    /// `--etcd-servers`: `http://host:port` or `https://host:port`, tried in order.
    pub servers: Vec<String>,
    /// `--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`, for https servers.
    pub tls: Option<TlsFiles>,
    /// How long one call may take before it fails (and the next endpoint is tried).
    pub request_timeout: Duration,
}

impl Default for EtcdOptions {
    fn default() -> Self {
        Self {
            servers: vec!["http://127.0.0.1:2379".to_owned()],
            tls: None,
            request_timeout: Duration::from_secs(10),
        }
    }
}

/// The etcd store. Clones share one connection.
#[derive(Clone)]
pub struct EtcdStore {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) client: Client,
    /// The highest compacted revision this store has seen.
    pub(crate) compacted: AtomicU64,
}

impl EtcdStore {
    /// A store for the cluster `options` names. Nothing connects until the first call.
    pub fn new(options: EtcdOptions) -> Result<EtcdStore, String> {
        if options.servers.is_empty() {
            return Err("no etcd servers given".to_owned());
        }
        let endpoints = options
            .servers
            .iter()
            .map(|s| Endpoint::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        let tls = match &options.tls {
            Some(files) => Some(files.connector()?),
            None if endpoints.iter().any(|e| e.tls) => Some(tls::server_only()?),
            None => None,
        };
        Ok(EtcdStore {
            inner: Arc::new(Inner {
                client: Client::new(endpoints, tls, options.request_timeout),
                compacted: AtomicU64::new(0),
            }),
        })
    }

    fn kv(&self) -> Kv<'_> {
        Kv {
            client: &self.inner.client,
            compacted: &self.inner.compacted,
        }
    }

    async fn perform(&self, op: StorageOp) -> Completion {
        let kv = self.kv();
        match op {
            StorageOp::Get { key } => kv.get(&key).await,
            StorageOp::List {
                prefix,
                revision,
                start_after,
                limit,
            } => kv
                .list(&prefix, revision, start_after.as_deref(), limit)
                .await
                .map(StorageOutput::Listed),
            StorageOp::Create { key, value } => kv.create(&key, value).await,
            StorageOp::Update {
                key,
                value,
                expected_revision,
            } => kv.update(&key, value, expected_revision).await,
            StorageOp::Delete {
                key,
                expected_revision,
            } => kv.delete(&key, expected_revision).await,
            StorageOp::Compact { revision } => kv.compact(revision).await,
            StorageOp::CurrentRevision => kv.current_revision().await.map(StorageOutput::Revision),
        }
    }
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore")
            .field("compacted", &self.inner.compacted.load(Ordering::Relaxed))
            .finish()
    }
}

impl Storage for EtcdStore {
    type Watch = EtcdWatch;

    async fn run(&self, op: StorageOp) -> Completion {
        // Boxed: a call's state (a gRPC exchange, perhaps a bisection for the compacted
        // revision) is large, and callers nest these futures deeply.
        Box::pin(self.perform(op)).await
    }

    async fn compactor_tick(&self, last: CompactorTick) -> Result<CompactorTick, StorageError> {
        Box::pin(self.kv().compactor_tick(last)).await
    }

    async fn watch(&self, prefix: &str, after: Revision) -> Result<EtcdWatch, StorageError> {
        // etcd keeps the compacted revision's own changes, the contract does not: refuse
        // what the other backends refuse (etcd itself refuses anything older).
        let compacted = self.inner.compacted.load(Ordering::Acquire);
        if after < compacted {
            return Err(StorageError::Compacted {
                requested: after,
                compacted,
            });
        }
        Box::pin(EtcdWatch::open(Arc::clone(&self.inner), prefix, after)).await
    }
}

//! Watches: one etcd Watch stream each, from the revision after `after`, with the
//! previous values of changed keys.

use crate::client::storage_error;
use crate::grpc::{MessageStream, Sender};
use crate::kv::{key_value, prefix_end, Kv};
use crate::proto::{self, event_type, path, watch_request};
use crate::Inner;
use apiary_core::storage::{KeyValue, Revision, StorageError, WatchEvent, WatchStream};
use std::collections::VecDeque;
use std::sync::Arc;

/// A watch on an [`EtcdStore`](crate::EtcdStore).
pub struct EtcdWatch {
    inner: Arc<Inner>,
    /// Kept so the request half of the stream stays open.
    _sender: Sender<proto::WatchRequest>,
    stream: Option<MessageStream<proto::WatchResponse>>,
    events: VecDeque<WatchEvent>,
    /// The revision of the last event yielded (or the watch's starting point).
    seen: Revision,
}

impl EtcdWatch {
    pub(crate) async fn open(
        inner: Arc<Inner>,
        prefix: &str,
        after: Revision,
    ) -> Result<Self, StorageError> {
        let client = &inner.client;
        let create = proto::WatchRequest {
            request_union: Some(watch_request::RequestUnion::CreateRequest(
                proto::WatchCreateRequest {
                    key: prefix.as_bytes().to_vec(),
                    range_end: prefix_end(prefix.as_bytes()),
                    start_revision: after as i64 + 1,
                    progress_notify: true,
                    prev_kv: true,
                },
            )),
        };
        let (sender, mut stream) = client
            .stream::<_, proto::WatchResponse>(path::WATCH, &create)
            .await
            .map_err(storage_error)?;
        let first = crate::client::deadline(client.request_timeout(), "watch", stream.next())
            .await
            .map_err(storage_error)?
            .ok_or_else(|| StorageError::Unavailable("etcd closed the watch".into()))?;
        if first.canceled {
            return Err(cancelled(&first, after));
        }
        let mut watch = Self {
            inner: Arc::clone(&inner),
            _sender: sender,
            stream: Some(stream),
            events: VecDeque::new(),
            seen: after,
        };
        watch.take_events(first).await?;
        Ok(watch)
    }

    async fn take_events(&mut self, response: proto::WatchResponse) -> Result<(), StorageError> {
        for event in response.events {
            let event = self.convert(event).await?;
            self.seen = event.revision();
            self.events.push_back(event);
        }
        Ok(())
    }

    /// An etcd event as the contract's. etcd reads the previous value when it sends the
    /// event and leaves it out if compaction took it meanwhile; read it here then, or
    /// end the watch with `Compacted` when it is gone for good.
    async fn convert(&self, event: proto::Event) -> Result<WatchEvent, StorageError> {
        let kv = event.kv.ok_or_else(|| {
            StorageError::Internal("etcd sent a watch event without its key".into())
        })?;
        let deleted = event.r#type == event_type::DELETE;
        let replaced = deleted || kv.create_revision != kv.mod_revision;
        let prev = match event.prev_kv {
            Some(prev) => Some(key_value(prev)?),
            None if replaced => Some(Box::pin(self.previous(&kv)).await?),
            None => None,
        };
        let revision = kv.mod_revision as Revision;
        Ok(match prev {
            Some(prev) if deleted => WatchEvent::Delete { prev, revision },
            prev => WatchEvent::Put {
                kv: key_value(kv)?,
                prev,
            },
        })
    }

    /// The value a change replaced, read at the revision before it.
    async fn previous(&self, kv: &proto::KeyValue) -> Result<KeyValue, StorageError> {
        let kv_api = Kv {
            client: &self.inner.client,
            compacted: &self.inner.compacted,
        };
        let key = String::from_utf8_lossy(&kv.key).into_owned();
        let before = (kv.mod_revision as Revision).saturating_sub(1);
        let page = kv_api
            .list(&key, Some(before), None, Some(1))
            .await
            .map_err(|e| match e {
                StorageError::Compacted { compacted, .. } => StorageError::Compacted {
                    requested: self.seen,
                    compacted,
                },
                other => other,
            })?;
        page.items
            .into_iter()
            .find(|item| item.key == key)
            .ok_or_else(|| {
                StorageError::Internal(format!(
                    "etcd has no value of {key} before revision {}",
                    kv.mod_revision
                ))
            })
    }
}

/// Why etcd cancelled a watch, as the contract's error.
fn cancelled(response: &proto::WatchResponse, after: Revision) -> StorageError {
    if response.compact_revision > 0 {
        StorageError::Compacted {
            requested: after,
            compacted: response.compact_revision as Revision,
        }
    } else {
        StorageError::Unavailable(format!(
            "etcd cancelled the watch: {}",
            response.cancel_reason
        ))
    }
}

impl WatchStream for EtcdWatch {
    async fn next(&mut self) -> Option<Result<WatchEvent, StorageError>> {
        loop {
            if let Some(event) = self.events.pop_front() {
                return Some(Ok(event));
            }
            let stream = self.stream.as_mut()?;
            let ended = match stream.next().await {
                Ok(Some(response)) if response.canceled => cancelled(&response, self.seen),
                Ok(Some(response)) => match Box::pin(self.take_events(response)).await {
                    Ok(()) => continue,
                    Err(e) => e,
                },
                Ok(None) => StorageError::Unavailable("etcd ended the watch".into()),
                Err(e) => storage_error(e),
            };
            self.stream = None;
            return Some(Err(ended));
        }
    }
}

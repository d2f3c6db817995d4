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
use std::time::Duration;

/// A watch on an [`EtcdStore`](crate::EtcdStore). When its connection fails (etcd
/// restarting, a member down) it watches again from the last revision it yielded, on
/// whichever endpoint answers, so its reader sees every change once; it ends only when
/// etcd cancels it (with `Compacted` when compaction overtook it).
pub struct EtcdWatch {
    inner: Arc<Inner>,
    prefix: String,
    /// Kept so the request half of the stream stays open.
    _sender: Option<Sender<proto::WatchRequest>>,
    stream: Option<MessageStream<proto::WatchResponse>>,
    events: VecDeque<WatchEvent>,
    /// The revision of the last event yielded (or the watch's starting point).
    seen: Revision,
    /// Set once the watch has ended.
    ended: bool,
}

/// How long a broken watch waits before watching again, at most.
const MAX_RESUME_BACKOFF: Duration = Duration::from_secs(2);

impl EtcdWatch {
    pub(crate) async fn open(
        inner: Arc<Inner>,
        prefix: &str,
        after: Revision,
    ) -> Result<Self, StorageError> {
        let mut watch = Self {
            inner,
            prefix: prefix.to_owned(),
            _sender: None,
            stream: None,
            events: VecDeque::new(),
            seen: after,
            ended: false,
        };
        watch.start().await?;
        Ok(watch)
    }

    /// Open an etcd Watch stream from the revision after `seen`.
    async fn start(&mut self) -> Result<(), StorageError> {
        let client = &self.inner.client;
        let create = proto::WatchRequest {
            request_union: Some(watch_request::RequestUnion::CreateRequest(
                proto::WatchCreateRequest {
                    key: self.prefix.as_bytes().to_vec(),
                    range_end: prefix_end(self.prefix.as_bytes()),
                    start_revision: self.seen as i64 + 1,
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
            return Err(cancelled(&first, self.seen));
        }
        self._sender = Some(sender);
        self.stream = Some(stream);
        self.take_events(first).await
    }

    /// After the connection failed: watch again from `seen` until etcd takes the watch
    /// (or refuses it for good).
    async fn resume(&mut self, why: StorageError) -> Result<(), StorageError> {
        self.stream = None;
        self._sender = None;
        let mut backoff = Duration::from_millis(100);
        let mut last = why;
        loop {
            tracing::debug!(prefix = %self.prefix, after = self.seen, "etcd watch broke ({last}); watching again in {backoff:?}");
            smol::Timer::after(backoff).await;
            backoff = (backoff * 2).min(MAX_RESUME_BACKOFF);
            match self.start().await {
                Ok(()) => return Ok(()),
                Err(StorageError::Unavailable(why)) => last = StorageError::Unavailable(why),
                Err(fatal) => return Err(fatal),
            }
        }
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
        match kv_api.get_at(&key, before).await {
            Ok(Some(prev)) => Ok(prev),
            Ok(None) => Err(StorageError::Internal(format!(
                "etcd has no value of {key} before revision {}",
                kv.mod_revision
            ))),
            // Compacted meanwhile: the watch cannot go on from where it is.
            Err(StorageError::Compacted { compacted, .. }) => Err(StorageError::Compacted {
                requested: self.seen,
                compacted,
            }),
            Err(other) => Err(other),
        }
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
            if self.ended {
                return None;
            }
            let broken = match self.stream.as_mut() {
                None => StorageError::Unavailable("no stream".into()),
                Some(stream) => match stream.next().await {
                    Ok(Some(response)) if response.canceled => {
                        self.ended = true;
                        return Some(Err(cancelled(&response, self.seen)));
                    }
                    Ok(Some(response)) => match Box::pin(self.take_events(response)).await {
                        Ok(()) => continue,
                        Err(e @ StorageError::Unavailable(_)) => e,
                        Err(fatal) => {
                            self.ended = true;
                            return Some(Err(fatal));
                        }
                    },
                    Ok(None) => StorageError::Unavailable("etcd ended the watch".into()),
                    Err(e) => storage_error(e),
                },
            };
            if let Err(fatal) = Box::pin(self.resume(broken)).await {
                self.ended = true;
                return Some(Err(fatal));
            }
        }
    }
}

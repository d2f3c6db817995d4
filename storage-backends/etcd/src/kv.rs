//! The storage contract mapped onto etcd's KV API as kube-apiserver maps it: a create
//! is a transaction on "the key does not exist", an update or a delete with a
//! precondition one on "its mod_revision is still the expected one"; a failed
//! transaction reads the key back to say why. A resourceVersion is etcd's mod_revision.

use crate::client::{storage_error, Client};
use crate::grpc::{code, GrpcError};
use crate::proto::{self, compare, compare_result, compare_target, path, request_op, response_op};
use apiary_core::storage::{
    CompactorTick, Completion, KeyValue, ListPage, Revision, StorageError, StorageOutput,
};
use bytes::Bytes;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many keys one Range of an unlimited list reads: large lists come in pages at one
/// revision, so no response nears gRPC's message limits.
const LIST_PAGE: i64 = 1000;

/// The first key after every key that starts with `prefix` (etcd's "prefix end");
/// `[0]`, meaning "no end", when there is none.
pub(crate) fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

pub(crate) fn key_value(kv: proto::KeyValue) -> Result<KeyValue, StorageError> {
    Ok(KeyValue {
        key: String::from_utf8(kv.key)
            .map_err(|_| StorageError::Internal("etcd holds a key that is not UTF-8".into()))?,
        value: kv.value,
        create_revision: kv.create_revision as Revision,
        mod_revision: kv.mod_revision as Revision,
    })
}

fn header_revision(header: &Option<proto::ResponseHeader>) -> Revision {
    header.as_ref().map_or(0, |h| h.revision as Revision)
}

fn is_compacted(e: &GrpcError) -> bool {
    matches!(e, GrpcError::Status { code, message } if *code == code::OUT_OF_RANGE && message.contains("compacted"))
}

fn is_future(e: &GrpcError) -> bool {
    matches!(e, GrpcError::Status { code, message } if *code == code::OUT_OF_RANGE && message.contains("future revision"))
}

fn range_op(key: &str) -> proto::RequestOp {
    proto::RequestOp {
        request: Some(request_op::Request::Range(proto::RangeRequest {
            key: key.as_bytes().to_vec(),
            ..Default::default()
        })),
    }
}

fn compare(key: &str, target: i32, result: i32, value: compare::TargetUnion) -> proto::Compare {
    proto::Compare {
        result,
        target,
        key: key.as_bytes().to_vec(),
        target_union: Some(value),
    }
}

/// The key as the failure branch of a transaction read it: what the key is now.
fn failure_read(response: proto::TxnResponse) -> Result<Option<KeyValue>, StorageError> {
    match response
        .responses
        .into_iter()
        .next()
        .and_then(|r| r.response)
    {
        Some(response_op::Response::Range(range)) => {
            range.kvs.into_iter().next().map(key_value).transpose()
        }
        _ => Err(StorageError::Internal(
            "etcd answered a transaction without its read".into(),
        )),
    }
}

/// The KV operations, with what this client knows of the compacted revision.
pub(crate) struct Kv<'a> {
    pub client: &'a Client,
    /// The highest compacted revision seen (from our compactions and etcd's answers).
    pub compacted: &'a AtomicU64,
}

impl Kv<'_> {
    async fn range(&self, request: proto::RangeRequest) -> Result<proto::RangeResponse, GrpcError> {
        self.client.unary(path::RANGE, &request, true).await
    }

    async fn txn(&self, request: proto::TxnRequest) -> Result<proto::TxnResponse, StorageError> {
        self.client
            .unary(path::TXN, &request, false)
            .await
            .map_err(storage_error)
    }

    pub async fn current_revision(&self) -> Result<Revision, StorageError> {
        let response = self
            .range(proto::RangeRequest {
                key: vec![0],
                count_only: true,
                ..Default::default()
            })
            .await
            .map_err(storage_error)?;
        Ok(header_revision(&response.header))
    }

    /// etcd's compacted revision. etcd does not report it in errors, so find the oldest
    /// revision it still reads, by bisection between what this store knew and now (a
    /// few dozen cheap count-only ranges, on error paths only).
    pub async fn compacted_revision(&self) -> Result<Revision, StorageError> {
        let readable = |revision: Revision| async move {
            match self
                .range(proto::RangeRequest {
                    key: vec![0],
                    count_only: true,
                    revision: revision as i64,
                    ..Default::default()
                })
                .await
            {
                Ok(_) => Ok(true),
                Err(e) if is_compacted(&e) => Ok(false),
                Err(e) => Err(storage_error(e)),
            }
        };
        let (mut low, mut high) = (
            self.compacted.load(Ordering::Acquire).max(1),
            self.current_revision().await?,
        );
        if readable(low).await? {
            return Ok(self.compacted.load(Ordering::Acquire));
        }
        // `low` is compacted away, `high` (the newest) never is.
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if readable(middle).await? {
                high = middle;
            } else {
                low = middle;
            }
        }
        self.compacted.fetch_max(high, Ordering::AcqRel);
        Ok(high)
    }

    /// The error for a read at `requested` that etcd refused as compacted or future.
    async fn revision_error(&self, requested: Revision, e: GrpcError) -> StorageError {
        if is_compacted(&e) {
            return match self.compacted_revision().await {
                Ok(compacted) => StorageError::Compacted {
                    requested,
                    compacted,
                },
                Err(e) => e,
            };
        }
        if is_future(&e) {
            return match self.current_revision().await {
                Ok(current) => StorageError::FutureRevision { requested, current },
                Err(e) => e,
            };
        }
        storage_error(e)
    }

    pub async fn get(&self, key: &str) -> Completion {
        let response = self
            .range(proto::RangeRequest {
                key: key.as_bytes().to_vec(),
                ..Default::default()
            })
            .await
            .map_err(storage_error)?;
        Ok(StorageOutput::Got {
            revision: header_revision(&response.header),
            kv: response.kvs.into_iter().next().map(key_value).transpose()?,
        })
    }

    /// `key` as it was at `revision` (`None` if absent then).
    pub async fn get_at(
        &self,
        key: &str,
        revision: Revision,
    ) -> Result<Option<KeyValue>, StorageError> {
        let request = proto::RangeRequest {
            key: key.as_bytes().to_vec(),
            revision: revision as i64,
            ..Default::default()
        };
        match self.range(request).await {
            Ok(response) => response.kvs.into_iter().next().map(key_value).transpose(),
            Err(e) => Err(self.revision_error(revision, e).await),
        }
    }

    pub async fn list(
        &self,
        prefix: &str,
        revision: Option<Revision>,
        start_after: Option<&str>,
        limit: Option<usize>,
    ) -> Result<ListPage, StorageError> {
        if revision == Some(0) {
            // etcd reads "revision 0" as "the newest"; the contract means the empty store
            // before the first write.
            let compacted = self.compacted.load(Ordering::Acquire);
            if compacted > 0 {
                return Err(StorageError::Compacted {
                    requested: 0,
                    compacted,
                });
            }
            return Ok(ListPage::default());
        }
        let mut from = match start_after {
            Some(after) if after >= prefix => [after.as_bytes(), &[0]].concat(),
            _ => prefix.as_bytes().to_vec(),
        };
        let range_end = prefix_end(prefix.as_bytes());
        let mut at = revision.unwrap_or(0);
        let mut items = Vec::new();
        loop {
            let want = match limit {
                Some(limit) => (limit - items.len()).min(LIST_PAGE as usize) as i64,
                None => LIST_PAGE,
            };
            let response = match self
                .range(proto::RangeRequest {
                    key: from.clone(),
                    range_end: range_end.clone(),
                    limit: want,
                    revision: at as i64,
                    count_only: false,
                })
                .await
            {
                Ok(response) => response,
                Err(e) => return Err(self.revision_error(at, e).await),
            };
            if at == 0 {
                at = header_revision(&response.header);
            }
            let count = response.count.max(0) as u64;
            let got = response.kvs.len() as u64;
            if let Some(last) = response.kvs.last() {
                from = [last.key.as_slice(), &[0]].concat();
            }
            for kv in response.kvs {
                items.push(key_value(kv)?);
            }
            let remaining = count.saturating_sub(got);
            let full = limit.is_some_and(|limit| items.len() >= limit);
            if !response.more || full {
                return Ok(ListPage {
                    items,
                    revision: at,
                    more: remaining > 0,
                    remaining,
                });
            }
        }
    }

    pub async fn create(&self, key: &str, value: Bytes) -> Completion {
        let response = self
            .txn(proto::TxnRequest {
                compare: vec![compare(
                    key,
                    compare_target::CREATE,
                    compare_result::EQUAL,
                    compare::TargetUnion::CreateRevision(0),
                )],
                success: vec![proto::RequestOp {
                    request: Some(request_op::Request::Put(proto::PutRequest {
                        key: key.as_bytes().to_vec(),
                        value: value.clone(),
                        prev_kv: false,
                    })),
                }],
                failure: vec![],
            })
            .await?;
        if !response.succeeded {
            return Err(StorageError::AlreadyExists {
                key: key.to_owned(),
            });
        }
        let revision = header_revision(&response.header);
        Ok(StorageOutput::Written(KeyValue {
            key: key.to_owned(),
            value,
            create_revision: revision,
            mod_revision: revision,
        }))
    }

    /// The compares for "the key exists and its mod_revision is `expected`".
    fn unchanged(key: &str, expected: Revision) -> Vec<proto::Compare> {
        vec![
            compare(
                key,
                compare_target::CREATE,
                compare_result::GREATER,
                compare::TargetUnion::CreateRevision(0),
            ),
            compare(
                key,
                compare_target::MOD,
                compare_result::EQUAL,
                compare::TargetUnion::ModRevision(expected as i64),
            ),
        ]
    }

    /// Why a conditional write's compares failed.
    fn refused(key: &str, now: Option<KeyValue>) -> StorageError {
        match now {
            None => StorageError::NotFound {
                key: key.to_owned(),
            },
            Some(current) => StorageError::Conflict {
                key: key.to_owned(),
                current,
            },
        }
    }

    pub async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Completion {
        let response = self
            .txn(proto::TxnRequest {
                compare: Self::unchanged(key, expected),
                success: vec![proto::RequestOp {
                    request: Some(request_op::Request::Put(proto::PutRequest {
                        key: key.as_bytes().to_vec(),
                        value: value.clone(),
                        prev_kv: true,
                    })),
                }],
                failure: vec![range_op(key)],
            })
            .await?;
        if !response.succeeded {
            return Err(Self::refused(key, failure_read(response)?));
        }
        let revision = header_revision(&response.header);
        let create_revision = match response
            .responses
            .into_iter()
            .next()
            .and_then(|r| r.response)
        {
            Some(response_op::Response::Put(put)) => put
                .prev_kv
                .map_or(revision, |p| p.create_revision as Revision),
            _ => {
                return Err(StorageError::Internal(
                    "etcd answered a put without its result".into(),
                ))
            }
        };
        Ok(StorageOutput::Written(KeyValue {
            key: key.to_owned(),
            value,
            create_revision,
            mod_revision: revision,
        }))
    }

    pub async fn delete(&self, key: &str, expected: Option<Revision>) -> Completion {
        let delete = request_op::Request::DeleteRange(proto::DeleteRangeRequest {
            key: key.as_bytes().to_vec(),
            range_end: vec![],
            prev_kv: true,
        });
        let response = self
            .txn(proto::TxnRequest {
                compare: match expected {
                    Some(expected) => Self::unchanged(key, expected),
                    None => vec![compare(
                        key,
                        compare_target::CREATE,
                        compare_result::GREATER,
                        compare::TargetUnion::CreateRevision(0),
                    )],
                },
                success: vec![proto::RequestOp {
                    request: Some(delete),
                }],
                failure: vec![range_op(key)],
            })
            .await?;
        if !response.succeeded {
            return Err(Self::refused(key, failure_read(response)?));
        }
        let revision = header_revision(&response.header);
        let prev = match response
            .responses
            .into_iter()
            .next()
            .and_then(|r| r.response)
        {
            Some(response_op::Response::DeleteRange(deleted)) => {
                deleted.prev_kvs.into_iter().next()
            }
            _ => None,
        }
        .ok_or_else(|| {
            StorageError::Internal("etcd answered a delete without the deleted value".into())
        })?;
        Ok(StorageOutput::Deleted {
            prev: key_value(prev)?,
            revision,
        })
    }

    /// The compactor's tick as kube-apiserver takes it, so that apiary and
    /// kube-apiserver processes sharing an etcd compact once per interval between them:
    /// claim the tick by bumping the version of `compact_rev_key` from the last count
    /// seen; the one that succeeds compacts to the revision of the previous tick, the
    /// others adopt the count.
    pub async fn compactor_tick(&self, last: CompactorTick) -> Result<CompactorTick, StorageError> {
        const KEY: &str = "compact_rev_key";
        let response = self
            .txn(proto::TxnRequest {
                compare: vec![proto::Compare {
                    result: compare_result::EQUAL,
                    target: compare_target::VERSION,
                    key: KEY.as_bytes().to_vec(),
                    target_union: Some(compare::TargetUnion::Version(last.claim)),
                }],
                success: vec![proto::RequestOp {
                    request: Some(request_op::Request::Put(proto::PutRequest {
                        key: KEY.as_bytes().to_vec(),
                        value: Bytes::from(last.revision.to_string()),
                        prev_kv: false,
                    })),
                }],
                failure: vec![range_op(KEY)],
            })
            .await?;
        let revision = header_revision(&response.header);
        if !response.succeeded {
            let claim = match response
                .responses
                .into_iter()
                .next()
                .and_then(|r| r.response)
            {
                Some(response_op::Response::Range(range)) => {
                    range.kvs.first().map_or(0, |kv| kv.version)
                }
                _ => last.claim,
            };
            return Ok(CompactorTick { revision, claim });
        }
        if last.revision > 0 {
            match self.compact(last.revision).await {
                Ok(_) | Err(StorageError::Compacted { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(CompactorTick {
            revision,
            claim: last.claim + 1,
        })
    }

    pub async fn compact(&self, revision: Revision) -> Completion {
        let request = proto::CompactionRequest {
            revision: revision as i64,
            physical: false,
        };
        match self
            .client
            .unary::<_, proto::CompactionResponse>(path::COMPACT, &request, false)
            .await
        {
            Ok(_) => {
                self.compacted.fetch_max(revision, Ordering::AcqRel);
                Ok(StorageOutput::Compacted)
            }
            Err(e) => match self.revision_error(revision, e).await {
                // Compacting to where history already starts changes nothing.
                StorageError::Compacted { compacted, .. } if compacted == revision => {
                    Ok(StorageOutput::Compacted)
                }
                other => Err(other),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_ends_as_etcd_computes_them() {
        assert_eq!(prefix_end(b"/registry/pods/"), b"/registry/pods0".to_vec());
        assert_eq!(prefix_end(b"a\xff"), b"b".to_vec());
        assert_eq!(prefix_end(b""), vec![0]);
    }
}

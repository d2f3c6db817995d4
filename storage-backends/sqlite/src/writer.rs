//! The writer thread: the only connection that writes. It takes every write waiting in
//! its queue, applies them in one transaction and commits once (group commit), so a
//! burst of N concurrent writes costs one fsync rather than N. Each request is answered
//! after the commit that made it durable. Between batches it clears compacted history
//! in small steps, so compaction never holds a write back for long.

use crate::reads::{internal, latest};
use crate::schema::{checkpoint, set_meta};
use crate::Common;
use apiary_core::storage::{
    Completion, KeyValue, Revision, StorageError, StorageOp, StorageOutput, WatchEvent,
};
use bytes::Bytes;
use rusqlite::{params, Connection, TransactionBehavior};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The most writes committed in one transaction.
const MAX_BATCH: usize = 1024;

/// How many revisions of history one compaction step clears: a few milliseconds of
/// work, after which queued writes go first.
const COMPACT_STEP: u64 = 250;

/// One write waiting for the writer, and where its answer goes.
pub(crate) struct Job {
    pub(crate) op: StorageOp,
    pub(crate) reply: async_channel::Sender<Completion>,
}

/// The writer's own view of the counters; the shared copies follow each commit.
pub(crate) struct Writer {
    conn: Connection,
    common: Arc<Common>,
    revision: Revision,
    compacted: Revision,
    /// History up to this revision has been cleared by compaction steps.
    compact_done: Revision,
    /// A compaction step failed; wait for the next compaction request to try again.
    compaction_stalled: bool,
    stats: BatchStats,
}

/// How well writes are grouped, logged at debug level every [`BatchStats::EVERY`].
struct BatchStats {
    since: std::time::Instant,
    writes: u64,
    commits: u64,
}

impl BatchStats {
    const EVERY: std::time::Duration = std::time::Duration::from_secs(10);

    fn record(&mut self, writes: usize) {
        self.writes += writes as u64;
        self.commits += 1;
        if self.since.elapsed() >= Self::EVERY {
            tracing::debug!(
                "sqlite: {} writes in {} commits ({:.1} per commit) in {:.0?}",
                self.writes,
                self.commits,
                self.writes as f64 / self.commits as f64,
                self.since.elapsed()
            );
            *self = Self::new();
        }
    }

    fn new() -> Self {
        Self {
            since: std::time::Instant::now(),
            writes: 0,
            commits: 0,
        }
    }
}

impl Writer {
    pub(crate) fn new(
        conn: Connection,
        common: Arc<Common>,
        revision: Revision,
        compacted: Revision,
        compact_done: Revision,
    ) -> Self {
        Self {
            conn,
            common,
            revision,
            compacted,
            compact_done,
            compaction_stalled: false,
            stats: BatchStats::new(),
        }
    }

    fn compaction_pending(&self) -> bool {
        self.compact_done < self.compacted && !self.compaction_stalled
    }

    /// Serve the queue until every sender is gone.
    pub(crate) fn run(mut self, jobs: async_channel::Receiver<Job>) {
        loop {
            let first = if self.compaction_pending() {
                match jobs.try_recv() {
                    Ok(job) => Some(job),
                    Err(async_channel::TryRecvError::Empty) => None,
                    Err(async_channel::TryRecvError::Closed) => return,
                }
            } else {
                match jobs.recv_blocking() {
                    Ok(job) => Some(job),
                    Err(async_channel::RecvError) => return,
                }
            };
            if let Some(first) = first {
                let mut batch = vec![first];
                while batch.len() < MAX_BATCH {
                    match jobs.try_recv() {
                        Ok(job) => batch.push(job),
                        Err(_) => break,
                    }
                }
                self.stats.record(batch.len());
                self.commit_batch(batch);
            }
            if self.compaction_pending() {
                self.compact_step();
            }
            if self.common.finish_checkpoint.swap(false, Ordering::AcqRel) {
                // Between batches no write is under way, so this copies every frame
                // left and the next commit starts the log over.
                if let Err(e) = checkpoint(&self.conn) {
                    tracing::warn!("sqlite checkpoint failed: {e}");
                }
            }
        }
    }

    /// Commit a batch and answer it. Should the transaction fail, nothing of it is kept;
    /// each write is then tried alone, so one write's failure is its own answer and
    /// not its neighbours'.
    fn commit_batch(&mut self, batch: Vec<Job>) {
        let ops: Vec<StorageOp> = batch.iter().map(|job| job.op.clone()).collect();
        match self.commit(ops) {
            Ok((outcomes, events)) => self.answer(batch, outcomes, &events),
            Err(e) if batch.len() == 1 => {
                tracing::error!("sqlite write failed: {e}");
                let _ = batch[0].reply.try_send(Err(internal(e)));
            }
            Err(e) => {
                tracing::warn!(
                    "sqlite batch of {} writes failed ({e}); retrying them one by one",
                    batch.len()
                );
                for job in batch {
                    self.commit_batch(vec![job]);
                }
            }
        }
    }

    fn answer(&self, batch: Vec<Job>, outcomes: Vec<Completion>, events: &[WatchEvent]) {
        self.common.set_counters(self.revision, self.compacted);
        self.common.registry.publish(events);
        for (job, outcome) in batch.into_iter().zip(outcomes) {
            // The caller may have gone away (its client disconnected); the write stands.
            let _ = job.reply.try_send(outcome);
        }
    }

    /// Apply `ops` in one transaction. On error the transaction is rolled back and the
    /// counters are as they were.
    fn commit(
        &mut self,
        ops: Vec<StorageOp>,
    ) -> rusqlite::Result<(Vec<Completion>, Vec<WatchEvent>)> {
        let (revision, compacted) = (self.revision, self.compacted);
        let mut counters = Counters {
            revision,
            compacted,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut events = Vec::new();
        let mut outcomes = Vec::with_capacity(ops.len());
        for op in ops {
            outcomes.push(apply(&tx, op, &mut counters, &mut events)?);
        }
        if counters.revision != revision {
            set_meta(&tx, "revision", counters.revision)?;
        }
        if counters.compacted != compacted {
            set_meta(&tx, "compacted", counters.compacted)?;
        }
        tx.commit()?;
        if counters.compacted != compacted {
            self.compaction_stalled = false;
        }
        self.revision = counters.revision;
        self.compacted = counters.compacted;
        Ok((outcomes, events))
    }

    /// Clear the history the next few revisions up to the compacted one make
    /// unreadable: the row each of their writes replaced (every readable revision now
    /// sees the newer row), and their own tombstones. Each row is cleared when the
    /// write that replaced it is, however far back it lies.
    fn compact_step(&mut self) {
        let target = self.compacted;
        let from = self.compact_done;
        let to = target.min(from + COMPACT_STEP);
        let step = |conn: &mut Connection| -> rusqlite::Result<usize> {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let replaced = tx
                .prepare_cached(
                    "DELETE FROM log WHERE revision IN (
                         SELECT prev_revision FROM log
                         WHERE revision > ?1 AND revision <= ?2 AND prev_revision IS NOT NULL)",
                )?
                .execute(params![from as i64, to as i64])?;
            let tombstones = tx
                .prepare_cached(
                    "DELETE FROM log WHERE revision > ?1 AND revision <= ?2 AND value IS NULL",
                )?
                .execute(params![from as i64, to as i64])?;
            set_meta(&tx, "compact_done", to)?;
            tx.commit()?;
            Ok(replaced + tombstones)
        };
        match step(&mut self.conn) {
            Ok(removed) => {
                tracing::trace!("compaction cleared {removed} rows in revisions {from}..={to}");
                self.compact_done = to;
            }
            Err(e) => {
                tracing::warn!(
                    "sqlite compaction step failed, retried at the next compaction: {e}"
                );
                self.compaction_stalled = true;
            }
        }
    }
}

/// The counters a batch advances as it goes.
struct Counters {
    revision: Revision,
    compacted: Revision,
}

/// Apply one write inside the batch's transaction. The outer error is a sqlite failure
/// (the batch is abandoned); the inner one is the contract's answer to this write.
fn apply(
    conn: &Connection,
    op: StorageOp,
    counters: &mut Counters,
    events: &mut Vec<WatchEvent>,
) -> rusqlite::Result<Completion> {
    Ok(match op {
        StorageOp::Create { key, value } => {
            if exists(conn, &key)? {
                return Ok(Err(StorageError::AlreadyExists { key }));
            }
            let revision = counters.revision + 1;
            let kv = write(conn, key, Some(value), revision, revision, None)?;
            counters.revision = revision;
            events.push(WatchEvent::Put {
                kv: kv.clone(),
                prev: None,
            });
            Ok(StorageOutput::Written(kv))
        }
        StorageOp::Update {
            key,
            value,
            expected_revision,
        } => {
            let Some(current) = latest(conn, &key)? else {
                return Ok(Err(StorageError::NotFound { key }));
            };
            if current.mod_revision != expected_revision {
                return Ok(Err(StorageError::Conflict { key, current }));
            }
            let revision = counters.revision + 1;
            let kv = write(
                conn,
                key,
                Some(value),
                current.create_revision,
                revision,
                Some(current.mod_revision),
            )?;
            counters.revision = revision;
            events.push(WatchEvent::Put {
                kv: kv.clone(),
                prev: Some(current),
            });
            Ok(StorageOutput::Written(kv))
        }
        StorageOp::Delete {
            key,
            expected_revision,
        } => {
            let Some(prev) = latest(conn, &key)? else {
                return Ok(Err(StorageError::NotFound { key }));
            };
            if expected_revision.is_some_and(|expected| expected != prev.mod_revision) {
                return Ok(Err(StorageError::Conflict { key, current: prev }));
            }
            let revision = counters.revision + 1;
            write(
                conn,
                key,
                None,
                prev.create_revision,
                revision,
                Some(prev.mod_revision),
            )?;
            counters.revision = revision;
            events.push(WatchEvent::Delete {
                prev: prev.clone(),
                revision,
            });
            Ok(StorageOutput::Deleted { prev, revision })
        }
        StorageOp::Compact { revision } => {
            if revision > counters.revision {
                Err(StorageError::FutureRevision {
                    requested: revision,
                    current: counters.revision,
                })
            } else if revision < counters.compacted {
                Err(StorageError::Compacted {
                    requested: revision,
                    compacted: counters.compacted,
                })
            } else {
                counters.compacted = revision;
                Ok(StorageOutput::Compacted)
            }
        }
        StorageOp::Get { .. } | StorageOp::List { .. } | StorageOp::CurrentRevision => Err(
            StorageError::Internal("a read was sent to the sqlite writer".to_owned()),
        ),
    })
}

/// Whether `key` is live: what a create must know, without reading its value.
fn exists(conn: &Connection, key: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM current WHERE key = ?1")?
        .exists([key.as_bytes()])
}

/// Append a row to the log and point `current` at it (or, for a delete's tombstone,
/// drop the key from `current`).
fn write(
    conn: &Connection,
    key: String,
    value: Option<Bytes>,
    create_revision: Revision,
    revision: Revision,
    prev_revision: Option<Revision>,
) -> rusqlite::Result<KeyValue> {
    conn.prepare_cached(
        "INSERT INTO log (revision, key, create_revision, prev_revision, value)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        revision as i64,
        key.as_bytes(),
        create_revision as i64,
        prev_revision.map(|r| r as i64),
        value.as_deref()
    ])?;
    if value.is_some() {
        conn.prepare_cached(
            "INSERT INTO current (key, revision) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET revision = excluded.revision",
        )?
        .execute(params![key.as_bytes(), revision as i64])?;
    } else {
        conn.prepare_cached("DELETE FROM current WHERE key = ?1")?
            .execute([key.as_bytes()])?;
    }
    Ok(KeyValue {
        key,
        value: value.unwrap_or_default(),
        create_revision,
        mod_revision: revision,
    })
}

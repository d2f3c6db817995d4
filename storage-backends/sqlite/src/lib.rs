//! Apiary's embedded storage backend: the whole storage contract in one sqlite file.
//!
//! - **Durable**: write-ahead logging with `synchronous=FULL` by default; a write is
//!   answered only after the commit that holds it reached the disk.
//! - **Group commit**: one writer thread owns the only writing connection. It takes
//!   every write queued while the previous commit ran and commits them together, so
//!   concurrent writers share fsyncs, and no two connections ever contend for sqlite's
//!   write lock (no `database is locked`).
//! - **Reads beside writes**: gets, lists and watch replays run on a pool of read
//!   connections on a blocking thread pool; in WAL mode they never wait for a commit.
//! - **Background compaction**: a compaction request only records the compacted
//!   revision; the writer clears the old rows a thousand revisions at a time between
//!   batches, and sqlite reuses the freed pages, so the file stops growing under a
//!   steady update load.
//!
//! See [`schema`](crate::schema) for the tables.

mod reads;
mod schema;
mod watch;
mod writer;

pub use schema::{OpenError, Synchronous, PAGE_SIZE};
pub use watch::SqliteWatch;

use apiary_core::storage::{Completion, Revision, Storage, StorageError, StorageOp, StorageOutput};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use watch::Registry;

/// How many live events a watch may leave unread before it is ended with an error.
pub const DEFAULT_WATCH_BACKLOG: usize = 100_000;

/// Idle read connections kept for reuse: opening one costs more than most reads.
const KEPT_READERS: usize = 16;

/// How often the write-ahead log is copied back into the database file. Checkpoints
/// run on their own connection, so the writer never stops for them.
const CHECKPOINT_INTERVAL: Duration = Duration::from_millis(500);

/// A checkpoint pass this quick left little behind; a slower one is followed by
/// another, at most [`CATCH_UP_PASSES`] in a row.
const QUICK_PASS: Duration = Duration::from_millis(2);
const CATCH_UP_PASSES: usize = 8;

/// Read connections' page cache (KiB): the OS caches the file too; keep each small.
const READER_CACHE_KIB: i64 = 1024;

/// How a [`SqliteStore`] is opened.
#[derive(Clone, Debug)]
pub struct SqliteOptions {
    pub synchronous: Synchronous,
    /// See [`DEFAULT_WATCH_BACKLOG`].
    pub watch_backlog: usize,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            synchronous: Synchronous::Full,
            watch_backlog: DEFAULT_WATCH_BACKLOG,
        }
    }
}

/// The sqlite store. Clones share one database, writer thread and set of watches.
#[derive(Clone)]
pub struct SqliteStore {
    shared: Arc<Shared>,
}

/// Owned by the store's clones: dropping the last one stops the threads.
struct Shared {
    jobs: Option<async_channel::Sender<writer::Job>>,
    writer: Option<std::thread::JoinHandle<()>>,
    checkpointer: Option<Checkpointer>,
    common: Arc<Common>,
}

/// What the writer, the readers and the watches share.
pub(crate) struct Common {
    path: PathBuf,
    readers: Mutex<Vec<Connection>>,
    pub(crate) registry: Registry,
    /// The newest committed revision and the compacted one, as of the last commit.
    revision: AtomicU64,
    compacted: AtomicU64,
    /// Set by the checkpointer: the writer should run a checkpoint between batches.
    pub(crate) finish_checkpoint: AtomicBool,
}

impl Common {
    pub(crate) fn compacted(&self) -> Revision {
        self.compacted.load(Ordering::Acquire)
    }

    pub(crate) fn set_counters(&self, revision: Revision, compacted: Revision) {
        self.revision.store(revision, Ordering::Release);
        self.compacted.store(compacted, Ordering::Release);
    }

    /// Run `read` with a read connection on the blocking thread pool: for reads that
    /// may take a while (lists, watch replays), so the caller's executor keeps going.
    pub(crate) async fn read<T: Send + 'static>(
        self: &Arc<Self>,
        read: impl FnOnce(&mut Connection) -> Result<T, StorageError> + Send + 'static,
    ) -> Result<T, StorageError> {
        let common = Arc::clone(self);
        blocking::unblock(move || common.read_here(read)).await
    }

    /// Run `read` with a read connection on this thread: for point reads, which take
    /// microseconds, less than handing them to another thread would.
    pub(crate) fn read_here<T>(
        &self,
        read: impl FnOnce(&mut Connection) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        let idle = self
            .readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut conn = match idle {
            Some(conn) => conn,
            None => open_reader(&self.path)?,
        };
        let result = read(&mut conn);
        let mut idle = self.readers.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < KEPT_READERS {
            idle.push(conn);
        }
        result
    }
}

fn open_reader(path: &Path) -> Result<Connection, StorageError> {
    let conn = schema::open_reader(path).map_err(reads::internal)?;
    conn.pragma_update(None, "cache_size", -READER_CACHE_KIB)
        .map_err(reads::internal)?;
    Ok(conn)
}

impl SqliteStore {
    /// Open the database at `path`, creating it (and its directory) when absent.
    ///
    /// An existing file is checked before it is used: a file that is not an apiary
    /// database, is corrupt, or cannot be read is an error naming the file and the
    /// cause. It is never replaced.
    pub fn open(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, OpenError> {
        let path = path.as_ref().to_path_buf();
        let conn = schema::open_writer(&path, options.synchronous)?;
        let read_counter = |name| {
            schema::meta(&conn, name).map_err(|e| {
                OpenError(format!(
                    "sqlite database {}: cannot read {name}: {e}",
                    path.display()
                ))
            })
        };
        let revision = read_counter("revision")?;
        let compacted = read_counter("compacted")?;
        let compact_done = read_counter("compact_done")?;
        let common = Arc::new(Common {
            path: path.clone(),
            readers: Mutex::new(Vec::new()),
            registry: Registry::new(revision, options.watch_backlog),
            revision: AtomicU64::new(revision),
            compacted: AtomicU64::new(compacted),
            finish_checkpoint: AtomicBool::new(false),
        });

        let (jobs, queue) = async_channel::bounded(4 * 1024);
        let writer =
            writer::Writer::new(conn, Arc::clone(&common), revision, compacted, compact_done);
        let writer = std::thread::Builder::new()
            .name("apiary-sqlite-writer".to_owned())
            .spawn(move || writer.run(queue))
            .map_err(|e| OpenError(format!("cannot start the sqlite writer thread: {e}")))?;
        let checkpointer = Checkpointer::spawn(&path, Arc::clone(&common))?;
        Ok(Self {
            shared: Arc::new(Shared {
                jobs: Some(jobs),
                writer: Some(writer),
                checkpointer: Some(checkpointer),
                common,
            }),
        })
    }

    /// The newest committed revision (0 before any write).
    pub fn current_revision(&self) -> Revision {
        self.shared.common.revision.load(Ordering::Acquire)
    }

    /// The revision history was compacted at (0 before any compaction).
    pub fn compacted_revision(&self) -> Revision {
        self.shared.common.compacted()
    }

    /// How many watches are open.
    pub fn watcher_count(&self) -> usize {
        self.shared.common.registry.watcher_count()
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.shared.common.path
    }

    async fn write(&self, op: StorageOp) -> Completion {
        let stopped = || StorageError::Unavailable("the sqlite writer has stopped".to_owned());
        let (reply, answer) = async_channel::bounded(1);
        let jobs = self.shared.jobs.as_ref().ok_or_else(stopped)?;
        jobs.send(writer::Job { op, reply })
            .await
            .map_err(|_| stopped())?;
        answer.recv().await.map_err(|_| stopped())?
    }
}

/// A thread that copies the write-ahead log back into the database every
/// [`CHECKPOINT_INTERVAL`], on a connection of its own, so the writer does not stop for
/// the bulk of that work.
///
/// A checkpoint running beside a busy writer never catches up with it, and sqlite
/// starts the log over only once every frame has been copied: left alone, the log
/// would grow for as long as writes keep coming. So after each of its checkpoints the
/// thread asks the writer to run one more between two batches; that one copies only
/// the frames written meanwhile, and lets the next commit start the log from the top.
struct Checkpointer {
    /// Dropped to stop the thread.
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Checkpointer {
    fn spawn(path: &Path, common: Arc<Common>) -> Result<Self, OpenError> {
        let conn = schema::open_reader(path)
            .and_then(|conn| conn.execute_batch("PRAGMA query_only = 0;").map(|()| conn))
            .map_err(|e| OpenError(format!("sqlite database {}: {e}", path.display())))?;
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("apiary-sqlite-checkpoint".to_owned())
            .spawn(move || {
                use std::sync::mpsc::RecvTimeoutError;
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(CHECKPOINT_INTERVAL)
                {
                    // Go again while a pass had much to copy (more was written
                    // meanwhile), so that what is left for the writer is little.
                    for _ in 0..CATCH_UP_PASSES {
                        let began = std::time::Instant::now();
                        match schema::checkpoint(&conn) {
                            Ok(0) => break,
                            Ok(_) => common.finish_checkpoint.store(true, Ordering::Release),
                            Err(e) => {
                                tracing::warn!("sqlite checkpoint failed: {e}");
                                break;
                            }
                        }
                        if began.elapsed() < QUICK_PASS {
                            break;
                        }
                    }
                }
            })
            .map_err(|e| OpenError(format!("cannot start the sqlite checkpoint thread: {e}")))?;
        Ok(Self { stop, thread })
    }

    fn stop(self) {
        drop(self.stop);
        let _ = self.thread.join();
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.common.registry.close();
        // Closing the queue lets the writer finish what is queued, then stop.
        self.jobs.take();
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
        if let Some(checkpointer) = self.checkpointer.take() {
            checkpointer.stop();
        }
    }
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path())
            .field("revision", &self.current_revision())
            .field("compacted", &self.compacted_revision())
            .finish()
    }
}

impl Storage for SqliteStore {
    type Watch = SqliteWatch;

    async fn run(&self, op: StorageOp) -> Completion {
        let common = &self.shared.common;
        match op {
            StorageOp::Get { key } => common
                .read_here(|conn| reads::get(conn, &key))
                .map(|(kv, revision)| StorageOutput::Got { kv, revision }),
            StorageOp::List {
                prefix,
                revision,
                start_after,
                limit,
            } => common
                .read(move |conn| {
                    reads::list(conn, &prefix, revision, start_after.as_deref(), limit)
                })
                .await
                .map(StorageOutput::Listed),
            StorageOp::CurrentRevision => Ok(StorageOutput::Revision(self.current_revision())),
            write => self.write(write).await,
        }
    }

    async fn watch(&self, prefix: &str, after: Revision) -> Result<SqliteWatch, StorageError> {
        SqliteWatch::open(&self.shared.common, prefix, after).await
    }
}

#[cfg(test)]
mod tests;

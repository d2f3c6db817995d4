//! The database file: its tables, how connections to it are set up, and the checks
//! made before it is trusted.
//!
//! - `log`: one row per write, keyed by its revision. A create or update stores the
//!   new value; a delete stores a tombstone (NULL value). `prev_revision` points at the
//!   row the write replaced: watch events carry the previous value, lists at an older
//!   revision find the version visible then, and compaction clears replaced rows, all
//!   without an index of rows by key (which would cost every write a second scattered
//!   b-tree update).
//! - `current`: for every live key, the revision of its latest row. Gets and lists at
//!   the newest revision read only this and the rows it points at.
//! - `meta`: the newest revision, the compacted revision, and how far the background
//!   compaction has cleared old rows.
//!
//! Keys are stored as BLOBs so that ranges compare bytes exactly as Rust strings and
//! etcd do, and a prefix's end can be any byte string.

use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::time::Duration;

/// The schema this code reads and writes (sqlite's `user_version`).
pub(crate) const SCHEMA_VERSION: i64 = 1;

const CREATE_TABLES: &str = "
CREATE TABLE log (
    revision INTEGER PRIMARY KEY,
    key BLOB NOT NULL,
    create_revision INTEGER NOT NULL,
    prev_revision INTEGER,
    value BLOB
);
CREATE TABLE current (
    key BLOB PRIMARY KEY,
    revision INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE meta (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO meta (name, value) VALUES ('revision', 0), ('compacted', 0), ('compact_done', 0);
";

/// The page size of new databases: sqlite's default. Each write dirties about one
/// scattered leaf page (its key's entry in `current`) beside the appended log rows.
pub const PAGE_SIZE: u32 = 4096;

/// How long a connection waits for a lock before giving up. Only the writer thread
/// writes, so this covers sqlite's own short locks (WAL recovery, checkpoints).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How durable a commit is before its requests are answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// fsync the write-ahead log at every commit: an answered write survives a power
    /// loss. The default.
    #[default]
    Full,
    /// fsync only at checkpoints: an answered write survives a crash of apiary, but the
    /// last commits may be lost if the machine loses power.
    Normal,
}

impl Synchronous {
    fn pragma(self) -> &'static str {
        match self {
            Self::Full => "FULL",
            Self::Normal => "NORMAL",
        }
    }
}

/// Why the database cannot be used. The message names the file and the cause.
#[derive(Debug)]
pub struct OpenError(pub(crate) String);

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OpenError {}

/// Open (creating when absent) the database for the writer: WAL mode, the requested
/// durability, the tables created on first use, and an integrity check of what is
/// there. An unreadable, corrupt or foreign file is an error; it is never replaced.
pub(crate) fn open_writer(path: &Path, synchronous: Synchronous) -> Result<Connection, OpenError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        OpenError(format!("sqlite database {}: {what}: {e}", path.display()))
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| fail("cannot create its directory", &e))?;
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| fail("cannot open", &e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| fail("cannot configure", &e))?;
    // Only a new database takes it; an existing one keeps the size it was made with.
    conn.execute_batch(&format!("PRAGMA page_size = {PAGE_SIZE};"))
        .map_err(|e| fail("not a usable sqlite database", &e))?;
    // The first statement that reads the file tells a foreign or corrupt header apart.
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .map_err(|e| fail("not a usable sqlite database", &e))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(fail("cannot use write-ahead logging", &mode));
    }
    conn.execute_batch(&format!(
        "PRAGMA synchronous = {};
         PRAGMA wal_autocheckpoint = 0;
         PRAGMA journal_size_limit = 67108864;",
        synchronous.pragma()
    ))
    .map_err(|e| fail("cannot configure", &e))?;

    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(|e| fail("cannot read its schema version", &e))?;
    match version {
        0 => {
            let tables: i64 = conn
                .query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))
                .map_err(|e| fail("cannot read its schema", &e))?;
            if tables > 0 {
                return Err(fail(
                    "not an apiary database",
                    &"it holds tables apiary did not create",
                ));
            }
            conn.execute_batch(&format!(
                "BEGIN IMMEDIATE; {CREATE_TABLES} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            ))
            .map_err(|e| fail("cannot create its tables", &e))?;
        }
        SCHEMA_VERSION => check_integrity(&conn).map_err(|e| fail("corrupt", &e))?,
        other => {
            return Err(fail(
                "unsupported schema version",
                &format!("{other} (this apiary reads version {SCHEMA_VERSION})"),
            ))
        }
    }
    Ok(conn)
}

/// sqlite's quick check (page and index structure) plus the rows apiary relies on.
fn check_integrity(conn: &Connection) -> Result<(), String> {
    let verdict: String = conn
        .query_row("PRAGMA quick_check(1)", [], |row| row.get(0))
        .map_err(|e| e.to_string())?;
    if verdict != "ok" {
        return Err(verdict);
    }
    let meta: i64 = conn
        .query_row(
            "SELECT count(*) FROM meta WHERE name IN ('revision', 'compacted', 'compact_done')",
            [],
            |row| row.get(0),
        )
        .map_err(|e| e.to_string())?;
    if meta != 3 {
        return Err("its meta table is incomplete".to_owned());
    }
    Ok(())
}

/// A connection for reads (and the checkpointer). Opened after the writer, so the
/// file and its tables exist.
pub(crate) fn open_reader(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.execute_batch("PRAGMA query_only = 1;")?;
    Ok(conn)
}

/// Copy what the write-ahead log holds back into the database, as far as readers allow,
/// without waiting for anyone; returns how many frames the log holds.
pub(crate) fn checkpoint(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| row.get(1))
}

/// Read one of the `meta` counters.
pub(crate) fn meta(conn: &Connection, name: &str) -> rusqlite::Result<u64> {
    let value: i64 = conn
        .prepare_cached("SELECT value FROM meta WHERE name = ?1")?
        .query_row([name], |row| row.get(0))?;
    Ok(value as u64)
}

/// Set one of the `meta` counters.
pub(crate) fn set_meta(conn: &Connection, name: &str, value: u64) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE meta SET value = ?2 WHERE name = ?1")?
        .execute(rusqlite::params![name, value as i64])?;
    Ok(())
}

/// The first byte string after every key that starts with `prefix`, or `None` when no
/// such bound exists (an empty prefix, or one of all 0xFF bytes).
pub(crate) fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_end_is_the_next_byte_string() {
        assert_eq!(
            prefix_end(b"/registry/pods/"),
            Some(b"/registry/pods0".to_vec())
        );
        assert_eq!(prefix_end(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff\xff"), None);
        assert_eq!(prefix_end(b""), None);
    }
}

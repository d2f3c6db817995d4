//! Reads: get, list and the rows a watch replays, each inside one read transaction so
//! that what it returns is one consistent snapshot. In WAL mode a read never waits for
//! the writer, and the writer never waits for it.

use crate::schema::{meta, prefix_end};
use apiary_core::storage::{KeyValue, ListPage, Revision, StorageError, WatchEvent};
use bytes::Bytes;
use rusqlite::{params, Connection, OptionalExtension as _, Row};
use std::collections::BTreeMap;

/// Turn a sqlite failure into the contract's error.
pub(crate) fn internal(e: rusqlite::Error) -> StorageError {
    StorageError::Internal(format!("sqlite: {e}"))
}

/// Keys are written from Rust strings, so they read back as UTF-8; anything else means
/// the file was altered behind apiary's back.
pub(crate) fn key_from(bytes: Vec<u8>) -> rusqlite::Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Blob, Box::new(e))
    })
}

/// A row of `key, value, create_revision, revision` as a [`KeyValue`].
fn key_value(row: &Row<'_>) -> rusqlite::Result<KeyValue> {
    Ok(KeyValue {
        key: key_from(row.get(0)?)?,
        value: Bytes::from(row.get::<_, Vec<u8>>(1)?),
        create_revision: row.get::<_, i64>(2)? as Revision,
        mod_revision: row.get::<_, i64>(3)? as Revision,
    })
}

/// The latest live version of `key`, as the writer and readers both look it up.
pub(crate) fn latest(conn: &Connection, key: &str) -> rusqlite::Result<Option<KeyValue>> {
    conn.prepare_cached(
        "SELECT c.key, l.value, l.create_revision, l.revision
         FROM current c JOIN log l ON l.revision = c.revision
         WHERE c.key = ?1",
    )?
    .query_row([key.as_bytes()], key_value)
    .optional()
}

/// `Get`: the key's latest value and the revision it was read at.
pub(crate) fn get(
    conn: &mut Connection,
    key: &str,
) -> Result<(Option<KeyValue>, Revision), StorageError> {
    let tx = conn.transaction().map_err(internal)?;
    let kv = latest(&tx, key).map_err(internal)?;
    let revision = meta(&tx, "revision").map_err(internal)?;
    tx.finish().map_err(internal)?;
    Ok((kv, revision))
}

/// `List`: keys under `prefix` as of `revision` (the newest when `None`), strictly
/// after `start_after`, at most `limit` of them, with how many remain.
pub(crate) fn list(
    conn: &mut Connection,
    prefix: &str,
    revision: Option<Revision>,
    start_after: Option<&str>,
    limit: Option<usize>,
) -> Result<ListPage, StorageError> {
    let tx = conn.transaction().map_err(internal)?;
    let newest = meta(&tx, "revision").map_err(internal)?;
    let compacted = meta(&tx, "compacted").map_err(internal)?;
    let at = revision.unwrap_or(newest);
    if at > newest {
        return Err(StorageError::FutureRevision {
            requested: at,
            current: newest,
        });
    }
    if at < compacted {
        return Err(StorageError::Compacted {
            requested: at,
            compacted,
        });
    }
    // Scan from the prefix, or from just past `start_after` when that is further
    // along (the smallest byte string above it is itself followed by a zero byte).
    let lower = match start_after {
        Some(after) if after >= prefix => [after.as_bytes(), &[0]].concat(),
        _ => prefix.as_bytes().to_vec(),
    };
    let upper = upper_bound(prefix);
    let limit = limit.map_or(i64::MAX, |n| n.min(i64::MAX as usize) as i64);

    let page = if at == newest {
        list_newest(&tx, &lower, &upper, limit)
    } else {
        list_at(&tx, &lower, &upper, at, limit)
    }
    .map_err(internal)?;
    tx.finish().map_err(internal)?;
    let (items, remaining) = page;
    Ok(ListPage {
        items,
        revision: at,
        more: remaining > 0,
        remaining,
    })
}

/// The first byte string past every key under `prefix`. Keys are UTF-8, which never
/// holds a 0xFF byte, so `[0xFF]` is above them all when the prefix has no end.
fn upper_bound(prefix: &str) -> Vec<u8> {
    prefix_end(prefix.as_bytes()).unwrap_or_else(|| vec![0xFF])
}

/// A list at the newest revision reads `current` alone, in key order.
fn list_newest(
    conn: &Connection,
    lower: &[u8],
    upper: &[u8],
    limit: i64,
) -> rusqlite::Result<(Vec<KeyValue>, u64)> {
    let items = conn
        .prepare_cached(
            "SELECT c.key, l.value, l.create_revision, l.revision
             FROM current c JOIN log l ON l.revision = c.revision
             WHERE c.key >= ?1 AND c.key < ?2
             ORDER BY c.key LIMIT ?3",
        )?
        .query_map(params![lower, upper, limit], key_value)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let remaining = match items.last() {
        Some(last) if items.len() as i64 == limit => conn
            .prepare_cached("SELECT count(*) FROM current WHERE key > ?1 AND key < ?2")?
            .query_row(params![last.key.as_bytes(), upper], |row| {
                row.get::<_, i64>(0)
            })? as u64,
        _ => 0,
    };
    Ok((items, remaining))
}

/// A list at an older revision, from the keys' current rows and the writes made since.
///
/// A key no write touched after `at` reads as it does now. For a key written after
/// `at`, its first such write points (`prev_revision`) at the row it replaced: the
/// version visible at `at`, or none when that write created the key. Compaction keeps
/// exactly those rows (it clears a row only once the write that replaced it is itself
/// at or below the compacted revision), so this needs no index of rows by key, and
/// each write updates one b-tree fewer.
fn list_at(
    conn: &Connection,
    lower: &[u8],
    upper: &[u8],
    at: Revision,
    limit: i64,
) -> rusqlite::Result<(Vec<KeyValue>, u64)> {
    // Key -> the revision visible at `at`, for keys written since.
    let mut changed: BTreeMap<Vec<u8>, Option<Revision>> = BTreeMap::new();
    {
        let mut statement = conn.prepare_cached(
            "SELECT key, prev_revision FROM log
             WHERE revision > ?1 AND key >= ?2 AND key < ?3 ORDER BY revision",
        )?;
        let mut rows = statement.query(params![at as i64, lower, upper])?;
        while let Some(row) = rows.next()? {
            let prev: Option<i64> = row.get(1)?;
            changed
                .entry(row.get(0)?)
                .or_insert(prev.map(|r| r as Revision));
        }
    }
    // Merge them, in key order, with the keys' current rows.
    let mut visible: Vec<Revision> = Vec::new();
    let mut remaining = 0u64;
    let mut take = |revision: Option<Revision>| {
        if let Some(revision) = revision {
            if (visible.len() as i64) < limit {
                visible.push(revision);
            } else {
                remaining += 1;
            }
        }
    };
    let mut pending = changed.iter().peekable();
    let mut statement = conn.prepare_cached(
        "SELECT key, revision FROM current WHERE key >= ?1 AND key < ?2 ORDER BY key",
    )?;
    let mut rows = statement.query(params![lower, upper])?;
    while let Some(row) = rows.next()? {
        let key: Vec<u8> = row.get(0)?;
        while let Some((_, revision)) = pending.next_if(|(changed, _)| **changed < key) {
            take(*revision);
        }
        match pending.next_if(|(changed, _)| **changed == key) {
            Some((_, revision)) => take(*revision),
            None => take(Some(row.get::<_, i64>(1)? as Revision)),
        }
    }
    for (_, revision) in pending {
        take(*revision);
    }
    let mut fetch = conn.prepare_cached(
        "SELECT key, value, create_revision, revision FROM log WHERE revision = ?1",
    )?;
    let items = visible
        .into_iter()
        .map(|revision| fetch.query_row([revision as i64], key_value))
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok((items, remaining))
}

/// How many log rows one replay read returns at most.
pub(crate) const REPLAY_CHUNK: usize = 1000;

/// The changes under `prefix` with revisions in `(after, until]`, oldest first, at most
/// [`REPLAY_CHUNK`] of them. Fails with `Compacted` once compaction has cleared rows
/// past `after` (a compaction only recorded, not yet carried out, removed nothing).
pub(crate) fn replay(
    conn: &mut Connection,
    prefix: &str,
    after: Revision,
    until: Revision,
) -> Result<Vec<WatchEvent>, StorageError> {
    let tx = conn.transaction().map_err(internal)?;
    let cleared = meta(&tx, "compact_done").map_err(internal)?;
    if after < cleared {
        let compacted = meta(&tx, "compacted").map_err(internal)?;
        return Err(StorageError::Compacted {
            requested: after,
            compacted,
        });
    }
    let upper = upper_bound(prefix);
    let events = tx
        .prepare_cached(
            "SELECT l.key, l.value, l.create_revision, l.revision, l.prev_revision, p.value
             FROM log l LEFT JOIN log p ON p.revision = l.prev_revision
             WHERE l.revision > ?1 AND l.revision <= ?2 AND l.key >= ?3 AND l.key < ?4
             ORDER BY l.revision LIMIT ?5",
        )
        .map_err(internal)?
        .query_map(
            params![
                after as i64,
                until as i64,
                prefix.as_bytes(),
                upper,
                REPLAY_CHUNK as i64
            ],
            event,
        )
        .map_err(internal)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(internal)?;
    tx.finish().map_err(internal)?;
    Ok(events)
}

/// A log row, joined with the row it replaced, as a watch event.
fn event(row: &Row<'_>) -> rusqlite::Result<WatchEvent> {
    let key = key_from(row.get(0)?)?;
    let value: Option<Vec<u8>> = row.get(1)?;
    let create_revision = row.get::<_, i64>(2)? as Revision;
    let revision = row.get::<_, i64>(3)? as Revision;
    let prev_revision: Option<i64> = row.get(4)?;
    let prev_value: Option<Vec<u8>> = row.get(5)?;
    let prev = match (prev_revision, prev_value) {
        (Some(prev_revision), Some(value)) => Some(KeyValue {
            key: key.clone(),
            value: Bytes::from(value),
            create_revision,
            mod_revision: prev_revision as Revision,
        }),
        _ => None,
    };
    Ok(match value {
        Some(value) => WatchEvent::Put {
            kv: KeyValue {
                key,
                value: Bytes::from(value),
                create_revision,
                mod_revision: revision,
            },
            prev,
        },
        None => WatchEvent::Delete {
            prev: prev.ok_or(rusqlite::Error::InvalidColumnType(
                5,
                "prev value of a delete".to_owned(),
                rusqlite::types::Type::Null,
            ))?,
            revision,
        },
    })
}

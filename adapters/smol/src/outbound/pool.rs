//! Idle keep-alive connections, by where they lead and how they were secured, so that
//! a webhook called for every request costs one TLS handshake, not one per call.

use super::conn::{Conn, Target};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Idle connections kept per destination (client-go's transports keep 25).
const MAX_IDLE_PER_KEY: usize = 25;
/// Idle connections kept in all (Go's `MaxIdleConns` default).
const MAX_IDLE: usize = 100;
/// How long a connection may sit idle before it is closed (Go's `IdleConnTimeout`).
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// What connections may be shared by: the destination and the TLS configuration's
/// identity (0: plain HTTP).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct PoolKey {
    pub(super) target: Target,
    pub(super) tls: u64,
}

/// A connection waiting for its next request.
struct Idle {
    conn: Conn,
    since: Instant,
}

#[derive(Default)]
pub(super) struct Pool {
    idle: Mutex<HashMap<PoolKey, Vec<Idle>>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        f.debug_map()
            .entries(idle.iter().map(|(key, conns)| (key, conns.len())))
            .finish()
    }
}

impl Pool {
    /// The most recently used connection to `key` that has not idled too long.
    pub(super) fn take(&self, key: &PoolKey) -> Option<Conn> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let conns = idle.get_mut(key)?;
        let now = Instant::now();
        // Expired ones are the oldest, at the front.
        conns.retain(|c| now.duration_since(c.since) < IDLE_TIMEOUT);
        let conn = conns.pop().map(|c| c.conn);
        if conns.is_empty() {
            idle.remove(key);
        }
        conn
    }

    /// Keep `conn` for the next request to `key`, unless enough are kept already.
    pub(super) fn put(&self, key: PoolKey, conn: Conn) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        idle.retain(|_, conns| {
            conns.retain(|c| now.duration_since(c.since) < IDLE_TIMEOUT);
            !conns.is_empty()
        });
        if idle.values().map(Vec::len).sum::<usize>() >= MAX_IDLE {
            return;
        }
        let conns = idle.entry(key).or_default();
        if conns.len() < MAX_IDLE_PER_KEY {
            conns.push(Idle { conn, since: now });
        }
    }
}

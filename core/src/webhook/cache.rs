//! Answers kept for a time: a webhook is asked once per question per TTL, as
//! upstream's webhook caches do. Time is the server's monotonic clock, so the cache is
//! as deterministic as the rest of the core.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// More entries than this and the expired ones are dropped; if that is not enough,
/// all of them (a flood of distinct questions must not grow memory without bound).
const CAPACITY: usize = 4096;

#[derive(Debug, Default)]
pub struct TtlCache<V> {
    entries: Mutex<HashMap<String, (V, Duration)>>,
}

impl<V: Clone> TtlCache<V> {
    pub fn new() -> TtlCache<V> {
        TtlCache {
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The answer kept for `key`, unless it expired by `now`.
    pub fn get(&self, key: &str, now: Duration) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.get(key).filter(|(_, until)| *until > now).map(|(v, _)| v.clone())
    }

    /// Keep `value` for `key` until `ttl` after `now`; a zero TTL keeps nothing.
    pub fn put(&self, key: String, value: V, now: Duration, ttl: Duration) {
        if ttl.is_zero() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= CAPACITY {
            entries.retain(|_, (_, until)| *until > now);
            if entries.len() >= CAPACITY {
                entries.clear();
            }
        }
        entries.insert(key, (value, now + ttl));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_expire_and_the_cache_stays_bounded() {
        let cache = TtlCache::new();
        let s = Duration::from_secs;
        cache.put("a".into(), 1, s(10), s(5));
        assert_eq!(cache.get("a", s(14)), Some(1));
        assert_eq!(cache.get("a", s(15)), None);
        cache.put("z".into(), 2, s(0), Duration::ZERO);
        assert_eq!(cache.get("z", s(0)), None);
        for i in 0..10_000 {
            cache.put(format!("k{i}"), i, s(20), s(60));
        }
        assert!(cache.entries.lock().unwrap().len() <= CAPACITY);
    }
}

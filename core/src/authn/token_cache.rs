//! Upstream's cache of bearer-token answers (`--token-auth-cache`, on in kube-apiserver
//! with a success TTL of 10 s and failures not cached): a token that authenticated is
//! taken at its word for 10 s without verifying its signature or looking up its
//! ServiceAccount again. So, as upstream, a token of a ServiceAccount just deleted may
//! work for up to 10 s more.

use super::TokenUser;
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Mutex;
use std::time::Duration;

/// How long an answer is kept (upstream's `TokenSuccessCacheTTL`).
pub const SUCCESS_TTL: Duration = Duration::from_secs(10);
/// More tokens than this and the expired ones are dropped; if that is not enough,
/// all of them (a flood of distinct valid tokens must not grow memory without bound).
const MAX_ENTRIES: usize = 16_384;
/// How much of the token's end is hashed to find its entry. The end of a JWS is its
/// signature, which differs between tokens; a hit is confirmed by comparing the whole
/// token, so a token that shares an end with another never takes its answer.
const HASHED_TAIL: usize = 128;

/// One token's answer.
#[derive(Debug)]
struct Entry {
    token: Box<str>,
    audiences: Option<Vec<String>>,
    until: Duration,
    user: TokenUser,
}

/// Bearer tokens and who they proved to be, for [`SUCCESS_TTL`]. Entries are found by a
/// keyed hash of the token's end and the audiences asked for (hashing a whole token of a
/// kilobyte on every request costs more than the rest of authentication) and confirmed
/// by comparing the whole token. The tokens are kept in memory for the TTL, as the
/// requests that carried them are.
#[derive(Debug, Default)]
pub struct TokenCache {
    hasher: RandomState,
    entries: Mutex<HashMap<u64, Vec<Entry>>>,
}

impl TokenCache {
    fn key(&self, token: &str, audiences: Option<&[String]>) -> u64 {
        let tail = &token.as_bytes()[token.len().saturating_sub(HASHED_TAIL)..];
        self.hasher.hash_one((tail, token.len(), audiences))
    }

    /// The answer for `token` asked for `audiences`, unless it expired by `now`.
    pub fn get(&self, token: &str, audiences: Option<&[String]>, now: Duration) -> Option<TokenUser> {
        let key = self.key(token, audiences);
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(&key)?
            .iter()
            .find(|e| now < e.until && *e.token == *token && e.audiences.as_deref() == audiences)
            .map(|e| e.user.clone())
    }

    /// Keep `user` as the answer for `token` and `audiences` from `now`.
    pub fn put(&self, token: &str, audiences: Option<&[String]>, user: &TokenUser, now: Duration) {
        let key = self.key(token, audiences);
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, list| {
                list.retain(|e| now < e.until);
                !list.is_empty()
            });
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        let list = entries.entry(key).or_default();
        list.retain(|e| now < e.until && !(*e.token == *token && e.audiences.as_deref() == audiences));
        list.push(Entry {
            token: token.into(),
            audiences: audiences.map(<[String]>::to_vec),
            until: now + SUCCESS_TTL,
            user: user.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authn::UserInfo;

    #[test]
    fn answers_last_ten_seconds_per_token_and_audiences() {
        let cache = TokenCache::default();
        let user = TokenUser {
            user: UserInfo::named("u", vec![]),
            audiences: vec!["api".into()],
        };
        let t = Duration::from_secs(100);
        cache.put("tok", None, &user, t);
        assert_eq!(cache.get("tok", None, t + Duration::from_secs(9)), Some(user.clone()));
        assert_eq!(cache.get("tok", None, t + SUCCESS_TTL), None);
        assert_eq!(cache.get("other", None, t), None);
        assert_eq!(cache.get("tok", Some(&["api".to_owned()]), t), None, "other audiences, other answer");
        assert_eq!(cache.get("tok", Some(&[]), t), None);
    }

    #[test]
    fn a_token_sharing_another_ones_end_does_not_take_its_answer() {
        let cache = TokenCache::default();
        let user = TokenUser {
            user: UserInfo::named("victim", vec![]),
            audiences: vec![],
        };
        let signature = "s".repeat(300);
        let genuine = format!("header.victim.{signature}");
        let forged = format!("header.forger.{signature}");
        let t = Duration::from_secs(1);
        cache.put(&genuine, None, &user, t);
        assert_eq!(cache.get(&genuine, None, t), Some(user));
        assert_eq!(cache.get(&forged, None, t), None);
    }
}

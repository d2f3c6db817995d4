//! Upstream's cache of bearer-token answers (`--token-auth-cache`, on in kube-apiserver
//! with a success TTL of 10 s and failures not cached): a token that authenticated is
//! taken at its word for 10 s without verifying its signature or looking up its
//! ServiceAccount again. So, as upstream, a token of a ServiceAccount just deleted may
//! work for up to 10 s more.

use super::TokenUser;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// How long an answer is kept (upstream's `TokenSuccessCacheTTL`).
pub const SUCCESS_TTL: Duration = Duration::from_secs(10);
/// More entries than this and the expired ones are dropped; if that is not enough, all.
const MAX_ENTRIES: usize = 16_384;

/// Answers by a digest of the token and the audiences asked for, each until a time on
/// the monotonic clock.
#[derive(Debug, Default)]
pub struct TokenCache {
    entries: Mutex<HashMap<[u8; 32], (Duration, TokenUser)>>,
}

/// The key of a token asked for `audiences`; the token itself is not kept.
fn key(token: &str, audiences: Option<&[String]>) -> [u8; 32] {
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    for audience in audiences.into_iter().flatten() {
        context.update(&(audience.len() as u64).to_be_bytes());
        context.update(audience.as_bytes());
    }
    context.update(&[u8::from(audiences.is_some())]);
    context.update(token.as_bytes());
    context.finish().as_ref().try_into().expect("SHA-256 is 32 bytes")
}

impl TokenCache {
    /// The answer for `token` still fresh at `now`.
    pub fn get(&self, token: &str, audiences: Option<&[String]>, now: Duration) -> Option<TokenUser> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        match entries.get(&key(token, audiences)) {
            Some((until, user)) if now < *until => Some(user.clone()),
            _ => None,
        }
    }

    /// Keep `user` as the answer for `token` from `now` on.
    pub fn put(&self, token: &str, audiences: Option<&[String]>, user: &TokenUser, now: Duration) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, (until, _)| now < *until);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(key(token, audiences), (now + SUCCESS_TTL, user.clone()));
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
}

//! The webhook token authenticator (`--authentication-token-webhook-config-file`), as
//! upstream's asks: a TokenReview (v1beta1 by default, or v1) POSTed to the service a
//! kubeconfig names, for a bearer token no other authenticator knows. Answers, yes or
//! no, are kept `--authentication-token-webhook-cache-ttl` (2m).

use super::{authenticated, TokenUser, UserInfo};
use crate::effect::{CallOutcome, Outbound};
use crate::rest::object::strings;
use crate::webhook::{self, cache::TtlCache, Version, Webhook};
use serde_json::{json, Value};
use std::time::Duration;

/// How the webhook token authenticator is set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenWebhookConfig {
    pub webhook: Webhook,
    pub version: Version,
    pub cache_ttl: Duration,
}

impl TokenWebhookConfig {
    /// Upstream's defaults for `webhook`.
    pub fn new(webhook: Webhook) -> Self {
        TokenWebhookConfig {
            webhook,
            version: Version::V1beta1,
            cache_ttl: Duration::from_secs(120),
        }
    }
}

/// The webhook token authenticator of a running server.
#[derive(Debug)]
pub struct TokenWebhook {
    pub config: TokenWebhookConfig,
    /// By token and audiences (the review's spec): the user, or `None` for a no.
    cache: TtlCache<Option<TokenUser>>,
}

impl TokenWebhook {
    pub fn new(config: TokenWebhookConfig) -> Self {
        TokenWebhook {
            config,
            cache: TtlCache::new(),
        }
    }

    fn review(&self, token: &str, audiences: &[String]) -> String {
        let mut spec = json!({"token": token});
        if !audiences.is_empty() {
            spec["audiences"] = json!(audiences);
        }
        json!({
            "apiVersion": format!("authentication.k8s.io/{}", self.config.version.as_str()),
            "kind": "TokenReview",
            "metadata": {"creationTimestamp": null},
            "spec": spec,
            "status": {"user": {}},
        })
        .to_string()
    }

    /// The kept answer for `token`: `Some(None)` is a kept no.
    pub fn cached(&self, token: &str, audiences: &[String], now: Duration) -> Option<Option<TokenUser>> {
        self.cache.get(&self.review(token, audiences), now)
    }

    /// The request that asks about `token`.
    pub fn ask(&self, token: &str, audiences: &[String]) -> Outbound {
        self.config.webhook.post(self.review(token, audiences).into_bytes())
    }

    /// The webhook's answer about `token`, kept for the TTL (a failed call is not
    /// kept): the user, or `None`.
    pub fn answered(&self, token: &str, audiences: &[String], outcome: CallOutcome, now: Duration) -> Option<TokenUser> {
        let body = match webhook::answer_body(outcome) {
            Ok(body) => body,
            Err(e) => {
                tracing::warn!("the token webhook gave no answer: {e}");
                return None;
            }
        };
        let found = user_of(&body, audiences);
        self.cache.put(self.review(token, audiences), found.clone(), now, self.config.cache_ttl);
        found
    }
}

/// The user a TokenReview's status names, when it says authenticated (and, when
/// audiences were asked for, it accepted one of them).
fn user_of(review: &Value, audiences: &[String]) -> Option<TokenUser> {
    let status = review.get("status")?;
    if status.get("authenticated").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let answered: Vec<String> = strings(status.get("audiences"));
    // A webhook that names no audiences accepted the ones asked, as upstream reads it.
    let accepted = match (audiences.is_empty(), answered.is_empty()) {
        (true, _) => answered,
        (false, true) => audiences.to_vec(),
        (false, false) => {
            let met: Vec<String> = answered.into_iter().filter(|a| audiences.contains(a)).collect();
            if met.is_empty() {
                return None;
            }
            met
        }
    };
    let user = status.get("user")?;
    let name = user.get("username").and_then(Value::as_str).unwrap_or("");
    if name.is_empty() {
        return None;
    }
    let extra = user
        .get("extra")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), strings(Some(v)))).collect())
        .unwrap_or_default();
    let info = UserInfo {
        name: name.to_owned(),
        uid: user.get("uid").and_then(Value::as_str).unwrap_or("").to_owned(),
        groups: strings(user.get("groups")),
        extra,
    };
    Some(TokenUser {
        user: authenticated(info),
        audiences: accepted,
    })
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_review_names_the_user_only_when_authenticated() {
        let yes = json!({"status": {"authenticated": true, "user": {"username": "jane", "uid": "42", "groups": ["dev"], "extra": {"scope": ["a"]}}}});
        let found = user_of(&yes, &[]).unwrap();
        assert_eq!(found.user.name, "jane");
        assert_eq!(found.user.groups, ["dev", "system:authenticated"]);
        assert_eq!(found.user.extra["scope"], ["a"]);
        assert_eq!(user_of(&json!({"status": {"authenticated": false}}), &[]), None);
        assert_eq!(user_of(&json!({"status": {"authenticated": true, "user": {}}}), &[]), None);
        let api = vec!["api".to_owned()];
        let elsewhere = json!({"status": {"authenticated": true, "audiences": ["vault"], "user": {"username": "jane"}}});
        assert_eq!(user_of(&elsewhere, &api), None, "meant for another audience");
        assert_eq!(user_of(&yes, &api).unwrap().audiences, api, "no audiences named: the ones asked");
    }
}

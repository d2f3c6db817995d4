//! The webhook authorizer (`--authorization-mode=…,Webhook,…`), as upstream's asks:
//! a SubjectAccessReview POSTed to the service `--authorization-webhook-config-file`
//! names; `status.allowed` allows, `status.denied` denies, neither has no opinion.
//! Answers are kept `--authorization-webhook-cache-authorized-ttl` (5m) when allowed
//! and `--authorization-webhook-cache-unauthorized-ttl` (30s) otherwise.

use super::{Attributes, Opinion};
use crate::effect::{CallOutcome, Outbound};
use crate::webhook::{self, cache::TtlCache, Version, Webhook};
use serde_json::{json, Map, Value};
use std::time::Duration;

/// How the webhook authorizer is set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookAuthorizerConfig {
    pub webhook: Webhook,
    pub version: Version,
    pub authorized_ttl: Duration,
    pub unauthorized_ttl: Duration,
}

impl WebhookAuthorizerConfig {
    /// Upstream's defaults for the webhook `webhook`.
    pub fn new(webhook: Webhook) -> Self {
        WebhookAuthorizerConfig {
            webhook,
            version: Version::V1beta1,
            authorized_ttl: Duration::from_secs(300),
            unauthorized_ttl: Duration::from_secs(30),
        }
    }
}

/// The webhook authorizer of a running server: its setup and the answers it keeps.
#[derive(Debug)]
pub struct WebhookAuthorizer {
    pub config: WebhookAuthorizerConfig,
    cache: TtlCache<Opinion>,
}

/// A question put to the webhook: the review's body, which is also the cache key.
#[derive(Debug, Clone)]
pub struct Question(String);

impl WebhookAuthorizer {
    pub fn new(config: WebhookAuthorizerConfig) -> Self {
        WebhookAuthorizer {
            config,
            cache: TtlCache::new(),
        }
    }

    /// The review to ask about `a`.
    pub fn question(&self, a: &Attributes<'_>) -> Question {
        let mut spec = Map::new();
        if a.resource_request {
            let mut attrs = Map::new();
            for (key, value) in [
                ("namespace", a.namespace),
                ("verb", a.verb),
                ("group", a.api_group),
                ("version", a.api_version),
                ("resource", a.resource),
                ("subresource", a.subresource),
                ("name", a.name),
            ] {
                if !value.is_empty() {
                    attrs.insert(key.into(), json!(value));
                }
            }
            spec.insert("resourceAttributes".into(), Value::Object(attrs));
        } else {
            spec.insert("nonResourceAttributes".into(), json!({"path": a.path, "verb": a.verb}));
        }
        spec.insert("user".into(), json!(a.user.name));
        if !a.user.groups.is_empty() {
            // v1beta1 names the field `group`, v1 `groups`.
            let field = match self.config.version {
                Version::V1beta1 => "group",
                Version::V1 => "groups",
            };
            spec.insert(field.into(), json!(a.user.groups));
        }
        if !a.user.uid.is_empty() {
            spec.insert("uid".into(), json!(a.user.uid));
        }
        if !a.user.extra.is_empty() {
            spec.insert("extra".into(), json!(a.user.extra));
        }
        let review = json!({
            "apiVersion": format!("authorization.k8s.io/{}", self.config.version.as_str()),
            "kind": "SubjectAccessReview",
            "metadata": {"creationTimestamp": null},
            "spec": spec,
            "status": {"allowed": false},
        });
        Question(review.to_string())
    }

    /// The answer kept for `question`, if it has not expired by `now`.
    pub fn cached(&self, question: &Question, now: Duration) -> Option<Opinion> {
        self.cache.get(&question.0, now)
    }

    /// The request that asks `question`.
    pub fn ask(&self, question: &Question) -> Outbound {
        self.config.webhook.post(question.0.clone().into_bytes())
    }

    /// The webhook's answer to `question`, kept for its TTL; `Err` when it gave none
    /// (an error, or something that is not a review).
    pub fn answered(&self, question: Question, outcome: CallOutcome, now: Duration) -> Result<Opinion, String> {
        let body = webhook::answer_body(outcome)?;
        let status = body.get("status").cloned().unwrap_or(Value::Null);
        let flag = |f: &str| status.get(f).and_then(Value::as_bool).unwrap_or(false);
        let reason = status.get("reason").and_then(Value::as_str).unwrap_or("").to_owned();
        let opinion = if flag("allowed") {
            Opinion::Allow
        } else if flag("denied") {
            Opinion::Deny(reason)
        } else {
            Opinion::NoOpinion(reason)
        };
        let ttl = match opinion {
            Opinion::Allow => self.config.authorized_ttl,
            _ => self.config.unauthorized_ttl,
        };
        self.cache.put(question.0, opinion.clone(), now, ttl);
        Ok(opinion)
    }
}

//! ServiceAccount tokens, as kube-apiserver issues and accepts them.
//!
//! Two authenticators share the keys of `--service-account-key-file`, and a token goes to
//! the one its (unverified) `iss` claim names, as upstream's `hasCorrectIssuer` picks:
//!
//! - **bound** tokens, from the TokenRequest API (`kubectl create token`), issued by the
//!   first `--service-account-issuer` and accepted from any of them: their times are
//!   checked with upstream's minute of leeway, and the ServiceAccount and the object they
//!   are bound to (a Pod, Secret or Node) must still exist with the uid in the token and
//!   not have been deleted more than a minute ago ([`validate::bound`]);
//! - **legacy** tokens, issuer `kubernetes/serviceaccount`, kept in Secrets of type
//!   `kubernetes.io/service-account-token`: the Secret must still exist and hold the
//!   token, and the ServiceAccount its uid ([`validate::legacy`]).
//!
//! Either way the signature must verify with a key of the `kid` the token names (every
//! key when it names none), and its audiences must meet the API audiences. The objects
//! are read from the server's watch caches ([`LiveObjects`]), so authentication takes no
//! storage round trip; a cache not fed yet cannot tell, and the token is refused.

mod claims;
mod validate;

pub use claims::{Bound, BoundKind, Issue, LEGACY_ISSUER};

use super::jwt;
use super::keys::{PublicKey, SigningKey};
use super::UserInfo;
use crate::rest::object::Object;
use std::time::{Duration, SystemTime};

/// An expiration upstream's kubelet asks for (an hour and seven seconds): such a token
/// bound to a pod is issued for [`EXTENDED_EXPIRATION`] when
/// `--service-account-extend-token-expiration` is on, and warns after the hour.
pub const WARN_ONLY_EXPIRATION_SECONDS: i64 = 60 * 60 + 7;
/// A year: how long the extended tokens of [`WARN_ONLY_EXPIRATION_SECONDS`] live.
pub const EXTENDED_EXPIRATION_SECONDS: i64 = 24 * 365 * 60 * 60;

/// Objects as the server holds them now.
pub trait LiveObjects {
    /// The object `name` of the core/v1 resource `plural` in `namespace` (`""` for a
    /// cluster-scoped one): `Ok(None)` when there is none, `Err(NotKnown)` when the server
    /// cannot tell yet.
    fn get(&self, plural: &str, namespace: &str, name: &str) -> Result<Option<Object>, NotKnown>;
}

/// The server cannot tell whether an object exists (its watch cache is not fed yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotKnown;

/// How ServiceAccount tokens are issued and checked: `--service-account-issuer`,
/// `--api-audiences`, `--service-account-key-file`, `--service-account-signing-key-file`,
/// `--service-account-max-token-expiration` and `--service-account-extend-token-expiration`.
#[derive(Clone, Debug)]
pub struct ServiceAccountTokens {
    /// Tokens of these issuers are accepted; the first is the `iss` of new tokens.
    pub issuers: Vec<String>,
    /// What tokens must be meant for to be accepted here, and what TokenRequests get
    /// when they ask for no audience (upstream's default: the issuers).
    pub api_audiences: Vec<String>,
    /// The keys that verify tokens.
    pub keys: Vec<PublicKey>,
    /// The key new tokens are signed with; `None` serves no TokenRequest.
    pub signing_key: Option<SigningKey>,
    /// No TokenRequest is issued for longer (requests are shortened to it, with a
    /// warning); `None` sets no bound.
    pub max_expiration: Option<Duration>,
    /// Pod-bound tokens asked for [`WARN_ONLY_EXPIRATION_SECONDS`] live a year.
    pub extend_expiration: bool,
    /// The CA bundle written to the `ca.crt` of legacy token Secrets (upstream's
    /// kube-controller-manager `--root-ca-file`).
    pub root_ca: Option<String>,
}

impl ServiceAccountTokens {
    /// Tokens signed with `signing_key` and issued by `issuers`, with upstream's defaults
    /// for the rest: verified with the signing key, meant for the issuers, no maximum,
    /// extension on.
    pub fn new(issuers: Vec<String>, signing_key: SigningKey) -> ServiceAccountTokens {
        ServiceAccountTokens {
            api_audiences: issuers.clone(),
            issuers,
            keys: vec![signing_key.public_key().clone()],
            signing_key: Some(signing_key),
            max_expiration: None,
            extend_expiration: true,
            root_ca: None,
        }
    }

    /// Who `token` proves the bearer is, for `audiences` (the API audiences when `None`).
    pub fn authenticate(
        &self,
        token: &str,
        audiences: Option<&[String]>,
        now: SystemTime,
        live: &dyn LiveObjects,
    ) -> Result<TokenUser, Refusal> {
        let issuer = jwt::unverified_issuer(token).ok_or(Refusal::NotMine)?;
        let legacy = issuer == LEGACY_ISSUER;
        if !legacy && !self.issuers.contains(&issuer) {
            return Err(Refusal::NotMine);
        }
        let parsed = jwt::parse(token).map_err(|_| Refusal::NotMine)?;
        let keys: Vec<&PublicKey> = match parsed.key_id() {
            Some(kid) => self.keys.iter().filter(|k| k.key_id() == kid).collect(),
            None => self.keys.iter().collect(),
        };
        if keys.is_empty() {
            return Err(Refusal::invalid("invalid signature, no keys found"));
        }
        // Any key of the id will do (upstream tries each in turn).
        let mut failure = None;
        if !keys.iter().any(|key| parsed.verify(key).map_err(|e| failure = Some(e)).is_ok()) {
            return Err(Refusal::invalid(failure.map(|e| e.to_string()).unwrap_or_default()));
        }
        let claims = claims::Claims::parse(parsed.payload()).map_err(Refusal::invalid)?;
        if claims.issuer != issuer {
            return Err(Refusal::invalid(format!("token issuer {:?} is invalid", claims.issuer)));
        }
        // A token that names no audience is meant for this server.
        let token_audiences = if claims.audiences.is_empty() {
            &self.api_audiences
        } else {
            &claims.audiences
        };
        let requested = audiences.unwrap_or(&self.api_audiences);
        let met: Vec<String> = token_audiences
            .iter()
            .filter(|a| requested.contains(a))
            .cloned()
            .collect();
        if met.is_empty() && !self.api_audiences.is_empty() {
            return Err(Refusal::invalid(format!(
                "token audiences {token_audiences:?} is invalid for the target audiences {requested:?}"
            )));
        }
        let account = if legacy {
            validate::legacy(token, &claims, live)
        } else {
            validate::bound(&claims, now, live)
        }
        .map_err(Refusal::Invalid)?;
        Ok(TokenUser {
            user: account.user_info(),
            audiences: met,
        })
    }

    /// A new token for a TokenRequest (see [`Bound`]), signed with the signing key;
    /// `None` when there is none.
    pub fn issue(&self, request: &Issue<'_>) -> Option<String> {
        let key = self.signing_key.as_ref()?;
        let issuer = self.issuers.first()?;
        Some(jwt::sign(key, &request.claims(issuer)))
    }

    /// The token of a legacy token Secret: the ServiceAccount `account` (namespace,
    /// name, uid) in the Secret called `secret`. `None` without a signing key.
    pub fn issue_legacy(&self, account: (&str, &str, &str), secret: &str) -> Option<String> {
        let key = self.signing_key.as_ref()?;
        Some(jwt::sign(key, &claims::legacy(account, secret)))
    }
}

/// A user a token proved, and the audiences it was accepted for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenUser {
    pub user: UserInfo,
    pub audiences: Vec<String>,
}

/// Why a token was not accepted. Logged, never shown to the client (who gets 401).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not a token of these authenticators (another issuer, or no JWS at all).
    NotMine,
    /// One of theirs, and not valid.
    Invalid(String),
}

impl Refusal {
    fn invalid(why: impl Into<String>) -> Refusal {
        Refusal::Invalid(why.into())
    }
}

/// The ServiceAccount a valid token names, and what it was bound to: upstream's
/// `ServiceAccountInfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Account {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub pod: Option<(String, String)>,
    pub node: Option<(String, String)>,
    pub credential_id: String,
}

pub use crate::authn::serviceaccount_user::username;

impl Account {
    /// Upstream's `ServiceAccountInfo.UserInfo`: the user name, the uid, the two
    /// ServiceAccount groups (and `system:authenticated`, as every authenticated user),
    /// and the pod, node and credential in `extra`.
    fn user_info(&self) -> UserInfo {
        let mut user = UserInfo {
            name: username(&self.namespace, &self.name),
            uid: self.uid.clone(),
            groups: vec![
                "system:serviceaccounts".to_owned(),
                format!("system:serviceaccounts:{}", self.namespace),
                "system:authenticated".to_owned(),
            ],
            ..UserInfo::default()
        };
        let mut extra = |key: &str, value: &str| {
            user.extra.insert(format!("authentication.kubernetes.io/{key}"), vec![value.to_owned()]);
        };
        if let Some((name, uid)) = &self.pod {
            if !name.is_empty() && !uid.is_empty() {
                extra("pod-name", name);
                extra("pod-uid", uid);
            }
        }
        if !self.credential_id.is_empty() {
            extra("credential-id", &self.credential_id);
        }
        if let Some((name, uid)) = &self.node {
            if !name.is_empty() {
                extra("node-name", name);
                if !uid.is_empty() {
                    extra("node-uid", uid);
                }
            }
        }
        user
    }
}

#[cfg(test)]
mod tests;

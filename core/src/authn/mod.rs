//! Authentication: who is asking. First the front proxy ([`request_header`]): a
//! client certificate verified against the requestheader CA vouches for the user its
//! headers name. Then a client certificate the adapter verified against
//! the client CA names the user (CN) and groups (O), as kube-apiserver's x509
//! authenticator reads it (one that did not verify fails authentication unless a
//! bearer token succeeds); then a bearer token names a user of `--token-auth-file` or
//! is a ServiceAccount token ([`service_account`]). Requests without credentials are
//! anonymous.

mod der;
pub mod jwt;
pub mod keys;
pub(crate) mod pem;
pub mod request_header;
pub mod service_account;
mod token_cache;
pub mod webhook;
pub mod serviceaccount_user;
mod token_file;
mod x509;

pub use service_account::{LiveObjects, NotKnown, ServiceAccountTokens, TokenUser};
pub use request_header::RequestHeader;
pub use token_cache::TokenCache;
pub use token_file::TokenFile;
pub use x509::{request_subject_of, subject_of, Subject};

use bytes::Bytes;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// An authenticated (or anonymous) user: upstream's `user.Info`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    /// Empty when the authenticator knows none (client certificates).
    pub uid: String,
    pub groups: Vec<String>,
    /// Upstream's `extra`: e.g. a ServiceAccount token's credential id.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// A user with a name and groups, no uid or extra.
    pub fn named(name: impl Into<String>, groups: Vec<String>) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups,
            ..UserInfo::default()
        }
    }

    pub fn anonymous() -> UserInfo {
        UserInfo::named("system:anonymous", vec!["system:unauthenticated".to_owned()])
    }

    /// The server acting on its own behalf.
    pub fn system() -> UserInfo {
        UserInfo::named(
            "system:apiserver",
            vec!["system:authenticated".to_owned(), "system:masters".to_owned()],
        )
    }

    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    pub fn is_anonymous(&self) -> bool {
        self.name == "system:anonymous"
    }
}

/// What the authenticators make of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Authenticated {
    User(UserInfo),
    /// No credentials: `system:anonymous` in `system:unauthenticated`, allowed what
    /// authorization allows it.
    Anonymous,
    /// Credentials nobody accepts (an unknown bearer token, an untrusted client
    /// certificate), or none where anonymous requests are off: 401 whatever the path.
    Refused,
    /// A bearer token only the token webhook can tell about: ask it.
    Ask(String),
}

/// The server's authenticators, tried in upstream's order: the front proxy's
/// headers, the client certificate, then a bearer token (the token file, then
/// ServiceAccount tokens).
#[derive(Clone, Debug)]
pub struct Authenticators {
    /// `--token-auth-file`.
    pub token_file: Option<Arc<TokenFile>>,
    /// `--service-account-*`: ServiceAccount tokens issued and accepted.
    pub service_accounts: Option<Arc<ServiceAccountTokens>>,
    /// `--anonymous-auth`: requests without credentials act as `system:anonymous`;
    /// without it they get 401 on every path.
    pub anonymous: bool,
    /// `--authentication-token-webhook-config-file`: a remote service asked about the
    /// bearer tokens no other authenticator knows.
    pub token_webhook: Option<Arc<webhook::TokenWebhook>>,
    /// `--requestheader-*`: the front proxy trusted to name users in headers.
    pub request_header: Option<Arc<RequestHeader>>,
}

impl Default for Authenticators {
    /// kube-apiserver's defaults: anonymous requests allowed, no token file, no
    /// ServiceAccount tokens.
    fn default() -> Self {
        Authenticators {
            token_file: None,
            service_accounts: None,
            anonymous: true,
            token_webhook: None,
            request_header: None,
        }
    }
}

/// What the adapter made of the client's certificate chain.
#[derive(Clone, Copy, Debug, Default)]
pub struct Peer<'a> {
    /// The chain (DER, leaf first) when it verified against the client CA.
    pub certificates: &'a [Bytes],
    /// A chain was sent that the client CA does not trust.
    pub rejected: bool,
    /// The leaf's common name when the chain verified against the requestheader CA.
    pub request_header_common_name: Option<&'a str>,
}

/// What the authenticators consult besides the credentials.
pub struct Context<'a> {
    /// The wall-clock time: tokens expire on it.
    pub now: SystemTime,
    /// The monotonic time: cached answers expire on it.
    pub monotonic: Duration,
    /// The objects a ServiceAccount token must still name.
    pub live: &'a dyn LiveObjects,
    /// Answers of the last 10 s, when the caller keeps them.
    pub cache: Option<&'a TokenCache>,
}

impl Authenticators {
    /// Who sent a request with these peer certificates and headers: `peer` says what
    /// the adapter made of the client's chain. The front proxy's headers are removed
    /// once they authenticated the request.
    pub fn authenticate(
        &self,
        peer: &Peer<'_>,
        headers: &mut http::HeaderMap,
        context: &Context<'_>,
    ) -> Authenticated {
        let proxied = self
            .request_header
            .as_deref()
            .zip(peer.request_header_common_name)
            .and_then(|(settings, common_name)| settings.authenticate(common_name, headers));
        if let Some(user) = proxied {
            return Authenticated::User(authenticated(user));
        }
        let certificate_rejected = peer.rejected;
        let user = authenticate(peer.certificates);
        if !user.is_anonymous() {
            return Authenticated::User(user);
        }
        match bearer_token(headers) {
            // Upstream's x509 authenticator failed: an error, never anonymous.
            None if certificate_rejected => Authenticated::Refused,
            None if self.anonymous => Authenticated::Anonymous,
            None => Authenticated::Refused,
            Some(token) => match self.authenticate_token(token, None, context) {
                Some(found) => Authenticated::User(found.user),
                None => match &self.token_webhook {
                    Some(webhook) => match webhook.cached(token, self.api_audiences(), context.monotonic) {
                        Some(Some(found)) => Authenticated::User(found.user),
                        Some(None) => Authenticated::Refused,
                        None => Authenticated::Ask(token.to_owned()),
                    },
                    None => Authenticated::Refused,
                },
            },
        }
    }

    /// Who a bearer token names, when it is meant for `audiences` (the API audiences
    /// when `None`, as for every request): a user of the token file, or a
    /// ServiceAccount. The single way tokens are checked; TokenReview asks here too.
    pub fn authenticate_token(
        &self,
        token: &str,
        audiences: Option<&[String]>,
        context: &Context<'_>,
    ) -> Option<TokenUser> {
        if let Some(hit) = context.cache.and_then(|c| c.get(token, audiences, context.monotonic)) {
            return Some(hit);
        }
        let found = self.token_file_user(token, audiences).or_else(|| {
            let tokens = self.service_accounts.as_deref()?;
            match tokens.authenticate(token, audiences, context.now, context.live) {
                Ok(found) => Some(found),
                Err(service_account::Refusal::NotMine) => None,
                Err(service_account::Refusal::Invalid(why)) => {
                    tracing::debug!("ServiceAccount token refused: {why}");
                    None
                }
            }
        })?;
        if let Some(cache) = context.cache {
            cache.put(token, audiences, &found, context.monotonic);
        }
        Some(found)
    }

    /// The API audiences: what tokens must be meant for (none without ServiceAccount
    /// tokens).
    pub fn api_audiences(&self) -> &[String] {
        self.service_accounts.as_deref().map_or(&[], |s| s.api_audiences.as_slice())
    }

    /// A user of the token file, which knows nothing of audiences: it serves the API
    /// audiences only, as upstream's audience-agnostic wrapper has it.
    fn token_file_user(&self, token: &str, audiences: Option<&[String]>) -> Option<TokenUser> {
        let user = self.token_file.as_deref()?.user(token)?;
        let api = self.api_audiences();
        let met = match audiences.or((!api.is_empty()).then_some(api)) {
            None => Vec::new(),
            Some(requested) => {
                let met: Vec<String> = api.iter().filter(|a| requested.contains(a)).cloned().collect();
                if met.is_empty() {
                    return None;
                }
                met
            }
        };
        Some(TokenUser {
            user: authenticated(user.clone()),
            audiences: met,
        })
    }
}

/// The token of an `Authorization: Bearer <token>` header, if the request has one.
fn bearer_token(headers: &http::HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let mut parts = value.splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Every authenticated user is in `system:authenticated`, unless it is named
/// anonymous or said to be unauthenticated (as upstream's group adder has it: a front
/// proxy may forward an anonymous request).
fn authenticated(mut user: UserInfo) -> UserInfo {
    let unauthenticated = user.is_anonymous() || user.in_group("system:unauthenticated");
    if !unauthenticated && !user.in_group("system:authenticated") {
        user.groups.push("system:authenticated".to_owned());
    }
    user
}

/// The user a request acts as, from the verified peer certificate chain (leaf first).
pub fn authenticate(peer_certificates: &[Bytes]) -> UserInfo {
    let Some(subject) = peer_certificates.first().and_then(|leaf| subject_of(leaf)) else {
        return UserInfo::anonymous();
    };
    match subject.common_name {
        Some(name) if !name.is_empty() => {
            let mut groups = subject.organizations;
            groups.push("system:authenticated".to_owned());
            UserInfo::named(name, groups)
        }
        _ => UserInfo::anonymous(),
    }
}

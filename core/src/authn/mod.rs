//! Authentication: who is asking. A client certificate the adapter verified against
//! the client CA names the user (CN) and groups (O), as kube-apiserver's x509
//! authenticator reads it (one that did not verify fails authentication unless a
//! bearer token succeeds); then a bearer token. Requests without credentials are
//! anonymous.

pub mod serviceaccount_user;
mod token_file;
mod x509;

pub use token_file::TokenFile;
pub use x509::{subject_of, Subject};

use bytes::Bytes;
use std::collections::BTreeMap;
use std::sync::Arc;

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
}

/// The server's authenticators, tried in upstream's order: the client certificate,
/// then a bearer token.
#[derive(Clone, Debug)]
pub struct Authenticators {
    /// `--token-auth-file`.
    pub token_file: Option<Arc<TokenFile>>,
    /// `--anonymous-auth`: requests without credentials act as `system:anonymous`;
    /// without it they get 401 on every path.
    pub anonymous: bool,
    /// `--api-audiences`: the audiences a token must be meant for, unless a caller (a
    /// TokenReview's `spec.audiences`) names others. Empty: any.
    pub api_audiences: Vec<String>,
}

/// A bearer token's user, and the audiences the token was accepted for (upstream's
/// `authenticator.Response`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenUser {
    pub user: UserInfo,
    pub audiences: Vec<String>,
}

impl Default for Authenticators {
    /// kube-apiserver's defaults: anonymous requests allowed, no token file.
    fn default() -> Self {
        Authenticators {
            token_file: None,
            anonymous: true,
            api_audiences: Vec::new(),
        }
    }
}

impl Authenticators {
    /// Who sent a request with these verified peer certificates and headers;
    /// `certificate_rejected` when the client sent a chain the client CA does not trust.
    pub fn authenticate(
        &self,
        peer_certificates: &[Bytes],
        certificate_rejected: bool,
        headers: &http::HeaderMap,
    ) -> Authenticated {
        let user = authenticate(peer_certificates);
        if !user.is_anonymous() {
            return Authenticated::User(user);
        }
        match bearer_token(headers) {
            // Upstream's x509 authenticator failed: an error, never anonymous.
            None if certificate_rejected => Authenticated::Refused,
            None if self.anonymous => Authenticated::Anonymous,
            None => Authenticated::Refused,
            Some(token) => match self.authenticate_token(token, &self.api_audiences) {
                Some(found) => Authenticated::User(found.user),
                None => Authenticated::Refused,
            },
        }
    }

    /// The one door for bearer tokens, the request chain's and a TokenReview's: who
    /// `token` names when it is meant for one of `audiences` (none named: any), with
    /// `system:authenticated` added, as upstream's authenticator chain adds it.
    pub fn authenticate_token(&self, token: &str, audiences: &[String]) -> Option<TokenUser> {
        let user = self.token_file.as_deref().and_then(|file| file.user(token))?;
        // A token file's tokens carry no audience of their own: they are accepted for
        // the API's audiences (upstream's audience-agnostic wrapper).
        let accepted = intersect(&self.api_audiences, audiences);
        if !audiences.is_empty() && accepted.is_empty() {
            return None;
        }
        Some(TokenUser {
            user: authenticated(user.clone()),
            audiences: accepted,
        })
    }
}

/// The audiences of `ours` that `wanted` names, in `ours`' order; none when either is
/// empty.
fn intersect(ours: &[String], wanted: &[String]) -> Vec<String> {
    ours.iter().filter(|a| wanted.contains(a)).cloned().collect()
}

/// The token of an `Authorization: Bearer <token>` header, if the request has one.
fn bearer_token(headers: &http::HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let mut parts = value.splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Every authenticated user is in `system:authenticated`.
fn authenticated(mut user: UserInfo) -> UserInfo {
    if !user.in_group("system:authenticated") {
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

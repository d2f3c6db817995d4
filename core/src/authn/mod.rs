//! Authentication: who is asking. A client certificate verified by TLS against the
//! client CA names the user (CN) and groups (O), as kube-apiserver's x509 authenticator
//! reads it. Requests without credentials are anonymous.

mod x509;

pub use x509::{subject_of, Subject};

use bytes::Bytes;

/// An authenticated (or anonymous) user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub groups: Vec<String>,
}

impl UserInfo {
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: "system:anonymous".to_owned(),
            groups: vec!["system:unauthenticated".to_owned()],
        }
    }

    /// The server acting on its own behalf.
    pub fn system() -> UserInfo {
        UserInfo {
            name: "system:apiserver".to_owned(),
            groups: vec!["system:authenticated".to_owned(), "system:masters".to_owned()],
        }
    }

    pub fn is_anonymous(&self) -> bool {
        self.name == "system:anonymous"
    }
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
            UserInfo { name, groups }
        }
        _ => UserInfo::anonymous(),
    }
}

/// Paths anyone may read without credentials.
pub fn is_public(path: &str) -> bool {
    path == "/version"
        || ["/healthz", "/livez", "/readyz"].iter().any(|p| {
            path == *p
                || path
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
}

//! The front-proxy authenticator (`--requestheader-*`): a client whose certificate
//! the adapter verified against the requestheader CA, and whose common name is
//! allowed, vouches in headers for the user it forwards — as an aggregating API
//! server does when it proxies to an extension server. It runs before every other
//! authenticator; without a username header the others decide.

use super::UserInfo;
use std::collections::BTreeMap;

/// kube-apiserver's request-header settings, with the CA bundle the adapter verifies
/// against (kept here only to publish it in `extension-apiserver-authentication`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestHeader {
    /// The PEM bundle of `--requestheader-client-ca-file`.
    pub client_ca_pem: String,
    /// `--requestheader-allowed-names`: empty allows any verified certificate.
    pub allowed_names: Vec<String>,
    /// `--requestheader-username-headers`: the first with a value names the user.
    pub username_headers: Vec<String>,
    /// `--requestheader-group-headers`: every value of each is a group.
    pub group_headers: Vec<String>,
    /// `--requestheader-extra-headers-prefix`: `<prefix><key>` carries extra `<key>`.
    pub extra_headers_prefix: Vec<String>,
}

impl RequestHeader {
    /// kubeadm's settings for kube-apiserver, over the front-proxy CA `client_ca_pem`.
    pub fn kubeadm(client_ca_pem: String) -> RequestHeader {
        let one = |s: &str| vec![s.to_owned()];
        RequestHeader {
            client_ca_pem,
            allowed_names: one("front-proxy-client"),
            username_headers: one("X-Remote-User"),
            group_headers: one("X-Remote-Group"),
            extra_headers_prefix: one("X-Remote-Extra-"),
        }
    }

    /// Whether a certificate with this common name may vouch for users.
    pub fn allows(&self, common_name: &str) -> bool {
        self.allowed_names.is_empty() || self.allowed_names.iter().any(|n| n == common_name)
    }

    /// The user the headers name, for a client whose verified certificate has
    /// `common_name`; the headers that said so are removed. `None` (headers left
    /// alone) when the name is not allowed or no username header has a value.
    pub fn authenticate(&self, common_name: &str, headers: &mut http::HeaderMap) -> Option<UserInfo> {
        if !self.allows(common_name) {
            tracing::debug!("front-proxy certificate {common_name:?} is not in --requestheader-allowed-names");
            return None;
        }
        let name = self
            .username_headers
            .iter()
            .find_map(|h| headers.get(h.as_str()).and_then(|v| v.to_str().ok()).filter(|v| !v.is_empty()))?
            .to_owned();
        let groups = self
            .group_headers
            .iter()
            .flat_map(|h| headers.get_all(h.as_str()))
            .filter_map(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect();
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for prefix in &self.extra_headers_prefix {
            for (header, value) in headers.iter() {
                if let Some(key) = strip_prefix_ignore_case(header.as_str(), prefix) {
                    let values = extra.entry(percent_decode(key)).or_default();
                    values.extend(value.to_str().ok().map(str::to_owned));
                }
            }
        }
        self.remove_headers(headers);
        Some(UserInfo {
            name,
            uid: String::new(),
            groups,
            extra,
        })
    }

    /// Take out the headers these settings read, so that nothing after
    /// authentication (a proxy to an extension server) passes them on.
    fn remove_headers(&self, headers: &mut http::HeaderMap) {
        for name in self.username_headers.iter().chain(&self.group_headers) {
            headers.remove(name.as_str());
        }
        let prefixed: Vec<http::HeaderName> = headers
            .keys()
            .filter(|h| self.extra_headers_prefix.iter().any(|p| strip_prefix_ignore_case(h.as_str(), p).is_some()))
            .cloned()
            .collect();
        for name in prefixed {
            headers.remove(name);
        }
    }
}

/// `name` past `prefix`, compared without case (header names arrive lower-cased).
fn strip_prefix_ignore_case<'a>(name: &'a str, prefix: &str) -> Option<&'a str> {
    let head = name.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &name[prefix.len()..])
}

/// An extra key as upstream reads it: lower-cased, then `%XX` decoded as an
/// impersonated extra's key is.
fn percent_decode(key: &str) -> String {
    crate::impersonation::percent_decoded(&key.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (name, value) in pairs {
            map.append(http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
        }
        map
    }

    fn settings() -> RequestHeader {
        RequestHeader::kubeadm("ca".to_owned())
    }

    #[test]
    fn the_headers_name_the_user_groups_and_extras_then_go() {
        let mut h = headers(&[
            ("x-remote-user", "alice"),
            ("x-remote-group", "g1"),
            ("x-remote-group", "g2"),
            ("x-remote-extra-scopes", "read"),
            ("X-Remote-Extra-Scopes", "write"),
            ("x-remote-extra-example.com%2fteam", "blue"),
            ("accept", "application/json"),
        ]);
        let user = settings().authenticate("front-proxy-client", &mut h).unwrap();
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, vec!["g1", "g2"]);
        assert_eq!(user.extra["scopes"], vec!["read", "write"]);
        assert_eq!(user.extra["example.com/team"], vec!["blue"]);
        assert_eq!(h.len(), 1, "only the headers that are not authentication's stay: {h:?}");
        assert!(h.contains_key("accept"));
    }

    #[test]
    fn the_first_username_header_with_a_value_wins() {
        let mut s = settings();
        s.username_headers = vec!["X-Forwarded-User".to_owned(), "X-Remote-User".to_owned()];
        let mut h = headers(&[("x-forwarded-user", ""), ("x-remote-user", "bob")]);
        assert_eq!(s.authenticate("front-proxy-client", &mut h).unwrap().name, "bob");
        assert!(h.is_empty());
    }

    #[test]
    fn without_a_username_header_the_others_decide_and_headers_stay() {
        let mut h = headers(&[("x-remote-group", "g1")]);
        assert_eq!(settings().authenticate("front-proxy-client", &mut h), None);
        assert!(h.contains_key("x-remote-group"));
    }

    #[test]
    fn only_allowed_names_vouch_and_an_empty_list_allows_any() {
        let mut h = headers(&[("x-remote-user", "alice")]);
        assert_eq!(settings().authenticate("someone-else", &mut h), None);
        assert!(h.contains_key("x-remote-user"));
        let mut any = settings();
        any.allowed_names.clear();
        assert_eq!(any.authenticate("someone-else", &mut h).unwrap().name, "alice");
    }

    #[test]
    fn extra_keys_are_lower_cased_and_decoded_or_kept() {
        assert_eq!(percent_decode("Example.COM%2Fa"), "example.com/a");
        assert_eq!(percent_decode("bad%zz"), "bad%zz");
        assert_eq!(percent_decode("tail%2"), "tail%2");
    }
}

//! Impersonation: a request may act as another user (`Impersonate-User`, repeated
//! `Impersonate-Group`, `Impersonate-Uid`, `Impersonate-Extra-<key>`) when its own user
//! may `impersonate` each attribute it asks for, as upstream's `WithImpersonation`
//! filter decides. This stage of the chain runs after authentication and audit.
//!
//! Each requested attribute is one authorization check of the verb `impersonate`: a
//! user name on `users` (or, for a ServiceAccount's user name, on `serviceaccounts` in
//! its namespace), each group on `groups`, the uid on `uids` and each extra value on
//! `userextras/<key>` (the last two in `authentication.k8s.io`). The first refusal is
//! the request's 403. The impersonated user then gets `system:authenticated` (or, as
//! `system:anonymous`, `system:unauthenticated`) unless the groups asked for say
//! otherwise, and a ServiceAccount asked for without groups gets its own.

use crate::authn::{serviceaccount_user, UserInfo};
use crate::authorization::{Attributes, Decision};
use crate::status::ApiError;

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";
/// The group of the `uids` and `userextras` resources.
const AUTHENTICATION_GROUP: &str = "authentication.k8s.io";

/// One attribute a request asks to act with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requested {
    User(String),
    /// A user name of the form `system:serviceaccount:<namespace>:<name>`.
    ServiceAccount { namespace: String, name: String },
    Group(String),
    /// One value of an extra (`key` percent-decoded from the header name).
    Extra { key: String, value: String },
    Uid(String),
}

impl Requested {
    /// What the requesting user must be allowed for this attribute.
    fn attributes<'a>(&'a self, requestor: &'a UserInfo) -> Attributes<'a> {
        let (api_group, api_version, resource, subresource, namespace, name) = match self {
            Requested::User(name) => ("", "", "users", "", "", name.as_str()),
            Requested::ServiceAccount { namespace, name } => {
                ("", "", "serviceaccounts", "", namespace.as_str(), name.as_str())
            }
            Requested::Group(name) => ("", "", "groups", "", "", name.as_str()),
            Requested::Extra { key, value } => {
                (AUTHENTICATION_GROUP, "v1", "userextras", key.as_str(), "", value.as_str())
            }
            Requested::Uid(uid) => (AUTHENTICATION_GROUP, "v1", "uids", "", "", uid.as_str()),
        };
        Attributes {
            user: requestor,
            verb: "impersonate",
            resource_request: true,
            namespace,
            api_group,
            api_version,
            resource,
            subresource,
            name,
            path: "",
        }
    }

    /// The object reference upstream builds for this attribute, as Go's `%v` prints it
    /// (`{Kind Namespace Name UID APIVersion ResourceVersion FieldPath}`): the words of
    /// its error for headers without a user.
    fn go_reference(&self) -> String {
        let v1 = "authentication.k8s.io/v1";
        let (kind, namespace, name, api_version, field_path) = match self {
            Requested::User(name) => ("User", "", name.as_str(), "", ""),
            Requested::ServiceAccount { namespace, name } => {
                ("ServiceAccount", namespace.as_str(), name.as_str(), "", "")
            }
            Requested::Group(name) => ("Group", "", name.as_str(), "", ""),
            Requested::Extra { key, value } => ("UserExtra", "", value.as_str(), v1, key.as_str()),
            Requested::Uid(uid) => ("UID", "", uid.as_str(), v1, ""),
        };
        format!("{{{kind} {namespace} {name}  {api_version}  {field_path}}}")
    }
}

/// What a request asks to act as, read from its headers as upstream reads them: the
/// user (the first `Impersonate-User`, when not empty), every `Impersonate-Group`, every
/// value of every `Impersonate-Extra-<key>` and the `Impersonate-Uid`. Empty when it
/// asks for nothing; groups, extras or a uid without a user are refused (500, as
/// upstream answers them).
pub fn requested(headers: &http::HeaderMap) -> Result<Vec<Requested>, ApiError> {
    let text = |value: &http::HeaderValue| String::from_utf8_lossy(value.as_bytes()).into_owned();
    let mut asked = Vec::new();
    let user = headers.get(USER).map(text).unwrap_or_default();
    let has_user = !user.is_empty();
    if has_user {
        asked.push(match serviceaccount_user::split_username(&user) {
            Some((namespace, name)) => Requested::ServiceAccount {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
            },
            None => Requested::User(user),
        });
    }
    asked.extend(headers.get_all(GROUP).iter().map(|g| Requested::Group(text(g))));
    for name in headers.keys() {
        let Some(encoded) = name.as_str().strip_prefix(EXTRA_PREFIX) else {
            continue;
        };
        let key = percent_decoded(encoded);
        for value in headers.get_all(name) {
            asked.push(Requested::Extra {
                key: key.clone(),
                value: text(value),
            });
        }
    }
    let uid = headers.get(UID).map(text).unwrap_or_default();
    if !uid.is_empty() {
        asked.push(Requested::Uid(uid));
    }
    if !has_user && !asked.is_empty() {
        let listed: Vec<String> = asked.iter().map(Requested::go_reference).collect();
        return Err(ApiError::internal(format!(
            "requested [{}] without impersonating a user",
            listed.join(" ")
        )));
    }
    Ok(asked)
}

/// An extra's key from its header name (already lower case): `%XX` escapes decoded,
/// as Go's `url.PathUnescape` decodes them; a malformed escape keeps the name as sent.
pub(crate) fn percent_decoded(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
            match (hex(bytes.get(i + 1)), hex(bytes.get(i + 2))) {
                (Some(high), Some(low)) => {
                    out.push((high * 16 + low) as u8);
                    i += 3;
                    continue;
                }
                _ => return encoded.to_owned(),
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The user a request acts as: `None` when it asks to impersonate no one, else the
/// impersonated user once `authorize` allowed `requestor` every attribute asked for.
/// A refusal is the 403 of the first attribute refused.
pub fn impersonate(
    requestor: &UserInfo,
    headers: &http::HeaderMap,
    authorize: impl Fn(Attributes<'_>) -> Decision,
) -> Result<Option<UserInfo>, ApiError> {
    let asked = requested(headers)?;
    if asked.is_empty() {
        return Ok(None);
    }
    let groups_given = headers.contains_key(GROUP);
    let mut user = UserInfo::default();
    for attribute in &asked {
        let attributes = attribute.attributes(requestor);
        if let Decision::Deny(reason) = authorize(attributes) {
            return Err(crate::authorization::forbidden(attributes, &reason));
        }
        match attribute {
            Requested::User(name) => user.name = name.clone(),
            Requested::ServiceAccount { namespace, name } => {
                user.name = serviceaccount_user::username(namespace, name);
                if !groups_given {
                    user.groups = serviceaccount_user::group_names(namespace);
                }
            }
            Requested::Group(group) => user.groups.push(group.clone()),
            Requested::Extra { key, value } => {
                user.extra.entry(key.clone()).or_default().push(value.clone())
            }
            Requested::Uid(uid) => user.uid = uid.clone(),
        }
    }
    let (added, unless) = if user.is_anonymous() {
        ("system:unauthenticated", &["system:unauthenticated"][..])
    } else {
        ("system:authenticated", &["system:authenticated", "system:unauthenticated"][..])
    };
    if !user.groups.iter().any(|g| unless.contains(&g.as_str())) {
        user.groups.push(added.to_owned());
    }
    Ok(Some(user))
}

/// Take the impersonation headers off a request that has used them, so that nothing
/// after this stage (an aggregated API server) sees them.
pub fn strip(headers: &mut http::HeaderMap) {
    let extras: Vec<http::HeaderName> = headers
        .keys()
        .filter(|name| name.as_str().starts_with(EXTRA_PREFIX))
        .cloned()
        .collect();
    for name in extras.iter().map(|n| n.as_str()).chain([USER, GROUP, UID]) {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                http::HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    fn admin() -> UserInfo {
        UserInfo::named("admin", vec!["system:masters".into(), "system:authenticated".into()])
    }

    fn allowed(pairs: &[(&str, &str)]) -> UserInfo {
        let allow = |_: Attributes<'_>| Decision::Allow;
        impersonate(&admin(), &headers(pairs), allow).unwrap().unwrap()
    }

    #[test]
    fn no_headers_no_impersonation() {
        let allow = |_: Attributes<'_>| Decision::Allow;
        assert_eq!(impersonate(&admin(), &headers(&[("accept", "x")]), allow), Ok(None));
        // An empty user asks for nothing either.
        assert_eq!(requested(&headers(&[("impersonate-user", "")])), Ok(vec![]));
    }

    #[test]
    fn groups_and_the_authenticated_group() {
        let user = allowed(&[("Impersonate-User", "jane")]);
        assert_eq!((user.name.as_str(), user.groups.as_slice()), ("jane", &["system:authenticated".to_owned()][..]));
        let user = allowed(&[("Impersonate-User", "jane"), ("Impersonate-Group", "dev"), ("Impersonate-Group", "ops")]);
        assert_eq!(user.groups, ["dev", "ops", "system:authenticated"]);
        let user = allowed(&[("Impersonate-User", "jane"), ("Impersonate-Group", "system:unauthenticated")]);
        assert_eq!(user.groups, ["system:unauthenticated"]);
        let user = allowed(&[("Impersonate-User", "system:anonymous")]);
        assert_eq!(user.groups, ["system:unauthenticated"]);
        let user = allowed(&[("Impersonate-User", "system:anonymous"), ("Impersonate-Group", "system:authenticated")]);
        assert_eq!(user.groups, ["system:authenticated", "system:unauthenticated"]);
    }

    #[test]
    fn service_accounts_uids_and_extras() {
        let user = allowed(&[("Impersonate-User", "system:serviceaccount:ns:robot")]);
        assert_eq!(user.groups, ["system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"]);
        let user = allowed(&[("Impersonate-User", "system:serviceaccount:ns:robot"), ("Impersonate-Group", "g")]);
        assert_eq!(user.groups, ["g", "system:authenticated"]);
        let user = allowed(&[
            ("Impersonate-User", "jane"),
            ("Impersonate-Uid", "1234"),
            ("Impersonate-Extra-Scopes", "view"),
            ("Impersonate-Extra-Scopes", "edit"),
            ("Impersonate-Extra-Acme.com%2Fproject", "p1"),
            ("Impersonate-Extra-Bad%zz", "v"),
        ]);
        assert_eq!(user.uid, "1234");
        assert_eq!(user.extra["scopes"], ["view", "edit"]);
        assert_eq!(user.extra["acme.com/project"], ["p1"]);
        assert_eq!(user.extra["bad%zz"], ["v"]);
    }

    #[test]
    fn attributes_without_a_user_are_a_500() {
        let e = requested(&headers(&[("Impersonate-Group", "g")])).unwrap_err();
        assert_eq!(e.code, 500);
        assert_eq!(e.message, "Internal error occurred: requested [{Group  g    }] without impersonating a user");
        let e = requested(&headers(&[("Impersonate-Uid", "1"), ("Impersonate-Extra-K", "v")])).unwrap_err();
        assert_eq!(
            e.message,
            "Internal error occurred: requested [{UserExtra  v  authentication.k8s.io/v1  k} {UID  1  authentication.k8s.io/v1  }] without impersonating a user"
        );
    }

    #[test]
    fn a_refusal_names_the_first_attribute_refused() {
        let deny = |_: Attributes<'_>| Decision::Deny("Everything is forbidden.".to_owned());
        let refused = |pairs: &[(&str, &str)]| impersonate(&admin(), &headers(pairs), deny).unwrap_err().message;
        assert_eq!(
            refused(&[("Impersonate-User", "jane")]),
            "users \"jane\" is forbidden: User \"admin\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope: Everything is forbidden."
        );
        assert_eq!(
            refused(&[("Impersonate-User", "system:serviceaccount:ns:robot")]),
            "serviceaccounts \"robot\" is forbidden: User \"admin\" cannot impersonate resource \"serviceaccounts\" in API group \"\" in the namespace \"ns\": Everything is forbidden."
        );
        // Only the extra is refused: the user and uid are let through.
        let only_extras = |a: Attributes<'_>| match a.resource {
            "userextras" => Decision::Deny(String::new()),
            _ => Decision::Allow,
        };
        let e = impersonate(
            &admin(),
            &headers(&[("Impersonate-User", "jane"), ("Impersonate-Uid", "7"), ("Impersonate-Extra-Scopes", "view")]),
            only_extras,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "userextras.authentication.k8s.io \"view\" is forbidden: User \"admin\" cannot impersonate resource \"userextras/scopes\" in API group \"authentication.k8s.io\" at the cluster scope"
        );
        let only_uids = |a: Attributes<'_>| match a.resource {
            "uids" => Decision::Deny(String::new()),
            _ => Decision::Allow,
        };
        let e = impersonate(&admin(), &headers(&[("Impersonate-User", "jane"), ("Impersonate-Uid", "7")]), only_uids).unwrap_err();
        assert_eq!(
            e.message,
            "uids.authentication.k8s.io \"7\" is forbidden: User \"admin\" cannot impersonate resource \"uids\" in API group \"authentication.k8s.io\" at the cluster scope"
        );
    }

    #[test]
    fn strip_takes_every_impersonation_header() {
        let mut map = headers(&[
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", "g"),
            ("Impersonate-Uid", "1"),
            ("Impersonate-Extra-A", "v"),
            ("Accept", "x"),
        ]);
        strip(&mut map);
        assert_eq!(map.len(), 1);
        assert!(map.contains_key("accept"));
    }
}

//! Authorization: may this user do this verb on this resource or path? The stage sits
//! after impersonation and before routing, as upstream's `WithAuthorization` filter.
//! The only authorizer so far is upstream's `AlwaysAllow`: every authenticated
//! request is allowed.

use crate::authn::UserInfo;
use crate::request_info::RequestInfo;
use crate::status::ApiError;

/// What an authorizer is asked about: upstream's `authorizer.Attributes`.
#[derive(Clone, Copy, Debug)]
pub struct Attributes<'a> {
    pub user: &'a UserInfo,
    pub info: &'a RequestInfo,
}

/// An authorizer's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Denied, with the reason to show in the 403.
    Deny(String),
}

/// The configured authorizers (upstream's `--authorization-mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Authorizer {
    /// Every request is allowed.
    #[default]
    AlwaysAllow,
}

impl Authorizer {
    pub fn authorize(&self, _attributes: Attributes<'_>) -> Decision {
        match self {
            Authorizer::AlwaysAllow => Decision::Allow,
        }
    }
}

/// The 403 of a denied request, worded as upstream's forbidden responder words it.
pub fn forbidden(attributes: Attributes<'_>, reason: &str) -> ApiError {
    let info = attributes.info;
    let user = &attributes.user.name;
    let message = if info.is_resource_request {
        let resource = match info.subresource.as_str() {
            "" => info.resource.clone(),
            sub => format!("{}/{sub}", info.resource),
        };
        let group = &info.api_group;
        let scope = if info.namespace.is_empty() {
            "at the cluster scope".to_owned()
        } else {
            format!("in the namespace \"{}\"", info.namespace)
        };
        let what = match info.name.as_str() {
            "" => resource.clone(),
            name => format!("{resource} \"{name}\""),
        };
        format!(
            "{what} is forbidden: User \"{user}\" cannot {} resource \"{resource}\" in API group \"{group}\" {scope}",
            info.verb
        )
    } else {
        format!(
            "forbidden: User \"{user}\" cannot {} path \"{}\"",
            info.verb, info.path
        )
    };
    let message = if reason.is_empty() { message } else { format!("{message}: {reason}") };
    ApiError {
        code: 403,
        reason: "Forbidden",
        message,
        details: None,
    }
}

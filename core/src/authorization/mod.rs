//! Authorization: may this user do this verb on this resource or path? The stage sits
//! after impersonation and before routing, as upstream's `WithAuthorization` filter.
//! The only authorizer so far is upstream's `AlwaysAllow`: every authenticated
//! request is allowed.

use crate::authn::UserInfo;
use crate::request_info::RequestInfo;
use crate::status::ApiError;

/// What an authorizer is asked about: upstream's `authorizer.Attributes`. Built from a
/// request's info, or by hand for the checks a handler makes (impersonation, reviews,
/// escalation).
#[derive(Clone, Copy, Debug)]
pub struct Attributes<'a> {
    pub user: &'a UserInfo,
    pub verb: &'a str,
    /// A resource request (`/api`, `/apis` below a group version) or a path.
    pub resource_request: bool,
    pub namespace: &'a str,
    pub api_group: &'a str,
    pub api_version: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub name: &'a str,
    /// The path of a non-resource request.
    pub path: &'a str,
}

impl<'a> Attributes<'a> {
    /// The attributes of a request as its info resolved it.
    pub fn of_request(user: &'a UserInfo, info: &'a RequestInfo) -> Attributes<'a> {
        Attributes {
            user,
            verb: &info.verb,
            resource_request: info.is_resource_request,
            namespace: &info.namespace,
            api_group: &info.api_group,
            api_version: &info.api_version,
            resource: &info.resource,
            subresource: &info.subresource,
            name: &info.name,
            path: &info.path,
        }
    }
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
    /// Every request is refused (upstream's `AlwaysDeny` mode, an opinion-less
    /// refusal with its reason).
    AlwaysDeny,
}

impl Authorizer {
    pub fn authorize(&self, _attributes: Attributes<'_>) -> Decision {
        match self {
            Authorizer::AlwaysAllow => Decision::Allow,
            Authorizer::AlwaysDeny => Decision::Deny("Everything is forbidden.".to_owned()),
        }
    }

    /// What `user` may do in `namespace` (cluster-wide rules included), as
    /// SelfSubjectRulesReview reports it: upstream's `RuleResolver.RulesFor`.
    pub fn rules_for(&self, _user: &UserInfo, _namespace: &str) -> Rules {
        match self {
            Authorizer::AlwaysAllow => Rules::everything(),
            Authorizer::AlwaysDeny => Rules::default(),
        }
    }
}

/// A resource rule as a rules review reports it (`authorization.k8s.io/v1`
/// `ResourceRule`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
}

/// A non-resource rule as a rules review reports it (`NonResourceRule`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NonResourceRule {
    pub verbs: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

/// Everything a user may do in a namespace, as far as the authorizers can list it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    pub resource_rules: Vec<ResourceRule>,
    pub non_resource_rules: Vec<NonResourceRule>,
    /// Some authorizer could not list its rules (a webhook), so the list may be short.
    pub incomplete: bool,
    pub evaluation_error: String,
}

impl Rules {
    /// Upstream's always-allow authorizer's answer: `*` everywhere.
    pub fn everything() -> Rules {
        let star = || vec!["*".to_owned()];
        Rules {
            resource_rules: vec![ResourceRule {
                verbs: star(),
                api_groups: star(),
                resources: star(),
                resource_names: Vec::new(),
            }],
            non_resource_rules: vec![NonResourceRule {
                verbs: star(),
                non_resource_urls: star(),
            }],
            incomplete: false,
            evaluation_error: String::new(),
        }
    }
}

/// The 403 of a denied request, worded as upstream's forbidden responder words it:
/// about the resource (without its subresource) in its group, the verb and the
/// resource with its subresource in the sentence, the reason after a colon.
pub fn forbidden(attributes: Attributes<'_>, reason: &str) -> ApiError {
    let a = attributes;
    let user = &a.user.name;
    let reason = match reason {
        "" => String::new(),
        reason => format!(": {reason}"),
    };
    if !a.resource_request {
        let why = format!("User \"{user}\" cannot {} path \"{}\"{reason}", a.verb, a.path);
        return ApiError::forbidden("", "", a.path, &why);
    }
    let resource = match a.subresource {
        "" => a.resource.to_owned(),
        sub => format!("{}/{sub}", a.resource),
    };
    let scope = match a.namespace {
        "" => "at the cluster scope".to_owned(),
        ns => format!("in the namespace \"{ns}\""),
    };
    let why = format!(
        "User \"{user}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}{reason}",
        a.verb, a.api_group
    );
    ApiError::forbidden(a.api_group, a.resource, a.name, &why)
}
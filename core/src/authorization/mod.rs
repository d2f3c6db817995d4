//! Authorization: may this user do this verb on this resource or path? The stage sits
//! after impersonation and before routing, as upstream's `WithAuthorization` filter.
//!
//! The authorizers of `--authorization-mode` are asked in order, as upstream's union
//! authorizer asks them: the first that allows or denies decides; when all have no
//! opinion the request is denied, with their reasons. Members of `system:masters` are
//! allowed before any is asked, as upstream's privileged-group authorizer allows them.

pub mod escalation;
pub mod rbac;
pub mod webhook;

use crate::authn::UserInfo;
use crate::registry::Served;
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
    /// The attributes of a request for a non-resource `path`.
    pub fn of_path(user: &'a UserInfo, verb: &'a str, path: &'a str) -> Attributes<'a> {
        Attributes {
            user,
            verb,
            resource_request: false,
            namespace: "",
            api_group: "",
            api_version: "",
            resource: "",
            subresource: "",
            name: "",
            path,
        }
    }

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

/// The answer of all the authorizers together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Denied, with the reason to show in the 403 (empty for none).
    Deny(String),
}

/// One authorizer's answer (upstream's `authorizer.Decision` and reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opinion {
    Allow,
    Deny(String),
    /// Neither: the next authorizer is asked. The reason, if any, joins the 403's.
    NoOpinion(String),
}

/// One authorizer of `--authorization-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every request is allowed.
    AlwaysAllow,
    /// No opinion on any request, with upstream's reason "Everything is forbidden.".
    AlwaysDeny,
    /// Roles and bindings.
    Rbac,
    /// A remote service asked with SubjectAccessReviews.
    Webhook,
}

impl Mode {
    /// The mode upstream's flag names `name`; `None` for names it does not know.
    /// Apiary has no Node or ABAC authorizer yet: those are refused by the adapter
    /// with their own message.
    pub fn parse(name: &str) -> Option<Mode> {
        match name {
            "AlwaysAllow" => Some(Mode::AlwaysAllow),
            "AlwaysDeny" => Some(Mode::AlwaysDeny),
            "RBAC" => Some(Mode::Rbac),
            "Webhook" => Some(Mode::Webhook),
            _ => None,
        }
    }
}

/// The configured authorizers (`--authorization-mode`), asked in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authorizer {
    pub modes: Vec<Mode>,
    /// `--authorization-webhook-config-file` and its flags, for the Webhook mode.
    pub webhook: Option<webhook::WebhookAuthorizerConfig>,
}

impl Default for Authorizer {
    /// Apiary authorizes with RBAC unless told otherwise (kube-apiserver's own default
    /// is AlwaysAllow; every real cluster sets RBAC).
    fn default() -> Self {
        Authorizer::new(vec![Mode::Rbac])
    }
}

impl Authorizer {
    pub fn new(modes: Vec<Mode>) -> Authorizer {
        Authorizer { modes, webhook: None }
    }
}

/// Where the union of authorizers stands for one request: the next mode to ask and
/// what the ones before said. It pauses at a webhook that must be asked.
#[derive(Debug, Clone, Default)]
pub(crate) struct Union {
    next: usize,
    reasons: Vec<String>,
    errors: Vec<String>,
}

/// What the union makes of a request so far.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Decided, and by which mode (`None`: `system:masters`, or no mode at all).
    Decided(Decision, Option<Mode>),
    /// No authorizer allowed it and one failed: upstream answers 500 with the errors.
    Failed(String),
    /// The webhook must be asked first; resume with its answer.
    Ask(crate::effect::Outbound, Union, webhook::Question),
}

/// The authorizers of a running server, with the state they decide from.
#[derive(Debug)]
pub(crate) struct Authorizers {
    modes: Vec<Mode>,
    rbac: rbac::Rbac,
    webhook: Option<webhook::WebhookAuthorizer>,
}

impl Authorizers {
    pub(crate) fn new(config: &Authorizer) -> Authorizers {
        Authorizers {
            modes: config.modes.clone(),
            rbac: rbac::Rbac::default(),
            webhook: config.webhook.clone().map(webhook::WebhookAuthorizer::new),
        }
    }

    /// Upstream's union authorizer behind its privileged-group authorizer, for checks
    /// that cannot wait (impersonation, reviews, escalation): a webhook is consulted
    /// through its kept answers only, and has no opinion otherwise.
    pub(crate) fn authorize(&self, served: &Served, storage_prefix: &str, a: Attributes<'_>, now: std::time::Duration) -> Decision {
        match self.run(served, storage_prefix, &a, Union::default(), now, false) {
            Verdict::Decided(decision, _) => decision,
            Verdict::Failed(e) => Decision::Deny(e),
            Verdict::Ask(..) => Decision::Deny(String::new()),
        }
    }

    /// The union for a request: it may stop to ask the webhook.
    pub(crate) fn begin(&self, served: &Served, storage_prefix: &str, a: &Attributes<'_>, now: std::time::Duration) -> Verdict {
        self.run(served, storage_prefix, a, Union::default(), now, true)
    }

    /// Go on after the webhook answered `outcome`.
    pub(crate) fn resume(
        &self,
        served: &Served,
        storage_prefix: &str,
        a: &Attributes<'_>,
        mut union: Union,
        question: webhook::Question,
        outcome: crate::effect::CallOutcome,
        now: std::time::Duration,
    ) -> Verdict {
        let webhook = self.webhook.as_ref().expect("asked only when configured");
        let opinion = match webhook.answered(question, outcome, now) {
            Ok(opinion) => opinion,
            Err(e) => {
                union.errors.push(e);
                Opinion::NoOpinion(String::new())
            }
        };
        union.next += 1;
        match Self::weigh(opinion, &mut union) {
            Some(decided) => Verdict::Decided(decided, Some(Mode::Webhook)),
            None => self.run(served, storage_prefix, a, union, now, true),
        }
    }

    /// Ask the modes from `union.next` on.
    fn run(&self, served: &Served, storage_prefix: &str, a: &Attributes<'_>, mut union: Union, now: std::time::Duration, may_ask: bool) -> Verdict {
        if a.user.in_group(PRIVILEGED_GROUP) {
            return Verdict::Decided(Decision::Allow, None);
        }
        while let Some(mode) = self.modes.get(union.next) {
            let opinion = match mode {
                Mode::AlwaysAllow => Opinion::Allow,
                Mode::AlwaysDeny => Opinion::NoOpinion("Everything is forbidden.".to_owned()),
                Mode::Rbac => rbac::authorize(&self.rbac.index(served, storage_prefix), a),
                Mode::Webhook => match &self.webhook {
                    None => Opinion::NoOpinion(String::new()),
                    Some(webhook) => {
                        let question = webhook.question(a);
                        match webhook.cached(&question, now) {
                            Some(opinion) => opinion,
                            None if may_ask => return Verdict::Ask(webhook.ask(&question), union, question),
                            None => Opinion::NoOpinion(String::new()),
                        }
                    }
                },
            };
            union.next += 1;
            if let Some(decided) = Self::weigh(opinion, &mut union) {
                return Verdict::Decided(decided, Some(*mode));
            }
        }
        if union.errors.is_empty() {
            Verdict::Decided(Decision::Deny(union.reasons.join("\n")), None)
        } else {
            Verdict::Failed(aggregate(&union.errors))
        }
    }

    /// One authorizer's opinion: decisive, or noted for the end.
    fn weigh(opinion: Opinion, union: &mut Union) -> Option<Decision> {
        match opinion {
            Opinion::Allow => Some(Decision::Allow),
            Opinion::Deny(reason) => Some(Decision::Deny(reason)),
            Opinion::NoOpinion(reason) => {
                if !reason.is_empty() {
                    union.reasons.push(reason);
                }
                None
            }
        }
    }

    /// The audit annotations of a decision (`authorization.k8s.io/decision` and
    /// `reason`), as upstream's authorization filter writes them: an allow says which
    /// binding allowed it when RBAC did.
    pub(crate) fn audit_annotation(&self, served: &Served, storage_prefix: &str, verdict: &Verdict, a: &Attributes<'_>) -> Option<(&'static str, String)> {
        match verdict {
            Verdict::Decided(Decision::Allow, Some(Mode::Rbac)) => {
                let reason = rbac::allowed_by(&self.rbac.index(served, storage_prefix), a).unwrap_or_default();
                Some(("allow", reason))
            }
            Verdict::Decided(Decision::Allow, _) => Some(("allow", String::new())),
            Verdict::Decided(Decision::Deny(reason), _) => Some(("forbid", reason.clone())),
            Verdict::Failed(error) => Some(("forbid", error.clone())),
            Verdict::Ask(..) => None,
        }
    }

    /// The RBAC index as the caches stand now (whatever the modes: the RBAC registry's
    /// escalation checks read it too, as upstream's do).
    pub(crate) fn rbac_index(&self, served: &Served, storage_prefix: &str) -> std::sync::Arc<rbac::Index> {
        self.rbac.index(served, storage_prefix)
    }

    /// Every authorizer's rules for `user` in `namespace`, concatenated in mode order.
    pub(crate) fn rules_for(&self, served: &Served, storage_prefix: &str, user: &UserInfo, namespace: &str) -> Rules {
        let mut all = Rules::default();
        let mut errors = Vec::new();
        for mode in &self.modes {
            let rules = match mode {
                Mode::AlwaysAllow => Rules::everything(),
                Mode::AlwaysDeny => Rules::default(),
                Mode::Rbac => rbac::rules_for(&self.rbac.index(served, storage_prefix), user, namespace),
                // Upstream's webhook cannot list rules: the list is incomplete.
                Mode::Webhook => Rules {
                    incomplete: true,
                    ..Rules::default()
                },
            };
            all.resource_rules.extend(rules.resource_rules);
            all.non_resource_rules.extend(rules.non_resource_rules);
            all.incomplete |= rules.incomplete;
            if !rules.evaluation_error.is_empty() {
                errors.push(rules.evaluation_error);
            }
        }
        all.evaluation_error = aggregate(&errors);
        all
    }
}

/// Errors as one, as Go's `utilerrors.NewAggregate` words them: none is empty, one is
/// itself, more are `[a, b]`.
pub fn aggregate(errors: &[impl AsRef<str>]) -> String {
    match errors {
        [] => String::new(),
        [one] => one.as_ref().to_owned(),
        many => format!("[{}]", many.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(", ")),
    }
}

/// Members of this group may do anything, whatever the authorizers say.
pub const PRIVILEGED_GROUP: &str = "system:masters";

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

/// The 403 of a denied request, worded as upstream's forbidden responder words it.
pub fn forbidden(a: Attributes<'_>, reason: &str) -> ApiError {
    let user = &a.user.name;
    let mut why = if a.resource_request {
        let resource = match a.subresource {
            "" => a.resource.to_owned(),
            sub => format!("{}/{sub}", a.resource),
        };
        let scope = match a.namespace {
            "" => "at the cluster scope".to_owned(),
            ns => format!("in the namespace \"{ns}\""),
        };
        format!(
            "User \"{user}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
            a.verb, a.api_group
        )
    } else {
        format!("User \"{user}\" cannot {} path \"{}\"", a.verb, a.path)
    };
    if !reason.is_empty() {
        why = format!("{why}: {reason}");
    }
    // Upstream names the resource (not the subresource) and its group before "is
    // forbidden", and in the details.
    let (group, resource) = if a.resource_request { (a.api_group, a.resource) } else { ("", "") };
    ApiError::forbidden(group, resource, if a.resource_request { a.name } else { "" }, &why)
}

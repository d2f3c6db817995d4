//! What an admission webhook or a ValidatingAdmissionPolicy applies to: its rules
//! (operations, groups, versions, resources and subresources, scope), its namespace
//! and object selectors, and, under `matchPolicy: Equivalent`, the same resource
//! served under another group or version. Pure functions over the objects of
//! admissionregistration.k8s.io/v1 as stored (defaulted), as upstream's
//! `webhook/predicates/{rules,namespace,object}` and `policy/matching` decide.
//!
//! How the chain uses it: for each webhook, [`webhook_matches`]; for each policy,
//! [`policy_matches`] on `spec.matchConstraints`, then for each of its bindings
//! [`binding_matches`]. Each takes the request ([`Request`]), the namespace object the
//! request is in (when it has one; the caller reads it), and the registry's view of
//! equivalent resources ([`EquivalentResources`]). A match says which resource and
//! kind matched: the object is sent (and a policy evaluated) in that version.

use super::{Attributes, Operation};
use crate::rest::object::Object;
use crate::selection::LabelSelector;
use crate::status::ApiError;
use serde_json::Value;
use std::fmt;

/// A resource in one version (`apps/v1 deployments`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GroupVersionResource {
    pub group: String,
    pub version: String,
    pub resource: String,
}

/// A kind in one version.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GroupVersionKind {
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl GroupVersionResource {
    pub fn new(group: &str, version: &str, resource: &str) -> GroupVersionResource {
        GroupVersionResource {
            group: group.to_owned(),
            version: version.to_owned(),
            resource: resource.to_owned(),
        }
    }
}

impl GroupVersionKind {
    pub fn new(group: &str, version: &str, kind: &str) -> GroupVersionKind {
        GroupVersionKind {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.group.is_empty() && self.version.is_empty() && self.kind.is_empty()
    }
}

/// As Go's `schema.GroupVersionResource.String()` prints it.
impl fmt::Display for GroupVersionResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}, Resource={}", self.group, self.version, self.resource)
    }
}

/// What matching (and policy evaluation) is told about a request: the admission
/// attributes, the kind, and the objects as the request carries them.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub attributes: Attributes<'a>,
    /// The kind of the request's object, in the request's version.
    pub kind: (&'a str, &'a str, &'a str),
    /// The new object (none for a delete or a connect).
    pub object: Option<&'a Object>,
    /// The object before the write (updates and deletes).
    pub old_object: Option<&'a Object>,
    /// The options of the operation (`CreateOptions`, ...), as JSON.
    pub options: Option<&'a Object>,
}

impl<'a> Request<'a> {
    pub fn new(attributes: Attributes<'a>, kind: (&'a str, &'a str, &'a str)) -> Request<'a> {
        Request {
            attributes,
            kind,
            object: None,
            old_object: None,
            options: None,
        }
    }

    pub fn resource(&self) -> GroupVersionResource {
        let a = &self.attributes;
        GroupVersionResource::new(a.group, a.version, a.resource)
    }

    pub fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::new(self.kind.0, self.kind.1, self.kind.2)
    }

    /// The namespace as upstream's `GetNamespace()` gives it ("" when none).
    pub fn namespace(&self) -> &'a str {
        self.attributes.namespace.unwrap_or("")
    }
}

/// The registry's view of a resource served in several versions or groups
/// (upstream's `EquivalentResourceMapper`).
pub trait EquivalentResources {
    /// Every resource that is the same as `resource` (its own included).
    fn equivalents(&self, resource: &GroupVersionResource, subresource: &str) -> Vec<GroupVersionResource>;
    /// The kind `resource` (or its subresource) is served as; `None` when unknown.
    fn kind_for(&self, resource: &GroupVersionResource, subresource: &str) -> Option<GroupVersionKind>;
}

/// No resource has an equivalent.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoEquivalents;

impl EquivalentResources for NoEquivalents {
    fn equivalents(&self, resource: &GroupVersionResource, _: &str) -> Vec<GroupVersionResource> {
        vec![resource.clone()]
    }
    fn kind_for(&self, _: &GroupVersionResource, _: &str) -> Option<GroupVersionKind> {
        None
    }
}

/// Equivalent resources listed by hand: each set holds resources served as one,
/// each with its kind.
#[derive(Clone, Debug, Default)]
pub struct EquivalenceTable(pub Vec<Vec<(GroupVersionResource, GroupVersionKind)>>);

impl EquivalentResources for EquivalenceTable {
    fn equivalents(&self, resource: &GroupVersionResource, _: &str) -> Vec<GroupVersionResource> {
        match self.0.iter().find(|set| set.iter().any(|(r, _)| r == resource)) {
            Some(set) => set.iter().map(|(r, _)| r.clone()).collect(),
            None => vec![resource.clone()],
        }
    }
    fn kind_for(&self, resource: &GroupVersionResource, _: &str) -> Option<GroupVersionKind> {
        self.0.iter().flatten().find(|(r, _)| r == resource).map(|(_, k)| k.clone())
    }
}

/// What matched: the resource and kind the request is presented as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matched {
    pub resource: GroupVersionResource,
    pub kind: GroupVersionKind,
}

/// Why matching could not decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchError {
    /// The namespace selector needs the namespace's labels and the namespace does not
    /// exist (upstream answers 404).
    NamespaceNotFound(String),
    /// A stored selector that does not parse.
    InvalidSelector(String),
    /// An equivalent resource matched whose kind the registry does not know.
    UnknownKind(GroupVersionResource),
}

impl fmt::Display for MatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatchError::NamespaceNotFound(name) => write!(f, "namespaces \"{name}\" not found"),
            MatchError::InvalidSelector(detail) => f.write_str(detail),
            MatchError::UnknownKind(gvr) => write!(f, "unable to convert to {gvr}: unknown kind"),
        }
    }
}

impl MatchError {
    /// The status a client sees: 404 for a missing namespace, 500 otherwise.
    pub fn to_api_error(&self) -> ApiError {
        match self {
            MatchError::NamespaceNotFound(name) => ApiError::not_found("", "namespaces", name),
            other => ApiError::internal(other),
        }
    }
}

fn strings(v: Option<&Value>) -> impl Iterator<Item = &str> {
    v.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
}

fn exact_or_wildcard(items: Option<&Value>, requested: &str) -> bool {
    strings(items).any(|i| i == "*" || i == requested)
}

const NAMESPACES: (&str, &str, &str) = ("", "v1", "namespaces");

fn is_namespace_resource(r: &GroupVersionResource) -> bool {
    (r.group.as_str(), r.version.as_str(), r.resource.as_str()) == NAMESPACES
}

/// Whether one `RuleWithOperations` matches the request presented as `resource`
/// (upstream's `rules.Matcher.Matches`).
pub fn rule_matches(rule: &Value, request: &Request, resource: &GroupVersionResource) -> bool {
    scope_matches(rule, request, resource)
        && strings(rule.get("operations")).any(|op| op == "*" || op == request.attributes.operation.as_str())
        && exact_or_wildcard(rule.get("apiGroups"), &resource.group)
        && exact_or_wildcard(rule.get("apiVersions"), &resource.version)
        && resource_matches(rule, resource, request.attributes.subresource)
}

/// `scope`: a namespace object is cluster-scoped, though requests for it carry its
/// own name as their namespace.
fn scope_matches(rule: &Value, request: &Request, resource: &GroupVersionResource) -> bool {
    let in_namespace = !request.namespace().is_empty();
    match rule.get("scope").and_then(Value::as_str) {
        None | Some("*") => true,
        Some("Namespaced") => !is_namespace_resource(resource) && in_namespace,
        Some("Cluster") => is_namespace_resource(resource) || !in_namespace,
        Some(_) => false,
    }
}

fn resource_matches(rule: &Value, resource: &GroupVersionResource, subresource: &str) -> bool {
    strings(rule.get("resources")).any(|entry| {
        let (res, sub) = entry.split_once('/').unwrap_or((entry, ""));
        (res == "*" || res == resource.resource) && (sub == "*" || sub == subresource)
    })
}

fn parse_selector(selector: Option<&Value>) -> Result<Option<LabelSelector>, MatchError> {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return Ok(None);
    };
    match LabelSelector::from_object(selector) {
        Some(s) if s.is_empty() => Ok(None),
        Some(s) => Ok(Some(s)),
        None => Err(MatchError::InvalidSelector(format!(
            "invalid label selector: {}",
            crate::validation::go_json(selector)
        ))),
    }
}

fn labels(object: &Object) -> Option<&Object> {
    object.get("metadata")?.get("labels")?.as_object()
}

/// `namespaceSelector` (upstream's `namespace.Matcher.MatchNamespaceSelector`):
/// cluster-scoped requests other than for namespaces always match; a namespace being
/// created or updated is judged by its own labels; anything else by the labels of
/// `namespace`, the object of the namespace the request is in.
pub fn namespace_selector_matches(
    selector: Option<&Value>,
    request: &Request,
    namespace: Option<&Object>,
) -> Result<bool, MatchError> {
    let a = &request.attributes;
    let name = request.namespace();
    if name.is_empty() && a.resource != "namespaces" {
        return Ok(true);
    }
    let Some(selector) = parse_selector(selector)? else {
        return Ok(true);
    };
    let own = a.resource == "namespaces"
        && a.subresource.is_empty()
        && matches!(a.operation, Operation::Create | Operation::Update);
    let labels = if own {
        request.object.and_then(labels)
    } else {
        match namespace {
            Some(ns) => labels(ns),
            None => return Err(MatchError::NamespaceNotFound(name.to_owned())),
        }
    };
    Ok(selector.matches_labels(labels))
}

/// `objectSelector` (upstream's `object.Matcher.MatchObjectSelector`): the new
/// object's labels or the old object's.
pub fn object_selector_matches(selector: Option<&Value>, request: &Request) -> Result<bool, MatchError> {
    let Some(selector) = parse_selector(selector)? else {
        return Ok(true);
    };
    let matches = |o: Option<&Object>| o.is_some_and(|o| selector.matches_labels(labels(o)));
    Ok(matches(request.object) || matches(request.old_object))
}

/// The two selectors of a webhook or `matchResources`, in upstream's order: a
/// selector that does not match ends matching, one that errs only reports once the
/// rules matched. `Ok(None)` when a selector rules the request out.
fn selectors(
    spec: &Value,
    request: &Request,
    namespace: Option<&Object>,
) -> Option<(Option<MatchError>, Option<MatchError>)> {
    let ns = namespace_selector_matches(spec.get("namespaceSelector"), request, namespace);
    if ns == Ok(false) {
        return None;
    }
    let obj = object_selector_matches(spec.get("objectSelector"), request);
    if obj == Ok(false) {
        return None;
    }
    Some((ns.err(), obj.err()))
}

fn equivalent_policy(spec: &Value) -> bool {
    spec.get("matchPolicy").and_then(Value::as_str) == Some("Equivalent")
}

/// The request's own resource and kind.
fn as_requested(request: &Request) -> Matched {
    Matched {
        resource: request.resource(),
        kind: request.gvk(),
    }
}

/// Whether a webhook (an entry of `webhooks` of a Validating or Mutating
/// WebhookConfiguration) is called for the request (upstream's
/// `generic.Webhook.ShouldCallHook`, without the exemption of the admission
/// configuration kinds: see [`is_exempt_configuration_resource`]).
pub fn webhook_matches(
    webhook: &Value,
    request: &Request,
    namespace: Option<&Object>,
    equivalents: &dyn EquivalentResources,
) -> Result<Option<Matched>, MatchError> {
    let Some((ns_err, obj_err)) = selectors(webhook, request, namespace) else {
        return Ok(None);
    };
    // A webhook's rules have no names: they match as named rules without any.
    let rules = rule_list(webhook, "rules");
    let Some(matched) = named_rules_match(rules, equivalent_policy(webhook), request, equivalents)? else {
        return Ok(None);
    };
    match ns_err.or(obj_err) {
        Some(e) => Err(e),
        None => Ok(Some(matched)),
    }
}

/// Whether a list of `NamedRuleWithOperations` matches, and as what (upstream's
/// `matchesResourceRules`): the request's own resource first, then, under
/// `Equivalent`, each rule against each equivalent resource.
fn named_rules_match(
    rules: &[Value],
    equivalent: bool,
    request: &Request,
    equivalents: &dyn EquivalentResources,
) -> Result<Option<Matched>, MatchError> {
    let name_matches = |rule: &Value| {
        let mut names = strings(rule.get("resourceNames")).peekable();
        names.peek().is_none() || names.any(|n| n == request.attributes.name)
    };
    if rules.is_empty() {
        return Ok(None);
    }
    let requested = request.resource();
    if rules.iter().any(|r| rule_matches(r, request, &requested) && name_matches(r)) {
        return Ok(Some(as_requested(request)));
    }
    if !equivalent {
        return Ok(None);
    }
    let subresource = request.attributes.subresource;
    let candidates = equivalents.equivalents(&requested, subresource);
    for rule in rules {
        for candidate in candidates.iter().filter(|e| **e != requested) {
            if !rule_matches(rule, request, candidate) {
                continue;
            }
            let kind = equivalents
                .kind_for(candidate, subresource)
                .filter(|k| !k.is_empty())
                .ok_or_else(|| MatchError::UnknownKind(candidate.clone()))?;
            if name_matches(rule) {
                return Ok(Some(Matched {
                    resource: candidate.clone(),
                    kind,
                }));
            }
        }
    }
    Ok(None)
}

fn rule_list<'v>(spec: &'v Value, key: &str) -> &'v [Value] {
    spec.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// Whether a policy's `spec.matchConstraints` (or a binding's `spec.matchResources`)
/// selects the request (upstream's `matching.Matcher.Matches`): selectors, then
/// `excludeResourceRules`, then `resourceRules` (none: everything).
pub fn policy_matches(
    match_resources: &Value,
    request: &Request,
    namespace: Option<&Object>,
    equivalents: &dyn EquivalentResources,
) -> Result<Option<Matched>, MatchError> {
    let Some((ns_err, obj_err)) = selectors(match_resources, request, namespace) else {
        return Ok(None);
    };
    let equivalent = equivalent_policy(match_resources);
    let excluded = rule_list(match_resources, "excludeResourceRules");
    if named_rules_match(excluded, equivalent, request, equivalents)?.is_some() {
        return Ok(None);
    }
    let rules = rule_list(match_resources, "resourceRules");
    let matched = if rules.is_empty() {
        Some(as_requested(request))
    } else {
        named_rules_match(rules, equivalent, request, equivalents)?
    };
    let Some(matched) = matched else { return Ok(None) };
    match ns_err.or(obj_err) {
        Some(e) => Err(e),
        None => Ok(Some(matched)),
    }
}

/// Whether a ValidatingAdmissionPolicyBinding applies: a binding without
/// `spec.matchResources` applies wherever its policy does.
pub fn binding_matches(
    binding: &Object,
    request: &Request,
    namespace: Option<&Object>,
    equivalents: &dyn EquivalentResources,
) -> Result<bool, MatchError> {
    match binding.get("spec").and_then(|s| s.get("matchResources")).filter(|m| !m.is_null()) {
        None => Ok(true),
        Some(m) => Ok(policy_matches(m, request, namespace, equivalents)?.is_some()),
    }
}

/// Requests for the admission configuration kinds themselves, which webhooks are
/// never called for (upstream's `IsExemptAdmissionConfigurationResource`).
pub fn is_exempt_configuration_resource(kind: &GroupVersionKind) -> bool {
    kind.group == "admissionregistration.k8s.io"
        && matches!(
            kind.kind.as_str(),
            "ValidatingWebhookConfiguration"
                | "MutatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        )
}

#[cfg(test)]
#[path = "matching_tests.rs"]
mod tests;

//! The audit policy (`audit.k8s.io/v1` `Policy`): rules tried in order, the first that
//! matches a request giving its level, the stages to leave out, and whether managed
//! fields are left out of logged objects. No rule matching means level None.

use crate::validation::{quoted, FieldError};
use serde::{Deserialize, Serialize};

/// How much of a request is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
pub enum Level {
    None,
    /// Who, what and when; no bodies.
    Metadata,
    /// And the request body.
    Request,
    /// And the response body.
    RequestResponse,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
pub enum Stage {
    RequestReceived,
    ResponseStarted,
    ResponseComplete,
    Panic,
}

const STAGES: &[&str] = &[
    "RequestReceived",
    "ResponseStarted",
    "ResponseComplete",
    "Panic",
];
const LEVELS: &[&str] = &["None", "Metadata", "Request", "RequestResponse"];

/// A policy file, as read (levels and stages as text until checked).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPolicy {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    rules: Vec<RawRule>,
    #[serde(default)]
    omit_stages: Vec<String>,
    #[serde(default)]
    omit_managed_fields: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRule {
    #[serde(default)]
    level: String,
    #[serde(default)]
    users: Vec<String>,
    #[serde(default)]
    user_groups: Vec<String>,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    resources: Vec<GroupResources>,
    #[serde(default)]
    namespaces: Vec<String>,
    #[serde(default, rename = "nonResourceURLs")]
    non_resource_urls: Vec<String>,
    #[serde(default)]
    omit_stages: Vec<String>,
    omit_managed_fields: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GroupResources {
    #[serde(default)]
    group: String,
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    resource_names: Vec<String>,
}

#[derive(Clone, Debug)]
struct Rule {
    level: Level,
    users: Vec<String>,
    user_groups: Vec<String>,
    verbs: Vec<String>,
    resources: Vec<GroupResources>,
    namespaces: Vec<String>,
    non_resource_urls: Vec<String>,
    /// The policy's omitted stages and the rule's own.
    omit_stages: Vec<Stage>,
    omit_managed_fields: bool,
}

/// A checked policy.
#[derive(Clone, Debug)]
pub struct Policy {
    rules: Vec<Rule>,
    omit_stages: Vec<Stage>,
    omit_managed_fields: bool,
}

/// What the policy says for one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditConfig {
    pub level: Level,
    pub omit_stages: Vec<Stage>,
    pub omit_managed_fields: bool,
}

impl AuditConfig {
    /// Whether an event of `stage` is written.
    pub fn records(&self, stage: Stage) -> bool {
        self.level > Level::None && !self.omit_stages.contains(&stage)
    }
}

/// What the policy matches a request on.
#[derive(Clone, Copy, Debug)]
pub struct Attributes<'a> {
    pub user: &'a str,
    pub groups: &'a [String],
    /// The authorization verb: get, list, watch, create, update, patch, delete,
    /// deletecollection (or the HTTP verb in lower case for non-resource requests).
    pub verb: &'a str,
    pub resource_request: bool,
    /// `""` for cluster-scoped resources.
    pub namespace: &'a str,
    pub group: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub name: &'a str,
    /// The URL path, for non-resource requests.
    pub path: &'a str,
}

impl Policy {
    /// Read a policy file (YAML or JSON) and check it as upstream does; every problem
    /// is reported.
    pub fn parse(text: &[u8]) -> Result<Policy, String> {
        let raw: RawPolicy =
            serde_yaml::from_slice(text).map_err(|e| format!("failed decoding: {e}"))?;
        match (raw.api_version.as_str(), raw.kind.as_str()) {
            ("audit.k8s.io/v1", "Policy") => {}
            (version, kind) => {
                return Err(format!(
                    "unknown group version field {version}, Kind={kind} in policy (want audit.k8s.io/v1, Kind=Policy)"
                ))
            }
        }
        let mut errors = Vec::new();
        let omit_stages = stages(&raw.omit_stages, "omitStages", &mut errors);
        let mut rules = Vec::with_capacity(raw.rules.len());
        for (i, rule) in raw.rules.into_iter().enumerate() {
            rules.push(check_rule(
                rule,
                &format!("rules[{i}]"),
                &omit_stages,
                raw.omit_managed_fields,
                &mut errors,
            ));
        }
        if !errors.is_empty() {
            let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
            return Err(format!("invalid audit policy: {}", listed.join(", ")));
        }
        if rules.is_empty() {
            return Err("loaded illegal policy with 0 rules".into());
        }
        Ok(Policy {
            rules,
            omit_stages,
            omit_managed_fields: raw.omit_managed_fields,
        })
    }

    /// The level and stages for a request: the first rule that matches, or None.
    pub fn evaluate(&self, request: &Attributes) -> AuditConfig {
        match self.rules.iter().find(|rule| rule.matches(request)) {
            Some(rule) => AuditConfig {
                level: rule.level,
                omit_stages: rule.omit_stages.clone(),
                omit_managed_fields: rule.omit_managed_fields,
            },
            None => AuditConfig {
                level: Level::None,
                omit_stages: self.omit_stages.clone(),
                omit_managed_fields: self.omit_managed_fields,
            },
        }
    }
}

fn stages(names: &[String], field: &str, errors: &mut Vec<FieldError>) -> Vec<Stage> {
    let mut out = Vec::new();
    for (i, name) in names.iter().enumerate() {
        match serde_yaml::from_str::<Stage>(name) {
            Ok(stage) if STAGES.contains(&name.as_str()) => out.push(stage),
            _ => errors.push(FieldError::invalid(
                &format!("{field}[{i}]"),
                name,
                format!("allowed stages are {}", STAGES.join(",")),
            )),
        }
    }
    out
}

fn check_rule(
    raw: RawRule,
    at: &str,
    policy_stages: &[Stage],
    policy_managed: bool,
    errors: &mut Vec<FieldError>,
) -> Rule {
    let level = match raw.level.as_str() {
        "" => {
            errors.push(FieldError::required(&format!("{at}.level"), ""));
            Level::None
        }
        name if LEVELS.contains(&name) => serde_yaml::from_str(name).unwrap_or(Level::None),
        name => {
            let supported: Vec<String> = LEVELS.iter().map(|l| quoted(l)).collect();
            errors.push(FieldError::invalid(
                &format!("{at}.level"),
                name,
                format!("supported values: {}", supported.join(", ")),
            ));
            Level::None
        }
    };
    for (i, url) in raw.non_resource_urls.iter().enumerate() {
        if url == "*" {
            continue;
        }
        let field = format!("{at}.nonResourceURLs[{i}]");
        if !url.starts_with('/') {
            errors.push(FieldError::invalid(
                &field,
                url,
                "non-resource URL rules must begin with a '/' character",
            ));
        }
        if url.len() > 1 && url[..url.len() - 1].contains('*') {
            errors.push(FieldError::invalid(
                &field,
                url,
                "non-resource URL wildcards '*' must be the final character of the rule",
            ));
        }
    }
    for group in &raw.resources {
        if !group.resource_names.is_empty() && group.resources.is_empty() {
            errors.push(FieldError::invalid(
                &format!("{at}.resources.resourceNames"),
                &format!("{:?}", group.resource_names),
                "using resourceNames requires at least one resource",
            ));
        }
    }
    if !raw.non_resource_urls.is_empty()
        && (!raw.resources.is_empty() || !raw.namespaces.is_empty())
    {
        errors.push(FieldError::invalid(
            &format!("{at}.nonResourceURLs"),
            &format!("{:?}", raw.non_resource_urls),
            "rules cannot apply to both regular resources and non-resource URLs",
        ));
    }
    let mut omit_stages = stages(&raw.omit_stages, &format!("{at}.omitStages"), errors);
    for stage in policy_stages {
        if !omit_stages.contains(stage) {
            omit_stages.push(*stage);
        }
    }
    omit_stages.sort();
    Rule {
        level,
        users: raw.users,
        user_groups: raw.user_groups,
        verbs: raw.verbs,
        resources: raw.resources,
        namespaces: raw.namespaces,
        non_resource_urls: raw.non_resource_urls,
        omit_stages,
        omit_managed_fields: raw.omit_managed_fields.unwrap_or(policy_managed),
    }
}

fn has(list: &[String], value: &str) -> bool {
    list.iter().any(|s| s == value)
}

impl Rule {
    fn matches(&self, r: &Attributes) -> bool {
        if !self.users.is_empty() && !has(&self.users, r.user) {
            return false;
        }
        if !self.user_groups.is_empty() && !r.groups.iter().any(|g| has(&self.user_groups, g)) {
            return false;
        }
        if !self.verbs.is_empty() && !has(&self.verbs, r.verb) {
            return false;
        }
        if !self.namespaces.is_empty() || !self.resources.is_empty() {
            return self.matches_resource(r);
        }
        if !self.non_resource_urls.is_empty() {
            return !r.resource_request
                && self
                    .non_resource_urls
                    .iter()
                    .any(|spec| path_matches(r.path, spec));
        }
        true
    }

    fn matches_resource(&self, r: &Attributes) -> bool {
        if !r.resource_request {
            return false;
        }
        if !self.namespaces.is_empty() && !has(&self.namespaces, r.namespace) {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        let combined = if r.subresource.is_empty() {
            r.resource.to_owned()
        } else {
            format!("{}/{}", r.resource, r.subresource)
        };
        self.resources
            .iter()
            .filter(|gr| gr.group == r.group || gr.group == "*")
            .any(|gr| {
                gr.resources.is_empty()
                    || gr.resources.iter().any(|res| {
                        (gr.resource_names.is_empty() || has(&gr.resource_names, r.name))
                            && (*res == combined
                                || res == "*"
                                || (!r.subresource.is_empty()
                                    && res.strip_prefix("*/") == Some(r.subresource))
                                || res.strip_suffix("/*") == Some(r.resource))
                    })
            })
    }
}

/// A non-resource URL rule: `*`, the exact path, or a prefix ending in `*`.
fn path_matches(path: &str, spec: &str) -> bool {
    spec == "*"
        || spec == path
        || spec
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: None
    users: ["system:kube-proxy"]
    verbs: ["watch"]
  - level: Metadata
    resources:
      - group: ""
        resources: ["secrets", "configmaps/status"]
  - level: Request
    userGroups: ["system:masters"]
    namespaces: ["kube-system"]
  - level: None
    nonResourceURLs: ["/healthz*", "/version"]
  - level: RequestResponse
    resources:
      - group: "apps"
        resources: ["deployments/*"]
        resourceNames: ["web"]
    omitStages: ["ResponseStarted"]
  - level: Metadata
    omitManagedFields: true
"#;

    fn request<'a>(groups: &'a [String]) -> Attributes<'a> {
        Attributes {
            user: "alice",
            groups,
            verb: "get",
            resource_request: true,
            namespace: "default",
            group: "",
            resource: "pods",
            subresource: "",
            name: "p",
            path: "/api/v1/namespaces/default/pods/p",
        }
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let policy = Policy::parse(POLICY.as_bytes()).unwrap();
        let none: Vec<String> = Vec::new();
        let masters = vec!["system:masters".to_owned()];

        let secret = Attributes {
            resource: "secrets",
            ..request(&none)
        };
        let c = policy.evaluate(&secret);
        assert_eq!(c.level, Level::Metadata);
        assert_eq!(
            c.omit_stages,
            [Stage::RequestReceived],
            "the policy's omitted stages apply to every rule"
        );
        assert!(!c.records(Stage::RequestReceived) && c.records(Stage::ResponseComplete));

        let status = Attributes {
            resource: "configmaps",
            subresource: "status",
            ..request(&none)
        };
        assert_eq!(policy.evaluate(&status).level, Level::Metadata);
        let plain_cm = Attributes {
            resource: "configmaps",
            ..request(&none)
        };
        assert_eq!(
            policy.evaluate(&plain_cm).level,
            Level::Metadata,
            "falls to the last rule"
        );
        assert!(policy.evaluate(&plain_cm).omit_managed_fields);

        let proxy_watch = Attributes {
            user: "system:kube-proxy",
            verb: "watch",
            ..request(&none)
        };
        assert_eq!(policy.evaluate(&proxy_watch).level, Level::None);
        assert!(!policy
            .evaluate(&proxy_watch)
            .records(Stage::ResponseComplete));

        let admin = Attributes {
            namespace: "kube-system",
            ..request(&masters)
        };
        assert_eq!(policy.evaluate(&admin).level, Level::Request);
        let admin_elsewhere = request(&masters);
        assert_eq!(policy.evaluate(&admin_elsewhere).level, Level::Metadata);

        let health = Attributes {
            resource_request: false,
            path: "/healthz/etcd",
            verb: "get",
            ..request(&none)
        };
        assert_eq!(policy.evaluate(&health).level, Level::None);
        let version = Attributes {
            resource_request: false,
            path: "/version",
            ..request(&none)
        };
        assert_eq!(policy.evaluate(&version).level, Level::None);
        let openapi = Attributes {
            resource_request: false,
            path: "/openapi/v2",
            ..request(&none)
        };
        assert_eq!(policy.evaluate(&openapi).level, Level::Metadata);

        let scale = Attributes {
            group: "apps",
            resource: "deployments",
            subresource: "scale",
            name: "web",
            ..request(&none)
        };
        let c = policy.evaluate(&scale);
        assert_eq!(c.level, Level::RequestResponse);
        assert_eq!(
            c.omit_stages,
            [Stage::RequestReceived, Stage::ResponseStarted]
        );
        let other_name = Attributes {
            name: "api",
            ..scale
        };
        assert_eq!(
            policy.evaluate(&other_name).level,
            Level::Metadata,
            "resourceNames narrow the rule"
        );
    }

    #[test]
    fn no_matching_rule_is_level_none() {
        let policy = Policy::parse(
            b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  verbs: [create]\n",
        )
        .unwrap();
        let none: Vec<String> = Vec::new();
        assert_eq!(policy.evaluate(&request(&none)).level, Level::None);
        let create = Attributes {
            verb: "create",
            ..request(&none)
        };
        assert_eq!(policy.evaluate(&create).level, Level::Metadata);
    }

    #[test]
    fn bad_policies_are_refused_with_every_problem() {
        let err = Policy::parse(
            br#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["Sometimes"]
rules:
  - level: Loud
  - nonResourceURLs: ["healthz", "/a*b"]
    namespaces: ["x"]
    level: None
  - resources: [{group: "", resourceNames: ["x"]}]
"#,
        )
        .unwrap_err();
        for expected in [
            "omitStages[0]: Invalid value: \"Sometimes\": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic",
            "rules[0].level: Invalid value: \"Loud\"",
            "rules[1].nonResourceURLs[0]: Invalid value: \"healthz\": non-resource URL rules must begin with a '/' character",
            "rules[1].nonResourceURLs[1]: Invalid value: \"/a*b\": non-resource URL wildcards '*' must be the final character of the rule",
            "rules cannot apply to both regular resources and non-resource URLs",
            "rules[2].level: Required value",
            "using resourceNames requires at least one resource",
        ] {
            assert!(err.contains(expected), "{expected} missing from {err}");
        }
        assert_eq!(
            Policy::parse(b"apiVersion: audit.k8s.io/v1\nkind: Policy\n").unwrap_err(),
            "loaded illegal policy with 0 rules"
        );
        assert!(
            Policy::parse(b"apiVersion: v1\nkind: ConfigMap\nrules: []\n")
                .unwrap_err()
                .contains("unknown group version")
        );
        assert!(Policy::parse(b": not yaml [")
            .unwrap_err()
            .starts_with("failed decoding"));
    }
}

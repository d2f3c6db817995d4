//! One RBAC policy rule and whether it allows a request, as upstream's
//! `rbac.RuleAllows` reads it: verbs, API groups, resources (with the
//! `resource/subresource` and `*/subresource` forms), resource names, and
//! non-resource URLs with a trailing `*`.

use crate::authorization::Attributes;
use serde::{Deserialize, Serialize};

/// A rule of a Role or ClusterRole (`rbac.authorization.k8s.io/v1` `PolicyRule`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    #[serde(default)]
    pub verbs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    #[serde(default, rename = "nonResourceURLs", skip_serializing_if = "Vec::is_empty")]
    pub non_resource_urls: Vec<String>,
}

const ALL: &str = "*";

impl PolicyRule {
    /// Whether this rule allows the request the attributes describe.
    pub fn allows(&self, a: &Attributes<'_>) -> bool {
        if !self.verb_matches(a.verb) {
            return false;
        }
        if a.resource_request {
            self.api_group_matches(a.api_group)
                && self.resource_matches(a.resource, a.subresource)
                && self.resource_name_matches(a.name)
        } else {
            self.non_resource_url_matches(a.path)
        }
    }

    pub fn verb_matches(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == ALL || v == verb)
    }

    pub fn api_group_matches(&self, group: &str) -> bool {
        self.api_groups.iter().any(|g| g == ALL || g == group)
    }

    /// `pods` matches `pods`; `pods/log` matches the `log` subresource of pods;
    /// `*/scale` matches the `scale` subresource of anything; `*` matches everything.
    pub fn resource_matches(&self, resource: &str, subresource: &str) -> bool {
        self.resources.iter().any(|r| {
            if r == ALL {
                return true;
            }
            if subresource.is_empty() {
                return r == resource;
            }
            match r.split_once('/') {
                Some((res, sub)) => sub == subresource && (res == ALL || res == resource),
                None => false,
            }
        })
    }

    /// No names means every name.
    pub fn resource_name_matches(&self, name: &str) -> bool {
        self.resource_names.is_empty() || self.resource_names.iter().any(|n| n == name)
    }

    /// `/healthz` matches itself; `/apis/*` matches every path under `/apis/`.
    pub fn non_resource_url_matches(&self, path: &str) -> bool {
        self.non_resource_urls.iter().any(|u| {
            u == ALL
                || u == path
                || (u.ends_with('*') && path.starts_with(u.trim_end_matches('*')))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authn::UserInfo;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> PolicyRule {
        let v = |s: &[&str]| s.iter().map(|s| s.to_string()).collect();
        PolicyRule {
            verbs: v(verbs),
            api_groups: v(groups),
            resources: v(resources),
            resource_names: v(names),
            non_resource_urls: Vec::new(),
        }
    }

    fn request<'a>(user: &'a UserInfo, verb: &'a str, group: &'a str, resource: &'a str, sub: &'a str, name: &'a str) -> Attributes<'a> {
        Attributes {
            user,
            verb,
            resource_request: true,
            namespace: "ns",
            api_group: group,
            api_version: "v1",
            resource,
            subresource: sub,
            name,
            path: "",
        }
    }

    #[test]
    fn resources_and_subresources() {
        let u = UserInfo::named("u", vec![]);
        let pods = rule(&["get"], &[""], &["pods"], &[]);
        assert!(pods.allows(&request(&u, "get", "", "pods", "", "p")));
        assert!(!pods.allows(&request(&u, "get", "", "pods", "log", "p")), "a subresource needs its own rule");
        assert!(!pods.allows(&request(&u, "list", "", "pods", "", "")));
        assert!(!pods.allows(&request(&u, "get", "apps", "pods", "", "")));

        let log = rule(&["get"], &[""], &["pods/log"], &[]);
        assert!(log.allows(&request(&u, "get", "", "pods", "log", "p")));
        assert!(!log.allows(&request(&u, "get", "", "pods", "", "p")));

        let any_scale = rule(&["update"], &["*"], &["*/scale"], &[]);
        assert!(any_scale.allows(&request(&u, "update", "apps", "deployments", "scale", "d")));
        assert!(!any_scale.allows(&request(&u, "update", "apps", "deployments", "", "d")));
        assert!(!any_scale.allows(&request(&u, "update", "apps", "deployments", "status", "d")));

        let star = rule(&["*"], &["*"], &["*"], &[]);
        assert!(star.allows(&request(&u, "escalate", "x", "y", "z", "n")));
    }

    #[test]
    fn resource_names_narrow_a_rule() {
        let u = UserInfo::named("u", vec![]);
        let one = rule(&["get"], &[""], &["configmaps"], &["a"]);
        assert!(one.allows(&request(&u, "get", "", "configmaps", "", "a")));
        assert!(!one.allows(&request(&u, "get", "", "configmaps", "", "b")));
        assert!(!one.allows(&request(&u, "get", "", "configmaps", "", "")), "a list has no name");
    }

    #[test]
    fn non_resource_urls() {
        let u = UserInfo::named("u", vec![]);
        let r = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/healthz".into(), "/apis/*".into()],
            ..PolicyRule::default()
        };
        let path = |p: &'static str| Attributes::of_path(&u, "get", p);
        assert!(r.allows(&path("/healthz")));
        assert!(!r.allows(&path("/healthz/etcd")));
        assert!(r.allows(&path("/apis/apps/v1")));
        assert!(r.allows(&path("/apis/")));
        assert!(!r.allows(&path("/apis")));
        assert!(!r.allows(&path("/version")));
    }
}

//! A namespace's policy: the enforce, audit and warn levels its
//! `pod-security.kubernetes.io/*` labels ask for, over the configured defaults.

use super::level::{Level, LevelVersion, Version};
use crate::validation::FieldError;
use serde_json::{Map, Value};

pub const LABEL_PREFIX: &str = "pod-security.kubernetes.io/";
pub const ENFORCE_LEVEL_LABEL: &str = "pod-security.kubernetes.io/enforce";
pub const ENFORCE_VERSION_LABEL: &str = "pod-security.kubernetes.io/enforce-version";
pub const AUDIT_LEVEL_LABEL: &str = "pod-security.kubernetes.io/audit";
pub const AUDIT_VERSION_LABEL: &str = "pod-security.kubernetes.io/audit-version";
pub const WARN_LEVEL_LABEL: &str = "pod-security.kubernetes.io/warn";
pub const WARN_VERSION_LABEL: &str = "pod-security.kubernetes.io/warn-version";

/// What a namespace enforces (refuses pods), audits (annotates the audit event) and
/// warns about (a `Warning` header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    pub enforce: LevelVersion,
    pub audit: LevelVersion,
    pub warn: LevelVersion,
}

impl Default for Policy {
    /// The configuration's defaults when it names none: privileged:latest for all three.
    fn default() -> Policy {
        Policy {
            enforce: LevelVersion::privileged(),
            audit: LevelVersion::privileged(),
            warn: LevelVersion::privileged(),
        }
    }
}

impl Policy {
    pub fn fully_privileged(&self) -> bool {
        [self.enforce, self.audit, self.warn].iter().all(|lv| lv.level == Level::Privileged)
    }

    /// Upstream's `PolicyToEvaluate`: the labels over `defaults`, and an error for each
    /// label that does not parse. A bad enforce level enforces restricted and a bad
    /// version means latest (fail closed); a bad audit or warn level is privileged
    /// (fail open). Without its own warn label, warn rises to the enforce level.
    pub fn from_labels(labels: &Map<String, Value>, defaults: Policy) -> (Policy, Vec<FieldError>) {
        let mut policy = defaults;
        let mut errors = Vec::new();
        if labels.is_empty() {
            return (policy, errors);
        }
        let label = |key: &str| labels.get(key).map(|v| v.as_str().unwrap_or(""));
        let mut record = |key: &str, value: &str, why: &str| {
            errors.push(FieldError::invalid(&format!("metadata.labels[{key}]"), value, why));
        };
        let mut has_enforce_level = false;
        if let Some(text) = label(ENFORCE_LEVEL_LABEL) {
            policy.enforce.level = match Level::parse(text) {
                Ok(level) => {
                    has_enforce_level = true;
                    level
                }
                Err((level, why)) => {
                    record(ENFORCE_LEVEL_LABEL, text, why);
                    level
                }
            };
        }
        if let Some(text) = label(ENFORCE_VERSION_LABEL) {
            policy.enforce.version = version_or(text, ENFORCE_VERSION_LABEL, &mut record);
        }
        if let Some(text) = label(AUDIT_LEVEL_LABEL) {
            policy.audit.level = Level::parse(text).unwrap_or_else(|(_, why)| {
                record(AUDIT_LEVEL_LABEL, text, why);
                Level::Privileged
            });
        }
        if let Some(text) = label(AUDIT_VERSION_LABEL) {
            policy.audit.version = version_or(text, AUDIT_VERSION_LABEL, &mut record);
        }
        let warn_level = label(WARN_LEVEL_LABEL);
        if let Some(text) = warn_level {
            policy.warn.level = Level::parse(text).unwrap_or_else(|(_, why)| {
                record(WARN_LEVEL_LABEL, text, why);
                Level::Privileged
            });
        }
        let warn_version = label(WARN_VERSION_LABEL);
        if let Some(text) = warn_version {
            policy.warn.version = version_or(text, WARN_VERSION_LABEL, &mut record);
        }
        if warn_level.is_none() && has_enforce_level && policy.enforce.level > policy.warn.level {
            policy.warn.level = policy.enforce.level;
            if warn_version.is_none() {
                policy.warn.version = policy.enforce.version;
            }
        }
        (policy, errors)
    }
}

fn version_or(text: &str, key: &str, record: &mut impl FnMut(&str, &str, &str)) -> Version {
    Version::parse(text).unwrap_or_else(|(version, why)| {
        record(key, text, why);
        version
    })
}

/// Who and what is never checked: upstream's `PodSecurityExemptions`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exemptions {
    pub usernames: Vec<String>,
    pub namespaces: Vec<String>,
    pub runtime_classes: Vec<String>,
}

impl Exemptions {
    pub fn user(&self, name: &str) -> bool {
        !name.is_empty() && self.usernames.iter().any(|u| u == name)
    }

    pub fn namespace(&self, name: &str) -> bool {
        !name.is_empty() && self.namespaces.iter().any(|n| n == name)
    }

    pub fn runtime_class(&self, name: Option<&str>) -> bool {
        matches!(name, Some(n) if !n.is_empty() && self.runtime_classes.iter().any(|r| r == n))
    }
}

/// The plugin's configuration (`PodSecurityConfiguration`), its defaults parsed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Configuration {
    pub defaults: Policy,
    pub exemptions: Exemptions,
    /// The `UserNamespacesPodSecurityStandards` feature (off by default): pods with
    /// `hostUsers: false` pass the procMount, runAsNonRoot and runAsUser checks.
    pub relax_for_user_namespaces: bool,
}

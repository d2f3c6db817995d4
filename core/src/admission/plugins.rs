//! Which admission plugins run: kube-apiserver v1.33's plugins by name, in its order,
//! chosen as `--enable-admission-plugins` and `--disable-admission-plugins` choose them
//! (upstream's default-on set, plus what is enabled, less what is disabled).
//!
//! Apiary carries out NamespaceLifecycle today; the others are accepted by name so
//! that a kube-apiserver command line starts Apiary, and do nothing yet.

/// A plugin kube-apiserver v1.33 knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plugin(&'static str);

impl Plugin {
    pub const NAMESPACE_LIFECYCLE: Plugin = Plugin("NamespaceLifecycle");

    /// Its name, as the flags take it.
    pub fn name(self) -> &'static str {
        self.0
    }
}

/// Every plugin, in the order upstream runs them (`AllOrderedPlugins`): webhooks,
/// policies and quota last.
pub const ORDERED: &[&str] = &[
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
];

/// The plugins on unless disabled (upstream's complement of `DefaultOffAdmissionPlugins`).
pub const DEFAULT_ON: &[&str] = &[
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "TaintNodesByCondition",
    "PodSecurity",
    "Priority",
    "DefaultTolerationSeconds",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
];

/// The plugins that run, in upstream's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plugins {
    enabled: Vec<&'static str>,
}

impl Default for Plugins {
    fn default() -> Plugins {
        Plugins::choose(&[], &[]).expect("the defaults are known plugins")
    }
}

impl Plugins {
    /// The default-on plugins, plus `enable`, less `disable`; the errors upstream's
    /// option validation gives for unknown or overlapping names.
    pub fn choose(enable: &[&str], disable: &[&str]) -> Result<Plugins, Vec<String>> {
        let trimmed = |names: &[&str]| -> Vec<String> {
            names.iter().map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()).collect()
        };
        let (enable, disable) = (trimmed(enable), trimmed(disable));
        let mut errors = Vec::new();
        for (flag, names) in [("enable", &enable), ("disable", &disable)] {
            for name in names.iter().filter(|n| !ORDERED.contains(&n.as_str())) {
                errors.push(format!("{flag}-admission-plugins plugin {name:?} is unknown"));
            }
        }
        let mut both: Vec<&str> = enable.iter().filter(|n| disable.contains(n)).map(String::as_str).collect();
        both.sort_unstable();
        both.dedup();
        if !both.is_empty() {
            errors.push(format!(
                "[{}] in enable-admission-plugins and disable-admission-plugins overlapped",
                both.join(" ")
            ));
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let enabled = ORDERED
            .iter()
            .copied()
            .filter(|p| (DEFAULT_ON.contains(p) || enable.iter().any(|e| e == p)) && !disable.iter().any(|d| d == p))
            .collect();
        Ok(Plugins { enabled })
    }

    /// Whether `plugin` runs.
    pub fn runs(&self, plugin: Plugin) -> bool {
        self.enabled.contains(&plugin.name())
    }

    /// The plugins that run, in order.
    pub fn names(&self) -> &[&'static str] {
        &self.enabled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_upstreams_in_its_order() {
        let plugins = Plugins::default();
        assert!(plugins.runs(Plugin::NAMESPACE_LIFECYCLE));
        assert_eq!(plugins.names().len(), DEFAULT_ON.len());
        assert_eq!(plugins.names()[..3], ["NamespaceLifecycle", "LimitRanger", "ServiceAccount"]);
        assert_eq!(plugins.names().last(), Some(&"ResourceQuota"));
        assert!(DEFAULT_ON.iter().all(|p| ORDERED.contains(p)));
    }

    #[test]
    fn enabling_and_disabling() {
        let plugins = Plugins::choose(&["AlwaysPullImages", " NamespaceExists"], &["NamespaceLifecycle", ""]).unwrap();
        assert!(!plugins.runs(Plugin::NAMESPACE_LIFECYCLE));
        // Enabled ones take their place in upstream's order, not the flag's.
        assert_eq!(plugins.names()[..3], ["NamespaceExists", "LimitRanger", "ServiceAccount"]);
        assert!(plugins.names().contains(&"AlwaysPullImages"));
    }

    #[test]
    fn unknown_and_overlapping_names_are_upstreams_errors() {
        let errors = Plugins::choose(&["Nope", "Priority"], &["Priority", "AlsoNope"]).unwrap_err();
        assert_eq!(
            errors,
            [
                "enable-admission-plugins plugin \"Nope\" is unknown",
                "disable-admission-plugins plugin \"AlsoNope\" is unknown",
                "[Priority] in enable-admission-plugins and disable-admission-plugins overlapped",
            ]
        );
    }
}

//! Which admission plugins run: kube-apiserver v1.33's plugins by name, in its order,
//! chosen as `--enable-admission-plugins` and `--disable-admission-plugins` choose them
//! (upstream's default-on set, plus what is enabled, less what is disabled).
//!
//! [`built_in`] gives the plugins Apiary carries out; the others are accepted by name
//! so that a kube-apiserver command line starts Apiary, and do nothing (the README
//! lists which).

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

/// Every plugin, in the order upstream runs them (`AllOrderedPlugins`: webhooks,
/// policies and quota last), and whether it is on unless disabled (upstream's
/// complement of `DefaultOffAdmissionPlugins`).
pub const PLUGINS: &[(&str, bool)] = &[
    ("AlwaysAdmit", false),
    ("NamespaceAutoProvision", false),
    ("NamespaceLifecycle", true),
    ("NamespaceExists", false),
    ("LimitPodHardAntiAffinityTopology", false),
    ("LimitRanger", true),
    ("ServiceAccount", true),
    ("NodeRestriction", false),
    ("TaintNodesByCondition", true),
    ("AlwaysPullImages", false),
    ("ImagePolicyWebhook", false),
    ("PodSecurity", true),
    ("PodNodeSelector", false),
    ("Priority", true),
    ("DefaultTolerationSeconds", true),
    ("PodTolerationRestriction", false),
    ("EventRateLimit", false),
    ("ExtendedResourceToleration", false),
    ("DefaultStorageClass", true),
    ("StorageObjectInUseProtection", true),
    ("OwnerReferencesPermissionEnforcement", false),
    ("PersistentVolumeClaimResize", true),
    ("RuntimeClass", true),
    ("CertificateApproval", true),
    ("CertificateSigning", true),
    ("ClusterTrustBundleAttest", true),
    ("CertificateSubjectRestriction", true),
    ("DefaultIngressClass", true),
    ("DenyServiceExternalIPs", false),
    ("PodTopologyLabels", true),
    ("MutatingAdmissionPolicy", true),
    ("MutatingAdmissionWebhook", true),
    ("ValidatingAdmissionPolicy", true),
    ("ValidatingAdmissionWebhook", true),
    ("ResourceQuota", true),
    ("AlwaysDeny", false),
];

/// The plugin called `name`, when Apiary carries it out.
pub(crate) fn built_in(name: &str) -> Option<&'static dyn super::Plugin> {
    Some(match name {
        "NamespaceLifecycle" => &super::namespace_lifecycle::NamespaceLifecycle,
        "LimitRanger" => &super::limit_ranger::LimitRanger,
        "ServiceAccount" => &super::service_account::ServiceAccount,
        "TaintNodesByCondition" => &super::taint_nodes::TaintNodesByCondition,
        "PodSecurity" => &super::pod_security::PodSecurity,
        "Priority" => &super::priority::Priority,
        "DefaultTolerationSeconds" => &super::pod_tolerations::DefaultTolerationSeconds,
        "StorageObjectInUseProtection" => &super::storage_protection::StorageObjectInUseProtection,
        "ResourceQuota" => &super::resource_quota::ResourceQuotaPlugin,
        "DefaultStorageClass" => &super::default_classes::STORAGE,
        "DefaultIngressClass" => &super::default_classes::INGRESS,
        "RuntimeClass" => &super::runtime_class::RuntimeClass,
        "CertificateApproval" => &super::certificates::CertificateApproval,
        "CertificateSigning" => &super::certificates::CertificateSigning,
        "CertificateSubjectRestriction" => &super::certificates::CertificateSubjectRestriction,
        "MutatingAdmissionWebhook" => &super::webhooks::MUTATING,
        "ValidatingAdmissionPolicy" => &super::policy::ValidatingAdmissionPolicy,
        "ValidatingAdmissionWebhook" => &super::webhooks::VALIDATING,
        _ => return None,
    })
}

fn known(name: &str) -> bool {
    PLUGINS.iter().any(|(p, _)| *p == name)
}

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
            for name in names.iter().filter(|n| !known(n)) {
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
        let enabled = PLUGINS
            .iter()
            .filter(|(p, on)| (*on || enable.iter().any(|e| e == p)) && !disable.iter().any(|d| d == p))
            .map(|(p, _)| *p)
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
        assert_eq!(plugins.names().len(), 22);
        assert_eq!(plugins.names()[..3], ["NamespaceLifecycle", "LimitRanger", "ServiceAccount"]);
        assert_eq!(plugins.names().last(), Some(&"ResourceQuota"));
        assert_eq!(PLUGINS.len(), 36);
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

//! `--admission-control-config-file`: an `AdmissionConfiguration` naming, per plugin,
//! its configuration inline or in a file of its own. Apiary reads PodSecurity's
//! (`PodSecurityConfiguration`: the levels of namespaces without labels, and the
//! exempt users, namespaces and runtime classes); other plugins' entries are
//! accepted and have nothing to configure here. Reading a plugin's `path` is the
//! caller's (the core does no IO), relative paths resolved against the file's
//! directory as upstream resolves them.

use super::pod_security::{Configuration, Exemptions, Level, LevelVersion, Version};
use super::Settings;
use serde_json::Value;

const ADMISSION_VERSIONS: &[&str] = &["apiserver.config.k8s.io/v1", "apiserver.k8s.io/v1alpha1"];
const POD_SECURITY_VERSIONS: &[&str] = &[
    "pod-security.admission.config.k8s.io/v1",
    "pod-security.admission.config.k8s.io/v1beta1",
    "pod-security.admission.config.k8s.io/v1alpha1",
];

/// `settings` with what the file configures; `read(path)` gives a plugin file's bytes.
pub fn apply(text: &[u8], mut settings: Settings, read: impl Fn(&str) -> Result<Vec<u8>, String>) -> Result<Settings, String> {
    let config: Value = serde_yaml::from_slice(text).map_err(|e| format!("unable to read admission control configuration: {e}"))?;
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
    let api_version = config.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if kind != "AdmissionConfiguration" || !ADMISSION_VERSIONS.contains(&api_version) {
        return Err(format!(
            "unable to read admission control configuration: want kind AdmissionConfiguration of {}, got {kind:?} of {api_version:?}",
            ADMISSION_VERSIONS[0]
        ));
    }
    for plugin in config.get("plugins").and_then(Value::as_array).into_iter().flatten() {
        let name = plugin.get("name").and_then(Value::as_str).unwrap_or("");
        let configuration = match (plugin.get("configuration").filter(|c| !c.is_null()), plugin.get("path").and_then(Value::as_str)) {
            (Some(inline), _) => inline.clone(),
            (None, Some(path)) if !path.is_empty() => {
                let bytes = read(path).map_err(|e| format!("couldn't open admission plugin configuration {path}: {e}"))?;
                serde_yaml::from_slice(&bytes).map_err(|e| format!("{name}: unable to read configuration {path}: {e}"))?
            }
            _ => continue,
        };
        if name == "PodSecurity" {
            settings.pod_security = pod_security(&configuration)?;
        }
    }
    Ok(settings)
}

/// A `PodSecurityConfiguration`.
fn pod_security(config: &Value) -> Result<Configuration, String> {
    let api_version = config.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind != "PodSecurityConfiguration" || !POD_SECURITY_VERSIONS.contains(&api_version) {
        return Err(format!(
            "PodSecurity: expected kind PodSecurityConfiguration of {}, got {kind:?} of {api_version:?}",
            POD_SECURITY_VERSIONS[0]
        ));
    }
    let defaults = config.get("defaults").cloned().unwrap_or(Value::Null);
    let mut errors = Vec::new();
    let mut level_version = |mode: &str| -> LevelVersion {
        let text = |key: &str, fallback: &'static str| defaults.get(key).and_then(Value::as_str).unwrap_or(fallback).to_owned();
        let level = Level::parse(&text(mode, "privileged")).unwrap_or_else(|(l, why)| {
            errors.push(format!("defaults.{mode}: Invalid value: {:?}: {why}", text(mode, "privileged")));
            l
        });
        let version_key = format!("{mode}-version");
        let version = Version::parse(&text(&version_key, "latest")).unwrap_or_else(|(v, why)| {
            errors.push(format!("defaults.{version_key}: Invalid value: {:?}: {why}", text(&version_key, "latest")));
            v
        });
        LevelVersion::new(level, version)
    };
    let (enforce, audit, warn) = (level_version("enforce"), level_version("audit"), level_version("warn"));
    let strings = |key: &str| -> Vec<String> {
        let list = config.get("exemptions").and_then(|e| e.get(key)).and_then(Value::as_array);
        list.into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
    };
    let exemptions = Exemptions {
        usernames: strings("usernames"),
        namespaces: strings("namespaces"),
        runtime_classes: strings("runtimeClasses"),
    };
    if !errors.is_empty() {
        return Err(format!("PodSecurity: invalid configuration: {}", errors.join(", ")));
    }
    let mut configuration = Configuration::default();
    configuration.defaults.enforce = enforce;
    configuration.defaults.audit = audit;
    configuration.defaults.warn = warn;
    configuration.exemptions = exemptions;
    Ok(configuration)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INLINE: &str = "apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
      warn: restricted
      warn-version: v1.30
    exemptions:
      usernames: [ci-bot]
      namespaces: [kube-system]
- name: ResourceQuota
  configuration: {}
";

    #[test]
    fn pod_security_defaults_and_exemptions_inline() {
        let settings = apply(INLINE.as_bytes(), Settings::default(), |_| Err("no files".into())).unwrap();
        let ps = settings.pod_security;
        assert_eq!(ps.defaults.enforce, LevelVersion::new(Level::Baseline, Version::Latest));
        assert_eq!(ps.defaults.audit, LevelVersion::privileged());
        assert_eq!(ps.defaults.warn, LevelVersion::new(Level::Restricted, Version::V1(30)));
        assert!(ps.exemptions.user("ci-bot") && ps.exemptions.namespace("kube-system"));
    }

    #[test]
    fn a_plugin_file_is_read_through_the_caller() {
        let text = "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: ps.yaml\n";
        let file = "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: restricted\n";
        let settings = apply(text.as_bytes(), Settings::default(), |p| if p == "ps.yaml" { Ok(file.as_bytes().to_vec()) } else { Err("missing".into()) }).unwrap();
        assert_eq!(settings.pod_security.defaults.enforce.level, Level::Restricted);
        let missing = apply(text.as_bytes(), Settings::default(), |_| Err("no such file".into())).unwrap_err();
        assert_eq!(missing, "couldn't open admission plugin configuration ps.yaml: no such file");
    }

    #[test]
    fn bad_levels_and_kinds_are_refused() {
        let bad = INLINE.replace("enforce: baseline", "enforce: strict");
        let e = apply(bad.as_bytes(), Settings::default(), |_| Err(String::new())).unwrap_err();
        assert_eq!(e, r#"PodSecurity: invalid configuration: defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted"#);
        let e = apply(b"kind: Other\napiVersion: v1\n", Settings::default(), |_| Err(String::new())).unwrap_err();
        assert!(e.contains("want kind AdmissionConfiguration"), "{e}");
    }
}

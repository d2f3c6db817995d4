//! Security profiles: AppArmor, SELinux and seccomp may only be set to values that
//! keep the runtime's confinement.

use super::{containers_phrase, join_quote, pluralize, Violation};
use crate::admission::pod_security::pod::{sub_object, text, Pod};
use crate::schema::go_quote;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

const APPARMOR_ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";
const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";

/// `pod`, `containers "a", "b"`, or both joined by " and ".
fn setters(pod_bad: bool, containers: &[&str]) -> Vec<String> {
    let mut setters = Vec::new();
    if pod_bad {
        setters.push("pod".to_owned());
    }
    if !containers.is_empty() {
        setters.push(containers_phrase(containers));
    }
    setters
}

/// The `type` of a profile object (`""` when unset), if the profile is set.
fn profile_type<'a>(security_context: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a str> {
    sub_object(security_context, key).map(|profile| text(profile, "type"))
}

/// Baseline, v1.0+: AppArmor profiles (fields and the beta annotations) may only be
/// the runtime's default or a localhost profile.
pub(crate) fn app_armor_profile(pod: &Pod<'_>) -> Option<Violation> {
    let allowed = |t: &str| t == "RuntimeDefault" || t == "Localhost";
    let mut bad_values = BTreeSet::new();
    let pod_bad = profile_type(pod.security_context(), "appArmorProfile")
        .filter(|t| !allowed(t))
        .map(|t| bad_values.insert(t.to_owned()))
        .is_some();
    let mut containers = Vec::new();
    for container in pod.containers() {
        if let Some(t) = profile_type(container.security_context(), "appArmorProfile") {
            if !allowed(t) {
                containers.push(container.name());
                bad_values.insert(t.to_owned());
            }
        }
    }
    let mut setters = setters(pod_bad, &containers);
    let mut annotations: Vec<String> = pod
        .annotations()
        .filter(|(key, value)| {
            key.starts_with(APPARMOR_ANNOTATION_PREFIX)
                && !(value.is_empty() || *value == "runtime/default" || value.starts_with("localhost/"))
        })
        .map(|(key, value)| format!("{key}={}", go_quote(value)))
        .collect();
    let mut bad_values: Vec<String> = bad_values.into_iter().collect();
    if !annotations.is_empty() {
        annotations.sort();
        setters.push(pluralize("annotation", "annotations", annotations.len()).to_owned());
        bad_values.extend(annotations);
    }
    if setters.is_empty() {
        return None;
    }
    Violation::new(
        pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", bad_values.len()),
        format!("{} must not set AppArmor profile type to {}", setters.join(" and "), join_quote(&bad_values)),
    )
}

const SELINUX_TYPES_1_0: &[&str] = &["", "container_t", "container_init_t", "container_kvm_t"];
const SELINUX_TYPES_1_31: &[&str] = &["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"];

/// Baseline: the SELinux type must be one of the container types; user and role unset.
fn se_linux_options(pod: &Pod<'_>, allowed_types: &[&str]) -> Option<Violation> {
    let mut bad_types = BTreeSet::new();
    let (mut set_user, mut set_role) = (false, false);
    let mut valid = |options: &Map<String, Value>| {
        let kind = text(options, "type");
        let mut ok = true;
        if !allowed_types.contains(&kind) {
            ok = false;
            bad_types.insert(kind.to_owned());
        }
        if !text(options, "user").is_empty() {
            ok = false;
            set_user = true;
        }
        if !text(options, "role").is_empty() {
            ok = false;
            set_role = true;
        }
        ok
    };
    let pod_bad = sub_object(pod.security_context(), "seLinuxOptions").is_some_and(|o| !valid(o));
    let mut containers = Vec::new();
    for container in pod.containers() {
        if let Some(options) = sub_object(container.security_context(), "seLinuxOptions") {
            if !valid(options) {
                containers.push(container.name());
            }
        }
    }
    let setters = setters(pod_bad, &containers);
    if setters.is_empty() {
        return None;
    }
    let mut bad = Vec::new();
    if !bad_types.is_empty() {
        let types: Vec<String> = bad_types.into_iter().collect();
        bad.push(format!("{} {}", pluralize("type", "types", types.len()), join_quote(&types)));
    }
    if set_user {
        bad.push("user may not be set".to_owned());
    }
    if set_role {
        bad.push("role may not be set".to_owned());
    }
    Violation::new(
        "seLinuxOptions",
        format!("{} set forbidden securityContext.seLinuxOptions: {}", setters.join(" and "), bad.join("; ")),
    )
}

pub(crate) fn se_linux_options_1_0(pod: &Pod<'_>) -> Option<Violation> {
    se_linux_options(pod, SELINUX_TYPES_1_0)
}

/// v1.31 also allows `container_engine_t`.
pub(crate) fn se_linux_options_1_31(pod: &Pod<'_>) -> Option<Violation> {
    se_linux_options(pod, SELINUX_TYPES_1_31)
}

fn seccomp_type_allowed(t: &str) -> bool {
    t == "Localhost" || t == "RuntimeDefault"
}

/// Baseline, v1.0 to v1.18: the alpha seccomp annotations, for the pod and for each
/// container by name, may only name the runtime's default or a localhost profile.
pub(crate) fn seccomp_baseline_1_0(pod: &Pod<'_>) -> Option<Violation> {
    let allowed = |v: &str| v == "runtime/default" || v == "docker/default" || v.starts_with("localhost/");
    let mut forbidden = BTreeSet::new();
    let mut consider = |key: &str| {
        if let Some(value) = pod.annotation(key) {
            if !allowed(value) {
                forbidden.insert(format!("{key}={}", go_quote(value)));
            }
        }
    };
    consider(SECCOMP_POD_ANNOTATION);
    for container in pod.containers() {
        consider(&format!("{SECCOMP_CONTAINER_ANNOTATION_PREFIX}{}", container.name()));
    }
    if forbidden.is_empty() {
        return None;
    }
    let forbidden: Vec<String> = forbidden.into_iter().collect();
    Violation::new(
        "seccompProfile",
        format!("forbidden {} {}", pluralize("annotation", "annotations", forbidden.len()), forbidden.join(", ")),
    )
}

/// The seccomp profile fields: the pod's, the containers that set a bad one, the
/// containers that set none, and every bad type.
struct SeccompFields<'a> {
    pod_bad: bool,
    pod_good: bool,
    explicit: Vec<&'a str>,
    implicit: Vec<&'a str>,
    bad_types: Vec<&'a str>,
}

fn seccomp_fields<'a>(pod: &Pod<'a>) -> SeccompFields<'a> {
    let mut bad_types = BTreeSet::new();
    let pod_type = profile_type(pod.security_context(), "seccompProfile");
    let pod_bad = pod_type.is_some_and(|t| !seccomp_type_allowed(t));
    if let Some(t) = pod_type.filter(|_| pod_bad) {
        bad_types.insert(t);
    }
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for container in pod.containers() {
        match profile_type(container.security_context(), "seccompProfile") {
            Some(t) if !seccomp_type_allowed(t) => {
                explicit.push(container.name());
                bad_types.insert(t);
            }
            Some(_) => {}
            None => implicit.push(container.name()),
        }
    }
    SeccompFields { pod_bad, pod_good: pod_type.is_some() && !pod_bad, explicit, implicit, bad_types: bad_types.into_iter().collect() }
}

fn explicit_seccomp_violation(fields: &SeccompFields<'_>) -> Option<Violation> {
    let setters = setters(fields.pod_bad, &fields.explicit);
    if setters.is_empty() {
        return None;
    }
    Violation::new(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters.join(" and "),
            join_quote(&fields.bad_types)
        ),
    )
}

/// Baseline, v1.19+: a seccomp profile, where set, must be RuntimeDefault or Localhost.
pub(crate) fn seccomp_baseline_1_19(pod: &Pod<'_>) -> Option<Violation> {
    explicit_seccomp_violation(&seccomp_fields(pod))
}

/// Restricted, v1.19+: as baseline, and every container must have one, its own or
/// the pod's.
pub(crate) fn seccomp_restricted_1_19(pod: &Pod<'_>) -> Option<Violation> {
    let fields = seccomp_fields(pod);
    if let Some(violation) = explicit_seccomp_violation(&fields) {
        return Some(violation);
    }
    if fields.pod_good || fields.implicit.is_empty() {
        return None;
    }
    Violation::new(
        "seccompProfile",
        format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            containers_phrase(&fields.implicit)
        ),
    )
}

/// Restricted, v1.25+: a Windows pod passes.
pub(crate) fn seccomp_restricted_1_25(pod: &Pod<'_>) -> Option<Violation> {
    if pod.windows() {
        return None;
    }
    seccomp_restricted_1_19(pod)
}

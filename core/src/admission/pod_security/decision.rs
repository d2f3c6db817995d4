//! The PodSecurity admission decision over one write, as kube-apiserver's plugin
//! makes it: which writes are checked, exemptions, enforce (refuse), audit (an audit
//! annotation) and warn (a warning), and the words of each.

use super::checks::Violation;
use super::level::Level;
use super::pod::Pod;
use super::policy::{Configuration, Policy, LABEL_PREFIX};
use super::registry;
use crate::admission::Operation;
use crate::status::ApiError;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The resources whose objects hold a pod spec, and where: a pod's own, or a pod
/// template's (`spec.template`; a CronJob's `spec.jobTemplate.spec.template`).
const POD_SPEC_RESOURCES: &[(&str, &str, PodSpecAt)] = &[
    ("", "pods", PodSpecAt::Pod),
    ("", "replicationcontrollers", PodSpecAt::SpecTemplate),
    ("", "podtemplates", PodSpecAt::Template),
    ("apps", "replicasets", PodSpecAt::SpecTemplate),
    ("apps", "deployments", PodSpecAt::SpecTemplate),
    ("apps", "statefulsets", PodSpecAt::SpecTemplate),
    ("apps", "daemonsets", PodSpecAt::SpecTemplate),
    ("batch", "jobs", PodSpecAt::SpecTemplate),
    ("batch", "cronjobs", PodSpecAt::JobTemplate),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PodSpecAt {
    Pod,
    Template,
    SpecTemplate,
    JobTemplate,
}

/// Pod subresources that cannot change what the checks read.
const IGNORED_POD_SUBRESOURCES: &[&str] =
    &["exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status"];

/// Whether the plugin looks at writes of this group and resource at all.
pub fn has_pod_spec(group: &str, resource: &str) -> bool {
    POD_SPEC_RESOURCES.iter().any(|(g, r, _)| *g == group && *r == resource)
}

/// An object's pod metadata and spec: the pod's own, or its template's. `None` for a
/// resource without one, or an object whose template is absent (an optional
/// template is not checked).
pub fn pod_spec_of<'a>(group: &str, resource: &str, object: &'a Value) -> Option<(&'a Value, &'a Value)> {
    let (_, _, at) = POD_SPEC_RESOURCES.iter().find(|(g, r, _)| *g == group && *r == resource)?;
    let template = match at {
        PodSpecAt::Pod => object,
        PodSpecAt::Template => object.get("template")?,
        PodSpecAt::SpecTemplate => object.get("spec")?.get("template")?,
        PodSpecAt::JobTemplate => object.get("spec")?.get("jobTemplate")?.get("spec")?.get("template")?,
    };
    if !template.is_object() {
        return None;
    }
    Some((template.get("metadata").unwrap_or(&Value::Null), template.get("spec").unwrap_or(&Value::Null)))
}

/// Reasons and details joined as the messages print them:
/// `reason (detail), reason (detail)`, a reason alone when its detail is empty.
pub fn forbidden_detail(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| {
            let reason = if v.reason.is_empty() { "unknown forbidden reason" } else { &v.reason };
            if v.detail.is_empty() {
                reason.to_owned()
            } else {
                format!("{reason} ({})", v.detail)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The reasons alone, comma separated: how warnings about existing pods group them.
pub fn forbidden_reasons(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| if v.reason.is_empty() { "unknown forbidden reason" } else { v.reason.as_str() })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the plugin is told about one write.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub operation: Operation,
    pub group: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub username: &'a str,
    pub object: &'a Value,
    /// The stored object, for an update.
    pub old_object: Option<&'a Value>,
}

/// The plugin's answer: refused or not, warnings for the client, and annotations
/// for the audit event (keys already under `pod-security.kubernetes.io/`).
#[derive(Clone, Debug)]
pub struct Decision {
    pub refusal: Option<ApiError>,
    pub warnings: Vec<String>,
    pub audit_annotations: BTreeMap<String, String>,
}

impl Decision {
    fn allowed() -> Decision {
        Decision { refusal: None, warnings: Vec::new(), audit_annotations: BTreeMap::new() }
    }

    fn annotated(key: &str, value: impl Into<String>) -> Decision {
        let mut decision = Decision::allowed();
        decision.annotate(key, value);
        decision
    }

    fn annotate(&mut self, key: &str, value: impl Into<String>) {
        self.audit_annotations.insert(format!("{LABEL_PREFIX}{key}"), value.into());
    }
}

/// The decision on a create or update of a pod or a pod-bearing resource in a
/// namespace with `namespace_labels`. Pods are enforced; templates only audited and
/// warned about, so a Deployment is never refused for its template (its pods are,
/// when its ReplicaSet creates them).
pub fn admit(config: &Configuration, namespace_labels: &Map<String, Value>, request: &Request<'_>) -> Decision {
    if !matches!(request.operation, Operation::Create | Operation::Update)
        || !has_pod_spec(request.group, request.resource)
    {
        return Decision::allowed();
    }
    let is_pod = request.group.is_empty() && request.resource == "pods";
    if is_pod && IGNORED_POD_SUBRESOURCES.contains(&request.subresource) {
        return Decision::allowed();
    }
    if !is_pod && !request.subresource.is_empty() {
        return Decision::allowed();
    }
    if config.exemptions.namespace(request.namespace) {
        return Decision::annotated("exempt", "namespace");
    }
    if config.exemptions.user(request.username) {
        return Decision::annotated("exempt", "user");
    }
    let (policy, errors) = Policy::from_labels(namespace_labels, config.defaults);
    if is_pod {
        if errors.is_empty() && policy.fully_privileged() {
            return Decision::annotated("enforce-policy", "privileged:latest");
        }
        if request.operation == Operation::Update {
            if let Some(old) = request.old_object {
                if !significant_pod_update(request.object, old) {
                    return Decision::allowed();
                }
            }
        }
    } else if errors.is_empty() && policy.warn.level == Level::Privileged && policy.audit.level == Level::Privileged {
        return Decision::allowed();
    }
    let Some((metadata, spec)) = pod_spec_of(request.group, request.resource, request.object) else {
        return Decision::allowed();
    };
    let runtime_class = spec.get("runtimeClassName").and_then(Value::as_str);
    if config.exemptions.runtime_class(runtime_class) {
        return Decision::annotated("exempt", "runtimeClass");
    }
    let pod = Pod { relax_for_user_namespaces: config.relax_for_user_namespaces, ..Pod::new(metadata, spec) };
    let mut decision = Decision::allowed();
    if !errors.is_empty() {
        decision.annotate("error", format!("Failed to parse policy: {}", crate::validation::aggregate(&errors)));
    }
    if is_pod {
        decision.annotate("enforce-policy", policy.enforce.to_string());
        let violations = registry::evaluate(policy.enforce, &pod);
        if !violations.is_empty() {
            let why = format!("violates PodSecurity \"{}\": {}", policy.enforce, forbidden_detail(&violations));
            decision.refusal = Some(ApiError::forbidden(request.group, request.resource, request.name, &why));
        }
    }
    let audit = registry::evaluate(policy.audit, &pod);
    if !audit.is_empty() {
        let text = format!("would violate PodSecurity \"{}\": {}", policy.audit, forbidden_detail(&audit));
        decision.annotate("audit-violations", text);
    }
    // A refused write gets no warnings.
    if decision.refusal.is_none() {
        let warn = registry::evaluate(policy.warn, &pod);
        if !warn.is_empty() {
            decision.warnings.push(format!("would violate PodSecurity \"{}\": {}", policy.warn, forbidden_detail(&warn)));
        }
    }
    decision
}

/// Whether a pod update can change the outcome: only container images may change
/// on a pod (besides ephemeral containers, added through their subresource), so
/// an update is looked at when the containers' number or images changed or an
/// ephemeral container was added or changed image.
pub fn significant_pod_update(pod: &Value, old: &Value) -> bool {
    let list = |object: &Value, key: &str| -> Vec<Value> {
        object.get("spec").and_then(|s| s.get(key)).and_then(Value::as_array).cloned().unwrap_or_default()
    };
    let image = |c: &Value| c.get("image").and_then(Value::as_str).unwrap_or("").to_owned();
    let name = |c: &Value| c.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
    for key in ["containers", "initContainers"] {
        let (new, old) = (list(pod, key), list(old, key));
        if new.len() != old.len() || new.iter().zip(&old).any(|(n, o)| image(n) != image(o)) {
            return true;
        }
    }
    let old_ephemeral = list(old, "ephemeralContainers");
    list(pod, "ephemeralContainers").iter().any(|c| {
        match old_ephemeral.iter().find(|o| name(o) == name(c)) {
            None => true,
            Some(o) => image(o) != image(c),
        }
    })
}

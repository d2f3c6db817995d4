//! The `enum` arrays of the built-in schemas, in one table: the values an enumerated
//! string field may take, which kube-apiserver v1.33 publishes in its OpenAPI v3
//! documents (`/openapi/v3/...`, the `OpenAPIEnums` feature being on by default) and not
//! in `/openapi/v2`.
//!
//! Every row is a field of a definition Apiary serves whose Go type is a `+enum` string
//! type; the values are those kube-apiserver v1.33 publishes for it: every constant of
//! that type, sorted as kube-openapi sorts them. A field marked `name[]` carries the enum
//! on its array `items`, one marked `name{}` on its map values (`additionalProperties`);
//! an unmarked field on the property itself.
//!
//! Where the values come from: the OpenAPI documents checked into kubernetes/kubernetes
//! (`api/openapi-spec/`) are generated with `OpenAPIEnums=false` and carry no enums, so
//! the rows were derived from the `+enum` types and their constants in the Kubernetes
//! v1.33.0 API types (k8s.io/api and k8s.io/apiextensions-apiserver v0.33.0), kept to the
//! definitions and properties of `definitions.json`, and checked against the enums of the
//! v1.34.0 swagger.json that kubernetes-sigs/reference-docs generates with
//! `OpenAPIEnums=true`: identical on these fields, none of whose enum types changed
//! between v1.33 and v1.34. The v3 documents apply the table (`openapi::v3`).

/// Where a row's values go in the property's schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// On the property itself (a string).
    Property,
    /// On its `items` (an array of strings; the field is marked `name[]`).
    Items,
    /// On its `additionalProperties` (a map of strings; the field is marked `name{}`).
    Values,
}

/// The property a table field names, and where its enum goes.
pub fn place(field: &str) -> (&str, Place) {
    if let Some(p) = field.strip_suffix("[]") {
        (p, Place::Items)
    } else if let Some(p) = field.strip_suffix("{}") {
        (p, Place::Values)
    } else {
        (field, Place::Property)
    }
}

/// `Signal` (Lifecycle.stopSignal, ContainerStatus.stopSignal): every signal name.
#[rustfmt::skip]
const SIGNALS: &[&str] = &[
    "SIGABRT", "SIGALRM", "SIGBUS", "SIGCHLD", "SIGCLD", "SIGCONT", "SIGFPE", "SIGHUP",
    "SIGILL", "SIGINT", "SIGIO", "SIGIOT", "SIGKILL", "SIGPIPE", "SIGPOLL", "SIGPROF",
    "SIGPWR", "SIGQUIT", "SIGRTMAX", "SIGRTMAX-1", "SIGRTMAX-10", "SIGRTMAX-11",
    "SIGRTMAX-12", "SIGRTMAX-13", "SIGRTMAX-14", "SIGRTMAX-2", "SIGRTMAX-3", "SIGRTMAX-4",
    "SIGRTMAX-5", "SIGRTMAX-6", "SIGRTMAX-7", "SIGRTMAX-8", "SIGRTMAX-9", "SIGRTMIN",
    "SIGRTMIN+1", "SIGRTMIN+10", "SIGRTMIN+11", "SIGRTMIN+12", "SIGRTMIN+13",
    "SIGRTMIN+14", "SIGRTMIN+15", "SIGRTMIN+2", "SIGRTMIN+3", "SIGRTMIN+4", "SIGRTMIN+5",
    "SIGRTMIN+6", "SIGRTMIN+7", "SIGRTMIN+8", "SIGRTMIN+9", "SIGSEGV", "SIGSTKFLT",
    "SIGSTOP", "SIGSYS", "SIGTERM", "SIGTRAP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG",
    "SIGUSR1", "SIGUSR2", "SIGVTALRM", "SIGWINCH", "SIGXCPU", "SIGXFSZ",
];

/// Every enum: (definition, field, values), sorted by definition and field. The values
/// are in upstream's order.
#[rustfmt::skip]
pub const ENUMS: &[(&str, &str, &[&str])] = &[
    ("io.k8s.api.apps.v1.DaemonSetUpdateStrategy", "type", &["OnDelete", "RollingUpdate"]),
    ("io.k8s.api.apps.v1.DeploymentStrategy", "type", &["Recreate", "RollingUpdate"]),
    ("io.k8s.api.apps.v1.StatefulSetSpec", "podManagementPolicy", &["OrderedReady", "Parallel"]),
    ("io.k8s.api.apps.v1.StatefulSetUpdateStrategy", "type", &["OnDelete", "RollingUpdate"]),
    ("io.k8s.api.batch.v1.CronJobSpec", "concurrencyPolicy", &["Allow", "Forbid", "Replace"]),
    ("io.k8s.api.batch.v1.JobSpec", "completionMode", &["Indexed", "NonIndexed"]),
    ("io.k8s.api.batch.v1.JobSpec", "podReplacementPolicy", &["Failed", "TerminatingOrFailed"]),
    ("io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement", "operator", &["In", "NotIn"]),
    ("io.k8s.api.batch.v1.PodFailurePolicyRule", "action", &["Count", "FailIndex", "FailJob", "Ignore"]),
    ("io.k8s.api.core.v1.AppArmorProfile", "type", &["Localhost", "RuntimeDefault", "Unconfined"]),
    ("io.k8s.api.core.v1.AzureDiskVolumeSource", "cachingMode", &["None", "ReadOnly", "ReadWrite"]),
    ("io.k8s.api.core.v1.AzureDiskVolumeSource", "kind", &["Dedicated", "Managed", "Shared"]),
    ("io.k8s.api.core.v1.Container", "imagePullPolicy", &["Always", "IfNotPresent", "Never"]),
    ("io.k8s.api.core.v1.Container", "terminationMessagePolicy", &["FallbackToLogsOnError", "File"]),
    ("io.k8s.api.core.v1.ContainerPort", "protocol", &["SCTP", "TCP", "UDP"]),
    ("io.k8s.api.core.v1.ContainerStatus", "stopSignal", SIGNALS),
    ("io.k8s.api.core.v1.EndpointPort", "protocol", &["SCTP", "TCP", "UDP"]),
    ("io.k8s.api.core.v1.EphemeralContainer", "imagePullPolicy", &["Always", "IfNotPresent", "Never"]),
    ("io.k8s.api.core.v1.EphemeralContainer", "terminationMessagePolicy", &["FallbackToLogsOnError", "File"]),
    ("io.k8s.api.core.v1.HTTPGetAction", "scheme", &["HTTP", "HTTPS"]),
    ("io.k8s.api.core.v1.HostPathVolumeSource", "type", &["", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"]),
    ("io.k8s.api.core.v1.ImageVolumeSource", "pullPolicy", &["Always", "IfNotPresent", "Never"]),
    ("io.k8s.api.core.v1.Lifecycle", "stopSignal", SIGNALS),
    ("io.k8s.api.core.v1.ModifyVolumeStatus", "status", &["InProgress", "Infeasible", "Pending"]),
    ("io.k8s.api.core.v1.NamespaceStatus", "phase", &["Active", "Terminating"]),
    ("io.k8s.api.core.v1.NodeSelectorRequirement", "operator", &["DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"]),
    ("io.k8s.api.core.v1.NodeStatus", "phase", &["Pending", "Running", "Terminated"]),
    ("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "accessModes[]", &["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]),
    ("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "volumeMode", &["Block", "Filesystem"]),
    ("io.k8s.api.core.v1.PersistentVolumeClaimStatus", "accessModes[]", &["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]),
    ("io.k8s.api.core.v1.PersistentVolumeClaimStatus", "allocatedResourceStatuses{}", &["ControllerResizeInProgress", "ControllerResizeInfeasible", "NodeResizeInProgress", "NodeResizeInfeasible", "NodeResizePending"]),
    ("io.k8s.api.core.v1.PersistentVolumeClaimStatus", "phase", &["Bound", "Lost", "Pending"]),
    ("io.k8s.api.core.v1.PersistentVolumeSpec", "accessModes[]", &["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]),
    ("io.k8s.api.core.v1.PersistentVolumeSpec", "persistentVolumeReclaimPolicy", &["Delete", "Recycle", "Retain"]),
    ("io.k8s.api.core.v1.PersistentVolumeSpec", "volumeMode", &["Block", "Filesystem"]),
    ("io.k8s.api.core.v1.PersistentVolumeStatus", "phase", &["Available", "Bound", "Failed", "Pending", "Released"]),
    ("io.k8s.api.core.v1.PodSecurityContext", "fsGroupChangePolicy", &["Always", "OnRootMismatch"]),
    ("io.k8s.api.core.v1.PodSecurityContext", "supplementalGroupsPolicy", &["Merge", "Strict"]),
    ("io.k8s.api.core.v1.PodSpec", "dnsPolicy", &["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]),
    ("io.k8s.api.core.v1.PodSpec", "preemptionPolicy", &["Never", "PreemptLowerPriority"]),
    ("io.k8s.api.core.v1.PodSpec", "restartPolicy", &["Always", "Never", "OnFailure"]),
    ("io.k8s.api.core.v1.PodStatus", "phase", &["Failed", "Pending", "Running", "Succeeded", "Unknown"]),
    ("io.k8s.api.core.v1.PodStatus", "qosClass", &["BestEffort", "Burstable", "Guaranteed"]),
    ("io.k8s.api.core.v1.PortStatus", "protocol", &["SCTP", "TCP", "UDP"]),
    ("io.k8s.api.core.v1.ResourceQuotaSpec", "scopes[]", &["BestEffort", "CrossNamespacePodAffinity", "NotBestEffort", "NotTerminating", "PriorityClass", "Terminating", "VolumeAttributesClass"]),
    ("io.k8s.api.core.v1.ScopedResourceSelectorRequirement", "operator", &["DoesNotExist", "Exists", "In", "NotIn"]),
    ("io.k8s.api.core.v1.ScopedResourceSelectorRequirement", "scopeName", &["BestEffort", "CrossNamespacePodAffinity", "NotBestEffort", "NotTerminating", "PriorityClass", "Terminating", "VolumeAttributesClass"]),
    ("io.k8s.api.core.v1.SeccompProfile", "type", &["Localhost", "RuntimeDefault", "Unconfined"]),
    ("io.k8s.api.core.v1.SecurityContext", "procMount", &["Default", "Unmasked"]),
    ("io.k8s.api.core.v1.ServicePort", "protocol", &["SCTP", "TCP", "UDP"]),
    ("io.k8s.api.core.v1.ServiceSpec", "externalTrafficPolicy", &["Cluster", "Local"]),
    ("io.k8s.api.core.v1.ServiceSpec", "internalTrafficPolicy", &["Cluster", "Local"]),
    ("io.k8s.api.core.v1.ServiceSpec", "ipFamilies[]", &["", "IPv4", "IPv6"]),
    ("io.k8s.api.core.v1.ServiceSpec", "ipFamilyPolicy", &["PreferDualStack", "RequireDualStack", "SingleStack"]),
    ("io.k8s.api.core.v1.ServiceSpec", "sessionAffinity", &["ClientIP", "None"]),
    ("io.k8s.api.core.v1.ServiceSpec", "type", &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]),
    ("io.k8s.api.core.v1.Taint", "effect", &["NoExecute", "NoSchedule", "PreferNoSchedule"]),
    ("io.k8s.api.core.v1.Toleration", "effect", &["NoExecute", "NoSchedule", "PreferNoSchedule"]),
    ("io.k8s.api.core.v1.Toleration", "operator", &["Equal", "Exists"]),
    ("io.k8s.api.core.v1.TopologySpreadConstraint", "nodeAffinityPolicy", &["Honor", "Ignore"]),
    ("io.k8s.api.core.v1.TopologySpreadConstraint", "nodeTaintsPolicy", &["Honor", "Ignore"]),
    ("io.k8s.api.core.v1.TopologySpreadConstraint", "whenUnsatisfiable", &["DoNotSchedule", "ScheduleAnyway"]),
    ("io.k8s.api.core.v1.VolumeMount", "mountPropagation", &["Bidirectional", "HostToContainer", "None"]),
    ("io.k8s.api.discovery.v1.EndpointPort", "protocol", &["SCTP", "TCP", "UDP"]),
    ("io.k8s.api.discovery.v1.EndpointSlice", "addressType", &["FQDN", "IPv4", "IPv6"]),
    ("io.k8s.api.networking.v1.HTTPIngressPath", "pathType", &["Exact", "ImplementationSpecific", "Prefix"]),
    ("io.k8s.api.networking.v1.IngressPortStatus", "protocol", &["SCTP", "TCP", "UDP"]),
    ("io.k8s.api.networking.v1.NetworkPolicyPort", "protocol", &["SCTP", "TCP", "UDP"]),
    ("io.k8s.api.networking.v1.NetworkPolicySpec", "policyTypes[]", &["Egress", "Ingress"]),
    ("io.k8s.api.policy.v1.PodDisruptionBudgetSpec", "unhealthyPodEvictionPolicy", &["AlwaysAllow", "IfHealthyBudget"]),
    ("io.k8s.api.scheduling.v1.PriorityClass", "preemptionPolicy", &["Never", "PreemptLowerPriority"]),
    ("io.k8s.api.storage.v1.StorageClass", "reclaimPolicy", &["Delete", "Recycle", "Retain"]),
    ("io.k8s.api.storage.v1.StorageClass", "volumeBindingMode", &["Immediate", "WaitForFirstConsumer"]),
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ValidationRule", "reason", &["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]),
];

/// Add every enum of the table to `definitions` (an OpenAPI v2 `definitions` map), as
/// kube-apiserver publishes them with its OpenAPIEnums feature (on by default).
pub fn apply(definitions: &mut serde_json::Map<String, serde_json::Value>) {
    for (name, definition) in definitions.iter_mut() {
        add_enums(name, definition);
    }
}

/// The `enum` of each enumerated field of definition `name`, where upstream puts it. A
/// field whose schema is not a string there (another set of definitions) is left alone.
fn add_enums(name: &str, definition: &mut serde_json::Value) {
    for &(_, field, values) in ENUMS.iter().filter(|(d, ..)| *d == name) {
        let (property, place) = place(field);
        let Some(schema) = definition
            .get_mut("properties")
            .and_then(|p| p.get_mut(property))
        else {
            continue;
        };
        let target = match place {
            Place::Property => Some(schema),
            Place::Items => schema.get_mut("items"),
            Place::Values => schema.get_mut("additionalProperties"),
        };
        if let Some(serde_json::Value::Object(o)) = target {
            if o.get("type").and_then(serde_json::Value::as_str) == Some("string") {
                o.insert("enum".into(), serde_json::json!(values));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::definitions;

    #[test]
    fn every_row_names_a_string_field_of_a_definition() {
        let defs = definitions();
        let mut previous: Option<(&str, &str)> = None;
        for &(definition, field, values) in ENUMS {
            let at = format!("{definition}.{field}");
            assert!(
                previous < Some((definition, field)),
                "{at}: not sorted, or twice"
            );
            previous = Some((definition, field));
            let (property, place) = place(field);
            let schema = defs
                .get(definition)
                .unwrap_or_else(|| panic!("{at}: no such definition"))
                .get("properties")
                .and_then(|p| p.get(property))
                .unwrap_or_else(|| panic!("{at}: no such property"));
            let ty =
                |s: &serde_json::Value| s.get("type").and_then(|t| t.as_str()).map(str::to_owned);
            let target = match place {
                Place::Property => schema,
                Place::Items => {
                    assert_eq!(ty(schema).as_deref(), Some("array"), "{at}");
                    &schema["items"]
                }
                Place::Values => {
                    assert_eq!(ty(schema).as_deref(), Some("object"), "{at}");
                    &schema["additionalProperties"]
                }
            };
            assert_eq!(ty(target).as_deref(), Some("string"), "{at}");
            assert!(target.get("$ref").is_none(), "{at}");
            assert!(!values.is_empty(), "{at}");
            // kube-openapi sorts the values as quoted Go literals.
            let mut sorted = values.to_vec();
            sorted.sort_by_key(|v| format!("{v:?}"));
            sorted.dedup();
            assert_eq!(sorted, values, "{at}");
        }
    }

    #[test]
    fn the_table_has_the_fields_clients_know() {
        let row = |d: &str, f: &str| {
            ENUMS
                .iter()
                .find(|(dd, ff, _)| *dd == d && *ff == f)
                .map(|(_, _, v)| *v)
        };
        assert_eq!(
            row("io.k8s.api.core.v1.Container", "imagePullPolicy"),
            Some(&["Always", "IfNotPresent", "Never"][..])
        );
        assert_eq!(
            row("io.k8s.api.core.v1.PodSpec", "restartPolicy"),
            Some(&["Always", "Never", "OnFailure"][..])
        );
        assert_eq!(
            row("io.k8s.api.core.v1.ServiceSpec", "type"),
            Some(&["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"][..])
        );
        assert_eq!(
            row(
                "io.k8s.api.core.v1.PersistentVolumeClaimSpec",
                "accessModes[]"
            ),
            Some(
                &[
                    "ReadOnlyMany",
                    "ReadWriteMany",
                    "ReadWriteOnce",
                    "ReadWriteOncePod"
                ][..]
            )
        );
        assert_eq!(
            row("io.k8s.api.core.v1.Lifecycle", "stopSignal").map(<[_]>::len),
            Some(65)
        );
        assert_eq!(place("ipFamilies[]"), ("ipFamilies", Place::Items));
        assert_eq!(
            place("allocatedResourceStatuses{}"),
            ("allocatedResourceStatuses", Place::Values)
        );
        assert_eq!(place("type"), ("type", Place::Property));
    }
}

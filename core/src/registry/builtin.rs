//! The built-in resources of Kubernetes v1.33, one row per resource.
//!
//! Kinds, scopes, verbs, short names, categories, singular names and subresources are
//! those kube-apiserver v1.33 reports in discovery (`/api/v1`, `/apis/<group>/<version>`
//! and the aggregated `apidiscovery.k8s.io/v2` document); storage version hashes are the
//! ones it shows in `/api/v1` and `/apis/<group>/<version>`. Name rules follow each
//! type's validation in kube-apiserver. Each row's strategy is its kind's in
//! `resources/`, or the plain one.

use super::{NameRule, Resource, ResourceSchema, Subresource};
use crate::resources::{self as kinds, SharedStrategy};

/// One resource of the table, all borrowed from static data.
pub(super) struct Row {
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    singular: &'static str,
    kind: &'static str,
    namespaced: bool,
    verbs: &'static [&'static str],
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    subresources: &'static [Sub],
    name_rule: NameRule,
    /// `""` when kube publishes none.
    storage_version_hash: &'static str,
    strategy: SharedStrategy,
}

/// One subresource of a row.
pub(super) struct Sub {
    name: &'static str,
    /// `""` for the parent's kind.
    kind: &'static str,
    /// The group and version of `kind` when they differ from the parent's.
    gv: Option<(&'static str, &'static str)>,
    verbs: &'static [&'static str],
}

impl Row {
    pub(super) fn to_resource(&self) -> Resource {
        let strings = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let mut subresources: Vec<Subresource> = self
            .subresources
            .iter()
            .map(|s| Subresource {
                name: s.name.to_owned(),
                kind: if s.kind.is_empty() { self.kind } else { s.kind }.to_owned(),
                group: s.gv.map(|(g, _)| g.to_owned()),
                version: s.gv.map(|(_, v)| v.to_owned()),
                verbs: strings(s.verbs),
            })
            .collect();
        subresources.sort_by(|a, b| a.name.cmp(&b.name));
        Resource {
            group: self.group.to_owned(),
            version: self.version.to_owned(),
            kind: self.kind.to_owned(),
            plural: self.plural.to_owned(),
            singular: self.singular.to_owned(),
            namespaced: self.namespaced,
            verbs: strings(self.verbs),
            short_names: strings(self.short_names),
            categories: strings(self.categories),
            subresources,
            name_rule: self.name_rule,
            storage_version_hash: (!self.storage_version_hash.is_empty())
                .then(|| self.storage_version_hash.to_owned()),
            strategy: self.strategy.clone(),
            schema: ResourceSchema::Builtin,
        }
    }
}

// Scopes.
const NS: bool = true;
const CLUSTER: bool = false;

// Verb sets, sorted as kube lists them.
const CRUD: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
/// Namespaces: no deletecollection.
const CRUD_NO_DC: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];
const GPU: &[&str] = &["get", "patch", "update"];
const CG: &[&str] = &["create", "get"];
const C: &[&str] = &["create"];
const G: &[&str] = &["get"];
const GL: &[&str] = &["get", "list"];
const U: &[&str] = &["update"];
const PROXY: &[&str] = &["create", "delete", "get", "patch", "update"];

// Categories and short names shared by several rows.
const ALL: &[&str] = &["all"];
const API_EXT: &[&str] = &["api-extensions"];
const NONE: &[&str] = &[];

// Name rules.
const SUBDOMAIN: NameRule = NameRule::Dns1123Subdomain;
const LABEL: NameRule = NameRule::Dns1123Label;
const LABEL1035: NameRule = NameRule::Dns1035Label;
const SEGMENT: NameRule = NameRule::PathSegment;

const fn sub(name: &'static str, kind: &'static str, verbs: &'static [&'static str]) -> Sub {
    Sub {
        name,
        kind,
        gv: None,
        verbs,
    }
}

const STATUS: Sub = sub("status", "", GPU);
const SCALE: Sub = Sub {
    name: "scale",
    kind: "Scale",
    gv: Some(("autoscaling", "v1")),
    verbs: GPU,
};
const ONLY_STATUS: &[Sub] = &[STATUS];
const CSR_SUBS: &[Sub] = &[sub("approval", "", GPU), STATUS];
const SCALE_STATUS: &[Sub] = &[SCALE, STATUS];

const NO_SUBS: &[Sub] = &[];

const POD_SUBS: &[Sub] = &[
    sub("attach", "PodAttachOptions", CG),
    sub("binding", "Binding", C),
    sub("ephemeralcontainers", "", GPU),
    Sub {
        name: "eviction",
        kind: "Eviction",
        gv: Some(("policy", "v1")),
        verbs: C,
    },
    sub("exec", "PodExecOptions", CG),
    sub("log", "", G),
    sub("portforward", "PodPortForwardOptions", CG),
    sub("proxy", "PodProxyOptions", PROXY),
    sub("resize", "", GPU),
    STATUS,
];
const NODE_SUBS: &[Sub] = &[sub("proxy", "NodeProxyOptions", PROXY), STATUS];
const NAMESPACE_SUBS: &[Sub] = &[sub("finalize", "", U), STATUS];
const SERVICE_SUBS: &[Sub] = &[sub("proxy", "ServiceProxyOptions", PROXY), STATUS];
const SERVICEACCOUNT_SUBS: &[Sub] = &[Sub {
    name: "token",
    kind: "TokenRequest",
    gv: Some(("authentication.k8s.io", "v1")),
    verbs: C,
}];

#[allow(clippy::too_many_arguments)]
const fn row(
    (group, version): (&'static str, &'static str),
    plural: &'static str,
    singular: &'static str,
    kind: &'static str,
    namespaced: bool,
    verbs: &'static [&'static str],
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    subresources: &'static [Sub],
    name_rule: NameRule,
    storage_version_hash: &'static str,
    strategy: SharedStrategy,
) -> Row {
    Row {
        group,
        version,
        plural,
        singular,
        kind,
        namespaced,
        verbs,
        short_names,
        categories,
        subresources,
        name_rule,
        storage_version_hash,
        strategy,
    }
}

const CORE: (&str, &str) = ("", "v1");
const APPS: (&str, &str) = ("apps", "v1");
const BATCH: (&str, &str) = ("batch", "v1");
const AUTOSCALING_V2: (&str, &str) = ("autoscaling", "v2");
const AUTOSCALING_V1: (&str, &str) = ("autoscaling", "v1");
const COORDINATION: (&str, &str) = ("coordination.k8s.io", "v1");
const RBAC: (&str, &str) = ("rbac.authorization.k8s.io", "v1");
const NETWORKING: (&str, &str) = ("networking.k8s.io", "v1");
const POLICY: (&str, &str) = ("policy", "v1");
const STORAGE: (&str, &str) = ("storage.k8s.io", "v1");
const SCHEDULING: (&str, &str) = ("scheduling.k8s.io", "v1");
const EVENTS: (&str, &str) = ("events.k8s.io", "v1");
const DISCOVERY: (&str, &str) = ("discovery.k8s.io", "v1");
const APIEXTENSIONS: (&str, &str) = ("apiextensions.k8s.io", "v1");
const AUTHENTICATION: (&str, &str) = ("authentication.k8s.io", "v1");
const AUTHORIZATION: (&str, &str) = ("authorization.k8s.io", "v1");
const CERTIFICATES: (&str, &str) = ("certificates.k8s.io", "v1");
const NODE: (&str, &str) = ("node.k8s.io", "v1");
const ADMISSIONREGISTRATION: (&str, &str) = ("admissionregistration.k8s.io", "v1");
const APIREGISTRATION: (&str, &str) = ("apiregistration.k8s.io", "v1");
const FLOWCONTROL: (&str, &str) = ("flowcontrol.apiserver.k8s.io", "v1");

/// The built-in resources. Columns: group/version, plural, singular, kind, scope, verbs,
/// short names, categories, subresources, name rule, storage version hash, strategy.
#[rustfmt::skip]
pub(super) const TABLE: &[Row] = &[
    // Not stored: a Binding is served by binding its pod (rest/binding.rs).
    row(CORE, "bindings", "binding", "Binding", NS, C, NONE, NONE, NO_SUBS, SUBDOMAIN, "", SharedStrategy::of(&kinds::bindings::Bindings)),
    // Not stored: made on each read from the server's own health (resources/componentstatuses.rs).
    row(CORE, "componentstatuses", "componentstatus", "ComponentStatus", CLUSTER, GL, &["cs"], NONE, NO_SUBS, SEGMENT, "", SharedStrategy::of(&kinds::componentstatuses::ComponentStatuses)),
    row(CORE, "configmaps", "configmap", "ConfigMap", NS, CRUD, &["cm"], NONE, NO_SUBS, SUBDOMAIN, "qFsyl6wFWjQ=", SharedStrategy::of(&kinds::configmaps::ConfigMaps)),
    row(CORE, "endpoints", "endpoints", "Endpoints", NS, CRUD, &["ep"], NONE, NO_SUBS, SUBDOMAIN, "fWeeMqaN/OA=", SharedStrategy::of(&kinds::endpoints::Endpoints)),
    row(CORE, "events", "event", "Event", NS, CRUD, &["ev"], NONE, NO_SUBS, SEGMENT, "r2yiGXH7wu8=", SharedStrategy::of(&kinds::events::CoreEvents)),
    row(CORE, "limitranges", "limitrange", "LimitRange", NS, CRUD, &["limits"], NONE, NO_SUBS, SUBDOMAIN, "EBKMFVe6cwo=", SharedStrategy::of(&kinds::limitranges::LimitRanges)),
    row(CORE, "namespaces", "namespace", "Namespace", CLUSTER, CRUD_NO_DC, &["ns"], NONE, NAMESPACE_SUBS, LABEL, "Q3oi5N2YM8M=", SharedStrategy::of(&kinds::namespaces::Namespaces)),
    row(CORE, "nodes", "node", "Node", CLUSTER, CRUD, &["no"], NONE, NODE_SUBS, SUBDOMAIN, "XwShjMxG9Fs=", SharedStrategy::of(&kinds::nodes::Nodes)),
    row(CORE, "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", NS, CRUD, &["pvc"], NONE, ONLY_STATUS, SUBDOMAIN, "QWTyNDq0dC4=", SharedStrategy::of(&kinds::persistentvolumeclaims::PersistentVolumeClaims)),
    row(CORE, "persistentvolumes", "persistentvolume", "PersistentVolume", CLUSTER, CRUD, &["pv"], NONE, ONLY_STATUS, SUBDOMAIN, "HN/zwEC+JgM=", SharedStrategy::of(&kinds::persistentvolumes::PersistentVolumes)),
    row(CORE, "pods", "pod", "Pod", NS, CRUD, &["po"], ALL, POD_SUBS, SUBDOMAIN, "xPOwRZ+Yhw8=", SharedStrategy::of(&kinds::pods::Pods)),
    row(CORE, "podtemplates", "podtemplate", "PodTemplate", NS, CRUD, NONE, NONE, NO_SUBS, SUBDOMAIN, "LIXB2x4IFpk=", SharedStrategy::of(&kinds::podtemplates::PodTemplates)),
    row(CORE, "replicationcontrollers", "replicationcontroller", "ReplicationController", NS, CRUD, &["rc"], ALL, SCALE_STATUS, SUBDOMAIN, "Jond2If31h0=", SharedStrategy::of(&kinds::replicationcontrollers::ReplicationControllers)),
    row(CORE, "resourcequotas", "resourcequota", "ResourceQuota", NS, CRUD, &["quota"], NONE, ONLY_STATUS, SUBDOMAIN, "8uhSgffRX6w=", SharedStrategy::of(&kinds::resourcequotas::ResourceQuotas)),
    row(CORE, "secrets", "secret", "Secret", NS, CRUD, NONE, NONE, NO_SUBS, SUBDOMAIN, "S6u1pOWzb84=", SharedStrategy::of(&kinds::secrets::Secrets)),
    row(CORE, "serviceaccounts", "serviceaccount", "ServiceAccount", NS, CRUD, &["sa"], NONE, SERVICEACCOUNT_SUBS, SUBDOMAIN, "pbx9ZvyFpBE=", SharedStrategy::of(&kinds::serviceaccounts::ServiceAccounts)),
    row(CORE, "services", "service", "Service", NS, CRUD, &["svc"], ALL, SERVICE_SUBS, LABEL1035, "0/CO1lhkEBI=", SharedStrategy::of(&kinds::services::Services)),

    row(APPS, "controllerrevisions", "controllerrevision", "ControllerRevision", NS, CRUD, NONE, NONE, NO_SUBS, SUBDOMAIN, "85nkx63pcBU=", SharedStrategy::of(&kinds::controllerrevisions::ControllerRevisions)),
    row(APPS, "daemonsets", "daemonset", "DaemonSet", NS, CRUD, &["ds"], ALL, ONLY_STATUS, SUBDOMAIN, "dd7pWHUlMKQ=", SharedStrategy::of(&kinds::daemonsets::DaemonSets)),
    row(APPS, "deployments", "deployment", "Deployment", NS, CRUD, &["deploy"], ALL, SCALE_STATUS, SUBDOMAIN, "8aSe+NMegvE=", SharedStrategy::of(&kinds::deployments::Deployments)),
    row(APPS, "replicasets", "replicaset", "ReplicaSet", NS, CRUD, &["rs"], ALL, SCALE_STATUS, SUBDOMAIN, "P1RzHs8/mWQ=", SharedStrategy::of(&kinds::replicasets::ReplicaSets)),
    row(APPS, "statefulsets", "statefulset", "StatefulSet", NS, CRUD, &["sts"], ALL, SCALE_STATUS, SUBDOMAIN, "H+vl74LkKdo=", SharedStrategy::of(&kinds::statefulsets::StatefulSets)),

    // Not stored: the reviews answer a create from what the server knows (rest/create_only.rs).
    row(AUTHENTICATION, "selfsubjectreviews", "selfsubjectreview", "SelfSubjectReview", CLUSTER, C, NONE, NONE, NO_SUBS, SEGMENT, "", SharedStrategy::of(&kinds::selfsubjectreviews::SelfSubjectReviews)),
    row(AUTHENTICATION, "tokenreviews", "tokenreview", "TokenReview", CLUSTER, C, NONE, NONE, NO_SUBS, SEGMENT, "", SharedStrategy::of(&kinds::tokenreviews::TokenReviews)),
    row(AUTHORIZATION, "localsubjectaccessreviews", "localsubjectaccessreview", "LocalSubjectAccessReview", NS, C, NONE, NONE, NO_SUBS, SEGMENT, "", SharedStrategy::of(&kinds::localsubjectaccessreviews::LocalSubjectAccessReviews)),
    row(AUTHORIZATION, "selfsubjectaccessreviews", "selfsubjectaccessreview", "SelfSubjectAccessReview", CLUSTER, C, NONE, NONE, NO_SUBS, SEGMENT, "", SharedStrategy::of(&kinds::selfsubjectaccessreviews::SelfSubjectAccessReviews)),
    row(AUTHORIZATION, "selfsubjectrulesreviews", "selfsubjectrulesreview", "SelfSubjectRulesReview", CLUSTER, C, NONE, NONE, NO_SUBS, SEGMENT, "", SharedStrategy::of(&kinds::selfsubjectrulesreviews::SelfSubjectRulesReviews)),
    row(AUTHORIZATION, "subjectaccessreviews", "subjectaccessreview", "SubjectAccessReview", CLUSTER, C, NONE, NONE, NO_SUBS, SEGMENT, "", SharedStrategy::of(&kinds::subjectaccessreviews::SubjectAccessReviews)),

    row(EVENTS, "events", "event", "Event", NS, CRUD, &["ev"], NONE, NO_SUBS, SUBDOMAIN, "r2yiGXH7wu8=", SharedStrategy::of(&kinds::events::Events)),

    row(AUTOSCALING_V2, "horizontalpodautoscalers", "horizontalpodautoscaler", "HorizontalPodAutoscaler", NS, CRUD, &["hpa"], ALL, ONLY_STATUS, SUBDOMAIN, "qwQve8ut294=", SharedStrategy::of(&kinds::horizontalpodautoscalers::HorizontalPodAutoscalers)),
    row(AUTOSCALING_V1, "horizontalpodautoscalers", "horizontalpodautoscaler", "HorizontalPodAutoscaler", NS, CRUD, &["hpa"], ALL, ONLY_STATUS, SUBDOMAIN, "qwQve8ut294=", SharedStrategy::of(&kinds::horizontalpodautoscalers::HorizontalPodAutoscalers)),

    row(BATCH, "cronjobs", "cronjob", "CronJob", NS, CRUD, &["cj"], ALL, ONLY_STATUS, SUBDOMAIN, "sd5LIXh4Fjs=", SharedStrategy::of(&kinds::cronjobs::CronJobs)),
    row(BATCH, "jobs", "job", "Job", NS, CRUD, NONE, ALL, ONLY_STATUS, SUBDOMAIN, "mudhfqk/qZY=", SharedStrategy::of(&kinds::jobs::Jobs)),

    // The cluster IPs of Services, one object per address (resources/services/allocation.rs).
    row(NETWORKING, "ipaddresses", "ipaddress", "IPAddress", CLUSTER, CRUD, &["ip"], NONE, NO_SUBS, SEGMENT, "3f/plJFChNE=", SharedStrategy::of(&kinds::ipaddresses::IpAddresses)),
    row(NETWORKING, "servicecidrs", "servicecidr", "ServiceCIDR", CLUSTER, CRUD, NONE, NONE, ONLY_STATUS, SUBDOMAIN, "gNLvruQhW2g=", SharedStrategy::of(&kinds::servicecidrs::ServiceCidrs)),
    row(NETWORKING, "ingressclasses", "ingressclass", "IngressClass", CLUSTER, CRUD, NONE, NONE, NO_SUBS, SUBDOMAIN, "l/iqIbDgFyQ=", SharedStrategy::of(&kinds::ingressclasses::IngressClasses)),
    row(NETWORKING, "ingresses", "ingress", "Ingress", NS, CRUD, &["ing"], NONE, ONLY_STATUS, SUBDOMAIN, "39NQlfNR+bo=", SharedStrategy::of(&kinds::ingresses::Ingresses)),
    row(NETWORKING, "networkpolicies", "networkpolicy", "NetworkPolicy", NS, CRUD, &["netpol"], NONE, NO_SUBS, SUBDOMAIN, "YpfwF18m1G8=", SharedStrategy::of(&kinds::networkpolicies::NetworkPolicies)),

    row(POLICY, "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", NS, CRUD, &["pdb"], NONE, ONLY_STATUS, SEGMENT, "EVWiDmWqyJw=", SharedStrategy::of(&kinds::poddisruptionbudgets::PodDisruptionBudgets)),

    row(RBAC, "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", CLUSTER, CRUD, NONE, NONE, NO_SUBS, SEGMENT, "48tpQ8gZHFc=", SharedStrategy::of(&kinds::rolebindings::CLUSTER_ROLE_BINDINGS)),
    row(RBAC, "clusterroles", "clusterrole", "ClusterRole", CLUSTER, CRUD, NONE, NONE, NO_SUBS, SEGMENT, "bYE5ZWDrJ44=", SharedStrategy::of(&kinds::roles::CLUSTER_ROLES)),
    row(RBAC, "rolebindings", "rolebinding", "RoleBinding", NS, CRUD, NONE, NONE, NO_SUBS, SEGMENT, "eGsCzGH6b1g=", SharedStrategy::of(&kinds::rolebindings::ROLE_BINDINGS)),
    row(RBAC, "roles", "role", "Role", NS, CRUD, NONE, NONE, NO_SUBS, SEGMENT, "7FuwZcIIItM=", SharedStrategy::of(&kinds::roles::ROLES)),

    row(STORAGE, "csidrivers", "csidriver", "CSIDriver", CLUSTER, CRUD, NONE, NONE, NO_SUBS, SUBDOMAIN, "hL6j/rwBV5w=", SharedStrategy::of(&kinds::csidrivers::CsiDrivers)),
    row(STORAGE, "csinodes", "csinode", "CSINode", CLUSTER, CRUD, NONE, NONE, NO_SUBS, SUBDOMAIN, "Pe62DkZtjuo=", SharedStrategy::of(&kinds::csinodes::CsiNodes)),
    row(STORAGE, "csistoragecapacities", "csistoragecapacity", "CSIStorageCapacity", NS, CRUD, NONE, NONE, NO_SUBS, SUBDOMAIN, "xeVl+2Ly1kE=", SharedStrategy::of(&kinds::csistoragecapacities::CsiStorageCapacities)),
    row(STORAGE, "storageclasses", "storageclass", "StorageClass", CLUSTER, CRUD, &["sc"], NONE, NO_SUBS, SUBDOMAIN, "K+m6uJwbjGY=", SharedStrategy::of(&kinds::storageclasses::StorageClasses)),
    row(STORAGE, "volumeattachments", "volumeattachment", "VolumeAttachment", CLUSTER, CRUD, NONE, NONE, ONLY_STATUS, SUBDOMAIN, "tJx/ezt6UDU=", SharedStrategy::of(&kinds::volumeattachments::VolumeAttachments)),

    // Upstream checks no name of its own on a request (any path segment).
    row(CERTIFICATES, "certificatesigningrequests", "certificatesigningrequest", "CertificateSigningRequest", CLUSTER, CRUD, &["csr"], NONE, CSR_SUBS, SEGMENT, "95fRKMXA+00=", SharedStrategy::of(&kinds::certificatesigningrequests::CertificateSigningRequests)),

    row(NODE, "runtimeclasses", "runtimeclass", "RuntimeClass", CLUSTER, CRUD, NONE, NONE, NO_SUBS, SUBDOMAIN, "WQTu1GL3T2Q=", SharedStrategy::of(&kinds::runtimeclasses::RuntimeClasses)),

    row(APIREGISTRATION, "apiservices", "apiservice", "APIService", CLUSTER, CRUD, NONE, API_EXT, ONLY_STATUS, SEGMENT, "InPBPD7+PqM=", SharedStrategy::of(&kinds::apiservices::APIServices)),

    row(ADMISSIONREGISTRATION, "mutatingwebhookconfigurations", "mutatingwebhookconfiguration", "MutatingWebhookConfiguration", CLUSTER, CRUD, NONE, API_EXT, NO_SUBS, SUBDOMAIN, "Sqi0GUgDaX0=", SharedStrategy::of(&kinds::webhookconfigurations::MUTATING)),
    row(ADMISSIONREGISTRATION, "validatingadmissionpolicies", "validatingadmissionpolicy", "ValidatingAdmissionPolicy", CLUSTER, CRUD, NONE, API_EXT, ONLY_STATUS, SUBDOMAIN, "6OxvlMmQ6is=", SharedStrategy::of(&kinds::validatingadmissionpolicies::ValidatingAdmissionPolicies)),
    row(ADMISSIONREGISTRATION, "validatingadmissionpolicybindings", "validatingadmissionpolicybinding", "ValidatingAdmissionPolicyBinding", CLUSTER, CRUD, NONE, API_EXT, NO_SUBS, SUBDOMAIN, "v9715VZqakg=", SharedStrategy::of(&kinds::validatingadmissionpolicybindings::ValidatingAdmissionPolicyBindings)),
    row(ADMISSIONREGISTRATION, "validatingwebhookconfigurations", "validatingwebhookconfiguration", "ValidatingWebhookConfiguration", CLUSTER, CRUD, NONE, API_EXT, NO_SUBS, SUBDOMAIN, "B0wHjQmsGNk=", SharedStrategy::of(&kinds::webhookconfigurations::VALIDATING)),

    row(APIEXTENSIONS, "customresourcedefinitions", "customresourcedefinition", "CustomResourceDefinition", CLUSTER, CRUD, &["crd", "crds"], API_EXT, ONLY_STATUS, SUBDOMAIN, "jfWCUB31mvA=", SharedStrategy::of(&kinds::customresourcedefinitions::CustomResourceDefinitions)),

    row(SCHEDULING, "priorityclasses", "priorityclass", "PriorityClass", CLUSTER, CRUD, &["pc"], NONE, NO_SUBS, SUBDOMAIN, "1QwjyaZjj3Y=", SharedStrategy::of(&kinds::priorityclasses::PriorityClasses)),

    row(COORDINATION, "leases", "lease", "Lease", NS, CRUD, NONE, NONE, NO_SUBS, SUBDOMAIN, "gqkMMb/YqFM=", SharedStrategy::of(&kinds::leases::Leases)),

    row(DISCOVERY, "endpointslices", "endpointslice", "EndpointSlice", NS, CRUD, NONE, NONE, NO_SUBS, SUBDOMAIN, "Nx3SIv6I0mE=", SharedStrategy::of(&kinds::endpointslices::EndpointSlices)),

    row(FLOWCONTROL, "flowschemas", "flowschema", "FlowSchema", CLUSTER, CRUD, NONE, NONE, ONLY_STATUS, SUBDOMAIN, "9NnFrw7ZEmA=", SharedStrategy::of(&kinds::flowschemas::FlowSchemas)),
    row(FLOWCONTROL, "prioritylevelconfigurations", "prioritylevelconfiguration", "PriorityLevelConfiguration", CLUSTER, CRUD, NONE, NONE, ONLY_STATUS, SUBDOMAIN, "+CwSrEWTDhc=", SharedStrategy::of(&kinds::prioritylevelconfigurations::PriorityLevelConfigurations)),
];

use super::*;

fn strs(xs: &[String]) -> Vec<&str> {
    xs.iter().map(String::as_str).collect()
}

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

#[test]
fn pods_are_namespaced_with_short_name_po() {
    let reg = Registry::builtin();
    let pods = reg.lookup("", "v1", "pods").expect("pods");
    assert_eq!(pods.kind, "Pod");
    assert_eq!(pods.singular, "pod");
    assert!(pods.namespaced);
    assert_eq!(strs(&pods.short_names), ["po"]);
    assert_eq!(strs(&pods.categories), ["all"]);
    assert_eq!(strs(&pods.verbs), CRUD);
    assert_eq!(pods.name_rule, NameRule::Dns1123Subdomain);
    assert_eq!(pods.list_kind(), "PodList");
    assert_eq!(pods.api_version(), "v1");
    assert_eq!(pods.group_resource(), "pods");
    assert!(pods.has_verb("watch"));
    assert!(!pods.has_verb("proxy"));
    assert_eq!(pods.storage_version_hash.as_deref(), Some("xPOwRZ+Yhw8="));
    let names: Vec<&str> = pods.subresources.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "attach",
            "binding",
            "ephemeralcontainers",
            "eviction",
            "exec",
            "log",
            "portforward",
            "proxy",
            "resize",
            "status"
        ]
    );
    let eviction = pods.subresource("eviction").unwrap();
    assert_eq!(eviction.kind, "Eviction");
    assert_eq!(eviction.group.as_deref(), Some("policy"));
    assert_eq!(eviction.version.as_deref(), Some("v1"));
    assert_eq!(strs(&eviction.verbs), ["create"]);
    let status = pods.subresource("status").unwrap();
    assert_eq!(status.kind, "Pod");
    assert_eq!(status.group, None);
    assert!(status.has_verb("patch"));
    assert_eq!(pods.subresource("exec").unwrap().kind, "PodExecOptions");
    assert_eq!(strs(&pods.subresource("log").unwrap().verbs), ["get"]);
}

#[test]
fn deployments_have_short_name_deploy_category_all_and_scale() {
    let reg = Registry::builtin();
    let d = reg
        .lookup("apps", "v1", "deployments")
        .expect("deployments");
    assert_eq!(d.kind, "Deployment");
    assert!(d.namespaced);
    assert_eq!(strs(&d.short_names), ["deploy"]);
    assert_eq!(strs(&d.categories), ["all"]);
    assert_eq!(d.api_version(), "apps/v1");
    assert_eq!(d.group_resource(), "deployments.apps");
    assert_eq!(d.list_kind(), "DeploymentList");
    let scale = d.subresource("scale").unwrap();
    assert_eq!(scale.kind, "Scale");
    assert_eq!(scale.group.as_deref(), Some("autoscaling"));
    assert_eq!(scale.version.as_deref(), Some("v1"));
    assert_eq!(strs(&scale.verbs), ["get", "patch", "update"]);
}

#[test]
fn namespaces_are_cluster_scoped_labels() {
    let reg = Registry::builtin();
    let ns = reg.lookup("", "v1", "namespaces").expect("namespaces");
    assert!(!ns.namespaced);
    assert_eq!(strs(&ns.short_names), ["ns"]);
    assert_eq!(ns.name_rule, NameRule::Dns1123Label);
    assert!(!ns.has_verb("deletecollection"));
    assert_eq!(strs(&ns.subresource("finalize").unwrap().verbs), ["update"]);
}

#[test]
fn name_rules() {
    let reg = Registry::builtin();
    let rule = |g: &str, v: &str, p: &str| reg.lookup(g, v, p).unwrap().name_rule;
    for p in [
        "clusterroles",
        "clusterrolebindings",
        "roles",
        "rolebindings",
    ] {
        assert_eq!(
            rule("rbac.authorization.k8s.io", "v1", p),
            NameRule::PathSegment
        );
    }
    assert_eq!(rule("", "v1", "services"), NameRule::Dns1035Label);
    for p in ["nodes", "pods", "configmaps", "secrets", "serviceaccounts"] {
        assert_eq!(rule("", "v1", p), NameRule::Dns1123Subdomain, "{p}");
    }
    assert_eq!(
        rule("apps", "v1", "deployments"),
        NameRule::Dns1123Subdomain
    );
    assert_eq!(
        rule("coordination.k8s.io", "v1", "leases"),
        NameRule::Dns1123Subdomain
    );
    // core/v1 events skip name validation; events.k8s.io/v1 is strict.
    assert_eq!(rule("", "v1", "events"), NameRule::PathSegment);
    assert_eq!(
        rule("events.k8s.io", "v1", "events"),
        NameRule::Dns1123Subdomain
    );
    assert_eq!(
        rule("policy", "v1", "poddisruptionbudgets"),
        NameRule::PathSegment
    );
}

#[test]
fn groups_in_kube_order_with_preferred_versions() {
    let reg = Registry::builtin();
    let groups = reg.groups();
    let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "apiregistration.k8s.io",
            "apps",
            "events.k8s.io",
            "authentication.k8s.io",
            "authorization.k8s.io",
            "autoscaling",
            "batch",
            "certificates.k8s.io",
            "networking.k8s.io",
            "policy",
            "rbac.authorization.k8s.io",
            "storage.k8s.io",
            "admissionregistration.k8s.io",
            "apiextensions.k8s.io",
            "scheduling.k8s.io",
            "coordination.k8s.io",
            "node.k8s.io",
            "discovery.k8s.io",
            "flowcontrol.apiserver.k8s.io",
        ]
    );
    for g in &groups {
        let want: &[&str] = if g.name == "autoscaling" {
            &["v2", "v1"]
        } else {
            &["v1"]
        };
        assert_eq!(strs(&g.versions), want, "{}", g.name);
        assert_eq!(g.preferred_version, want[0], "{}", g.name);
        assert_eq!(reg.versions_of(&g.name), want);
        assert_eq!(reg.preferred_version(&g.name), Some(want[0]));
    }
    assert_eq!(reg.versions_of(""), ["v1"]);
    assert!(reg.versions_of("example.com").is_empty());
    assert!(reg.has_group_version("autoscaling", "v1"));
    assert!(!reg.has_group_version("apps", "v1beta1"));
}

#[test]
fn lookups_miss_cleanly() {
    let reg = Registry::builtin();
    assert!(reg.lookup("", "v1", "deployments").is_none());
    assert!(reg.lookup("apps", "v2", "deployments").is_none());
    assert!(reg.lookup("apps", "v1", "Deployments").is_none());
    assert_eq!(
        reg.lookup_kind("batch", "v1", "CronJob").unwrap().plural,
        "cronjobs"
    );
}

#[test]
fn every_row_is_well_formed() {
    let reg = Registry::builtin();
    let mut seen = std::collections::HashSet::new();
    for r in reg.resources() {
        assert!(
            seen.insert((r.group.clone(), r.version.clone(), r.plural.clone())),
            "duplicate {}",
            r.group_resource()
        );
        assert!(!r.verbs.is_empty());
        let mut sorted = r.verbs.clone();
        sorted.sort();
        assert_eq!(sorted, r.verbs, "{} verbs sorted", r.plural);
        assert!(
            r.plural
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
            "{}",
            r.plural
        );
        assert!(r.kind.as_bytes()[0].is_ascii_uppercase());
        // Only what is stored has a storage version hash (not bindings, nor the
        // componentstatuses made on each read).
        assert_eq!(r.storage_version_hash.is_some(), r.has_verb("create") && r.has_verb("list"), "{}", r.plural);
        for w in r.subresources.windows(2) {
            assert!(w[0].name < w[1].name);
        }
    }
}

#[test]
fn required_resources_are_present() {
    let reg = Registry::builtin();
    let want: &[(&str, &str, &[&str])] = &[
        (
            "",
            "v1",
            &[
                "namespaces",
                "pods",
                "services",
                "endpoints",
                "configmaps",
                "secrets",
                "serviceaccounts",
                "events",
                "nodes",
                "persistentvolumes",
                "persistentvolumeclaims",
                "limitranges",
                "resourcequotas",
                "podtemplates",
                "replicationcontrollers",
            ],
        ),
        (
            "apps",
            "v1",
            &[
                "deployments",
                "replicasets",
                "statefulsets",
                "daemonsets",
                "controllerrevisions",
            ],
        ),
        ("batch", "v1", &["jobs", "cronjobs"]),
        ("coordination.k8s.io", "v1", &["leases"]),
        (
            "rbac.authorization.k8s.io",
            "v1",
            &[
                "roles",
                "rolebindings",
                "clusterroles",
                "clusterrolebindings",
            ],
        ),
        (
            "networking.k8s.io",
            "v1",
            &["ingresses", "ingressclasses", "ipaddresses", "networkpolicies", "servicecidrs"],
        ),
        ("policy", "v1", &["poddisruptionbudgets"]),
        ("storage.k8s.io", "v1", &["storageclasses", "csidrivers", "csinodes", "csistoragecapacities", "volumeattachments"]),
        ("certificates.k8s.io", "v1", &["certificatesigningrequests"]),
        ("node.k8s.io", "v1", &["runtimeclasses"]),
        ("", "v1", &["componentstatuses"]),
        ("scheduling.k8s.io", "v1", &["priorityclasses"]),
        ("events.k8s.io", "v1", &["events"]),
        ("discovery.k8s.io", "v1", &["endpointslices"]),
        ("autoscaling", "v2", &["horizontalpodautoscalers"]),
        ("autoscaling", "v1", &["horizontalpodautoscalers"]),
        ("apiextensions.k8s.io", "v1", &["customresourcedefinitions"]),
        (
            "admissionregistration.k8s.io",
            "v1",
            &[
                "mutatingwebhookconfigurations",
                "validatingwebhookconfigurations",
                "validatingadmissionpolicies",
                "validatingadmissionpolicybindings",
            ],
        ),
        ("apiregistration.k8s.io", "v1", &["apiservices"]),
        ("flowcontrol.apiserver.k8s.io", "v1", &["flowschemas", "prioritylevelconfigurations"]),
    ];
    for (g, v, plurals) in want {
        for p in *plurals {
            assert!(reg.lookup(g, v, p).is_some(), "{g}/{v} {p}");
        }
    }
}

type Fact = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

const NS_VERBS: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];

/// Facts read from kube-apiserver v1.33 discovery (the aggregated v2 document for
/// `/apis`, `/api/v1` for the core group): group, version, resource, kind, namespaced,
/// verbs, short names, categories, and subresources as `name:Kind[@group/version]:verbs`.
#[rustfmt::skip]
const FACTS: &[Fact] = &[
    ("", "v1", "bindings", "Binding", true, &["create"], &[], &[], &[]),
    ("", "v1", "namespaces", "Namespace", false, NS_VERBS, &["ns"], &[], &["finalize:Namespace:update", "status:Namespace:get,patch,update"]),
    ("", "v1", "nodes", "Node", false, CRUD, &["no"], &[], &["proxy:NodeProxyOptions:create,delete,get,patch,update", "status:Node:get,patch,update"]),
    ("", "v1", "services", "Service", true, CRUD, &["svc"], &["all"], &["proxy:ServiceProxyOptions:create,delete,get,patch,update", "status:Service:get,patch,update"]),
    ("", "v1", "serviceaccounts", "ServiceAccount", true, CRUD, &["sa"], &[], &["token:TokenRequest@authentication.k8s.io/v1:create"]),
    ("", "v1", "replicationcontrollers", "ReplicationController", true, CRUD, &["rc"], &["all"], &["scale:Scale@autoscaling/v1:get,patch,update", "status:ReplicationController:get,patch,update"]),
    ("", "v1", "configmaps", "ConfigMap", true, CRUD, &["cm"], &[], &[]),
    ("", "v1", "endpoints", "Endpoints", true, CRUD, &["ep"], &[], &[]),
    ("", "v1", "events", "Event", true, CRUD, &["ev"], &[], &[]),
    ("", "v1", "limitranges", "LimitRange", true, CRUD, &["limits"], &[], &[]),
    ("", "v1", "resourcequotas", "ResourceQuota", true, CRUD, &["quota"], &[], &["status:ResourceQuota:get,patch,update"]),
    ("", "v1", "secrets", "Secret", true, CRUD, &[], &[], &[]),
    ("", "v1", "podtemplates", "PodTemplate", true, CRUD, &[], &[], &[]),
    ("", "v1", "persistentvolumes", "PersistentVolume", false, CRUD, &["pv"], &[], &["status:PersistentVolume:get,patch,update"]),
    ("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true, CRUD, &["pvc"], &[], &["status:PersistentVolumeClaim:get,patch,update"]),
    ("", "v1", "pods", "Pod", true, CRUD, &["po"], &["all"], &[
        "attach:PodAttachOptions:create,get", "binding:Binding:create", "ephemeralcontainers:Pod:get,patch,update",
        "eviction:Eviction@policy/v1:create", "exec:PodExecOptions:create,get", "log:Pod:get",
        "portforward:PodPortForwardOptions:create,get", "proxy:PodProxyOptions:create,delete,get,patch,update",
        "resize:Pod:get,patch,update", "status:Pod:get,patch,update",
    ]),
    ("apps", "v1", "controllerrevisions", "ControllerRevision", true, CRUD, &[], &[], &[]),
    ("apps", "v1", "daemonsets", "DaemonSet", true, CRUD, &["ds"], &["all"], &["status:DaemonSet:get,patch,update"]),
    ("apps", "v1", "deployments", "Deployment", true, CRUD, &["deploy"], &["all"], &["scale:Scale@autoscaling/v1:get,patch,update", "status:Deployment:get,patch,update"]),
    ("apps", "v1", "statefulsets", "StatefulSet", true, CRUD, &["sts"], &["all"], &["scale:Scale@autoscaling/v1:get,patch,update", "status:StatefulSet:get,patch,update"]),
    ("apps", "v1", "replicasets", "ReplicaSet", true, CRUD, &["rs"], &["all"], &["scale:Scale@autoscaling/v1:get,patch,update", "status:ReplicaSet:get,patch,update"]),
    ("batch", "v1", "cronjobs", "CronJob", true, CRUD, &["cj"], &["all"], &["status:CronJob:get,patch,update"]),
    ("batch", "v1", "jobs", "Job", true, CRUD, &[], &["all"], &["status:Job:get,patch,update"]),
    ("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, CRUD, &["hpa"], &["all"], &["status:HorizontalPodAutoscaler:get,patch,update"]),
    ("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, CRUD, &["hpa"], &["all"], &["status:HorizontalPodAutoscaler:get,patch,update"]),
    ("events.k8s.io", "v1", "events", "Event", true, CRUD, &["ev"], &[], &[]),
    ("networking.k8s.io", "v1", "ingressclasses", "IngressClass", false, CRUD, &[], &[], &[]),
    ("networking.k8s.io", "v1", "ipaddresses", "IPAddress", false, CRUD, &["ip"], &[], &[]),
    ("networking.k8s.io", "v1", "servicecidrs", "ServiceCIDR", false, CRUD, &[], &[], &["status:ServiceCIDR:get,patch,update"]),
    ("networking.k8s.io", "v1", "ingresses", "Ingress", true, CRUD, &["ing"], &[], &["status:Ingress:get,patch,update"]),
    ("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", true, CRUD, &["netpol"], &[], &[]),
    ("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, CRUD, &["pdb"], &[], &["status:PodDisruptionBudget:get,patch,update"]),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", false, CRUD, &[], &[], &[]),
    ("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false, CRUD, &[], &[], &[]),
    ("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true, CRUD, &[], &[], &[]),
    ("rbac.authorization.k8s.io", "v1", "roles", "Role", true, CRUD, &[], &[], &[]),
    ("storage.k8s.io", "v1", "storageclasses", "StorageClass", false, CRUD, &["sc"], &[], &[]),
    ("storage.k8s.io", "v1", "csidrivers", "CSIDriver", false, CRUD, &[], &[], &[]),
    ("storage.k8s.io", "v1", "csinodes", "CSINode", false, CRUD, &[], &[], &[]),
    ("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", true, CRUD, &[], &[], &[]),
    ("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", false, CRUD, &[], &[], &["status:VolumeAttachment:get,patch,update"]),
    ("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", false, CRUD, &["csr"], &[], &["approval:CertificateSigningRequest:get,patch,update", "status:CertificateSigningRequest:get,patch,update"]),
    ("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", false, CRUD, &[], &[], &[]),
    ("", "v1", "componentstatuses", "ComponentStatus", false, &["get", "list"], &["cs"], &[], &[]),
    ("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false, CRUD, &["crd", "crds"], &["api-extensions"], &["status:CustomResourceDefinition:get,patch,update"]),
    ("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false, CRUD, &[], &["api-extensions"], &[]),
    ("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", false, CRUD, &[], &["api-extensions"], &["status:ValidatingAdmissionPolicy:get,patch,update"]),
    ("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", false, CRUD, &[], &["api-extensions"], &[]),
    ("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false, CRUD, &[], &["api-extensions"], &[]),
    ("apiregistration.k8s.io", "v1", "apiservices", "APIService", false, CRUD, &[], &["api-extensions"], &["status:APIService:get,patch,update"]),
    ("flowcontrol.apiserver.k8s.io", "v1", "flowschemas", "FlowSchema", false, CRUD, &[], &[], &["status:FlowSchema:get,patch,update"]),
    ("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations", "PriorityLevelConfiguration", false, CRUD, &[], &[], &["status:PriorityLevelConfiguration:get,patch,update"]),
    ("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false, CRUD, &["pc"], &[], &[]),
    ("coordination.k8s.io", "v1", "leases", "Lease", true, CRUD, &[], &[], &[]),
    ("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true, CRUD, &[], &[], &[]),
    ("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", false, &["create"], &[], &[], &[]),
    ("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", false, &["create"], &[], &[], &[]),
    ("authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", true, &["create"], &[], &[], &[]),
    ("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", false, &["create"], &[], &[], &[]),
    ("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", false, &["create"], &[], &[], &[]),
    ("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", false, &["create"], &[], &[], &[]),
];

#[test]
fn table_matches_kube_discovery() {
    let reg = Registry::builtin();
    for &(g, v, plural, kind, namespaced, verbs, short, cats, subs) in FACTS {
        let r = reg
            .lookup(g, v, plural)
            .unwrap_or_else(|| panic!("{g}/{v} {plural}"));
        assert_eq!(r.kind, kind, "{plural}");
        assert_eq!(r.namespaced, namespaced, "{plural}");
        assert_eq!(strs(&r.verbs), verbs, "{plural}");
        assert_eq!(strs(&r.short_names), short, "{plural}");
        assert_eq!(strs(&r.categories), cats, "{plural}");
        let ours: Vec<String> = r
            .subresources
            .iter()
            .map(|s| {
                let at = match (&s.group, &s.version) {
                    (Some(g), Some(v)) => format!("@{g}/{v}"),
                    _ => String::new(),
                };
                format!("{}:{}{}:{}", s.name, s.kind, at, s.verbs.join(","))
            })
            .collect();
        assert_eq!(strs(&ours), subs, "{plural}");
    }
    // Every built-in resource is covered by a fact.
    assert_eq!(FACTS.len(), reg.resources().len());
}

#[test]
fn kube_version_order() {
    let mut vs = vec![
        "v1",
        "foo10",
        "v11alpha2",
        "v10beta3",
        "v2",
        "v3beta1",
        "foo1",
        "v12alpha1",
        "v10",
        "v11beta2",
    ];
    vs.sort_by(|a, b| compare_versions(a, b));
    assert_eq!(
        vs,
        [
            "v10",
            "v2",
            "v1",
            "v11beta2",
            "v10beta3",
            "v3beta1",
            "v12alpha1",
            "v11alpha2",
            "foo1",
            "foo10"
        ]
    );
}

/// A namespaced custom resource `example.com/<version> widgets`.
fn widget(version: &str) -> Resource {
    Resource {
        group: "example.com".to_owned(),
        version: version.to_owned(),
        kind: "Widget".to_owned(),
        plural: "widgets".to_owned(),
        singular: "widget".to_owned(),
        namespaced: true,
        verbs: CRUD.iter().map(|v| v.to_string()).collect(),
        short_names: vec!["wd".to_owned()],
        categories: vec![],
        subresources: vec![],
        name_rule: NameRule::Dns1123Subdomain,
        storage_version_hash: None,
        strategy: crate::resources::SharedStrategy::plain(),
        schema: crate::schema::ResourceSchema::Builtin,
    }
}

#[test]
fn custom_resources_join_and_leave() {
    let mut reg = Registry::builtin();
    assert!(reg.insert(widget("v1beta1")).is_none());
    assert!(reg.insert(widget("v1")).is_none());
    assert!(reg.insert(widget("v1")).is_some());
    let groups = reg.groups();
    let last = groups.last().unwrap();
    assert_eq!(last.name, "example.com");
    assert_eq!(strs(&last.versions), ["v1", "v1beta1"]);
    assert_eq!(
        reg.lookup("example.com", "v1", "widgets")
            .unwrap()
            .group_resource(),
        "widgets.example.com"
    );
    assert!(reg.remove("example.com", "v1", "widgets").is_some());
    assert_eq!(reg.versions_of("example.com"), ["v1beta1"]);
}

const WIDGETS_PREFIX: &str = "/registry/example.com/widgets/";

#[test]
fn versions_of_a_resource_share_one_cache_that_leaves_with_the_last() {
    let served = Served::new("/registry".into(), Registry::builtin());
    let before = served.snapshot();
    assert_eq!(before.generation(), 0);
    assert!(served.add(widget("v1beta1")).is_none());
    let cache = served.caches().get(WIDGETS_PREFIX).cloned().expect("a widgets cache");
    // New while serving: unsynced until a reflector fills it.
    assert_eq!(cache.object_count(), None);
    assert!(served.add(widget("v1")).is_none());
    let shared = served.caches().get(WIDGETS_PREFIX).cloned().unwrap();
    assert!(Arc::ptr_eq(&cache, &shared), "versions share the cache of their prefix");
    assert!(served.add(widget("v1")).is_some(), "a second add replaces");
    assert_eq!(served.snapshot().generation(), 3);
    // A snapshot taken earlier is unchanged.
    assert!(before.lookup("example.com", "v1", "widgets").is_none());

    assert!(served.remove("example.com", "v1beta1", "widgets").is_some());
    assert!(served.caches().get(WIDGETS_PREFIX).is_some(), "v1 is still stored there");
    assert!(served.remove("example.com", "v1", "widgets").is_some());
    assert!(served.caches().get(WIDGETS_PREFIX).is_none());
    assert!(served.remove("example.com", "v1", "widgets").is_none());
    assert_eq!(served.snapshot().generation(), 5);
    assert_eq!(**served.snapshot().registry(), Registry::builtin());
}

#[test]
fn a_key_finds_the_cache_of_its_prefix() {
    let served = Served::new("/registry".into(), Registry::builtin());
    served.add(widget("v1"));
    let caches = served.caches();
    let of = |key: &str| caches.of_key(key).map(|c| c.prefix().to_owned());
    assert_eq!(of("/registry/example.com/widgets/default/a").as_deref(), Some(WIDGETS_PREFIX));
    assert_eq!(of("/registry/configmaps/default/a").as_deref(), Some("/registry/configmaps/"));
    assert_eq!(of("/registry/example.com/gadgets/default/a"), None);
    assert_eq!(of("/elsewhere/configmaps/default/a"), None);
    assert_eq!(caches.group_resource_of_key(WIDGETS_PREFIX), Some("widgets.example.com"));
}

/// What a reflector fed from an older map meets: a change under a prefix it has no
/// cache for is nobody's, and a cache that appeared since ignores events until a
/// (re)list fills it, so its reads and watches go to the backend meanwhile.
#[test]
fn a_cache_appearing_mid_watch_stays_out_of_the_way_until_filled() {
    use crate::storage::{KeyValue, WatchEvent};
    let served = Served::new("/registry".into(), Registry::builtin());
    let reflectors_map = served.caches();
    served.add(widget("v1"));
    let key = "/registry/example.com/widgets/default/a";
    assert!(reflectors_map.of_key(key).is_none());
    let cache = served.caches().of_key(key).cloned().expect("the new cache");
    let kv = KeyValue { key: key.into(), value: "{}".into(), create_revision: 7, mod_revision: 7 };
    cache.apply(WatchEvent::Put { kv: kv.clone(), prev: None });
    cache.advance(8);
    assert_eq!(cache.object_count(), None);
    assert!(cache.snapshot(WIDGETS_PREFIX, 0).is_none());
    assert!(cache.subscribe(WIDGETS_PREFIX, 0).is_none());
    // Filled at the next list, it serves.
    cache.reset_with(vec![kv], 8);
    assert_eq!(cache.object_count(), Some(1));
}

#[test]
fn every_builtin_kind_has_a_protobuf_message() {
    // `Resource::has_protobuf` tells built-in kinds (protobuf answers, go-restful's
    // routes) from custom resources: a built-in kind without a message would be served
    // as a custom resource is.
    let registry = Registry::builtin();
    let missing: Vec<String> = registry
        .resources()
        .iter()
        .filter(|r| !r.has_protobuf())
        .map(|r| format!("{} {}", r.api_version(), r.kind))
        .collect();
    assert!(missing.is_empty(), "no protobuf message for {missing:?}");
}

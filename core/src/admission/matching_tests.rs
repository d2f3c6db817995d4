use super::*;
use serde_json::json;

fn attrs<'a>(op: Operation, gvr: (&'a str, &'a str, &'a str), sub: &'a str, ns: Option<&'a str>, name: &'a str) -> Attributes<'a> {
    Attributes {
        operation: op,
        group: gvr.0,
        version: gvr.1,
        resource: gvr.2,
        subresource: sub,
        namespace: ns,
        name,
        user: None,
        dry_run: false,
    }
}

fn request<'a>(op: Operation, gvr: (&'a str, &'a str, &'a str), sub: &'a str, ns: Option<&'a str>) -> Request<'a> {
    Request::new(attrs(op, gvr, sub, ns, "n"), ("", "v1", "Pod"))
}

const PODS: (&str, &str, &str) = ("", "v1", "pods");
const DEPLOYMENTS: (&str, &str, &str) = ("apps", "v1", "deployments");

fn matches(rule: Value, req: &Request) -> bool {
    rule_matches(&rule, req, &req.resource())
}

// rules_test.go TestOperation
#[test]
fn operations_match_exactly_or_by_wildcard() {
    let create = request(Operation::Create, PODS, "", Some("ns"));
    let rule = |ops: Value| json!({"operations": ops, "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]});
    assert!(matches(rule(json!(["CREATE"])), &create));
    assert!(matches(rule(json!(["*"])), &create));
    assert!(!matches(rule(json!(["UPDATE", "DELETE"])), &create));
    let connect = request(Operation::Connect, PODS, "exec", Some("ns"));
    assert!(!matches(rule(json!(["CONNECT"])), &connect), "resources * has no subresource");
    let rule = json!({"operations": ["CONNECT"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/exec"]});
    assert!(matches(rule, &connect));
}

// rules_test.go TestGroup, TestVersion
#[test]
fn groups_and_versions() {
    let req = request(Operation::Create, DEPLOYMENTS, "", Some("ns"));
    let rule = |g: Value, v: Value| json!({"operations": ["*"], "apiGroups": g, "apiVersions": v, "resources": ["*"]});
    assert!(matches(rule(json!(["apps"]), json!(["v1"])), &req));
    assert!(matches(rule(json!(["*"]), json!(["*"])), &req));
    assert!(!matches(rule(json!([""]), json!(["v1"])), &req));
    assert!(!matches(rule(json!(["apps"]), json!(["v1beta1"])), &req));
    assert!(!matches(rule(json!([]), json!(["*"])), &req));
}

// rules_test.go TestResource
#[test]
fn resources_and_subresources() {
    let rule = |r: Value| json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": r});
    let pod = request(Operation::Update, PODS, "", Some("ns"));
    let status = request(Operation::Update, PODS, "status", Some("ns"));
    let svc_status = request(Operation::Update, ("", "v1", "services"), "status", Some("ns"));
    assert!(matches(rule(json!(["pods"])), &pod));
    assert!(!matches(rule(json!(["pods"])), &status));
    assert!(matches(rule(json!(["*"])), &pod));
    assert!(!matches(rule(json!(["*"])), &status));
    assert!(matches(rule(json!(["*/*"])), &pod));
    assert!(matches(rule(json!(["*/*"])), &status));
    assert!(matches(rule(json!(["pods/*"])), &pod));
    assert!(matches(rule(json!(["pods/*"])), &status));
    assert!(!matches(rule(json!(["pods/*"])), &svc_status));
    assert!(matches(rule(json!(["*/status"])), &svc_status));
    assert!(!matches(rule(json!(["*/status"])), &pod));
    assert!(matches(rule(json!(["pods/status"])), &status));
}

// rules_test.go TestScope
#[test]
fn scopes_treat_namespaces_as_cluster_scoped() {
    let rule = |s: &str| json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": s});
    let pod = request(Operation::Create, PODS, "", Some("ns"));
    let node = request(Operation::Create, ("", "v1", "nodes"), "", None);
    // A request for a namespace carries its own name as namespace.
    let namespace = request(Operation::Create, NAMESPACES, "", Some("ns"));
    for (scope, pod_ok, node_ok, ns_ok) in [("*", true, true, true), ("Namespaced", true, false, false), ("Cluster", false, true, true)] {
        assert_eq!(matches(rule(scope), &pod), pod_ok, "{scope} pod");
        assert_eq!(matches(rule(scope), &node), node_ok, "{scope} node");
        assert_eq!(matches(rule(scope), &namespace), ns_ok, "{scope} namespace");
    }
    assert!(!matches(rule("Other"), &pod));
}

fn labelled(labels: Value) -> Object {
    json!({"metadata": {"name": "x", "labels": labels}}).as_object().unwrap().clone()
}

// namespace/matcher_test.go TestGetNamespaceLabels, TestNotExemptClusterScopedResource
#[test]
fn namespace_selector() {
    let sel = json!({"matchLabels": {"env": "prod"}});
    let prod = labelled(json!({"env": "prod"}));
    let dev = labelled(json!({"env": "dev"}));
    let pod = request(Operation::Create, PODS, "", Some("ns"));
    assert_eq!(namespace_selector_matches(Some(&sel), &pod, Some(&prod)), Ok(true));
    assert_eq!(namespace_selector_matches(Some(&sel), &pod, Some(&dev)), Ok(false));
    assert_eq!(
        namespace_selector_matches(Some(&sel), &pod, None),
        Err(MatchError::NamespaceNotFound("ns".into()))
    );
    assert_eq!(namespace_selector_matches(Some(&json!({})), &pod, None), Ok(true));
    // Cluster-scoped resources other than namespaces always match.
    let node = request(Operation::Create, ("", "v1", "nodes"), "", None);
    assert_eq!(namespace_selector_matches(Some(&sel), &node, None), Ok(true));
    // A namespace being created is judged by its own labels.
    let mut ns = request(Operation::Create, NAMESPACES, "", Some("x"));
    ns.object = Some(&prod);
    assert_eq!(namespace_selector_matches(Some(&sel), &ns, Some(&dev)), Ok(true));
    // Deleted: by the stored namespace.
    ns.attributes.operation = Operation::Delete;
    assert_eq!(namespace_selector_matches(Some(&sel), &ns, Some(&dev)), Ok(false));
}

// object/matcher_test.go TestObjectSelector
#[test]
fn object_selector_reads_new_or_old_labels() {
    let sel = json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]});
    let web = labelled(json!({"app": "web"}));
    let db = labelled(json!({"app": "db"}));
    let mut req = request(Operation::Update, PODS, "", Some("ns"));
    assert_eq!(object_selector_matches(Some(&sel), &req), Ok(false));
    req.object = Some(&db);
    assert_eq!(object_selector_matches(Some(&sel), &req), Ok(false));
    req.old_object = Some(&web);
    assert_eq!(object_selector_matches(Some(&sel), &req), Ok(true));
    assert_eq!(object_selector_matches(Some(&json!({})), &req), Ok(true));
    let bad = json!({"matchExpressions": [{"key": "app", "operator": "Bogus"}]});
    assert!(matches!(object_selector_matches(Some(&bad), &req), Err(MatchError::InvalidSelector(_))));
}

/// apps/v1 deployments are served as extensions/v1beta1 too.
fn deployments() -> EquivalenceTable {
    let gvr = GroupVersionResource::new;
    EquivalenceTable(vec![vec![
        (gvr("apps", "v1", "deployments"), GroupVersionKind::new("apps", "v1", "Deployment")),
        (gvr("extensions", "v1beta1", "deployments"), GroupVersionKind::new("extensions", "v1beta1", "Deployment")),
    ]])
}

fn deployment_request() -> Request<'static> {
    Request::new(
        attrs(Operation::Create, DEPLOYMENTS, "", Some("ns"), "web"),
        ("apps", "v1", "Deployment"),
    )
}

// generic/webhook_test.go TestShouldCallHook ("match with equivalent resource", "no match with exact policy")
#[test]
fn webhooks_match_equivalent_resources_under_equivalent_policy() {
    let ns = labelled(json!({}));
    let req = deployment_request();
    let hook = |policy: &str| {
        json!({"name": "h", "matchPolicy": policy, "namespaceSelector": {}, "objectSelector": {},
            "rules": [{"operations": ["*"], "apiGroups": ["extensions"], "apiVersions": ["v1beta1"], "resources": ["deployments"], "scope": "*"}]})
    };
    assert_eq!(webhook_matches(&hook("Exact"), &req, Some(&ns), &deployments()), Ok(None));
    let m = webhook_matches(&hook("Equivalent"), &req, Some(&ns), &deployments()).unwrap().unwrap();
    assert_eq!(m.resource, GroupVersionResource::new("extensions", "v1beta1", "deployments"));
    assert_eq!(m.kind, GroupVersionKind::new("extensions", "v1beta1", "Deployment"));
    // The request's own resource wins when a rule names it.
    let exact = json!({"matchPolicy": "Equivalent", "rules": [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}]});
    let m = webhook_matches(&exact, &req, Some(&ns), &deployments()).unwrap().unwrap();
    assert_eq!(m.kind, GroupVersionKind::new("apps", "v1", "Deployment"));
    // An equivalent whose kind is unknown is an error.
    let unknown = json!({"matchPolicy": "Equivalent", "rules": [{"operations": ["*"], "apiGroups": ["extensions"], "apiVersions": ["*"], "resources": ["*"]}]});
    let err = webhook_matches(&unknown, &req, Some(&ns), &no_kinds()).unwrap_err();
    assert_eq!(err.to_string(), "unable to convert to extensions/v1beta1, Resource=deployments: unknown kind");
}

/// Deployments in two groups, the kind of neither known.
fn no_kinds() -> EquivalenceTable {
    let mut table = deployments();
    for (_, kind) in table.0.iter_mut().flatten() {
        *kind = GroupVersionKind::default();
    }
    table
}

// generic/webhook_test.go: a selector error is only reported for a webhook whose rules match
#[test]
fn selector_errors_surface_only_when_rules_match() {
    let req = deployment_request();
    let hook = |resources: Value| {
        json!({"namespaceSelector": {"matchLabels": {"a": "b"}},
            "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": resources}]})
    };
    assert_eq!(webhook_matches(&hook(json!(["pods"])), &req, None, &NoEquivalents), Ok(None));
    assert_eq!(
        webhook_matches(&hook(json!(["deployments"])), &req, None, &NoEquivalents),
        Err(MatchError::NamespaceNotFound("ns".into()))
    );
}

// policy/matching/matching_test.go TestMatcher
#[test]
fn policy_match_resources() {
    let ns = labelled(json!({"env": "prod"}));
    let req = deployment_request();
    let rule = |names: Value| json!({"operations": ["*"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"], "resourceNames": names});
    let spec = |rules: Value, excluded: Value| {
        json!({"namespaceSelector": {}, "objectSelector": {}, "matchPolicy": "Equivalent",
            "resourceRules": rules, "excludeResourceRules": excluded})
    };
    let m = |s: Value| policy_matches(&s, &req, Some(&ns), &deployments()).map(|m| m.map(|m| m.resource.group));
    // No resource rules: everything.
    assert_eq!(m(spec(json!([]), json!([]))), Ok(Some("apps".into())));
    assert_eq!(m(spec(json!([rule(json!([]))]), json!([]))), Ok(Some("apps".into())));
    assert_eq!(m(spec(json!([rule(json!(["web"]))]), json!([]))), Ok(Some("apps".into())));
    assert_eq!(m(spec(json!([rule(json!(["db"]))]), json!([]))), Ok(None));
    // Excluded by name.
    assert_eq!(m(spec(json!([rule(json!([]))]), json!([rule(json!(["web"]))]))), Ok(None));
    assert_eq!(m(spec(json!([rule(json!([]))]), json!([rule(json!(["db"]))]))), Ok(Some("apps".into())));
    // Equivalent.
    let ext = json!({"operations": ["*"], "apiGroups": ["extensions"], "apiVersions": ["v1beta1"], "resources": ["deployments"], "resourceNames": ["web"]});
    assert_eq!(m(spec(json!([ext]), json!([]))), Ok(Some("extensions".into())));
    let mut exact = spec(json!([ext]), json!([]));
    exact["matchPolicy"] = json!("Exact");
    assert_eq!(m(exact), Ok(None));
    // Excluded through an equivalent.
    assert_eq!(m(spec(json!([]), json!([ext]))), Ok(None));
    // Selectors.
    let mut other_ns = spec(json!([]), json!([]));
    other_ns["namespaceSelector"] = json!({"matchLabels": {"env": "dev"}});
    assert_eq!(m(other_ns), Ok(None));
}

#[test]
fn bindings_without_match_resources_always_apply() {
    let req = deployment_request();
    let binding = json!({"spec": {"policyName": "p"}}).as_object().unwrap().clone();
    assert_eq!(binding_matches(&binding, &req, None, &NoEquivalents), Ok(true));
    let binding = json!({"spec": {"matchResources": {"resourceRules": [
        {"operations": ["DELETE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]}}});
    assert_eq!(binding_matches(binding.as_object().unwrap(), &req, None, &NoEquivalents), Ok(false));
}

// rules_test.go TestIsExemptAdmissionConfigurationResource
#[test]
fn configuration_kinds_are_exempt() {
    let kind = |k: &str| GroupVersionKind::new("admissionregistration.k8s.io", "v1", k);
    assert!(is_exempt_configuration_resource(&kind("ValidatingWebhookConfiguration")));
    assert!(is_exempt_configuration_resource(&kind("ValidatingAdmissionPolicyBinding")));
    assert!(!is_exempt_configuration_resource(&kind("Other")));
    assert!(!is_exempt_configuration_resource(&GroupVersionKind::new("", "v1", "MutatingWebhookConfiguration")));
}

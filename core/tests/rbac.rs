//! RBAC over the whole server: the bootstrap policy, roles and bindings written through
//! the API and decided from the watch caches, upstream's 403s.

use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

fn harness() -> Harness<MemoryStore> {
    Harness::new(Config::default(), MemoryStore::new())
}

fn request(method: &str, path: &str, body: Option<&Value>) -> Vec<u8> {
    let body = body.map(Value::to_string).unwrap_or_default();
    format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    let mut replies = parse_responses(&h.send(&request(method, path, body))).expect("HTTP/1.1");
    replies.remove(0)
}

fn as_admin<T>(h: &Harness<MemoryStore>, f: impl FnOnce() -> T) -> T {
    h.act_as(Some("apiary-admin"), &["system:masters"]);
    let out = f();
    h.act_as(Some("jane"), &["dev"]);
    out
}

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

fn role(ns: &str, name: &str, rules: Value) -> (String, Value) {
    (
        format!("{RBAC}/namespaces/{ns}/roles"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": name, "namespace": ns}, "rules": rules}),
    )
}

fn binding(ns: Option<&str>, name: &str, role_kind: &str, role: &str, subjects: Value) -> (String, Value) {
    let (path, kind) = match ns {
        Some(ns) => (format!("{RBAC}/namespaces/{ns}/rolebindings"), "RoleBinding"),
        None => (format!("{RBAC}/clusterrolebindings"), "ClusterRoleBinding"),
    };
    let mut metadata = json!({"name": name});
    if let Some(ns) = ns {
        metadata["namespace"] = json!(ns);
    }
    (
        path,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": metadata,
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
               "subjects": subjects}),
    )
}

fn create(h: &Harness<MemoryStore>, (path, body): (String, Value)) {
    let r = as_admin(h, || send(h, "POST", &path, Some(&body)));
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
}

fn namespace(h: &Harness<MemoryStore>, name: &str) {
    create(h, ("/api/v1/namespaces".to_owned(), json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})));
}

#[test]
fn the_bootstrap_policy_is_written_at_start() {
    let h = harness();
    let list = |what: &str| as_admin(&h, || send(&h, "GET", &format!("{RBAC}/{what}"), None)).json();
    let names = |v: Value| -> Vec<String> {
        v["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_owned()).collect()
    };
    let roles = names(list("clusterroles"));
    assert_eq!(roles.len(), 66);
    for name in ["cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user", "system:public-info-viewer", "system:controller:namespace-controller"] {
        assert!(roles.iter().any(|r| r == name), "{name} in {roles:?}");
    }
    assert_eq!(names(list("clusterrolebindings")).len(), 47);
    assert_eq!(names(list("roles")).len(), 7);
    assert_eq!(names(list("rolebindings")).len(), 7);
    let admin = as_admin(&h, || send(&h, "GET", &format!("{RBAC}/clusterroles/cluster-admin"), None)).json();
    assert_eq!(admin["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"], "true");
    assert_eq!(admin["rules"][0]["verbs"], json!(["*"]));
}

#[test]
fn a_role_binding_grants_what_its_role_allows_in_its_namespace_only() {
    let h = harness();
    namespace(&h, "team");
    h.act_as(Some("jane"), &["dev"]);
    let denied = send(&h, "GET", "/api/v1/namespaces/team/configmaps", None);
    assert_eq!(denied.status, 403);
    assert_eq!(
        denied.json()["message"],
        "configmaps is forbidden: User \"jane\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"team\""
    );
    create(&h, role("team", "cm-reader", json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}])));
    create(&h, binding(Some("team"), "jane-reads", "Role", "cm-reader", json!([{"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"}])));
    assert_eq!(send(&h, "GET", "/api/v1/namespaces/team/configmaps", None).status, 200);
    // Not another verb, resource or namespace.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
    let refused = send(&h, "POST", "/api/v1/namespaces/team/configmaps", Some(&cm));
    assert_eq!(refused.status, 403);
    assert_eq!(refused.json()["details"], json!({"kind": "configmaps"}));
    assert_eq!(send(&h, "GET", "/api/v1/namespaces/team/secrets", None).status, 403);
    assert_eq!(send(&h, "GET", "/api/v1/namespaces/default/configmaps", None).status, 403);
    assert_eq!(send(&h, "GET", "/api/v1/configmaps", None).status, 403, "a cluster-wide list needs a cluster binding");
    // Deleting the binding takes the grant away at once.
    as_admin(&h, || send(&h, "DELETE", &format!("{RBAC}/namespaces/team/rolebindings/jane-reads"), None));
    assert_eq!(send(&h, "GET", "/api/v1/namespaces/team/configmaps", None).status, 403);
}

#[test]
fn groups_service_accounts_cluster_roles_names_and_subresources() {
    let h = harness();
    namespace(&h, "team");
    create(&h, (
        format!("{RBAC}/clusterroles"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "deploy-scaler"},
               "rules": [{"verbs": ["get", "update"], "apiGroups": ["apps"], "resources": ["deployments/scale"]},
                         {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"]}]}),
    ));
    // A ClusterRole bound in a namespace, to a group and to a ServiceAccount of the
    // binding's namespace (no namespace on the subject).
    create(&h, binding(Some("team"), "scalers", "ClusterRole", "deploy-scaler",
        json!([{"kind": "Group", "name": "dev", "apiGroup": "rbac.authorization.k8s.io"},
               {"kind": "ServiceAccount", "name": "robot"}])));
    for (user, groups) in [("jane", vec!["dev"]), ("system:serviceaccount:team:robot", vec!["system:serviceaccounts"])] {
        h.act_as(Some(user), &groups);
        let get = |path: &str| send(&h, "GET", path, None).status;
        assert_eq!(get("/apis/apps/v1/namespaces/team/deployments/web/scale"), 404, "{user}: allowed, and there is none");
        assert_eq!(get("/apis/apps/v1/namespaces/team/deployments/web"), 403, "{user}: the subresource only");
        assert_eq!(get("/apis/apps/v1/namespaces/default/deployments/web/scale"), 403, "{user}: in team only");
        assert_eq!(get("/api/v1/namespaces/team/configmaps/settings"), 404, "{user}: the named one");
        assert_eq!(get("/api/v1/namespaces/team/configmaps/other"), 403, "{user}: no other name");
    }
    h.act_as(Some("system:serviceaccount:other:robot"), &["system:serviceaccounts"]);
    assert_eq!(send(&h, "GET", "/api/v1/namespaces/team/configmaps/settings", None).status, 403);
    // A ClusterRoleBinding grants everywhere.
    create(&h, binding(None, "dev-scalers", "ClusterRole", "deploy-scaler",
        json!([{"kind": "Group", "name": "dev", "apiGroup": "rbac.authorization.k8s.io"}])));
    h.act_as(Some("jane"), &["dev"]);
    assert_eq!(send(&h, "GET", "/apis/apps/v1/namespaces/default/deployments/web/scale", None).status, 404);
}

#[test]
fn a_binding_to_a_missing_role_says_so_in_the_403() {
    let h = harness();
    namespace(&h, "team");
    create(&h, binding(Some("team"), "dangling", "Role", "nope", json!([{"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"}])));
    h.act_as(Some("jane"), &[]);
    let r = send(&h, "GET", "/api/v1/namespaces/team/pods", None);
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json()["message"],
        "pods is forbidden: User \"jane\" cannot list resource \"pods\" in API group \"\" in the namespace \"team\": \
         RBAC: role.rbac.authorization.k8s.io \"nope\" not found"
    );
}

#[test]
fn authenticated_users_may_discover_and_read_their_own_basics() {
    let h = harness();
    h.act_as(Some("jane"), &[]);
    for path in ["/api", "/apis", "/apis/apps/v1", "/version", "/healthz", "/openapi/v2"] {
        assert_eq!(send(&h, "GET", path, None).status, 200, "{path}");
    }
    assert_eq!(send(&h, "GET", "/metrics", None).status, 403);
}

#[test]
fn aggregated_roles_gather_the_rules_of_the_roles_they_select() {
    let h = harness();
    let get = |name: &str| as_admin(&h, || send(&h, "GET", &format!("{RBAC}/clusterroles/{name}"), None)).json();
    let view = get("view");
    assert_eq!(view["aggregationRule"]["clusterRoleSelectors"][0]["matchLabels"]["rbac.authorization.k8s.io/aggregate-to-view"], "true");
    let rules = view["rules"].as_array().expect("view has rules").clone();
    assert!(rules.len() > 10, "{rules:?}");
    // The controller owns the rules, as upstream's does.
    let managers: Vec<&str> = view["metadata"]["managedFields"].as_array().unwrap().iter().map(|m| m["manager"].as_str().unwrap()).collect();
    assert!(managers.contains(&"clusterrole-aggregation-controller"), "{managers:?}");
    // edit gathers view's (through system:aggregate-to-edit and view's own label), and
    // admin gathers edit's.
    let edit = get("edit")["rules"].as_array().unwrap().len();
    let admin = get("admin")["rules"].as_array().unwrap().len();
    assert!(edit > rules.len() && admin > edit, "{} {edit} {admin}", rules.len());

    // Bound to view: reads pods, not secrets, writes nothing.
    namespace(&h, "team");
    create(&h, binding(Some("team"), "jane-views", "ClusterRole", "view", json!([{"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"}])));
    h.act_as(Some("jane"), &[]);
    assert_eq!(send(&h, "GET", "/api/v1/namespaces/team/pods", None).status, 200);
    assert_eq!(send(&h, "GET", "/api/v1/namespaces/team/secrets", None).status, 403);
    assert_eq!(send(&h, "GET", "/apis/example.com/v1/namespaces/team/widgets", None).status, 403);
    // A new role labelled for view extends it at once.
    create(&h, (
        format!("{RBAC}/clusterroles"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "widget-viewer", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
               "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["secrets"]}]}),
    ));
    h.act_as(Some("jane"), &[]);
    assert_eq!(send(&h, "GET", "/api/v1/namespaces/team/secrets", None).status, 200);
    assert_eq!(get("view")["rules"].as_array().unwrap().len(), rules.len() + 1);
    // ... and taking the label away takes the rule away.
    as_admin(&h, || send(&h, "DELETE", &format!("{RBAC}/clusterroles/widget-viewer"), None));
    h.act_as(Some("jane"), &[]);
    assert_eq!(send(&h, "GET", "/api/v1/namespaces/team/secrets", None).status, 403);
}

#[test]
#[ignore = "needs ../shared/upstream: run by hand to compare with the recorded server"]
fn aggregated_rules_equal_upstreams() {
    let h = harness();
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string("../../shared/upstream/bootstrap/rbac.json").unwrap()).unwrap();
    for name in ["admin", "edit", "view"] {
        let ours = as_admin(&h, || send(&h, "GET", &format!("{RBAC}/clusterroles/{name}"), None)).json();
        let theirs = &recorded["aggregatedClusterRoles"][name]["rulesAsAggregatedByController"];
        let norm = |v: &Value| -> Vec<apiary_core::authorization::rbac::PolicyRule> { serde_json::from_value(v.clone()).unwrap() };
        assert_eq!(norm(&ours["rules"]), norm(theirs), "{name}");
    }
}

#[test]
fn a_binding_needs_the_permissions_it_grants_or_the_bind_verb() {
    let h = harness();
    namespace(&h, "team");
    // jane edits team and may manage its bindings.
    create(&h, role("team", "binder", json!([{"verbs": ["create", "update", "get"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings"]}])));
    for (name, kind, role) in [("jane-edits", "ClusterRole", "edit"), ("jane-binds", "Role", "binder")] {
        create(&h, binding(Some("team"), name, kind, role, json!([{"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"}])));
    }
    h.act_as(Some("jane"), &[]);
    let (path, admin_for_jane) = binding(Some("team"), "jane-admin", "ClusterRole", "cluster-admin",
        json!([{"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"}]));
    let refused = send(&h, "POST", &path, Some(&admin_for_jane));
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.json()["message"],
        "rolebindings.rbac.authorization.k8s.io \"jane-admin\" is forbidden: user \"jane\" (groups=[\"system:authenticated\"]) \
         is attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}\n{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}"
    );
    // Binding view, which edit covers, is allowed.
    let (path, view) = binding(Some("team"), "bob-views", "ClusterRole", "view", json!([{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}]));
    assert_eq!(send(&h, "POST", &path, Some(&view)).status, 201);
    // A role that does not exist: upstream answers its NotFound.
    let (path, dangling) = binding(Some("team"), "x", "ClusterRole", "nope", json!([]));
    let missing = send(&h, "POST", &path, Some(&dangling));
    assert_eq!((missing.status, missing.json()["message"].as_str().unwrap()), (404, "clusterrole.rbac.authorization.k8s.io \"nope\" not found"));
    // With the bind verb on cluster-admin, jane may bind it.
    create(&h, (
        format!("{RBAC}/clusterroles"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "bind-admin"},
               "rules": [{"verbs": ["bind"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "resourceNames": ["cluster-admin"]}]}),
    ));
    create(&h, binding(Some("team"), "jane-may-bind", "ClusterRole", "bind-admin", json!([{"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"}])));
    h.act_as(Some("jane"), &[]);
    assert_eq!(send(&h, "POST", &path_of(&admin_for_jane), Some(&admin_for_jane)).status, 201);
}

fn path_of(binding: &Value) -> String {
    format!("{RBAC}/namespaces/{}/rolebindings", binding["metadata"]["namespace"].as_str().unwrap())
}

#[test]
fn a_role_may_grant_only_what_its_author_holds_or_with_the_escalate_verb() {
    let h = harness();
    namespace(&h, "team");
    create(&h, role("team", "role-writer", json!([
        {"verbs": ["create", "update", "get"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"]},
        {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}])));
    create(&h, binding(Some("team"), "jane-writes-roles", "Role", "role-writer", json!([{"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"}])));
    h.act_as(Some("jane"), &[]);
    let (path, held) = role("team", "pod-reader", json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]));
    assert_eq!(send(&h, "POST", &path, Some(&held)).status, 201);
    let (_, more) = role("team", "secret-reader", json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "secrets"]}]));
    let refused = send(&h, "POST", &path, Some(&more));
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.json()["message"],
        "roles.rbac.authorization.k8s.io \"secret-reader\" is forbidden: user \"jane\" (groups=[\"system:authenticated\"]) \
         is attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\"]}"
    );
    // Widening an existing role is checked too.
    let mut wider = send(&h, "GET", &format!("{path}/pod-reader"), None).json();
    wider["rules"][0]["verbs"] = json!(["get", "delete"]);
    assert_eq!(send(&h, "PUT", &format!("{path}/pod-reader"), Some(&wider)).status, 403);
    // The escalate verb lifts the check.
    create(&h, role("team", "escalator", json!([{"verbs": ["escalate"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"]}])));
    create(&h, binding(Some("team"), "jane-escalates", "Role", "escalator", json!([{"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"}])));
    h.act_as(Some("jane"), &[]);
    assert_eq!(send(&h, "POST", &path, Some(&more)).status, 201);
}

#[test]
fn the_audit_names_the_decision_and_the_binding_that_allowed() {
    let policy = apiary_core::audit::Policy::parse(b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  omitStages: [RequestReceived]\n").unwrap();
    let h = Harness::new(Config { audit_policy: Some(std::sync::Arc::new(policy)), ..Config::default() }, MemoryStore::new());
    namespace(&h, "team");
    create(&h, role("team", "reader", json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}])));
    create(&h, binding(Some("team"), "readers", "Role", "reader",
        json!([{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"},
               {"kind": "Group", "name": "dev", "apiGroup": "rbac.authorization.k8s.io"}])));
    h.take_audit_lines();
    h.act_as(Some("jane"), &["dev"]);
    send(&h, "GET", "/api/v1/namespaces/team/configmaps/x", None);
    send(&h, "GET", "/api/v1/namespaces/team/secrets/x", None);
    let annotations: Vec<Value> = h
        .take_audit_lines()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["annotations"].clone())
        .collect();
    assert_eq!(
        annotations,
        [
            json!({"authorization.k8s.io/decision": "allow",
                   "authorization.k8s.io/reason": "RBAC: allowed by RoleBinding \"readers/team\" of Role \"reader\" to Group \"dev\""}),
            json!({"authorization.k8s.io/decision": "forbid", "authorization.k8s.io/reason": ""}),
        ]
    );
}

//! RBAC on the real binary, driven by kubectl 1.33 and 1.27: token users from
//! `--token-auth-file` are allowed what their bindings grant and refused the rest in
//! upstream's words; `edit` cannot bind `cluster-admin` until given the `bind` verb;
//! `view` grants what the roles aggregated into it grant, and grows with them;
//! `kubectl auth reconcile` writes a role; `--authorization-mode=AlwaysDeny` refuses
//! everyone but system:masters.

use apiary_conformance::harness::{kubectl_command, ok, Apiary};
use std::path::Path;
use std::process::Output;

const TOKENS: &str = "tok-jane,jane,1001,\"dev\"\ntok-bob,bob,1002\n";

fn start(extra: &[&str]) -> (Apiary, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).expect("token file");
    let mut args = vec!["--token-auth-file", tokens.to_str().unwrap()];
    args.extend_from_slice(extra);
    (Apiary::start_with(&args), dir)
}

fn as_user(version: &str, kubeconfig: &Path, args: &[&str]) -> Output {
    kubectl_command(version, kubeconfig).args(args).output().expect("kubectl runs")
}

fn refused(out: &Output) -> String {
    assert!(!out.status.success(), "expected a refusal: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn edit_cannot_bind_cluster_admin_until_given_the_bind_verb() {
    let (apiary, _dir) = start(&[]);
    let jane = apiary.token_kubeconfig("jane", "tok-jane");
    ok(&apiary.kubectl("1.33", &["create", "namespace", "team"]));
    // jane edits team and may manage its RoleBindings.
    ok(&apiary.kubectl("1.33", &["create", "rolebinding", "jane-edits", "-n", "team", "--clusterrole=edit", "--user=jane"]));
    ok(&apiary.kubectl("1.33", &["create", "role", "binder", "-n", "team", "--verb=get,list,create,delete", "--resource=rolebindings"]));
    ok(&apiary.kubectl("1.33", &["create", "rolebinding", "jane-binds", "-n", "team", "--role=binder", "--user=jane"]));
    for version in ["1.33", "1.27"] {
        let name = format!("jane-admin-{}", version.replace('.', "-"));
        let why = refused(&as_user(version, &jane, &["create", "rolebinding", &name, "-n", "team", "--clusterrole=cluster-admin", "--user=jane"]));
        assert!(
            why.contains(&format!(
                "rolebindings.rbac.authorization.k8s.io \"{name}\" is forbidden: user \"jane\" (groups=[\"dev\" \"system:authenticated\"]) \
                 is attempting to grant RBAC permissions not currently held:\n\
                 {{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}}\n{{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}}"
            )),
            "{version}: {why}"
        );
        // What edit holds, jane may hand on.
        ok(&as_user(version, &jane, &["create", "rolebinding", &format!("bob-views-{}", version.replace('.', "-")), "-n", "team", "--clusterrole=view", "--user=bob"]));
    }
    ok(&apiary.kubectl("1.33", &["create", "clusterrole", "bind-admin", "--verb=bind", "--resource=clusterroles", "--resource-name=cluster-admin"]));
    ok(&apiary.kubectl("1.33", &["create", "rolebinding", "jane-may-bind", "-n", "team", "--clusterrole=bind-admin", "--user=jane"]));
    for version in ["1.33", "1.27"] {
        let name = format!("jane-admin-{}", version.replace('.', "-"));
        ok(&as_user(version, &jane, &["create", "rolebinding", &name, "-n", "team", "--clusterrole=cluster-admin", "--user=jane"]));
        // Now cluster-admin in team: secrets too, but still nothing elsewhere.
        ok(&as_user(version, &jane, &["get", "secrets", "-n", "team"]));
        let why = refused(&as_user(version, &jane, &["get", "secrets", "-n", "default"]));
        assert!(
            why.contains("secrets is forbidden: User \"jane\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\""),
            "{version}: {why}"
        );
    }
}

#[test]
fn view_grants_what_its_aggregated_roles_grant_and_grows_with_them() {
    let (apiary, _dir) = start(&[]);
    let bob = apiary.token_kubeconfig("bob", "tok-bob");
    ok(&apiary.kubectl("1.33", &["create", "namespace", "team"]));
    ok(&apiary.kubectl("1.33", &["create", "rolebinding", "bob-views", "-n", "team", "--clusterrole=view", "--user=bob"]));
    let rules = ok(&apiary.kubectl("1.33", &["get", "clusterrole", "view", "-o", "jsonpath={.rules[*].resources}"]));
    assert!(rules.contains("deployments") && rules.contains("configmaps"), "{rules}");
    for version in ["1.33", "1.27"] {
        ok(&as_user(version, &bob, &["get", "pods,configmaps,deployments", "-n", "team"]));
        let why = refused(&as_user(version, &bob, &["get", "secrets", "-n", "team"]));
        assert!(why.contains("(Forbidden)"), "{version}: {why}");
        let why = refused(&as_user(version, &bob, &["create", "configmap", "x", "-n", "team"]));
        assert!(why.contains("User \"bob\" cannot create resource \"configmaps\""), "{version}: {why}");
    }
    // A ClusterRole labelled for view extends it within moments.
    let extra = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: secrets-viewer\n  labels:\n    rbac.authorization.k8s.io/aggregate-to-view: \"true\"\nrules:\n- apiGroups: [\"\"]\n  resources: [\"secrets\"]\n  verbs: [\"list\"]\n";
    let file = apiary.data_dir.join("secrets-viewer.yaml");
    std::fs::write(&file, extra).expect("manifest");
    ok(&apiary.kubectl("1.33", &["apply", "-f", file.to_str().unwrap()]));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !as_user("1.33", &bob, &["get", "secrets", "-n", "team"]).status.success() {
        assert!(std::time::Instant::now() < deadline, "view never gathered the new rule");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    ok(&as_user("1.27", &bob, &["get", "secrets", "-n", "team"]));
}

#[test]
fn auth_reconcile_writes_a_role_and_its_binding() {
    let (apiary, _dir) = start(&[]);
    ok(&apiary.kubectl("1.33", &["create", "namespace", "team"]));
    let manifest = "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\n  namespace: team\nrules:\n- apiGroups: [\"\"]\n  resources: [\"pods\"]\n  verbs: [\"get\"]\n---\n\
                    apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: reader\n  namespace: team\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: reader\nsubjects:\n- kind: User\n  name: bob\n  apiGroup: rbac.authorization.k8s.io\n";
    let file = apiary.data_dir.join("reader.yaml");
    std::fs::write(&file, manifest).expect("manifest");
    for version in ["1.33", "1.27"] {
        let out = ok(&apiary.kubectl(version, &["auth", "reconcile", "-f", file.to_str().unwrap()]));
        assert!(out.contains("role.rbac.authorization.k8s.io/reader"), "{version}: {out}");
    }
    let bob = apiary.token_kubeconfig("bob", "tok-bob");
    // Reconciled again with a wider rule: the rule is added, not replaced.
    std::fs::write(&file, manifest.replace("verbs: [\"get\"]", "verbs: [\"get\", \"list\"]")).expect("manifest");
    ok(&apiary.kubectl("1.33", &["auth", "reconcile", "-f", file.to_str().unwrap()]));
    ok(&as_user("1.33", &bob, &["get", "pods", "-n", "team"]));
}

#[test]
fn always_deny_refuses_everyone_but_system_masters() {
    let (apiary, _dir) = start(&["--authorization-mode=AlwaysDeny"]);
    let jane = apiary.token_kubeconfig("jane", "tok-jane");
    for version in ["1.33", "1.27"] {
        // Discovery is refused too, so ask for the path itself.
        let why = refused(&as_user(version, &jane, &["get", "--raw", "/api/v1/namespaces/default/configmaps"]));
        assert!(
            why.contains("configmaps is forbidden: User \"jane\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\": Everything is forbidden."),
            "{version}: {why}"
        );
        ok(&apiary.kubectl(version, &["get", "configmaps"]));
    }
}

#[test]
fn can_i_whoami_and_impersonation_follow_the_bindings() {
    let (apiary, _dir) = start(&[]);
    let jane = apiary.token_kubeconfig("jane", "tok-jane");
    ok(&apiary.kubectl("1.33", &["create", "namespace", "team"]));
    let can_i = |version: &str, kubeconfig: &Path, args: &[&str]| {
        let out = as_user(version, kubeconfig, &[&["auth", "can-i"][..], args].concat());
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    for version in ["1.33", "1.27"] {
        assert_eq!(can_i(version, &jane, &["create", "configmaps", "-n", "team"]), "no", "{version}");
        // The admin asks on jane's behalf, impersonating her (and her group).
        assert_eq!(can_i(version, &apiary.kubeconfig, &["create", "configmaps", "-n", "team", "--as", "jane", "--as-group", "dev"]), "no");
    }
    let whoami = ok(&as_user("1.33", &jane, &["auth", "whoami"]));
    assert!(whoami.contains("jane") && whoami.contains("[dev system:authenticated]"), "{whoami}");
    let impersonated = ok(&apiary.kubectl("1.33", &["auth", "whoami", "--as", "bob", "--as-group", "qa"]));
    assert!(impersonated.contains("bob") && impersonated.contains("[qa system:authenticated]"), "{impersonated}");

    ok(&apiary.kubectl("1.33", &["create", "role", "cm-writer", "-n", "team", "--verb=create,list", "--resource=configmaps"]));
    ok(&apiary.kubectl("1.33", &["create", "rolebinding", "dev-writes", "-n", "team", "--role=cm-writer", "--group=dev"]));
    for version in ["1.33", "1.27"] {
        assert_eq!(can_i(version, &jane, &["create", "configmaps", "-n", "team"]), "yes", "{version}");
        assert_eq!(can_i(version, &jane, &["delete", "configmaps", "-n", "team"]), "no", "{version}");
        assert_eq!(can_i(version, &apiary.kubeconfig, &["create", "configmaps", "-n", "team", "--as", "jane", "--as-group", "dev"]), "yes");
        assert_eq!(can_i(version, &apiary.kubeconfig, &["create", "configmaps", "-n", "team", "--as", "jane"]), "no", "without the group");
        let list = ok(&as_user(version, &jane, &["auth", "can-i", "--list", "-n", "team"]));
        let row = list.lines().find(|l| l.starts_with("configmaps ")).unwrap_or_else(|| panic!("{version}: {list}"));
        assert!(row.contains("[create list]"), "{version}: {row}");
        // Acting as jane through impersonation is acting as jane.
        ok(&apiary.kubectl(version, &["create", "configmap", &format!("via-as-{}", version.replace('.', "-")), "-n", "team", "--as", "jane", "--as-group", "dev"]));
        let why = refused(&apiary.kubectl(version, &["get", "secrets", "-n", "team", "--as", "jane", "--as-group", "dev"]));
        assert!(why.contains("User \"jane\" cannot list resource \"secrets\""), "{version}: {why}");
    }
    // Someone who may not impersonate is refused in upstream's words.
    let why = refused(&as_user("1.33", &jane, &["get", "configmaps", "-n", "team", "--as", "bob"]));
    assert!(
        why.contains("users \"bob\" is forbidden: User \"jane\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"),
        "{why}"
    );
}

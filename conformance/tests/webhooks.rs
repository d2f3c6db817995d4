//! The token webhook and the webhook authorizer on the real binary, driven by kubectl
//! 1.33 and 1.27: a loopback HTTPS service (its own CA, named by the kubeconfigs the
//! flags point at) says who a bearer token belongs to and what that user may do.

mod https_service;

use apiary_conformance::harness::{kubectl_command, ok, Apiary};
use base64::Engine;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What the webhook service answers: TokenReviews at /authn, SubjectAccessReviews at
/// /authz.
fn answer(path: &str, review: &Value) -> Value {
    let status = match path {
        "/authn" => match review["spec"]["token"].as_str() {
            Some("webhook-jane") => json!({"authenticated": true, "user": {"username": "jane", "uid": "j-1", "groups": ["dev"]}}),
            _ => json!({"authenticated": false, "error": "unknown token"}),
        },
        _ => {
            let attrs = &review["spec"]["resourceAttributes"];
            let jane = review["spec"]["user"] == "jane";
            match attrs["resource"].as_str() {
                Some("configmaps") if jane => json!({"allowed": true}),
                Some("secrets") if jane => json!({"allowed": false, "denied": true, "reason": "secrets are not for jane"}),
                _ => json!({"allowed": false}),
            }
        }
    };
    json!({"apiVersion": review["apiVersion"], "kind": review["kind"], "status": status})
}

/// The webhook service on a loopback port: its address, the CA that signed it, and how
/// many reviews it answered.
fn serve_webhooks() -> (String, String, Arc<AtomicUsize>) {
    https_service::serve(&["127.0.0.1"], answer)
}

fn kubeconfig(dir: &std::path::Path, name: &str, server: &str, ca_pem: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let path = dir.join(format!("{name}.kubeconfig"));
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: hook\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\n\
             users:\n- name: apiserver\n  user: {{}}\ncontexts:\n- name: hook\n  context: {{cluster: hook, user: apiserver}}\ncurrent-context: hook\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_token_the_webhook_knows_is_its_user_and_the_webhook_authorizer_decides_what_rbac_does_not() {
    let (addr, ca_pem, answered) = serve_webhooks();
    let dir = tempfile::tempdir().unwrap();
    let authn = kubeconfig(dir.path(), "authn", &format!("https://{addr}/authn"), &ca_pem);
    let authz = kubeconfig(dir.path(), "authz", &format!("https://{addr}/authz"), &ca_pem);
    let apiary = Apiary::start_with(&[
        "--authentication-token-webhook-config-file",
        &authn,
        "--authorization-mode=RBAC,Webhook",
        "--authorization-webhook-config-file",
        &authz,
    ]);
    let jane = apiary.token_kubeconfig("jane", "webhook-jane");
    let stranger = apiary.token_kubeconfig("stranger", "who-knows");
    for version in ["1.33", "1.27"] {
        // RBAC lets jane (system:authenticated) discover; the webhook lets her read
        // ConfigMaps and denies Secrets with its reason.
        ok(&kubectl_command(version, &jane).args(["get", "configmaps", "-n", "default"]).output().unwrap());
        let secrets = kubectl_command(version, &jane).args(["get", "secrets", "-n", "default"]).output().unwrap();
        let why = String::from_utf8_lossy(&secrets.stderr);
        assert!(
            why.contains("secrets is forbidden: User \"jane\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\": secrets are not for jane"),
            "{version}: {why}"
        );
        let unknown = kubectl_command(version, &stranger).args(["get", "configmaps"]).output().unwrap();
        assert!(String::from_utf8_lossy(&unknown.stderr).contains("Unauthorized"), "{version}");
    }
    let whoami = ok(&kubectl_command("1.33", &jane).args(["auth", "whoami"]).output().unwrap());
    assert!(whoami.contains("jane") && whoami.contains("[dev system:authenticated]"), "{whoami}");
    // Answers are kept: far fewer reviews than requests (each kubectl run makes several).
    let asked = answered.load(Ordering::SeqCst);
    assert!((3..=12).contains(&asked), "{asked} reviews");
}

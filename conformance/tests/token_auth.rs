//! Static bearer tokens (`--token-auth-file`) on the real binary, through kubectl 1.33
//! and 1.27: a kubeconfig holding a token from the file is that user (forbidden until
//! RBAC grants it something), one holding a token the file does not have is refused
//! (401), and a file that is not upstream's format stops apiary before it serves.
//! Without credentials a client is system:anonymous: forbidden (403) but for the
//! public info paths; with `--anonymous-auth=false` it is refused (401) everywhere.

use apiary_conformance::harness::{apiary_command, kubectl_command, ok, Apiary};
use std::process::Stdio;

#[test]
fn kubectl_with_a_token_from_the_file_is_served_and_others_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "0ff1ce-t0ken,alice,1001,\"dev,ops\"\n").expect("token file");
    let apiary = Apiary::start_with(&["--token-auth-file", tokens.to_str().unwrap()]);
    let good = apiary.token_kubeconfig("alice", "0ff1ce-t0ken");
    let bad = apiary.token_kubeconfig("mallory", "guessed");
    for version in ["1.33", "1.27"] {
        let forbidden = kubectl_command(version, &good)
            .args(["get", "namespaces"])
            .output()
            .expect("kubectl runs");
        assert!(!forbidden.status.success(), "{version}: {}", ok(&forbidden));
        assert!(
            String::from_utf8_lossy(&forbidden.stderr).contains(
                "Error from server (Forbidden): namespaces is forbidden: User \"alice\" cannot list \
                 resource \"namespaces\" in API group \"\" at the cluster scope"
            ),
            "{version}: {}",
            String::from_utf8_lossy(&forbidden.stderr)
        );
    }
    // The admin grants alice (by name) reading namespaces, and her group writing
    // ConfigMaps in default.
    for args in [
        &["create", "clusterrole", "ns-reader", "--verb=get,list,watch", "--resource=namespaces"][..],
        &["create", "clusterrolebinding", "alice-reads", "--clusterrole=ns-reader", "--user=alice"],
        &["create", "role", "cm-writer", "-n", "default", "--verb=create", "--resource=configmaps"],
        &["create", "rolebinding", "dev-writes", "-n", "default", "--role=cm-writer", "--group=dev"],
    ] {
        ok(&apiary.kubectl("1.33", args));
    }
    for version in ["1.33", "1.27"] {
        let served = kubectl_command(version, &good)
            .args(["get", "namespaces", "-o", "name"])
            .output()
            .expect("kubectl runs");
        assert!(ok(&served).contains("namespace/default"), "{version}");
        let created = kubectl_command(version, &good)
            .args(["create", "configmap", &format!("from-alice-{}", version.replace('.', "-")), "--from-literal=k=v"])
            .output()
            .expect("kubectl runs");
        ok(&created);
        let refused = kubectl_command(version, &bad)
            .args(["get", "namespaces"])
            .output()
            .expect("kubectl runs");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success(), "{version}: {stderr}");
        assert!(stderr.contains("Unauthorized"), "{version}: {stderr}");
        // Not a ConfigMap in another namespace.
        let elsewhere = kubectl_command(version, &good)
            .args(["create", "configmap", "nope", "-n", "kube-public"])
            .output()
            .expect("kubectl runs");
        let why = String::from_utf8_lossy(&elsewhere.stderr);
        assert!(
            why.contains("configmaps is forbidden: User \"alice\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"kube-public\""),
            "{version}: {why}"
        );
    }
}

/// What curl gets from `path` without credentials: the status code and the body.
fn anonymous_get(apiary: &Apiary, path: &str) -> (String, String) {
    let out = std::process::Command::new("curl")
        .args(["-sk", "-w", "\n%{http_code}"])
        .arg(format!("{}{path}", apiary.url))
        .output()
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').expect("a status code");
    (code.to_owned(), body.to_owned())
}

#[test]
fn a_client_without_credentials_is_anonymous_and_sees_only_the_public_info() {
    let apiary = Apiary::start();
    for path in ["/healthz", "/livez", "/readyz", "/version"] {
        assert_eq!(anonymous_get(&apiary, path).0, "200", "{path}");
    }
    let (code, body) = anonymous_get(&apiary, "/api/v1/namespaces/default/configmaps");
    assert_eq!(code, "403");
    // curl's User-Agent gets the pretty form, as upstream gives it.
    let status: serde_json::Value = serde_json::from_str(&body).expect("a Status");
    assert_eq!(
        status["message"],
        "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    assert_eq!(anonymous_get(&apiary, "/apis").0, "403");
}

#[test]
fn a_token_file_that_is_not_csv_stops_apiary_before_it_serves() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "just-a-token,alice\n").expect("token file");
    let output = apiary_command(dir.path(), &["--token-auth-file", tokens.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .expect("apiary runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("must have at least 3 columns (token, user name, user uid), found 2"),
        "{stderr}"
    );
}

#[test]
fn without_anonymous_auth_a_client_without_credentials_is_refused_everywhere() {
    let apiary = Apiary::start_with(&["--anonymous-auth=false"]);
    // kubectl asks for a password when a kubeconfig has no credentials, so the
    // credential-less client is curl.
    for path in ["/healthz", "/version", "/api/v1/namespaces"] {
        assert_eq!(anonymous_get(&apiary, path).0, "401", "{path}");
    }
    for version in ["1.33", "1.27"] {
        assert_eq!(ok(&apiary.kubectl(version, &["get", "--raw", "/healthz"])), "ok");
    }
}

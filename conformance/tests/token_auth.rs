//! Static bearer tokens (`--token-auth-file`) on the real binary, through kubectl 1.33
//! and 1.27: a kubeconfig holding a token from the file is served, one holding a token
//! the file does not have is refused (401), and a file that is not upstream's format
//! stops apiary before it serves. With `--anonymous-auth=false`, a client without
//! credentials is refused even the health checks.

use apiary_conformance::harness::{apiary_command, kubectl_command, ok, Apiary};
use std::process::Stdio;

#[test]
fn kubectl_with_a_token_from_the_file_is_served_and_others_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "0ff1ce-t0ken,alice,1001,\"dev,ops\"\n").expect("token file");
    let apiary = Apiary::start_with(&["--token-auth-file", tokens.to_str().unwrap()]);
    let good = apiary.token_kubeconfig(dir.path(), "alice", "0ff1ce-t0ken");
    let bad = apiary.token_kubeconfig(dir.path(), "mallory", "guessed");
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
        assert!(!refused.status.success(), "{version}");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("Unauthorized"), "{version}: {stderr}");
    }
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
        let out = std::process::Command::new("curl")
            .args(["-sk", "-o", "/dev/null", "-w", "%{http_code}"])
            .arg(format!("{}{path}", apiary.url))
            .output()
            .expect("curl runs");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "401", "{path}");
    }
    for version in ["1.33", "1.27"] {
        assert_eq!(ok(&apiary.kubectl(version, &["get", "--raw", "/healthz"])), "ok");
    }
}

//! GET of one ConfigMap over keep-alive HTTPS as a ServiceAccount (a bearer token from
//! TokenRequest) authorized by RBAC, beside 1,000 Roles and 1,000 RoleBindings in its
//! namespace, against the same GET by the system:masters admin (client certificate),
//! on the real `apiary` binary (release build, memory storage). The two alternate
//! round by round in one run, so the machine's noise falls on both alike; prints each
//! round, the medians and their ratio.
//!
//! Run: `cargo bench -p apiary-smol --bench rbac_get`

mod support;

use std::sync::Arc;
use std::time::Duration;
use support::{call, connect, requests_per_second, tls_config, tls_config_without_certificate, Server, Tls};

const CONNECTIONS: usize = 64;
const ROUNDS: usize = 7;
const ROUND_TIME: Duration = Duration::from_secs(3);
const OBJECTS: usize = 1000;

fn post(path: &str, body: &str) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The namespace, the Roles and RoleBindings, the ServiceAccount and its token.
async fn set_up(admin: &mut Tls) -> String {
    let rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/bench";
    let steps = [
        post("/api/v1/namespaces", r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}}"#),
        post("/api/v1/namespaces/bench/configmaps", r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench"},"data":{"key":"value"}}"#),
        post("/api/v1/namespaces/bench/serviceaccounts", r#"{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa-0500"}}"#),
    ];
    for step in steps {
        assert_eq!(call(admin, &step).await.0, 201);
    }
    for i in 0..OBJECTS {
        let role = format!(
            r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{{"name":"role-{i:04}"}},"rules":[{{"verbs":["get","list","watch"],"apiGroups":[""],"resources":["configmaps","secrets"]}},{{"verbs":["get"],"apiGroups":["apps"],"resources":["deployments"],"resourceNames":["app-{i}"]}}]}}"#
        );
        assert_eq!(call(admin, &post(&format!("{rbac}/roles"), &role)).await.0, 201);
        let binding = format!(
            r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{{"name":"binding-{i:04}"}},"roleRef":{{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"role-{i:04}"}},"subjects":[{{"kind":"ServiceAccount","name":"sa-{i:04}","namespace":"bench"}}]}}"#
        );
        assert_eq!(call(admin, &post(&format!("{rbac}/rolebindings"), &binding)).await.0, 201);
    }
    let (status, body) = call(
        admin,
        &post(
            "/api/v1/namespaces/bench/serviceaccounts/sa-0500/token",
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}"#,
        ),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let token: serde_json::Value = serde_json::from_str(&body).expect("a TokenRequest");
    token["status"]["token"].as_str().expect("a token").to_owned()
}

/// One round of GETs from every connection; requests/s.
async fn round(addr: &str, config: &Arc<futures_rustls::rustls::ClientConfig>, request: &Arc<Vec<u8>>) -> f64 {
    requests_per_second(addr, config, request, ROUND_TIME).await
}

fn main() {
    let dir = std::env::temp_dir().join(format!("apiary-bench-rbac-{}", std::process::id()));
    let server = Server::start(&dir);
    let pki = dir.join("pki");
    let (admin_tls, token_tls) = (tls_config(&pki), tls_config_without_certificate(&pki));
    let (admin, account) = smol::block_on(async {
        let mut setup = connect(&server.addr, &admin_tls).await;
        let token = set_up(&mut setup).await;
        let get = "GET /api/v1/namespaces/bench/configmaps/bench HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nUser-Agent: apiary-bench\r\n";
        // APIARY_BENCH_PAD_ADMIN=1 gives the admin's GET a header as long as the token's
        // Authorization header, to tell the cost of the bytes from that of the checks.
        let admin = match std::env::var_os("APIARY_BENCH_PAD_ADMIN") {
            Some(_) => format!("{get}X-Padding: {}\r\n\r\n", "p".repeat(token.len() + 7)),
            None => format!("{get}\r\n"),
        };
        let admin = Arc::new(admin.into_bytes());
        let account = Arc::new(format!("{get}Authorization: Bearer {token}\r\n\r\n").into_bytes());
        // The token is the ServiceAccount's, and RBAC lets it read only in bench.
        let mut probe = connect(&server.addr, &token_tls).await;
        assert_eq!(call(&mut probe, &account).await.0, 200);
        let elsewhere = format!("GET /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n");
        assert_eq!(call(&mut probe, elsewhere.as_bytes()).await.0, 403);
        (admin, account)
    });
    let (mut admin_rps, mut account_rps) = (Vec::new(), Vec::new());
    smol::block_on(async {
        for r in 0..ROUNDS {
            let a = round(&server.addr, &admin_tls, &admin).await;
            let s = round(&server.addr, &token_tls, &account).await;
            println!("round {}: admin {a:.0} requests/s, ServiceAccount (RBAC) {s:.0} requests/s, ratio {:.3}", r + 1, s / a);
            admin_rps.push(a);
            account_rps.push(s);
        }
    });
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    let ratios: Vec<f64> = account_rps.iter().zip(&admin_rps).map(|(s, a)| s / a).collect();
    println!(
        "https GET configmap, {CONNECTIONS} keep-alive connections, {OBJECTS} Roles and {OBJECTS} RoleBindings: \
         admin (system:masters) median {:.0} requests/s; ServiceAccount token authorized by RBAC median {:.0} requests/s; \
         median of per-round ratios {:.3}",
        support::median(admin_rps),
        support::median(account_rps),
        support::median(ratios)
    );
}

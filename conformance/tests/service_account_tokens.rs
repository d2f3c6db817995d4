//! ServiceAccount tokens on the real binary: `kubectl create token` (1.33, which sends a
//! protobuf TokenRequest, and 1.27) with `--duration`, `--audience` and
//! `--bound-object-kind/name`, the token then used in a kubeconfig; kube-rs and the
//! Python client asking for a token and authenticating with it; a legacy token Secret
//! filled in and usable; the signing key kept across restarts, or given by flag.
//!
//! Each ServiceAccount used is first bound to the `edit` ClusterRole in its namespace,
//! and only what `edit` allows there is asked of it, so these tests stay true once
//! authorization is enforced.

mod kube_support;

use apiary_conformance::harness::{kubectl_command, ok, workspace_root, Apiary};
use base64::Engine as _;
use serde_json::Value;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// The claims of a token (not verified).
fn claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("a JWS");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON claims")
}

/// Namespace `ns` with a ServiceAccount `account` that may do what `edit` allows there.
fn editor(apiary: &Apiary, ns: &str, account: &str) {
    ok(&apiary.kubectl("1.33", &["create", "namespace", ns]));
    // No controller makes `default` ServiceAccounts yet: make it unless one did.
    if !apiary.kubectl("1.33", &["get", "serviceaccount", account, "-n", ns]).status.success() {
        ok(&apiary.kubectl("1.33", &["create", "serviceaccount", account, "-n", ns]));
    }
    let subject = format!("--serviceaccount={ns}:{account}");
    ok(&apiary.kubectl("1.33", &["create", "rolebinding", &format!("{account}-edit"), "--clusterrole=edit", &subject, "-n", ns]));
}

fn as_token(version: &str, kubeconfig: &Path, args: &[&str]) -> Output {
    kubectl_command(version, kubeconfig).args(args).output().expect("kubectl runs")
}

fn unauthorized(out: &Output) -> bool {
    !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("Unauthorized")
}

#[test]
fn kubectl_create_token_gives_tokens_kubectl_can_use() {
    let apiary = Apiary::start();
    for version in ["1.33", "1.27"] {
        let ns = format!("tokens-{}", version.replace('.', "-"));
        editor(&apiary, &ns, "default");
        let token = ok(&apiary.kubectl(version, &["create", "token", "default", "-n", &ns])).trim().to_owned();
        let c = claims(&token);
        assert_eq!(c["sub"], format!("system:serviceaccount:{ns}:default"), "{version}");
        assert_eq!(c["iss"], "https://kubernetes.default.svc.cluster.local");
        assert_eq!(c["exp"].as_i64().unwrap() - c["iat"].as_i64().unwrap(), 3600);

        let kubeconfig = apiary.token_kubeconfig(&format!("sa-{version}"), &token);
        ok(&as_token(version, &kubeconfig, &["create", "configmap", "made-by-sa", "--from-literal=k=v", "-n", &ns]));
        let listed = ok(&as_token(version, &kubeconfig, &["get", "configmaps", "-n", &ns, "-o", "name"]));
        assert!(listed.contains("configmap/made-by-sa"), "{version}: {listed}");
        ok(&as_token(version, &kubeconfig, &["delete", "configmap", "made-by-sa", "-n", &ns]));

        // --duration and its floor.
        let short = ok(&apiary.kubectl(version, &["create", "token", "default", "-n", &ns, "--duration=20m"]));
        let c = claims(short.trim());
        assert_eq!(c["exp"].as_i64().unwrap() - c["iat"].as_i64().unwrap(), 1200);
        let too_short = apiary.kubectl(version, &["create", "token", "default", "-n", &ns, "--duration=1m"]);
        assert!(
            String::from_utf8_lossy(&too_short.stderr).contains(
                "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"
            ),
            "{version}: {}",
            String::from_utf8_lossy(&too_short.stderr)
        );
        // A token for another audience is no credential here.
        let elsewhere = ok(&apiary.kubectl(version, &["create", "token", "default", "-n", &ns, "--audience=https://vault.example"]));
        assert_eq!(claims(elsewhere.trim())["aud"], serde_json::json!(["https://vault.example"]));
        let misdirected = apiary.token_kubeconfig(&format!("vault-{version}"), elsewhere.trim());
        assert!(unauthorized(&as_token(version, &misdirected, &["get", "configmaps", "-n", &ns])), "{version}");
        // Nor is a token with one character changed.
        let forged = apiary.token_kubeconfig(&format!("forged-{version}"), &format!("{}x", token));
        assert!(unauthorized(&as_token(version, &forged, &["get", "configmaps", "-n", &ns])), "{version}");
    }
}

#[test]
fn a_token_bound_to_a_pod_ends_with_the_pod() {
    let apiary = Apiary::start();
    let dir = tempfile::tempdir().expect("temp dir");
    editor(&apiary, "bound", "robot");
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"bound"},"spec":{"serviceAccountName":"robot","containers":[{"name":"c","image":"nginx"}]}}"#;
    let file = dir.path().join("pod.json");
    std::fs::write(&file, pod).unwrap();
    ok(&apiary.kubectl("1.33", &["create", "-f", file.to_str().unwrap()]));
    for version in ["1.33", "1.27"] {
        let token = ok(&apiary.kubectl(
            version,
            &["create", "token", "robot", "-n", "bound", "--bound-object-kind", "Pod", "--bound-object-name", "web"],
        ));
        assert_eq!(claims(token.trim())["kubernetes.io"]["pod"]["name"], "web", "{version}");
        let kubeconfig = apiary.token_kubeconfig(&format!("pod-{version}"), token.trim());
        ok(&as_token(version, &kubeconfig, &["get", "configmaps", "-n", "bound"]));
    }
    let mismatch = apiary.kubectl(
        "1.33",
        &["create", "token", "robot", "-n", "bound", "--bound-object-kind", "Pod", "--bound-object-name", "web", "--bound-object-uid", "0d4691ed-659b-4935-a832-355f77ee47cc"],
    );
    assert!(String::from_utf8_lossy(&mismatch.stderr).contains("Operation cannot be fulfilled on Pod \"web\""));

    let kubeconfig = apiary.data_dir.join("pod-1.33.kubeconfig");
    // Bound to a node, the pod would wait for its kubelet: the delete is forced.
    ok(&apiary.kubectl("1.33", &["delete", "pod", "web", "-n", "bound", "--grace-period=0", "--force"]));
    // A token's answer is cached for 10 s, as kube-apiserver caches it.
    std::thread::sleep(Duration::from_secs(11));
    assert!(unauthorized(&as_token("1.33", &kubeconfig, &["get", "configmaps", "-n", "bound"])));
}

#[test]
fn a_legacy_token_secret_is_filled_in_and_its_token_works() {
    let apiary = Apiary::start();
    let dir = tempfile::tempdir().expect("temp dir");
    editor(&apiary, "legacy", "builder");
    let secret = "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/service-account-token\nmetadata:\n  name: builder-token\n  namespace: legacy\n  annotations:\n    kubernetes.io/service-account.name: builder\n";
    let file = dir.path().join("secret.yaml");
    std::fs::write(&file, secret).unwrap();
    ok(&apiary.kubectl("1.33", &["apply", "-f", file.to_str().unwrap()]));
    let field = |path: &str| {
        let encoded = ok(&apiary.kubectl("1.33", &["get", "secret", "builder-token", "-n", "legacy", "-o", &format!("jsonpath={{.data.{path}}}")]));
        String::from_utf8(base64::engine::general_purpose::STANDARD.decode(encoded.trim()).unwrap()).unwrap()
    };
    assert_eq!(field("namespace"), "legacy");
    let ca = std::fs::read_to_string(apiary.data_dir.join("pki/ca.crt")).unwrap();
    assert_eq!(field("ca\\.crt"), ca);
    let token = field("token");
    assert_eq!(claims(&token)["iss"], "kubernetes/serviceaccount");
    let kubeconfig = apiary.token_kubeconfig("legacy", &token);
    for version in ["1.33", "1.27"] {
        ok(&as_token(version, &kubeconfig, &["get", "configmaps", "-n", "legacy"]));
    }
}

#[test]
fn the_signing_key_outlives_a_restart_or_comes_from_the_flag() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let mut apiary = Apiary::start_in(&data, &[]);
    editor(&apiary, "kept", "default");
    let token = ok(&apiary.kubectl("1.33", &["create", "token", "default", "-n", "kept"])).trim().to_owned();
    apiary.stop();
    assert!(data.join("pki/sa.key").is_file() && data.join("pki/sa.pub").is_file());
    let apiary = Apiary::start_in(&data, &[]);
    let kubeconfig = apiary.token_kubeconfig("kept", &token);
    ok(&as_token("1.33", &kubeconfig, &["get", "configmaps", "-n", "kept"]));
    drop(apiary);

    let rsa = workspace_root().join("core/src/authn/keys/testdata/rsa-pkcs1.key");
    let apiary = Apiary::start_with(&[
        "--service-account-signing-key-file",
        rsa.to_str().unwrap(),
        "--service-account-issuer",
        "https://apiary.example",
    ]);
    editor(&apiary, "rsa", "default");
    let token = ok(&apiary.kubectl("1.27", &["create", "token", "default", "-n", "rsa"])).trim().to_owned();
    let header: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token.split('.').next().unwrap()).unwrap(),
    )
    .unwrap();
    assert_eq!(header["alg"], "RS256");
    assert_eq!(header["kid"], "2_e2YVJHy61nHQVkBDat93rTU5B7B_4DVRgA-x1EqQ0");
    assert_eq!(claims(&token)["iss"], "https://apiary.example");
    let kubeconfig = apiary.token_kubeconfig("rsa", &token);
    ok(&as_token("1.27", &kubeconfig, &["get", "configmaps", "-n", "rsa"]));
}

#[tokio::test(flavor = "current_thread")]
async fn kube_rs_asks_for_a_token_and_authenticates_with_it() {
    use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
    use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
    use kube::api::{Api, ListParams, PostParams};

    let apiary = Apiary::start();
    editor(&apiary, "kube-rs", "default");
    let admin = kube_support::client(&apiary).await;
    let accounts: Api<ServiceAccount> = Api::namespaced(admin, "kube-rs");
    let request = TokenRequest {
        spec: TokenRequestSpec {
            expiration_seconds: Some(900),
            ..Default::default()
        },
        ..Default::default()
    };
    let answered = accounts
        .create_token_request("default", &PostParams::default(), &request)
        .await
        .expect("a token");
    assert_eq!(answered.spec.expiration_seconds, Some(900));
    let token = answered.status.expect("a status").token;

    let client = kube_support::client_from(&apiary.token_kubeconfig("kube-rs", &token)).await;
    let configmaps: Api<ConfigMap> = Api::namespaced(client, "kube-rs");
    let cm: ConfigMap = serde_json::from_value(serde_json::json!({ "metadata": { "name": "from-sa" }, "data": { "k": "v" } })).unwrap();
    configmaps.create(&PostParams::default(), &cm).await.expect("created as the ServiceAccount");
    let listed = configmaps.list(&ListParams::default()).await.expect("listed");
    let names: Vec<_> = listed.items.iter().filter_map(|cm| cm.metadata.name.as_deref()).collect();
    assert_eq!(names, ["from-sa", "kube-root-ca.crt"]);

    let forged = kube_support::client_from(&apiary.token_kubeconfig("forged", &format!("{token}x"))).await;
    let refused = Api::<ConfigMap>::namespaced(forged, "kube-rs").list(&ListParams::default()).await;
    match refused {
        Err(kube::Error::Api(status)) => assert_eq!((status.code, status.reason.as_str()), (401, "Unauthorized")),
        other => panic!("expected 401, got {other:?}"),
    }
}

const PYTHON: &str = r#"
import sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException

admin = client.CoreV1Api(config.new_client_from_config(config_file=sys.argv[1]))
answer = admin.create_namespaced_service_account_token(
    "default", "python", {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 1200}}
)
token = answer.status.token
print("expiration", answer.spec.expiration_seconds)

def as_bearer(token):
    configuration = client.Configuration()
    configuration.host = sys.argv[2]
    configuration.ssl_ca_cert = sys.argv[3]
    configuration.api_key = {"authorization": token}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    return client.CoreV1Api(client.ApiClient(configuration))

sa = as_bearer(token)
sa.create_namespaced_config_map("python", {"metadata": {"name": "from-python"}, "data": {"k": "v"}})
print("listed", [c.metadata.name for c in sa.list_namespaced_config_map("python").items])
try:
    as_bearer(token + "x").list_namespaced_config_map("python")
    print("forged accepted")
except ApiException as e:
    print("forged", e.status)
"#;

#[test]
fn the_python_client_asks_for_a_token_and_authenticates_with_it() {
    let apiary = Apiary::start();
    editor(&apiary, "python", "default");
    let script = apiary.data_dir.join("sa_token.py");
    std::fs::write(&script, PYTHON).unwrap();
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(&apiary.kubeconfig)
        .arg(&apiary.url)
        .arg(apiary.data_dir.join("pki/ca.crt"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the Python client failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("expiration 1200"), "{stdout}");
    assert!(stdout.contains("listed ['from-python', 'kube-root-ca.crt']"), "{stdout}");
    assert!(stdout.contains("forged 401"), "{stdout}");
}

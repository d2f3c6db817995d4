//! ServiceAccount tokens over the whole chain, on the harness's clock: TokenRequest
//! (`serviceaccounts/{name}/token`) issues them, bearer requests are authenticated by
//! them (who the server took the caller for is read from the audit events), and they
//! stop working when they expire or what they name is gone, with upstream's 401.

use apiary_core::authn::keys::parse_private_key;
use apiary_core::authn::{Authenticators, ServiceAccountTokens};
use apiary_core::harness::{json_request as request, single_reply as one, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use base64::Engine as _;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
const KEY: &str = include_str!("../src/authn/keys/testdata/ec-p256-sec1.key");
const OTHER_KEY: &str = include_str!("../src/authn/keys/testdata/ec-p384-sec1.key");
const CA: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
/// Upstream's answer to a bad bearer token (`responses/error-401-bad-bearer-token.json`).
const UNAUTHORIZED: &str = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n";
const SA: &str = "/api/v1/namespaces/default/serviceaccounts";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

fn tokens() -> ServiceAccountTokens {
    let mut tokens = ServiceAccountTokens::new(vec![ISSUER.into()], parse_private_key(KEY).unwrap());
    tokens.root_ca = Some(CA.into());
    tokens
}

fn harness_with(tokens: ServiceAccountTokens) -> Harness<MemoryStore> {
    let policy = apiary_core::audit::Policy::parse(b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n").unwrap();
    Harness::new(
        Config {
            authenticators: Authenticators {
                service_accounts: Some(Arc::new(tokens)),
                ..Authenticators::default()
            },
            audit_policy: Some(Arc::new(policy)),
            ..Config::default()
        },
        MemoryStore::new(),
    )
}

fn harness() -> Harness<MemoryStore> {
    harness_with(tokens())
}

/// As the admin (the harness's client certificate).
fn admin(h: &Harness<MemoryStore>, method: &str, path: &str, body: Value) -> Reply {
    let body = if body.is_null() { String::new() } else { body.to_string() };
    one(&h.send(&request(method, path, "", &body)))
}

/// With `Authorization: Bearer <token>` and no client certificate; also returns the
/// user the audit event of the request names.
fn bearer(h: &Harness<MemoryStore>, token: &str, method: &str, path: &str) -> (Reply, Value) {
    h.act_as(None, &[]);
    h.take_audit_lines();
    let reply = one(&h.send(&request(method, path, &format!("Authorization: Bearer {token}\r\n"), "")));
    h.act_as(Some("apiary-admin"), &["system:masters"]);
    let lines = h.take_audit_lines();
    let last: Value = serde_json::from_str(lines.last().expect("an audit event")).unwrap();
    (reply, last["user"].clone())
}

fn create_service_account(h: &Harness<MemoryStore>, name: &str) -> String {
    let created = admin(h, "POST", SA, json!({ "apiVersion": "v1", "kind": "ServiceAccount", "metadata": { "name": name } }));
    assert_eq!(created.status, 201, "{:?}", created.json());
    created.json()["metadata"]["uid"].as_str().unwrap().to_owned()
}

fn token_request(h: &Harness<MemoryStore>, account: &str, spec: Value) -> Reply {
    let body = json!({ "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec });
    admin(h, "POST", &format!("{SA}/{account}/token"), body)
}

fn token_of(reply: &Reply) -> String {
    assert_eq!(reply.status, 201, "{:?}", reply.json());
    reply.json()["status"]["token"].as_str().unwrap().to_owned()
}

/// The claims of a token (not verified).
fn claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

fn assert_unauthorized(reply: &Reply) {
    assert_eq!(reply.status, 401);
    assert_eq!(reply.json(), serde_json::from_str::<Value>(UNAUTHORIZED).unwrap());
}

#[test]
fn a_token_request_answers_a_token_that_names_the_service_account() {
    let h = harness();
    let uid = create_service_account(&h, "robot");
    let now = h.inputs().now;
    let reply = token_request(&h, "robot", json!({}));
    let token = token_of(&reply);
    let answer = reply.json();
    assert_eq!(answer["kind"], "TokenRequest");
    assert_eq!(answer["apiVersion"], "authentication.k8s.io/v1");
    assert_eq!(answer["metadata"]["name"], "robot");
    assert_eq!(answer["metadata"]["namespace"], "default");
    assert!(answer["metadata"]["creationTimestamp"].is_string());
    assert_eq!(answer["spec"], json!({ "audiences": [ISSUER], "expirationSeconds": 3600, "boundObjectRef": null }));
    let iat = now.duration_since(UNIX_EPOCH).unwrap().as_secs();
    let expected_expiry = apiary_core::rest::object::rfc3339(UNIX_EPOCH + Duration::from_secs(iat + 3600));
    assert_eq!(answer["status"]["expirationTimestamp"], expected_expiry.as_str());
    let claims = claims(&token);
    assert_eq!(claims["iss"], ISSUER);
    assert_eq!(claims["sub"], "system:serviceaccount:default:robot");
    assert_eq!(claims["aud"], json!([ISSUER]));
    assert_eq!(claims["exp"].as_u64().unwrap(), claims["iat"].as_u64().unwrap() + 3600);
    assert_eq!(claims["kubernetes.io"], json!({ "namespace": "default", "serviceaccount": { "name": "robot", "uid": uid } }));

    let (reply, user) = bearer(&h, &token, "GET", CONFIGMAPS);
    assert_ne!(reply.status, 401);
    assert_eq!(
        user,
        json!({
            "username": "system:serviceaccount:default:robot",
            "uid": uid,
            "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
            "extra": { "authentication.kubernetes.io/credential-id": [format!("JTI={}", claims["jti"].as_str().unwrap())] },
        })
    );
}

#[test]
fn tokens_expire_on_the_clock() {
    let h = harness();
    create_service_account(&h, "robot");
    let token = token_of(&token_request(&h, "robot", json!({ "expirationSeconds": 600 })));
    assert_ne!(bearer(&h, &token, "GET", CONFIGMAPS).0.status, 401);
    // Upstream allows a minute of clock skew past the expiry.
    h.advance(Duration::from_secs(600 + 59));
    assert_ne!(bearer(&h, &token, "GET", CONFIGMAPS).0.status, 401);
    h.advance(Duration::from_secs(15));
    assert_unauthorized(&bearer(&h, &token, "GET", CONFIGMAPS).0);
    // Refused everywhere, where anonymous clients are served too.
    assert_unauthorized(&bearer(&h, &token, "GET", "/version").0);
}

#[test]
fn a_deleted_or_recreated_service_account_ends_its_tokens() {
    let h = harness();
    create_service_account(&h, "robot");
    let token = token_of(&token_request(&h, "robot", json!({})));
    assert_ne!(bearer(&h, &token, "GET", CONFIGMAPS).0.status, 401);
    assert_eq!(admin(&h, "DELETE", &format!("{SA}/robot"), Value::Null).status, 200);
    // As upstream, an answer is cached for 10 s.
    h.advance(Duration::from_secs(11));
    assert_unauthorized(&bearer(&h, &token, "GET", CONFIGMAPS).0);
    // Same name, another uid: still refused.
    create_service_account(&h, "robot");
    assert_unauthorized(&bearer(&h, &token, "GET", CONFIGMAPS).0);
    // A new token of the new account works.
    let fresh = token_of(&token_request(&h, "robot", json!({})));
    assert_ne!(bearer(&h, &fresh, "GET", CONFIGMAPS).0.status, 401);
}

#[test]
fn a_pod_bound_token_carries_the_pod_and_its_node_and_ends_with_the_pod() {
    let h = harness();
    create_service_account(&h, "robot");
    let node = admin(&h, "POST", "/api/v1/nodes", json!({ "apiVersion": "v1", "kind": "Node", "metadata": { "name": "n1" } }));
    let node_uid = node.json()["metadata"]["uid"].as_str().unwrap().to_owned();
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "web" },
        "spec": { "serviceAccountName": "robot", "nodeName": "n1", "containers": [{ "name": "c", "image": "nginx" }] },
    });
    let pod = admin(&h, "POST", "/api/v1/namespaces/default/pods", pod);
    assert_eq!(pod.status, 201, "{:?}", pod.json());
    let pod_uid = pod.json()["metadata"]["uid"].as_str().unwrap().to_owned();
    let reply = token_request(&h, "robot", json!({ "boundObjectRef": { "kind": "Pod", "apiVersion": "v1", "name": "web" } }));
    let token = token_of(&reply);
    assert_eq!(reply.json()["spec"]["boundObjectRef"], json!({ "kind": "Pod", "apiVersion": "v1", "name": "web" }));
    assert_eq!(claims(&token)["kubernetes.io"]["pod"], json!({ "name": "web", "uid": pod_uid }));
    assert_eq!(claims(&token)["kubernetes.io"]["node"], json!({ "name": "n1", "uid": node_uid }));

    let (reply, user) = bearer(&h, &token, "GET", CONFIGMAPS);
    assert_ne!(reply.status, 401);
    let extra = &user["extra"];
    assert_eq!(extra["authentication.kubernetes.io/pod-name"], json!(["web"]));
    assert_eq!(extra["authentication.kubernetes.io/pod-uid"], json!([pod_uid]));
    assert_eq!(extra["authentication.kubernetes.io/node-name"], json!(["n1"]));
    assert_eq!(extra["authentication.kubernetes.io/node-uid"], json!([node_uid]));

    // Bound to a node, the pod waits for its kubelet unless the delete is forced.
    assert_eq!(admin(&h, "DELETE", "/api/v1/namespaces/default/pods/web?gracePeriodSeconds=0", Value::Null).status, 200);
    h.advance(Duration::from_secs(11));
    assert_unauthorized(&bearer(&h, &token, "GET", CONFIGMAPS).0);
}

#[test]
fn the_kubelets_pod_tokens_are_extended_and_long_requests_shortened() {
    let mut config = tokens();
    config.max_expiration = Some(Duration::from_secs(7200));
    let h = harness_with(config);
    create_service_account(&h, "robot");
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "web" },
        "spec": { "serviceAccountName": "robot", "containers": [{ "name": "c", "image": "nginx" }] },
    });
    assert_eq!(admin(&h, "POST", "/api/v1/namespaces/default/pods", pod).status, 201);
    let reply = token_request(&h, "robot", json!({ "expirationSeconds": 10800 }));
    assert_eq!(reply.json()["spec"]["expirationSeconds"], 7200);
    assert_eq!(reply.header("warning"), Some("299 - \"requested expiration of 10800 seconds shortened to 7200 seconds\""));
    let claims_of = |spec: Value| claims(&token_of(&token_request(&h, "robot", spec)));
    let bound = json!({ "kind": "Pod", "apiVersion": "v1", "name": "web" });
    let extended = claims_of(json!({ "expirationSeconds": 3607, "boundObjectRef": bound }));
    let iat = extended["iat"].as_i64().unwrap();
    assert_eq!(extended["exp"].as_i64().unwrap() - iat, 365 * 86_400);
    assert_eq!(extended["kubernetes.io"]["warnafter"].as_i64().unwrap() - iat, 3607);
    // Not for another audience, nor unbound.
    let other = claims_of(json!({ "expirationSeconds": 3607, "boundObjectRef": bound, "audiences": ["vault"] }));
    assert_eq!(other["exp"].as_i64().unwrap() - other["iat"].as_i64().unwrap(), 3607);
    let unbound = claims_of(json!({ "expirationSeconds": 3607 }));
    assert_eq!(unbound["exp"].as_i64().unwrap() - unbound["iat"].as_i64().unwrap(), 3607);
    assert!(unbound["kubernetes.io"].get("warnafter").is_none());
}

#[test]
fn forged_and_misdirected_tokens_get_401() {
    let h = harness();
    create_service_account(&h, "robot");
    let token = token_of(&token_request(&h, "robot", json!({})));
    let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let parts: Vec<&str> = token.split('.').collect();
    let good = claims(&token);

    // The same claims, unsigned.
    let none = format!("{}.{}.", b64(&json!({ "alg": "none" })), parts[1]);
    assert_unauthorized(&bearer(&h, &none, "GET", CONFIGMAPS).0);
    // Claims changed under the signature.
    let mut longer = good.clone();
    longer["exp"] = json!(good["exp"].as_i64().unwrap() + 86_400);
    let tampered = format!("{}.{}.{}", parts[0], b64(&longer), parts[2]);
    assert_unauthorized(&bearer(&h, &tampered, "GET", CONFIGMAPS).0);
    // Signed by a key the server does not know (its kid names no key of the server).
    let mut stranger = tokens();
    stranger.signing_key = Some(parse_private_key(OTHER_KEY).unwrap());
    let foreign = apiary_core::authn::jwt::sign(stranger.signing_key.as_ref().unwrap(), &good);
    assert_unauthorized(&bearer(&h, &foreign, "GET", CONFIGMAPS).0);
    // For another audience.
    let vault = token_of(&token_request(&h, "robot", json!({ "audiences": ["vault"] })));
    assert_unauthorized(&bearer(&h, &vault, "GET", CONFIGMAPS).0);
    // Garbage.
    assert_unauthorized(&bearer(&h, "a.b.c", "GET", CONFIGMAPS).0);
    // The real one still works.
    assert_ne!(bearer(&h, &token, "GET", CONFIGMAPS).0.status, 401);
}

#[test]
fn token_requests_are_checked_with_upstreams_messages() {
    let h = harness();
    create_service_account(&h, "robot");
    let fails = |account: &str, spec: Value| {
        let reply = token_request(&h, account, spec);
        (reply.status, reply.json()["message"].as_str().unwrap_or("").to_owned())
    };
    assert_eq!(
        fails("robot", json!({ "expirationSeconds": 599 })),
        (422, "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes".to_owned())
    );
    assert_eq!(
        fails("robot", json!({ "expirationSeconds": 4294967297i64 })),
        (422, "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds".to_owned())
    );
    assert_eq!(fails("ghost", json!({})), (404, "serviceaccounts \"ghost\" not found".to_owned()));
    let renamed = admin(&h, "POST", &format!("{SA}/robot/token"), json!({ "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": { "name": "other" }, "spec": {} }));
    assert_eq!(
        (renamed.status, renamed.json()["message"].clone()),
        (422, json!("TokenRequest.authentication.k8s.io \"robot\" is invalid: metadata.name: Invalid value: \"other\": must match the service account name if specified"))
    );
    let bound = |kind: &str, name: &str, uid: &str| json!({ "boundObjectRef": { "kind": kind, "apiVersion": "v1", "name": name, "uid": uid } });
    assert_eq!(fails("robot", bound("ConfigMap", "c", "")), (400, "cannot bind token to object of type /v1, Kind=ConfigMap".to_owned()));
    assert_eq!(fails("robot", bound("Pod", "nope", "")), (404, "pods \"nope\" not found".to_owned()));
    assert_eq!(fails("robot", bound("Secret", "nope", "")), (404, "secrets \"nope\" not found".to_owned()));
    assert_eq!(fails("robot", bound("Node", "nope", "")), (404, "nodes \"nope\" not found".to_owned()));
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "web" },
        "spec": { "serviceAccountName": "other", "containers": [{ "name": "c", "image": "nginx" }] },
    });
    // The ServiceAccount admission plugin wants the pod's account to exist.
    let forbidden = admin(&h, "POST", "/api/v1/namespaces/default/pods", pod.clone());
    assert_eq!(
        (forbidden.status, forbidden.json()["message"].clone()),
        (403, json!("pods \"web\" is forbidden: error looking up service account default/other: serviceaccount \"other\" not found"))
    );
    let other = json!({ "apiVersion": "v1", "kind": "ServiceAccount", "metadata": { "name": "other" } });
    assert_eq!(admin(&h, "POST", "/api/v1/namespaces/default/serviceaccounts", other).status, 201);
    assert_eq!(admin(&h, "POST", "/api/v1/namespaces/default/pods", pod).status, 201);
    assert_eq!(
        fails("robot", bound("Pod", "web", "")),
        (400, "cannot bind token for serviceaccount \"robot\" to pod running with different serviceaccount name.".to_owned())
    );
    let secret = json!({ "apiVersion": "v1", "kind": "Secret", "metadata": { "name": "s" } });
    assert_eq!(admin(&h, "POST", "/api/v1/namespaces/default/secrets", secret).status, 201);
    assert_eq!(
        fails("robot", bound("Secret", "s", "not-its-uid")),
        (409, "Operation cannot be fulfilled on Secret \"s\": the UID in the bound object reference (not-its-uid) does not match the UID in record. The object might have been deleted and then recreated".to_owned())
    );
    // A secret-bound token works until the secret goes.
    let token = token_of(&token_request(&h, "robot", bound("Secret", "s", "")));
    assert_ne!(bearer(&h, &token, "GET", CONFIGMAPS).0.status, 401);
    assert_eq!(admin(&h, "DELETE", "/api/v1/namespaces/default/secrets/s", Value::Null).status, 200);
    h.advance(Duration::from_secs(11));
    assert_unauthorized(&bearer(&h, &token, "GET", CONFIGMAPS).0);
}

#[test]
fn legacy_token_secrets_are_filled_in_and_authenticate() {
    let h = harness();
    let uid = create_service_account(&h, "robot");
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
        "metadata": { "name": "robot-token", "annotations": { "kubernetes.io/service-account.name": "robot" } },
    });
    let created = admin(&h, "POST", "/api/v1/namespaces/default/secrets", secret);
    assert_eq!(created.status, 201, "{:?}", created.json());
    let stored = created.json();
    let data = |key: &str| {
        let encoded = stored["data"][key].as_str().unwrap_or_else(|| panic!("no {key}: {stored}"));
        String::from_utf8(base64::engine::general_purpose::STANDARD.decode(encoded).unwrap()).unwrap()
    };
    assert_eq!(data("namespace"), "default");
    assert_eq!(data("ca.crt"), CA);
    assert_eq!(stored["metadata"]["annotations"]["kubernetes.io/service-account.uid"], uid.as_str());
    let token = data("token");
    assert_eq!(
        claims(&token),
        json!({
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "default",
            "kubernetes.io/serviceaccount/secret.name": "robot-token",
            "kubernetes.io/serviceaccount/service-account.name": "robot",
            "kubernetes.io/serviceaccount/service-account.uid": uid,
            "sub": "system:serviceaccount:default:robot",
        })
    );
    let (reply, user) = bearer(&h, &token, "GET", CONFIGMAPS);
    assert_ne!(reply.status, 401);
    assert_eq!(user["username"], "system:serviceaccount:default:robot");
    assert!(user.get("extra").is_none());
    // Legacy tokens do not expire; they end with their Secret.
    h.advance(Duration::from_secs(400 * 86_400));
    assert_ne!(bearer(&h, &token, "GET", CONFIGMAPS).0.status, 401);
    assert_eq!(admin(&h, "DELETE", "/api/v1/namespaces/default/secrets/robot-token", Value::Null).status, 200);
    h.advance(Duration::from_secs(11));
    assert_unauthorized(&bearer(&h, &token, "GET", CONFIGMAPS).0);

    // A token Secret must name its ServiceAccount.
    let nameless = json!({ "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token", "metadata": { "name": "x" } });
    let refused = admin(&h, "POST", "/api/v1/namespaces/default/secrets", nameless);
    assert_eq!(
        (refused.status, refused.json()["message"].clone()),
        (422, json!("Secret \"x\" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value"))
    );
    // One naming no ServiceAccount there is stored as sent.
    let orphan = json!({
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
        "metadata": { "name": "y", "annotations": { "kubernetes.io/service-account.name": "ghost" } },
    });
    let created = admin(&h, "POST", "/api/v1/namespaces/default/secrets", orphan);
    assert_eq!(created.status, 201);
    assert!(created.json().get("data").is_none());
}

#[test]
fn the_token_subresource_is_in_discovery_and_openapi() {
    let h = harness();
    let resources = admin(&h, "GET", "/api/v1", Value::Null).json();
    let token = resources["resources"].as_array().unwrap().iter().find(|r| r["name"] == "serviceaccounts/token").unwrap();
    assert_eq!(token["verbs"], json!(["create"]));
    assert_eq!(token["kind"], "TokenRequest");
    let v2 = admin(&h, "GET", "/openapi/v2", Value::Null).json();
    let path = &v2["paths"]["/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"];
    let post = &path["post"];
    assert_eq!(post["operationId"], "createCoreV1NamespacedServiceAccountToken");
    assert_eq!(post["description"], "create token of a ServiceAccount");
    assert_eq!(post["x-kubernetes-group-version-kind"], json!({ "group": "authentication.k8s.io", "kind": "TokenRequest", "version": "v1" }));
    // A path of one operation has its parameters at the path, as upstream writes it.
    let body = path["parameters"].as_array().unwrap().iter().find(|p| p["in"] == "body").unwrap();
    assert_eq!(body["schema"]["$ref"], "#/definitions/io.k8s.api.authentication.v1.TokenRequest");
    // Without a signing key there is no token subresource to serve.
    let plain = Harness::new(Config::default(), MemoryStore::new());
    assert_eq!(admin(&plain, "POST", &format!("{SA}/robot/token"), json!({})).status, 404);
}

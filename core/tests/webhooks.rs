//! The webhook authorizer over the whole server: SubjectAccessReviews asked through
//! the outbound-call effect, answers kept for their TTLs, upstream's 403 and 500.

use apiary_core::authorization::webhook::WebhookAuthorizerConfig;
use apiary_core::authorization::{Authorizer, Mode};
use apiary_core::effect::{CallError, ClientTls, Outbound};
use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::webhook::Webhook;
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

fn get(h: &Harness<MemoryStore>, path: &str) -> Reply {
    let request = format!("GET {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\n\r\n");
    parse_responses(&h.send(request.as_bytes())).unwrap().remove(0)
}

fn webhook() -> Webhook {
    Webhook {
        url: "https://authz.example:8443/authorize".to_owned(),
        tls: Arc::new(ClientTls { ca_pem: b"CA".to_vec(), ..ClientTls::default() }),
        token: Some("hook-token".to_owned()),
    }
}

/// A server asking RBAC, then the webhook; every review the webhook got, and the
/// status it answers with.
fn server(answer: Value) -> (Harness<MemoryStore>, Rc<RefCell<Vec<Value>>>, Rc<RefCell<Value>>) {
    let h = Harness::new(
        Config {
            authorizer: Authorizer {
                modes: vec![Mode::Rbac, Mode::Webhook],
                webhook: Some(WebhookAuthorizerConfig::new(webhook())),
            },
            ..Config::default()
        },
        MemoryStore::new(),
    );
    let asked = Rc::new(RefCell::new(Vec::new()));
    let status = Rc::new(RefCell::new(answer));
    let (log, reply) = (asked.clone(), status.clone());
    h.answer_calls(move |call: &Outbound| {
        assert_eq!(call.request.uri(), "https://authz.example:8443/authorize");
        assert_eq!(call.request.headers()["authorization"], "Bearer hook-token");
        assert_eq!(call.tls.as_ref().unwrap().ca_pem, b"CA");
        log.borrow_mut().push(serde_json::from_slice(call.request.body()).unwrap());
        match &*reply.borrow() {
            Value::Null => Err(CallError::Unreachable("connection refused".into())),
            status => Ok(http::Response::builder()
                .status(200)
                .body(bytes::Bytes::from(json!({"apiVersion": "authorization.k8s.io/v1beta1", "kind": "SubjectAccessReview", "status": status}).to_string()))
                .unwrap()),
        }
    });
    h.act_as(Some("jane"), &["dev"]);
    (h, asked, status)
}

#[test]
fn the_webhook_is_asked_what_rbac_does_not_allow_and_its_answers_are_kept() {
    let (h, asked, status) = server(json!({"allowed": true}));
    assert_eq!(get(&h, "/api/v1/namespaces/default/configmaps").status, 200);
    assert_eq!(
        asked.borrow()[0],
        json!({"apiVersion": "authorization.k8s.io/v1beta1", "kind": "SubjectAccessReview", "metadata": {"creationTimestamp": null},
               "spec": {"resourceAttributes": {"namespace": "default", "verb": "list", "version": "v1", "resource": "configmaps"},
                        "user": "jane", "group": ["dev", "system:authenticated"]},
               "status": {"allowed": false}})
    );
    // Kept for 5 minutes when allowed: the same question is not asked again.
    *status.borrow_mut() = json!({"allowed": false});
    assert_eq!(get(&h, "/api/v1/namespaces/default/configmaps").status, 200);
    assert_eq!(asked.borrow().len(), 1);
    // What RBAC allows (discovery, for system:authenticated) never reaches the webhook.
    assert_eq!(get(&h, "/api").status, 200);
    assert_eq!(asked.borrow().len(), 1);
    h.advance(Duration::from_secs(301));
    let refused = get(&h, "/api/v1/namespaces/default/configmaps");
    assert_eq!(refused.status, 403);
    assert_eq!(asked.borrow().len(), 2);
    // A refusal is kept for 30 seconds.
    *status.borrow_mut() = json!({"allowed": true});
    assert_eq!(get(&h, "/api/v1/namespaces/default/configmaps").status, 403);
    h.advance(Duration::from_secs(31));
    assert_eq!(get(&h, "/api/v1/namespaces/default/configmaps").status, 200);
}

#[test]
fn a_denial_carries_the_webhooks_reason_and_a_failure_is_a_500() {
    let (h, _, status) = server(json!({"allowed": false, "denied": true, "reason": "not on weekends"}));
    let denied = get(&h, "/api/v1/namespaces/default/secrets");
    assert_eq!(denied.status, 403);
    assert_eq!(
        denied.json()["message"],
        "secrets is forbidden: User \"jane\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\": not on weekends"
    );
    *status.borrow_mut() = Value::Null;
    let failed = get(&h, "/api/v1/namespaces/default/pods");
    assert_eq!(failed.status, 500);
    assert_eq!(failed.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(
        std::str::from_utf8(&failed.body).unwrap(),
        "Internal Server Error: \"/api/v1/namespaces/default/pods\": connection refused\n"
    );
}

/// A server whose bearer tokens are asked of the token webhook; every review it got.
fn token_server(answer: Value) -> (Harness<MemoryStore>, Rc<RefCell<Vec<Value>>>, Rc<RefCell<Value>>) {
    use apiary_core::authn::webhook::{TokenWebhook, TokenWebhookConfig};
    let h = Harness::new(
        Config {
            authenticators: apiary_core::authn::Authenticators {
                token_webhook: Some(Arc::new(TokenWebhook::new(TokenWebhookConfig::new(webhook())))),
                ..Default::default()
            },
            ..Config::default()
        },
        MemoryStore::new(),
    );
    let asked = Rc::new(RefCell::new(Vec::new()));
    let status = Rc::new(RefCell::new(answer));
    let (log, reply) = (asked.clone(), status.clone());
    h.answer_calls(move |call: &Outbound| {
        log.borrow_mut().push(serde_json::from_slice(call.request.body()).unwrap());
        let body = json!({"apiVersion": "authentication.k8s.io/v1beta1", "kind": "TokenReview", "status": *reply.borrow()});
        Ok(http::Response::builder().status(200).body(bytes::Bytes::from(body.to_string())).unwrap())
    });
    h.act_as(None, &[]);
    (h, asked, status)
}

fn get_with_token(h: &Harness<MemoryStore>, path: &str, token: &str) -> Reply {
    let request = format!("GET {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\nAuthorization: Bearer {token}\r\n\r\n");
    parse_responses(&h.send(request.as_bytes())).unwrap().remove(0)
}

#[test]
fn the_token_webhook_names_the_user_of_a_token_nobody_else_knows() {
    let (h, asked, status) = token_server(json!({"authenticated": true, "user": {"username": "jane", "uid": "7", "groups": ["dev"]}}));
    // jane is who the webhook says: RBAC lets system:authenticated discover, not list.
    assert_eq!(get_with_token(&h, "/api", "opaque-1").status, 200);
    assert_eq!(
        asked.borrow()[0],
        json!({"apiVersion": "authentication.k8s.io/v1beta1", "kind": "TokenReview", "metadata": {"creationTimestamp": null},
               "spec": {"token": "opaque-1"}, "status": {"user": {}}})
    );
    let refused = get_with_token(&h, "/api/v1/namespaces/default/secrets", "opaque-1");
    assert_eq!(refused.status, 403);
    assert!(refused.json()["message"].as_str().unwrap().contains("User \"jane\" cannot list"));
    assert_eq!(asked.borrow().len(), 1, "the answer is kept");
    // A token the webhook does not know: 401, and the no is kept too.
    *status.borrow_mut() = json!({"authenticated": false, "error": "unknown token"});
    for _ in 0..2 {
        let unknown = get_with_token(&h, "/api", "opaque-2");
        assert_eq!((unknown.status, unknown.json()["reason"].clone()), (401, json!("Unauthorized")));
    }
    assert_eq!(asked.borrow().len(), 2);
    // After the 2 minutes the first token is asked about again.
    h.advance(Duration::from_secs(121));
    assert_eq!(get_with_token(&h, "/api", "opaque-1").status, 401);
    assert_eq!(asked.borrow().len(), 3);
}

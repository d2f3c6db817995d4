//! Impersonation through the whole chain: `Impersonate-*` headers make a request act as
//! another user once the requester may impersonate each attribute; the audit events
//! name both users; malformed headers and refusals get upstream's answers.

use apiary_core::authorization::{Authorizer, Mode};
use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

fn harness(config: Config) -> Harness<MemoryStore> {
    Harness::new(config, MemoryStore::new())
}

/// A POST of `body` to `path` with extra header lines.
fn post(path: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut text = format!("POST {path} HTTP/1.1\r\nHost: apiary\r\nContent-Type: application/json\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    text.into_bytes()
}

fn one(bytes: &[u8]) -> Reply {
    let mut replies = parse_responses(bytes).expect("well-formed HTTP/1.1");
    assert_eq!(replies.len(), 1);
    replies.remove(0)
}

const WHOAMI: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
const REVIEW: &str = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;

fn whoami(h: &Harness<MemoryStore>, headers: &[(&str, &str)]) -> Reply {
    one(&h.send(&post(WHOAMI, headers, REVIEW)))
}

#[test]
fn an_impersonated_request_acts_as_the_user_it_names() {
    let h = harness(Config::default());
    let me = whoami(&h, &[]);
    assert_eq!(me.status, 201);
    assert_eq!(
        me.json()["status"]["userInfo"],
        json!({"username": "apiary-admin", "groups": ["system:masters", "system:authenticated"]})
    );
    let jane = whoami(
        &h,
        &[
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", "dev"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Uid", "u-1"),
            ("Impersonate-Extra-Scopes", "view"),
            ("Impersonate-Extra-Acme.com%2Fteam", "blue"),
        ],
    );
    assert_eq!(
        jane.json()["status"]["userInfo"],
        json!({
            "username": "jane",
            "uid": "u-1",
            "groups": ["dev", "ops", "system:authenticated"],
            "extra": {"scopes": ["view"], "acme.com/team": ["blue"]},
        })
    );
    // A ServiceAccount's user name brings its groups; system:anonymous is unauthenticated.
    let robot = whoami(&h, &[("Impersonate-User", "system:serviceaccount:ns:robot")]);
    assert_eq!(
        robot.json()["status"]["userInfo"]["groups"],
        json!(["system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"])
    );
    // system:anonymous (in system:unauthenticated) may not even ask who it is.
    let anonymous = whoami(&h, &[("Impersonate-User", "system:anonymous")]);
    assert_eq!(anonymous.status, 403);
    assert_eq!(
        anonymous.json()["message"],
        "selfsubjectreviews.authentication.k8s.io is forbidden: User \"system:anonymous\" cannot create resource \"selfsubjectreviews\" in API group \"authentication.k8s.io\" at the cluster scope"
    );
}

#[test]
fn groups_or_a_uid_without_a_user_are_an_internal_error() {
    let h = harness(Config::default());
    let refused = whoami(&h, &[("Impersonate-Group", "dev")]);
    assert_eq!(refused.status, 500);
    let body = refused.json();
    assert_eq!(body["reason"], "InternalError");
    assert_eq!(
        body["message"],
        "Internal error occurred: requested [{Group  dev    }] without impersonating a user"
    );
    let refused = whoami(&h, &[("Impersonate-Uid", "1")]);
    assert_eq!(
        refused.json()["message"],
        "Internal error occurred: requested [{UID  1  authentication.k8s.io/v1  }] without impersonating a user"
    );
}

#[test]
fn a_requester_not_allowed_to_impersonate_gets_upstreams_403() {
    let h = harness(Config {
        authorizer: Authorizer::new(vec![Mode::AlwaysDeny]),
        ..Config::default()
    });
    // (system:masters may impersonate whatever the modes say.)
    h.act_as(Some("boss"), &[]);
    let refused = whoami(&h, &[("Impersonate-User", "jane")]);
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.json(),
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "users \"jane\" is forbidden: User \"boss\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope: Everything is forbidden.",
            "reason": "Forbidden",
            "details": {"name": "jane", "kind": "users"},
            "code": 403,
        })
    );
    let refused = whoami(&h, &[("Impersonate-User", "system:serviceaccount:kube-system:robot")]);
    assert_eq!(
        refused.json()["message"],
        "serviceaccounts \"robot\" is forbidden: User \"boss\" cannot impersonate resource \"serviceaccounts\" in API group \"\" in the namespace \"kube-system\": Everything is forbidden."
    );
    // Without impersonation the request itself is what is refused.
    let refused = whoami(&h, &[]);
    assert_eq!(
        refused.json()["message"],
        "selfsubjectreviews.authentication.k8s.io is forbidden: User \"boss\" cannot create resource \"selfsubjectreviews\" in API group \"authentication.k8s.io\" at the cluster scope: Everything is forbidden."
    );
}

#[test]
fn audit_events_name_the_impersonated_user_beside_the_requester() {
    let policy = apiary_core::audit::Policy::parse(b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n").unwrap();
    let h = harness(Config {
        audit_policy: Some(std::sync::Arc::new(policy)),
        ..Config::default()
    });
    let created = whoami(
        &h,
        &[("Impersonate-User", "jane"), ("Impersonate-Uid", "u-1"), ("Impersonate-Extra-Scopes", "view")],
    );
    assert_eq!(created.status, 201);
    let events: Vec<Value> = h
        .take_audit_lines()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    let admin = json!({"username": "apiary-admin", "groups": ["system:masters", "system:authenticated"]});
    // RequestReceived is written before impersonation, as upstream writes it.
    assert_eq!(events[0]["stage"], "RequestReceived");
    assert_eq!(events[0]["user"], admin);
    assert!(events[0].get("impersonatedUser").is_none());
    assert_eq!(events[1]["stage"], "ResponseComplete");
    assert_eq!(events[1]["user"], admin);
    assert_eq!(
        events[1]["impersonatedUser"],
        json!({"username": "jane", "uid": "u-1", "groups": ["system:authenticated"], "extra": {"scopes": ["view"]}})
    );
}

use super::*;
use crate::authn::keys::tests::fixture;
use crate::authn::keys::{parse_private_key, parse_public_keys};
use serde_json::json;
use std::collections::HashMap;
use std::time::UNIX_EPOCH;

const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
const NOW: u64 = 1_800_000_000;

/// Objects by (resource, namespace, name); `None` for a server that cannot tell.
struct Objects(Option<HashMap<(String, String, String), Object>>);

impl Objects {
    fn with(objects: &[(&str, &str, &str, &str)]) -> Objects {
        let mut map = HashMap::new();
        for (plural, ns, name, uid) in objects {
            let object = json!({ "metadata": { "name": name, "namespace": ns, "uid": uid } });
            map.insert((plural.to_string(), ns.to_string(), name.to_string()), object.as_object().unwrap().clone());
        }
        Objects(Some(map))
    }

    fn set(&mut self, plural: &str, ns: &str, name: &str, path: &[&str], value: serde_json::Value) {
        let object = self.0.as_mut().unwrap().get_mut(&(plural.into(), ns.into(), name.into())).unwrap();
        let mut at = object.entry(path[0]).or_insert(json!({}));
        for step in &path[1..] {
            at = at.as_object_mut().unwrap().entry(*step).or_insert(json!({}));
        }
        *at = value;
    }
}

impl LiveObjects for Objects {
    fn get(&self, plural: &str, namespace: &str, name: &str) -> Result<Option<Object>, NotKnown> {
        let map = self.0.as_ref().ok_or(NotKnown)?;
        Ok(map.get(&(plural.to_owned(), namespace.to_owned(), name.to_owned())).cloned())
    }
}

fn tokens() -> ServiceAccountTokens {
    ServiceAccountTokens::new(vec![ISSUER.to_owned()], parse_private_key(fixture("ec-p256-sec1.key")).unwrap())
}

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

fn request<'a>(audiences: &'a [String]) -> Issue<'a> {
    Issue {
        namespace: "ns",
        name: "robot",
        uid: "sa-uid",
        bound: None,
        pod_node: None,
        audiences,
        now: NOW as i64,
        expiration_seconds: 3600,
        warn_after: None,
        id: "jti-1".into(),
    }
}

fn live() -> Objects {
    Objects::with(&[
        ("serviceaccounts", "ns", "robot", "sa-uid"),
        ("pods", "ns", "web", "pod-uid"),
        ("nodes", "", "n1", "node-uid"),
        ("secrets", "ns", "s", "secret-uid"),
    ])
}

fn refused(result: Result<TokenUser, Refusal>) -> String {
    match result {
        Err(Refusal::Invalid(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_bound_token_names_its_service_account() {
    let tokens = tokens();
    let token = tokens.issue(&request(&tokens.api_audiences)).unwrap();
    let found = tokens.authenticate(&token, None, at(NOW), &live()).unwrap();
    assert_eq!(found.user.name, "system:serviceaccount:ns:robot");
    assert_eq!(found.user.uid, "sa-uid");
    assert_eq!(found.user.groups, ["system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"]);
    assert_eq!(found.user.extra["authentication.kubernetes.io/credential-id"], ["JTI=jti-1"]);
    assert_eq!(found.audiences, [ISSUER]);
    // The claims as upstream writes them.
    let parsed = jwt::parse(&token).unwrap();
    let claims: serde_json::Value = serde_json::from_slice(parsed.payload()).unwrap();
    assert_eq!(
        claims,
        json!({
            "aud": [ISSUER], "exp": NOW + 3600, "iat": NOW, "iss": ISSUER, "jti": "jti-1", "nbf": NOW,
            "kubernetes.io": { "namespace": "ns", "serviceaccount": { "name": "robot", "uid": "sa-uid" } },
            "sub": "system:serviceaccount:ns:robot",
        })
    );
    assert_eq!(parsed.key_id(), Some(tokens.keys[0].key_id()));
}

#[test]
fn times_are_checked_with_a_minute_of_leeway() {
    let tokens = tokens();
    let token = tokens.issue(&request(&tokens.api_audiences)).unwrap();
    let exp = NOW + 3600;
    assert!(tokens.authenticate(&token, None, at(exp + 60), &live()).is_ok());
    assert_eq!(refused(tokens.authenticate(&token, None, at(exp + 61), &live())), "service account token has expired");
    assert!(tokens.authenticate(&token, None, at(NOW - 60), &live()).is_ok());
    assert_eq!(refused(tokens.authenticate(&token, None, at(NOW - 61), &live())), "service account token is not valid yet");
}

#[test]
fn audiences_must_meet() {
    let tokens = tokens();
    let vault = ["vault".to_owned()];
    let token = tokens.issue(&request(&vault)).unwrap();
    assert!(refused(tokens.authenticate(&token, None, at(NOW), &live())).contains("is invalid for the target audiences"));
    let found = tokens.authenticate(&token, Some(&vault), at(NOW), &live()).unwrap();
    assert_eq!(found.audiences, vault);
}

#[test]
fn keys_are_picked_by_kid_and_other_issuers_are_not_ours() {
    let mut tokens = tokens();
    let token = tokens.issue(&request(&tokens.api_audiences)).unwrap();
    // Verified by another key only: the kid names no key.
    tokens.keys = parse_public_keys(fixture("rsa.pub")).unwrap();
    assert_eq!(refused(tokens.authenticate(&token, None, at(NOW), &live())), "invalid signature, no keys found");
    // Signed by another key that the server does not know.
    let mut stranger = tokens.clone();
    stranger.signing_key = Some(parse_private_key(fixture("ec-p384-sec1.key")).unwrap());
    let forged = stranger.issue(&request(&tokens.api_audiences)).unwrap();
    assert!(tokens.authenticate(&forged, None, at(NOW), &live()).is_err());

    let mut elsewhere = self::tokens();
    elsewhere.issuers = vec!["https://elsewhere".into()];
    let token = elsewhere.issue(&request(&elsewhere.api_audiences)).unwrap();
    assert_eq!(self::tokens().authenticate(&token, None, at(NOW), &live()), Err(Refusal::NotMine));
    assert_eq!(self::tokens().authenticate("not-a-jwt", None, at(NOW), &live()), Err(Refusal::NotMine));
}

#[test]
fn the_service_account_must_still_be_there() {
    let tokens = tokens();
    let token = tokens.issue(&request(&tokens.api_audiences)).unwrap();
    let check = |objects: &Objects| tokens.authenticate(&token, None, at(NOW), objects);
    assert!(refused(check(&Objects::with(&[]))).contains("not found"));
    let recreated = Objects::with(&[("serviceaccounts", "ns", "robot", "other-uid")]);
    assert_eq!(refused(check(&recreated)), "service account UID (other-uid) does not match claim (sa-uid)");
    assert!(refused(check(&Objects(None))).contains("not known yet"));
    // Being deleted: a minute of grace.
    let mut deleting = live();
    deleting.set("serviceaccounts", "ns", "robot", &["metadata", "deletionTimestamp"], json!(crate::time::rfc3339(at(NOW - 30))));
    assert!(check(&deleting).is_ok());
    deleting.set("serviceaccounts", "ns", "robot", &["metadata", "deletionTimestamp"], json!(crate::time::rfc3339(at(NOW - 61))));
    assert_eq!(refused(check(&deleting)), "service account ns/robot has been deleted");
}

#[test]
fn bound_objects_must_still_be_there() {
    let tokens = tokens();
    let audiences = tokens.api_audiences.clone();
    let bound = |kind, name: &str, uid: &str| Issue {
        bound: Some(Bound { kind, name: name.into(), uid: uid.into() }),
        ..request(&audiences)
    };
    let pod = tokens
        .issue(&Issue { pod_node: Some(("n1".into(), "node-uid".into())), ..bound(BoundKind::Pod, "web", "pod-uid") })
        .unwrap();
    let user = tokens.authenticate(&pod, None, at(NOW), &live()).unwrap().user;
    let extra = |key: &str| user.extra.get(&format!("authentication.kubernetes.io/{key}")).cloned();
    assert_eq!(extra("pod-name"), Some(vec!["web".to_owned()]));
    assert_eq!(extra("pod-uid"), Some(vec!["pod-uid".to_owned()]));
    assert_eq!(extra("node-name"), Some(vec!["n1".to_owned()]));
    assert_eq!(extra("node-uid"), Some(vec!["node-uid".to_owned()]));
    // A pod-bound token's node is information only: gone, the token still works.
    let no_node = Objects::with(&[("serviceaccounts", "ns", "robot", "sa-uid"), ("pods", "ns", "web", "pod-uid")]);
    assert!(tokens.authenticate(&pod, None, at(NOW), &no_node).is_ok());
    let no_pod = Objects::with(&[("serviceaccounts", "ns", "robot", "sa-uid")]);
    assert_eq!(refused(tokens.authenticate(&pod, None, at(NOW), &no_pod)), "service account token has been invalidated");
    let other_pod = Objects::with(&[("serviceaccounts", "ns", "robot", "sa-uid"), ("pods", "ns", "web", "new")]);
    assert!(refused(tokens.authenticate(&pod, None, at(NOW), &other_pod)).contains("does not match"));

    for (kind, name, uid) in [(BoundKind::Secret, "s", "secret-uid"), (BoundKind::Node, "n1", "node-uid")] {
        let token = tokens.issue(&bound(kind, name, uid)).unwrap();
        assert!(tokens.authenticate(&token, None, at(NOW), &live()).is_ok(), "{kind:?}");
        assert!(tokens.authenticate(&token, None, at(NOW), &no_pod).is_err(), "{kind:?} gone");
    }
}

#[test]
fn legacy_tokens_live_as_long_as_their_secret_holds_them() {
    let tokens = tokens();
    let token = tokens.issue_legacy(("ns", "robot", "sa-uid"), "s").unwrap();
    let mut objects = live();
    let encoded = |t: &str| json!(base64::Engine::encode(&base64::engine::general_purpose::STANDARD, t));
    objects.set("secrets", "ns", "s", &["data", "token"], encoded(&token));
    let found = tokens.authenticate(&token, None, at(NOW), &objects).unwrap();
    assert_eq!(found.user.name, "system:serviceaccount:ns:robot");
    assert!(found.user.extra.is_empty());
    assert_eq!(found.audiences, [ISSUER], "no audience: the API's");

    objects.set("secrets", "ns", "s", &["data", "token"], encoded("another"));
    assert_eq!(refused(tokens.authenticate(&token, None, at(NOW), &objects)), "Token does not match server's copy");
    objects.set("secrets", "ns", "s", &["data", "token"], encoded(&token));
    objects.set("secrets", "ns", "s", &["metadata", "labels"], json!({ "kubernetes.io/legacy-token-invalid-since": "2026-01-01" }));
    assert!(refused(tokens.authenticate(&token, None, at(NOW), &objects)).contains("has been marked invalid"));
    let recreated = Objects::with(&[("serviceaccounts", "ns", "robot", "x"), ("secrets", "ns", "s", "y")]);
    assert!(tokens.authenticate(&token, None, at(NOW), &recreated).is_err());
    assert_eq!(refused(tokens.authenticate(&token, None, at(NOW), &Objects::with(&[]))), "Token has been invalidated");
}

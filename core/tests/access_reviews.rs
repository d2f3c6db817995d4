//! The review kinds through the whole chain: TokenReview and SelfSubjectReview
//! (authentication.k8s.io/v1), SubjectAccessReview, SelfSubjectAccessReview,
//! LocalSubjectAccessReview and SelfSubjectRulesReview (authorization.k8s.io/v1).
//! Each create is answered 201 with the review and its status, nothing is stored, and
//! bad reviews get upstream's 400 and 422 bodies (recorded from kube-apiserver).

use apiary_core::authn::{Authenticators, TokenFile};
use apiary_core::authorization::{Authorizer, Mode};
use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};
use std::sync::Arc;

fn harness(config: Config) -> Harness<MemoryStore> {
    Harness::new(config, MemoryStore::new())
}

fn request(method: &str, path: &str, body: &str) -> Vec<u8> {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nUser-Agent: reviewer/1.0\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, body: Value) -> Reply {
    let mut replies = parse_responses(&h.send(&request(method, path, &body.to_string()))).unwrap();
    assert_eq!(replies.len(), 1);
    replies.remove(0)
}

fn create(h: &Harness<MemoryStore>, path: &str, body: Value) -> Reply {
    send(h, "POST", path, body)
}

const TOKENREVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
const SAR: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
const SSAR: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
const SSRR: &str = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";
const LSAR: &str = "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews";

fn with_tokens(api_audiences: &[&str], authorizer: Authorizer) -> Harness<MemoryStore> {
    let tokens = TokenFile::parse("tokens.csv", "s3cret,alice,1001,\"dev,ops\"\n").unwrap();
    harness(Config {
        authenticators: Authenticators {
            token_file: Some(Arc::new(tokens)),
            // The API audiences, without keys of its own.
            service_accounts: Some(Arc::new(apiary_core::authn::ServiceAccountTokens {
                issuers: Vec::new(),
                api_audiences: api_audiences.iter().map(|a| a.to_string()).collect(),
                keys: Vec::new(),
                signing_key: None,
                max_expiration: None,
                extend_expiration: true,
                root_ca: None,
            })),
            ..Authenticators::default()
        },
        authorizer,
        ..Config::default()
    })
}

fn token_review(token: &str, audiences: &[&str]) -> Value {
    let mut spec = json!({"token": token});
    if !audiences.is_empty() {
        spec["audiences"] = json!(audiences);
    }
    json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec})
}

#[test]
fn a_token_review_names_the_tokens_user_or_says_why_not() {
    let h = with_tokens(&[], Authorizer::new(vec![Mode::AlwaysAllow]));
    let known = create(&h, TOKENREVIEWS, token_review("s3cret", &[]));
    assert_eq!(known.status, 201);
    let body = known.json();
    assert_eq!(body["spec"], json!({"token": "s3cret"}));
    assert_eq!(
        body["status"],
        json!({"authenticated": true, "user": {"username": "alice", "uid": "1001", "groups": ["dev", "ops", "system:authenticated"]}})
    );
    // The review is recorded as any create is, and named by nothing.
    assert_eq!(body["metadata"]["managedFields"][0]["manager"], "reviewer");
    assert!(body["metadata"].get("name").is_none());

    let unknown = create(&h, TOKENREVIEWS, token_review("not-a-token", &[]));
    assert_eq!(unknown.status, 201);
    assert_eq!(unknown.json()["status"], json!({"error": "invalid bearer token", "user": {}}));

    let empty = create(&h, TOKENREVIEWS, json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {}}));
    assert_eq!(
        empty.json(),
        json!({"apiVersion": "v1", "code": 400, "kind": "Status", "message": "token is required for TokenReview in authentication", "metadata": {}, "reason": "BadRequest", "status": "Failure"})
    );
}

#[test]
fn a_token_review_asks_for_the_audiences_named_or_the_apis() {
    let h = with_tokens(&["https://apiary", "api"], Authorizer::new(vec![Mode::AlwaysAllow]));
    let status = |audiences: &[&str]| create(&h, TOKENREVIEWS, token_review("s3cret", audiences)).json()["status"].clone();
    assert_eq!(status(&[])["audiences"], json!(["https://apiary", "api"]));
    assert_eq!(status(&["api", "other"])["audiences"], json!(["api"]));
    assert_eq!(status(&["other"]), json!({"error": "invalid bearer token", "user": {}}));
}

#[test]
fn subject_access_reviews_answer_the_authorizers_decision() {
    // RBAC's bootstrap policy lets system:authenticated read /healthz; a review names
    // the groups it asks about (none are added).
    let sar = json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}, "user": "alice", "groups": ["system:authenticated"]},
    });
    let h = harness(Config::default());
    let allowed = create(&h, SAR, sar.clone());
    assert_eq!(allowed.status, 201);
    let body = allowed.json();
    assert_eq!(body["spec"], sar["spec"]);
    assert_eq!(body["status"], json!({"allowed": true}));
    let mut groupless = sar.clone();
    groupless["spec"].as_object_mut().unwrap().remove("groups");
    assert_eq!(create(&h, SAR, groupless).json()["status"], json!({"allowed": false}));

    // Creating a review is authorized like any create.
    // (system:masters is allowed whatever the modes say, so as someone else.)
    let denying = harness(Config { authorizer: Authorizer::new(vec![Mode::AlwaysDeny]), ..Config::default() });
    denying.act_as(Some("jane"), &[]);
    assert_eq!(create(&denying, SAR, sar).status, 403);

    let ssar = json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"namespace": "default", "resource": "pods", "verb": "create"}},
    });
    let me = create(&harness(Config::default()), SSAR, ssar);
    assert_eq!(me.status, 201);
    assert_eq!(me.json()["status"], json!({"allowed": true}));
}

#[test]
fn access_reviews_are_validated_with_upstreams_words() {
    let h = harness(Config::default());
    let invalid = |field: &str, message: &str| {
        json!({
            "apiVersion": "v1", "code": 422, "kind": "Status", "metadata": {}, "reason": "Invalid", "status": "Failure",
            "details": {"causes": [{"field": field, "message": message, "reason": "FieldValueInvalid"}], "group": "authorization.k8s.io"},
            "message": format!(".authorization.k8s.io \"\" is invalid: {field}: {message}"),
        })
    };
    let sar = |spec: Value| json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec});
    let answer = create(&h, SAR, sar(json!({"user": "alice"})));
    assert_eq!(answer.status, 422);
    assert_eq!(
        answer.json(),
        invalid("spec.resourceAttributes", "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified")
    );
    let both = json!({"nonResourceAttributes": {"path": "/x", "verb": "get"}, "resourceAttributes": {"verb": "get"}, "user": "alice"});
    assert_eq!(
        create(&h, SAR, sar(both)).json(),
        invalid("spec.nonResourceAttributes", r#"Invalid value: {"Path":"/x","Verb":"get"}: cannot be specified in combination with resourceAttributes"#)
    );
    let nobody = json!({"resourceAttributes": {"resource": "pods", "verb": "get"}});
    assert_eq!(
        create(&h, SAR, sar(nobody)).json(),
        invalid("spec.user", r#"Invalid value: "": at least one of user or group must be specified"#)
    );
    let ssar = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {}});
    assert_eq!(
        create(&h, SSAR, ssar).json(),
        invalid("spec.resourceAttributes", "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified")
    );
}

#[test]
fn local_reviews_stay_in_their_namespace() {
    let h = harness(Config { authorizer: Authorizer::new(vec![Mode::AlwaysAllow]), ..Config::default() });
    let lsar = |meta_ns: &str, attr_ns: &str| {
        json!({
            "apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
            "metadata": {"namespace": meta_ns},
            "spec": {"resourceAttributes": {"namespace": attr_ns, "resource": "pods", "verb": "get"}, "user": "alice"},
        })
    };
    let answer = create(&h, LSAR, lsar("default", "default"));
    assert_eq!(answer.status, 201);
    assert_eq!(answer.json()["status"], json!({"allowed": true}));
    assert_eq!(answer.json()["metadata"]["namespace"], "default");
    let other = create(&h, LSAR, lsar("default", "other"));
    assert_eq!(other.status, 422);
    assert_eq!(
        other.json()["message"],
        ".authorization.k8s.io \"\" is invalid: spec.resourceAttributes.namespace: Invalid value: \"other\": must match metadata.namespace"
    );
    let moved = create(&h, LSAR, lsar("other", "other"));
    assert_eq!(moved.status, 400);
    assert_eq!(
        moved.json()["message"],
        "the namespace of the provided object does not match the namespace sent on the request"
    );
}

#[test]
fn a_rules_review_lists_what_the_authorizers_allow() {
    let review = |ns: &str| json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": ns}});
    let always = harness(Config { authorizer: Authorizer::new(vec![Mode::AlwaysAllow]), ..Config::default() });
    let answer = create(&always, SSRR, review("kube-public"));
    assert_eq!(answer.status, 201);
    assert_eq!(
        answer.json(),
        json!({
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "metadata": {}, "spec": {},
            "status": {
                "incomplete": false,
                "nonResourceRules": [{"nonResourceURLs": ["*"], "verbs": ["*"]}],
                "resourceRules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
            },
        })
    );
    // With RBAC, what the bindings of system:masters and system:authenticated grant:
    // cluster-admin's everything first, then discovery and the public info paths.
    let rbac = harness(Config::default());
    let status = create(&rbac, SSRR, review("kube-public")).json()["status"].clone();
    assert_eq!(status["resourceRules"][0], json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}));
    assert_eq!(status["nonResourceRules"][0], json!({"nonResourceURLs": ["*"], "verbs": ["*"]}));
    let urls = status["nonResourceRules"].to_string();
    assert!(urls.contains("/openapi/*") && urls.contains("/version/"), "{urls}");
    let missing = create(&harness(Config::default()), SSRR, review(""));
    assert_eq!((missing.status, missing.json()["message"].clone()), (400, json!("no namespace on request")));
}

#[test]
fn reviews_serve_only_create_and_store_nothing() {
    let h = harness(Config::default());
    let got = send(&h, "GET", TOKENREVIEWS, json!(null));
    assert_eq!(got.status, 405);
    assert_eq!(got.json()["message"], "the server does not allow this method on the requested resource");
    assert_eq!(send(&h, "GET", &format!("{TOKENREVIEWS}/mine"), json!(null)).status, 404);
    let whoami = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    let before = h.store.current_revision();
    let answer = create(&h, whoami, json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}));
    assert_eq!(answer.status, 201);
    assert_eq!(answer.json()["metadata"], json!({"creationTimestamp": "2026-11-18T11:06:40Z"}));
    // A dry run is answered alike.
    let dry = create(&h, &format!("{whoami}?dryRun=All"), json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}));
    assert_eq!(dry.status, 201);
    assert_eq!(h.store.current_revision(), before);
}

#[test]
fn reviews_are_discovered_and_described() {
    let h = harness(Config::default());
    let get = |path: &str| send(&h, "GET", path, json!(null));
    let resources = get("/apis/authorization.k8s.io/v1").json()["resources"].clone();
    let names: Vec<(&str, bool, &Value)> = resources
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["namespaced"].as_bool().unwrap(), &r["verbs"]))
        .collect();
    let create_only = json!(["create"]);
    assert_eq!(
        names,
        [
            ("localsubjectaccessreviews", true, &create_only),
            ("selfsubjectaccessreviews", false, &create_only),
            ("selfsubjectrulesreviews", false, &create_only),
            ("subjectaccessreviews", false, &create_only),
        ]
    );
    let v2 = get("/openapi/v2").json();
    let post = &v2["paths"]["/apis/authentication.k8s.io/v1/tokenreviews"]["post"];
    assert_eq!(post["operationId"], "createAuthenticationV1TokenReview");
    assert_eq!(post["responses"]["201"]["schema"]["$ref"], "#/definitions/io.k8s.api.authentication.v1.TokenReview");
    assert!(v2["paths"].get("/apis/authentication.k8s.io/v1/tokenreviews/{name}").is_none());
    let v3 = get("/openapi/v3/apis/authorization.k8s.io/v1").json();
    assert!(v3["components"]["schemas"]["io.k8s.api.authorization.v1.SubjectAccessReview"].is_object());
}

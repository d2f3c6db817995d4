//! Namespaces over the whole server with its controllers, as kube-apiserver and
//! kube-controller-manager serve them: a new namespace gets its `default`
//! ServiceAccount and `kube-root-ca.crt`; a deleted one is Terminating while the
//! namespace controller empties it (upstream's conditions on the way, creates refused
//! with upstream's 403), and goes once its content's finalizers are released. With the
//! controllers switched off, the API's half works alone.

use apiary_core::authn::keys::parse_private_key;
use apiary_core::authn::{Authenticators, ServiceAccountTokens};
use apiary_core::controllers::enabled::Enabled;
use apiary_core::harness::{Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};
use std::sync::Arc;

const KEY: &str = include_str!("../src/authn/keys/testdata/ec-p256-sec1.key");
const CA: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

fn server(disabled: &[&str]) -> Harness<MemoryStore> {
    let mut tokens = ServiceAccountTokens::new(vec!["https://kubernetes.default.svc".into()], parse_private_key(KEY).unwrap());
    tokens.root_ca = Some(CA.into());
    let config = Config {
        authenticators: Authenticators { service_accounts: Some(Arc::new(tokens)), ..Authenticators::default() },
        controllers: Enabled::without(disabled).unwrap(),
        ..Config::default()
    };
    Harness::new(config, MemoryStore::new())
}

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, content_type: &str, body: Option<&Value>) -> Reply {
    h.json_call(method, path, content_type, body)
}

fn call(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    send(h, method, path, "application/json", body)
}

fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

fn configmap(name: &str, finalizers: &[&str]) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "finalizers": finalizers}, "data": {"k": "v"}})
}

fn condition(ns: &Value, kind: &str) -> Value {
    ns["status"]["conditions"].as_array().and_then(|cs| cs.iter().find(|c| c["type"] == kind)).cloned().unwrap_or(Value::Null)
}

#[test]
fn a_new_namespace_gets_its_default_service_account_and_root_ca() {
    let h = server(&[]);
    assert_eq!(call(&h, "POST", "/api/v1/namespaces", Some(&namespace("x"))).status, 201);
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/x/serviceaccounts/default", None).status, 200);
    let ca = call(&h, "GET", "/api/v1/namespaces/x/configmaps/kube-root-ca.crt", None).json();
    assert_eq!(ca["data"]["ca.crt"], CA);
    assert!(ca["metadata"]["annotations"]["kubernetes.io/description"].as_str().unwrap().starts_with("Contains a CA bundle"));
    // The namespaces the server starts with have them too.
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/kube-system/serviceaccounts/default", None).status, 200);

    // Deleted or changed, they come back as they were.
    assert_eq!(call(&h, "DELETE", "/api/v1/namespaces/x/serviceaccounts/default", None).status, 200);
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/x/serviceaccounts/default", None).status, 200);
    let patch = json!({"data": {"ca.crt": "changed"}});
    send(&h, "PATCH", "/api/v1/namespaces/x/configmaps/kube-root-ca.crt", "application/merge-patch+json", Some(&patch));
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/x/configmaps/kube-root-ca.crt", None).json()["data"]["ca.crt"], CA);
}

#[test]
fn a_deleted_namespace_is_emptied_then_goes_once_finalizers_are_released() {
    let h = server(&[]);
    assert_eq!(call(&h, "POST", "/api/v1/namespaces", Some(&namespace("x"))).status, 201);
    assert_eq!(call(&h, "POST", "/api/v1/namespaces/x/configmaps", Some(&configmap("loose", &[]))).status, 201);
    assert_eq!(call(&h, "POST", "/api/v1/namespaces/x/configmaps", Some(&configmap("held", &["example.com/hold"]))).status, 201);

    let deleted = call(&h, "DELETE", "/api/v1/namespaces/x", None);
    assert_eq!(deleted.status, 200);
    assert_eq!(deleted.json()["status"]["phase"], "Terminating");

    assert_eq!(call(&h, "GET", "/api/v1/namespaces/x/configmaps/loose", None).status, 404);
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/x/serviceaccounts/default", None).status, 404);
    let held = call(&h, "GET", "/api/v1/namespaces/x/configmaps/held", None).json();
    assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
    let ns = call(&h, "GET", "/api/v1/namespaces/x", None).json();
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(condition(&ns, "NamespaceDeletionContentFailure")["reason"], "ContentDeleted");
    let remaining = condition(&ns, "NamespaceContentRemaining");
    assert_eq!((remaining["status"].clone(), remaining["reason"].clone()), (json!("True"), json!("SomeResourcesRemain")));
    assert_eq!(remaining["message"], "Some resources are remaining: configmaps. has 1 resource instances");
    assert_eq!(
        condition(&ns, "NamespaceFinalizersRemaining")["message"],
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    );

    // Nothing new may join it.
    let late = call(&h, "POST", "/api/v1/namespaces/x/configmaps", Some(&configmap("late", &[])));
    assert_eq!(late.status, 403);
    assert_eq!(
        late.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "configmaps \"late\" is forbidden: unable to create new content in namespace x because it is being terminated",
               "reason": "Forbidden",
               "details": {"name": "late", "kind": "configmaps",
                           "causes": [{"reason": "NamespaceTerminating", "message": "namespace x is being terminated", "field": "metadata.namespace"}]},
               "code": 403})
    );

    let release = json!({"metadata": {"finalizers": null}});
    let released = send(&h, "PATCH", "/api/v1/namespaces/x/configmaps/held", "application/merge-patch+json", Some(&release));
    assert_eq!(released.status, 200);
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/x/configmaps/held", None).status, 404);
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/x", None).status, 404, "the namespace goes with its last content");
}

#[test]
fn with_the_controllers_off_the_api_half_works_alone() {
    let h = server(&["namespace-controller", "serviceaccount", "root-ca-cert-publisher"]);
    assert_eq!(call(&h, "POST", "/api/v1/namespaces", Some(&namespace("x"))).status, 201);
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/x/serviceaccounts/default", None).status, 404);
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/x/configmaps/kube-root-ca.crt", None).status, 404);
    assert_eq!(call(&h, "POST", "/api/v1/namespaces/x/configmaps", Some(&configmap("a", &[]))).status, 201);
    assert_eq!(call(&h, "DELETE", "/api/v1/namespaces/x", None).status, 200);
    // No controller empties it: it stays Terminating, with its content.
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/x/configmaps/a", None).status, 200);
    let ns = call(&h, "GET", "/api/v1/namespaces/x", None).json();
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert_eq!(condition(&ns, "NamespaceContentRemaining"), Value::Null);

    // What an outside namespace controller does: empty it, then finalize it.
    assert_eq!(call(&h, "DELETE", "/api/v1/namespaces/x/configmaps/a", None).status, 200);
    let mut finalized = ns.clone();
    finalized["spec"]["finalizers"] = json!([]);
    finalized["metadata"]["labels"]["ignored"] = json!("by finalize");
    let done = call(&h, "PUT", "/api/v1/namespaces/x/finalize", Some(&finalized));
    assert_eq!(done.status, 200, "{}", done.json());
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/x", None).status, 404);
    // finalize takes only updates.
    assert_eq!(call(&h, "GET", "/api/v1/namespaces/default/finalize", None).status, 405);
}

/// A namespace's spec finalizers are qualified names, and one without a domain must be
/// a standard one, on create and through `finalize`.
#[test]
fn spec_finalizers_are_validated_as_upstream() {
    let h = server(&[]);
    let mut ns = namespace("odd");
    ns["spec"] = json!({"finalizers": ["custom"]});
    let refused = call(&h, "POST", "/api/v1/namespaces", Some(&ns));
    assert_eq!(refused.status, 422);
    assert_eq!(
        refused.json()["message"],
        "Namespace \"odd\" is invalid: spec.finalizers: Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully qualified"
    );
    ns["spec"] = json!({"finalizers": ["kubernetes", "example.com/mine"]});
    let created = call(&h, "POST", "/api/v1/namespaces", Some(&ns));
    assert_eq!(created.status, 201);
    let mut finalized = created.json();
    finalized["spec"]["finalizers"] = json!(["not valid!"]);
    let refused = call(&h, "PUT", "/api/v1/namespaces/odd/finalize", Some(&finalized));
    assert_eq!(refused.status, 422, "{}", refused.json());
}

#[test]
fn without_namespace_lifecycle_admission_namespaces_are_not_checked() {
    // kube-apiserver with `--disable-admission-plugins=NamespaceLifecycle`: an object may
    // be created in a namespace that does not exist, and `default` may be deleted.
    use apiary_core::admission::plugins::Plugins;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let with = Harness::new(Config::default(), MemoryStore::new());
    let refused = call(&with, "POST", "/api/v1/namespaces/nowhere/configmaps", Some(&cm));
    assert_eq!(refused.status, 404, "{}", String::from_utf8_lossy(&refused.body));
    assert_eq!(call(&with, "DELETE", "/api/v1/namespaces/default", None).status, 403);

    let config = Config { admission_plugins: Plugins::choose(&[], &["NamespaceLifecycle"]).unwrap(), ..Config::default() };
    let without = Harness::new(config, MemoryStore::new());
    let created = call(&without, "POST", "/api/v1/namespaces/nowhere/configmaps", Some(&cm));
    assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
    assert_eq!(call(&without, "GET", "/api/v1/namespaces/nowhere/configmaps/c", None).status, 200);
    assert_eq!(call(&without, "DELETE", "/api/v1/namespaces/default", None).status, 200);
}

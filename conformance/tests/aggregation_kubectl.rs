//! The aggregation layer on the real binary: an extension API server written here
//! (HTTPS with its own CA) registered by a Service and an APIService with its
//! `caBundle`, read through the aggregator with kubectl 1.33; stopped, it is marked
//! unavailable and its group answers 503; started again, it is back.

mod https_service;

use apiary_conformance::harness::{eventually, ok, Apiary};
use base64::Engine;
use serde_json::{json, Value};

const APISERVICE: &str = "v1alpha1.wardle.example.com";
const FLUNDERS: &str = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders";

/// The extension server: the wardle group's discovery document and one Flunder.
fn wardle(target: &str, _body: &Value) -> Value {
    let path = target.split('?').next().unwrap_or("");
    match path {
        "/apis/wardle.example.com/v1alpha1" => json!({
            "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "wardle.example.com/v1alpha1",
            "resources": [{"name": "flunders", "singularName": "flunder", "namespaced": true, "kind": "Flunder", "verbs": ["get", "list"]}],
        }),
        FLUNDERS => json!({
            "kind": "FlunderList", "apiVersion": "wardle.example.com/v1alpha1", "metadata": {"resourceVersion": "1"},
            "items": [{"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
                "metadata": {"name": "sprocket", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"}}],
        }),
        _ => json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404, "reason": "NotFound"}),
    }
}

fn available(apiary: &Apiary) -> String {
    let out = apiary.kubectl("1.33", &["get", "apiservice", APISERVICE, "-o", "jsonpath={.status.conditions[?(@.type==\"Available\")].status}"]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn an_extension_api_server_is_served_through_the_aggregator() {
    let mut extension = https_service::Stoppable::serve(&["wardle.default.svc"], wardle);
    let apiary = Apiary::start();
    let port = extension.addr.rsplit(':').next().unwrap().to_owned();
    let ca = base64::engine::general_purpose::STANDARD.encode(&extension.ca_pem);
    // An ExternalName Service: endpoints may not be loopback addresses, and the
    // aggregator resolves this one to its external name.
    let objects = format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: wardle\n  namespace: default\nspec:\n  type: ExternalName\n  externalName: 127.0.0.1\n---\n\
         apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: {APISERVICE}\nspec:\n  group: wardle.example.com\n  version: v1alpha1\n  \
         groupPriorityMinimum: 1000\n  versionPriority: 15\n  caBundle: {ca}\n  service:\n    namespace: default\n    name: wardle\n    port: {port}\n"
    );
    ok(&apiary.kubectl_with_input("1.33", &["apply", "-f", "-"], &objects));
    eventually("the APIService to be Available", || available(&apiary) == "True");

    let raw = ok(&apiary.kubectl("1.33", &["get", "--raw", FLUNDERS]));
    assert_eq!(serde_json::from_str::<Value>(&raw).unwrap()["items"][0]["metadata"]["name"], "sprocket");
    let listed = apiary.kubectl_until_served("1.33", &["get", "flunders", "-n", "default"]);
    assert!(listed.contains("sprocket"), "{listed}");
    let table = ok(&apiary.kubectl("1.33", &["get", "apiservices"]));
    let line = table.lines().find(|l| l.starts_with(APISERVICE)).unwrap_or_default();
    assert!(line.contains("default/wardle") && line.contains("True"), "{table}");
    let groups = ok(&apiary.kubectl("1.33", &["get", "--raw", "/apis/wardle.example.com"]));
    assert_eq!(serde_json::from_str::<Value>(&groups).unwrap()["preferredVersion"]["version"], "v1alpha1");

    extension.stop();
    eventually("the APIService to be unavailable", || available(&apiary) == "False");
    let reason = ok(&apiary.kubectl("1.33", &["get", "apiservice", APISERVICE, "-o", "jsonpath={.status.conditions[0].reason}"]));
    assert_eq!(reason, "FailedDiscoveryCheck");
    let refused = apiary.kubectl("1.33", &["get", "--raw", FLUNDERS]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("503") || said.contains("ServiceUnavailable") || said.contains("service unavailable"), "{said}");

    extension.start();
    eventually("the APIService to be Available again", || available(&apiary) == "True");
    assert!(ok(&apiary.kubectl("1.33", &["get", "--raw", FLUNDERS])).contains("sprocket"));
}

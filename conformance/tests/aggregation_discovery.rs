//! Aggregated discovery and OpenAPI v3 of an extension API server, on the real binary:
//! two Apiaries chained (the second serves a CRD's group behind the first, see
//! `apiary_conformance::chained`). kubectl 1.33 (aggregated discovery v2) and 1.27
//! (v2beta1) list the extension's resources from the first's `/apis` document alone,
//! `kubectl explain` reads the extension's schema through the first's OpenAPI v3; with
//! the extension stopped the group version is `Stale` and out of the OpenAPI index.

use apiary_conformance::chained::Chained;
use apiary_conformance::harness::{eventually, ok, Apiary};
use base64::Engine;
use serde_json::Value;

/// The group `name` of the aggregated discovery document (`apidiscovery.k8s.io/v2`)
/// that `apiary` answers for `/apis`, read with curl as its admin.
fn aggregated_group(apiary: &Apiary, name: &str) -> Value {
    let kubeconfig = std::fs::read_to_string(&apiary.kubeconfig).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let credential = |key: &str| {
        let data = kubeconfig.lines().find_map(|l| l.trim().strip_prefix(key)).unwrap_or_else(|| panic!("{key} in {kubeconfig}"));
        let path = dir.path().join(key.trim_end_matches(": "));
        std::fs::write(&path, base64::engine::general_purpose::STANDARD.decode(data.trim()).unwrap()).unwrap();
        path
    };
    let (cert, key) = (credential("client-certificate-data: "), credential("client-key-data: "));
    let out = std::process::Command::new("curl")
        .args(["-sk", "--fail", "-H", "Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"])
        .arg("--cert")
        .arg(cert)
        .arg("--key")
        .arg(key)
        .arg(format!("{}/apis", apiary.url))
        .output()
        .expect("curl runs");
    let list: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(list["kind"], "APIGroupDiscoveryList");
    list["items"].as_array().unwrap().iter().find(|g| g["metadata"]["name"] == name).cloned().unwrap_or(Value::Null)
}

/// `kubectl api-resources` at `-v=8`: its stdout, its log, and whether it succeeded.
fn api_resources(apiary: &Apiary, version: &str) -> (String, String, bool) {
    let out = apiary.kubectl(version, &["api-resources", "-v=8"]);
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned(), out.status.success())
}

/// The line of `widgets` in `kubectl api-resources`' table.
fn widgets_line(table: &str) -> Option<String> {
    table.lines().find(|l| l.starts_with("widgets ")).map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The `example.com` versions of the front's `/openapi/v3` index.
fn openapi_keys(apiary: &Apiary) -> Vec<String> {
    let index: Value = serde_json::from_str(&ok(&apiary.kubectl("1.33", &["get", "--raw", "/openapi/v3"]))).unwrap();
    index["paths"].as_object().unwrap().keys().filter(|k| k.starts_with("apis/example.com")).cloned().collect()
}

#[test]
fn kubectl_discovers_and_explains_an_extensions_resources_through_aggregated_discovery() {
    let mut chained = Chained::start();
    let front = &chained.front;

    for (kubectl, content_type) in [
        ("1.33", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
        ("1.27", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"),
    ] {
        let (table, log, success) = api_resources(front, kubectl);
        assert!(success, "{log}");
        assert_eq!(widgets_line(&table).as_deref(), Some("widgets example.com/v1 true Widget"), "{table}");
        // The first's /apis answered aggregated discovery, and nothing asked the
        // group version's own document: the resources came from the aggregated one.
        assert!(log.contains(&format!("Content-Type: {content_type}")), "kubectl {kubectl}: {log}");
        assert!(!log.lines().any(|l| l.contains("/apis/example.com/v1")), "kubectl {kubectl}: {log}");
    }

    let group = aggregated_group(front, "example.com");
    assert_eq!(group["versions"][0]["freshness"], "Current");
    assert_eq!(group["versions"][0]["resources"][0]["resource"], "widgets");

    // The extension's schema, through the first's OpenAPI v3 index (the extension's
    // index is read at the availability pass after the APIService became Available)
    // and a proxied document pinned to the extension's hash.
    eventually("the OpenAPI v3 index to name the group version", || openapi_keys(front) == ["apis/example.com/v1"]);
    let explained = front.kubectl("1.33", &["explain", "widgets", "-v=6"]);
    let text = ok(&explained);
    assert!(text.contains("KIND:       Widget") && text.contains("VERSION:    v1"), "{text}");
    assert!(text.contains("spec\t<Object>"), "{text}");
    let log = String::from_utf8_lossy(&explained.stderr);
    assert!(log.contains("/openapi/v3/apis/example.com/v1?hash="), "{log}");

    // Stopped: the group version is stale, without resources; kubectl lists the rest
    // (client-go sets a stale group version aside); the OpenAPI index leaves it out.
    chained.extension.stop();
    eventually("the APIService to be unavailable", || chained.available() == "False");
    let front = &chained.front;
    assert_eq!(aggregated_group(front, "example.com")["versions"], serde_json::json!([{"version": "v1", "freshness": "Stale"}]));
    let (table, _, _) = api_resources(front, "1.33");
    assert_eq!(widgets_line(&table), None, "{table}");
    assert!(table.lines().any(|l| l.starts_with("deployments ")), "{table}");
    assert!(openapi_keys(front).is_empty());

    chained.restart_extension();
    eventually("the APIService to be Available again", || chained.available() == "True");
    let (table, _, _) = api_resources(&chained.front, "1.33");
    assert!(widgets_line(&table).is_some(), "{table}");
}

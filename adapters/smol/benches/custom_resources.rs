//! Custom resources on the real `apiary` binary (release build, memory storage):
//!
//! - how long a CRD takes from its POST until it is Established and its resource
//!   answers (median of several CRDs);
//! - creates and keep-alive GETs of a small custom resource against the same of a
//!   ConfigMap with the same data, alternating round by round in one run;
//! - creates against a CRD whose schema carries 10 CEL rules against the same CRD
//!   without them, alternating likewise.
//!
//! Run: `cargo bench -p apiary-smol --bench custom_resources`

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{call, connect, create_concurrently_with, request, requests_per_second, tls_config, Server, Tls};

const ROUNDS: usize = 5;
const ROUND_TIME: Duration = Duration::from_secs(2);
const CRDS_TIMED: usize = 15;

/// The CRD of `plural` in bench.example.com, kind `kind`, with `rules` on its spec.
fn crd(plural: &str, kind: &str, rules: &[&str]) -> String {
    let rules: Vec<serde_json::Value> = rules.iter().map(|r| serde_json::json!({"rule": r})).collect();
    serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.bench.example.com")},
        "spec": {"group": "bench.example.com", "scope": "Namespaced",
                 "names": {"plural": plural, "kind": kind},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                   "spec": {"type": "object", "x-kubernetes-validations": rules, "properties": {
                                       "key": {"type": "string", "maxLength": 64},
                                       "other": {"type": "string", "maxLength": 256}}}}}}}]}
    })
    .to_string()
}

/// Ten rules of the kinds CRDs carry: sizes, prefixes, regexes, comparisons.
const RULES: [&str; 10] = [
    "self.key.size() < 64",
    "self.other.startsWith('some')",
    "!self.key.contains('forbidden')",
    "self.key != self.other",
    "self.other.size() > 3",
    "self.key.matches('^[a-z]+$')",
    "size(self.key) <= 63",
    "self.other.endsWith('text')",
    "self.key == 'value' || self.key == 'other'",
    "self.other.contains('configuration')",
];

fn custom_create(plural: &str, kind: &str, name: &str) -> Vec<u8> {
    custom_create_with_key(plural, kind, name, "value")
}

fn custom_create_with_key(plural: &str, kind: &str, name: &str, key: &str) -> Vec<u8> {
    let body = format!(
        r#"{{"apiVersion":"bench.example.com/v1","kind":"{kind}","metadata":{{"name":"{name}","labels":{{"app":"bench"}}}},"spec":{{"key":"{key}","other":"some more configuration text"}}}}"#
    );
    request("POST", &format!("/apis/bench.example.com/v1/namespaces/default/{plural}"), &body)
}

fn gadget(name: &str) -> Vec<u8> {
    custom_create("gadgets", "Gadget", name)
}

fn checked(name: &str) -> Vec<u8> {
    custom_create("checkeds", "Checked", name)
}

/// POST a CRD and wait until its resource answers a list and it is Established; how
/// long that took.
async fn established(stream: &mut Tls, plural: &str, kind: &str, rules: &[&str]) -> Duration {
    let begin = Instant::now();
    let (status, body) = call(stream, &request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", &crd(plural, kind, rules))).await;
    assert_eq!(status, 201, "{body}");
    let list = request("GET", &format!("/apis/bench.example.com/v1/namespaces/default/{plural}"), "");
    let get = request("GET", &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{plural}.bench.example.com"), "");
    // Served first (once the names are accepted), then Established, as upstream.
    loop {
        if call(stream, &list).await.0 == 200 {
            let (_, body) = call(stream, &get).await;
            let crd: serde_json::Value = serde_json::from_str(&body).expect("a CRD");
            let conditions = crd["status"]["conditions"].as_array().cloned().unwrap_or_default();
            if conditions.iter().any(|c| c["type"] == "Established" && c["status"] == "True") {
                break;
            }
        }
        smol::Timer::after(Duration::from_millis(1)).await;
    }
    let took = begin.elapsed();
    took
}

/// One round of keep-alive GETs of `path` from every connection; requests/s.
async fn gets(addr: &str, config: &Arc<futures_rustls::rustls::ClientConfig>, path: &str) -> f64 {
    requests_per_second(addr, config, &Arc::new(request("GET", path, "")), ROUND_TIME).await
}

fn creates(server: &Server, pki: &std::path::Path, prefix: &str, make: fn(&str) -> Vec<u8>) -> f64 {
    let n = create_concurrently_with(server, pki, prefix, make, |begin, _| begin.elapsed() >= ROUND_TIME);
    n as f64 / ROUND_TIME.as_secs_f64()
}

fn main() {
    let dir = std::env::temp_dir().join(format!("apiary-bench-crs-{}", std::process::id()));
    let server = Server::start(&dir);
    let pki = dir.join("pki");
    let config = tls_config(&pki);

    let mut took = smol::block_on(async {
        let mut stream = connect(&server.addr, &config).await;
        let mut took = Vec::new();
        for i in 0..CRDS_TIMED {
            took.push(established(&mut stream, &format!("timed{i}s"), &format!("Timed{i}"), &[]).await.as_secs_f64() * 1000.0);
        }
        established(&mut stream, "gadgets", "Gadget", &[]).await;
        established(&mut stream, "checkeds", "Checked", &RULES).await;
        let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"probe","labels":{"app":"bench"}},"data":{"key":"value","other":"some more configuration text"}}"#;
        assert_eq!(call(&mut stream, &request("POST", "/api/v1/namespaces/default/configmaps", cm)).await.0, 201);
        assert_eq!(call(&mut stream, &gadget("probe")).await.0, 201);
        // The rules are enforced: a spec breaking one is refused.
        let bad = custom_create_with_key("checkeds", "Checked", "bad", "BAD");
        assert_eq!(call(&mut stream, &bad).await.0, 422, "a CEL rule refuses key BAD");
        took
    });
    took.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("CRD POST → Established and served: median {:.1} ms (min {:.1}, max {:.1}) over {CRDS_TIMED} CRDs", support::median(took.clone()), took[0], took[took.len() - 1]);

    let (mut cm_creates, mut cr_creates, mut cel_creates, mut cm_gets, mut cr_gets) = (vec![], vec![], vec![], vec![], vec![]);
    for r in 0..ROUNDS {
        let cm = creates(&server, &pki, &format!("cm{r}"), support::create_request);
        let cr = creates(&server, &pki, &format!("cr{r}"), gadget);
        let cel = creates(&server, &pki, &format!("cel{r}"), checked);
        let (cm_get, cr_get) = smol::block_on(async {
            let cm = gets(&server.addr, &config, "/api/v1/namespaces/default/configmaps/probe").await;
            let cr = gets(&server.addr, &config, "/apis/bench.example.com/v1/namespaces/default/gadgets/probe").await;
            (cm, cr)
        });
        println!(
            "round {}: creates/s ConfigMap {cm:.0}, custom {cr:.0} ({:.3}), custom with 10 CEL rules {cel:.0} ({:.3} of without); GETs/s ConfigMap {cm_get:.0}, custom {cr_get:.0} ({:.3})",
            r + 1, cr / cm, cel / cr, cr_get / cm_get
        );
        cm_creates.push(cm);
        cr_creates.push(cr);
        cel_creates.push(cel);
        cm_gets.push(cm_get);
        cr_gets.push(cr_get);
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    let ratio = |a: &[f64], b: &[f64]| support::median(a.iter().zip(b).map(|(a, b)| a / b).collect());
    println!(
        "medians: creates/s ConfigMap {:.0}, custom {:.0} (ratio {:.3}), with 10 CEL rules {:.0} (ratio to without {:.3}); GETs/s ConfigMap {:.0}, custom {:.0} (ratio {:.3})",
        support::median(cm_creates.clone()),
        support::median(cr_creates.clone()),
        ratio(&cr_creates, &cm_creates),
        support::median(cel_creates.clone()),
        ratio(&cel_creates, &cr_creates),
        support::median(cm_gets.clone()),
        support::median(cr_gets.clone()),
        ratio(&cr_gets, &cm_gets),
    );
}

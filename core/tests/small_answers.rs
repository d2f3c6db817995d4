//! Answers kube-apiserver gives before any handler runs, byte for byte as recorded
//! (`../shared/upstream/responses/`): a verb the path does not serve is go-restful's
//! 405 (a PUT or PATCH on a collection, a POST on an object).

use apiary_core::harness::{parse_responses, Harness};
use apiary_core::Config;
use apiary_memory::MemoryStore;

const NOT_ALLOWED: &str = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"the server does not allow this method on the requested resource\",\"reason\":\"MethodNotAllowed\",\"details\":{},\"code\":405}\n";

fn harness() -> Harness<MemoryStore> {
    Harness::new(Config::default(), MemoryStore::new())
}

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, content_type: &str, body: &str) -> apiary_core::harness::Reply {
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    parse_responses(&h.send(request.as_bytes())).unwrap().remove(0)
}

#[test]
fn a_verb_the_path_does_not_serve_is_gorestfuls_405() {
    let h = harness();
    let cm = r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}}"#;
    let cases = [
        ("PUT", "/api/v1/namespaces/default/configmaps", "application/json", cm),
        ("PATCH", "/api/v1/namespaces/default/configmaps", "application/merge-patch+json", r#"{"data": {}}"#),
        ("PUT", "/apis/apps/v1/namespaces/default/deployments", "application/json", "{}"),
        ("PUT", "/api/v1/nodes", "application/json", "{}"),
        ("POST", "/api/v1/namespaces/default/configmaps/x", "application/json", cm),
    ];
    for (method, path, content_type, body) in cases {
        let reply = send(&h, method, path, content_type, body);
        assert_eq!(reply.status, 405, "{method} {path}");
        assert_eq!(reply.header("content-type"), Some("application/json"), "{method} {path}");
        assert_eq!(String::from_utf8_lossy(&reply.body), NOT_ALLOWED, "{method} {path}");
    }
}

#[test]
fn a_put_on_an_object_still_updates_it() {
    let h = harness();
    let cm = r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "1"}}"#;
    assert_eq!(send(&h, "POST", "/api/v1/namespaces/default/configmaps", "application/json", cm).status, 201);
    let changed = cm.replace("\"1\"", "\"2\"");
    let reply = send(&h, "PUT", "/api/v1/namespaces/default/configmaps/x", "application/json", &changed);
    assert_eq!(reply.status, 200);
}

//! Two servers over one store (replicas, as several Apiaries on one etcd), over the
//! deterministic harness: what one writes, the other honours at once, before its own
//! caches have caught up.

use apiary_core::harness::Harness;
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::json;

#[test]
fn a_namespace_created_through_one_replica_takes_creates_through_another_at_once() {
    let store = MemoryStore::new();
    let (a, b) = (Harness::new(Config::default(), store.clone()), Harness::new(Config::default(), store));
    b.reseed(1 << 32);
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}});
    assert_eq!(a.json_call("POST", "/api/v1/namespaces", "application/json", Some(&namespace)).status, 201);
    // b's caches have not seen the namespace yet; NamespaceLifecycle looks it up in
    // storage, as upstream's looks up live a namespace its lister lacks.
    let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let created = b.json_call("POST", "/api/v1/namespaces/fresh/configmaps", "application/json", Some(&configmap));
    assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
    // A namespace that exists nowhere is still refused.
    let refused = b.json_call("POST", "/api/v1/namespaces/nowhere/configmaps", "application/json", Some(&configmap));
    assert_eq!(refused.status, 404);
    assert_eq!(refused.json()["message"], "namespaces \"nowhere\" not found");
}

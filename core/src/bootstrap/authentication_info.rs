//! `kube-system/extension-apiserver-authentication`: where the server publishes how it
//! authenticates clients, so that extension API servers (and its own controllers)
//! trust the same client CA and front proxy — upstream's ClusterAuthenticationInfo
//! controller. Servers sharing a store share it: each merges its own CAs and header
//! names into what is stored (the union, in order), as upstream's controller does, so
//! that every server's front proxy and clients stay trusted.

use crate::authn::pem;
use crate::authn::RequestHeader;
use serde_json::{json, Map, Value};

pub const NAMESPACE: &str = "kube-system";
pub const NAME: &str = "extension-apiserver-authentication";

/// The ConfigMap for a server with this client CA bundle and front proxy; `None`
/// when there is nothing to publish.
pub fn config_map(client_ca_pem: Option<&str>, request_header: Option<&RequestHeader>) -> Option<Value> {
    let mut data = Map::new();
    if let Some(pem) = client_ca_pem.filter(|p| !p.is_empty()) {
        data.insert("client-ca-file".into(), merged_bundle("", pem).into());
    }
    // The front proxy's settings only with its CA, as upstream writes them: each list
    // a JSON array in a string.
    if let Some(rh) = request_header.filter(|rh| !rh.client_ca_pem.is_empty()) {
        let lists = [
            ("requestheader-username-headers", &rh.username_headers),
            ("requestheader-group-headers", &rh.group_headers),
            ("requestheader-extra-headers-prefix", &rh.extra_headers_prefix),
            ("requestheader-allowed-names", &rh.allowed_names),
        ];
        for (key, list) in lists {
            data.insert(key.into(), Value::String(json!(list).to_string()));
        }
        data.insert("requestheader-client-ca-file".into(), merged_bundle("", &rh.client_ca_pem).into());
    }
    if data.is_empty() {
        return None;
    }
    Some(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "data": data,
    }))
}

/// The stored ConfigMap with this server's data merged in; `None` when that changes
/// nothing.
pub fn reconcile(stored: &Value, wanted: &Value) -> Option<Value> {
    let before = stored.get("data").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut data = before.clone();
    for (key, want) in wanted.get("data").and_then(Value::as_object)? {
        let want = want.as_str().unwrap_or_default();
        let have = data.get(key).and_then(Value::as_str).unwrap_or_default();
        let merged = if key.ends_with("ca-file") { merged_bundle(have, want) } else { merged_list(have, want) };
        data.insert(key.clone(), merged.into());
    }
    if data == before {
        return None;
    }
    let mut updated = stored.clone();
    updated["data"] = Value::Object(data);
    Some(updated)
}

/// The certificates of `have`, then those of `add` it lacks, as PEM.
fn merged_bundle(have: &str, add: &str) -> String {
    let mut certificates: Vec<Vec<u8>> = Vec::new();
    for block in pem::blocks(have).into_iter().chain(pem::blocks(add)) {
        if block.label == "CERTIFICATE" && !certificates.contains(&block.der) {
            certificates.push(block.der);
        }
    }
    certificates.iter().map(|der| pem::encode("CERTIFICATE", der)).collect()
}

/// The JSON array `have`, then the items of `add` it lacks (a value that is no
/// array counts as empty).
fn merged_list(have: &str, add: &str) -> String {
    let parse = |text: &str| serde_json::from_str::<Vec<String>>(text).unwrap_or_default();
    let mut items = parse(have);
    for item in parse(add) {
        if !items.contains(&item) {
            items.push(item);
        }
    }
    json!(items).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert(der: &[u8]) -> String {
        pem::encode("CERTIFICATE", der)
    }

    #[test]
    fn the_client_ca_alone_or_with_the_front_proxy() {
        assert_eq!(config_map(None, None), None);
        let only = config_map(Some(&cert(b"ca")), None).unwrap();
        assert_eq!(only["data"], json!({"client-ca-file": cert(b"ca")}));
        let mut rh = RequestHeader::kubeadm(cert(b"fp"));
        rh.allowed_names.clear();
        let both = config_map(Some(&cert(b"ca")), Some(&rh)).unwrap();
        assert_eq!(
            both["data"],
            json!({
                "client-ca-file": cert(b"ca"),
                "requestheader-client-ca-file": cert(b"fp"),
                "requestheader-username-headers": "[\"X-Remote-User\"]",
                "requestheader-group-headers": "[\"X-Remote-Group\"]",
                "requestheader-extra-headers-prefix": "[\"X-Remote-Extra-\"]",
                "requestheader-allowed-names": "[]",
            })
        );
    }

    #[test]
    fn another_servers_data_is_merged_not_replaced() {
        let rh = RequestHeader::kubeadm(cert(b"fp-b"));
        let wanted = config_map(Some(&cert(b"ca-b")), Some(&rh)).unwrap();
        let stored = json!({"metadata": {"name": NAME, "resourceVersion": "7"}, "data": {
            "client-ca-file": cert(b"ca-a"),
            "requestheader-client-ca-file": cert(b"fp-a"),
            "requestheader-allowed-names": "[\"aggregator\"]",
            "other": "kept",
        }});
        let merged = reconcile(&stored, &wanted).unwrap();
        assert_eq!(merged["metadata"]["resourceVersion"], "7");
        let data = &merged["data"];
        assert_eq!(data["client-ca-file"], cert(b"ca-a") + &cert(b"ca-b"));
        assert_eq!(data["requestheader-client-ca-file"], cert(b"fp-a") + &cert(b"fp-b"));
        assert_eq!(data["requestheader-allowed-names"], "[\"aggregator\",\"front-proxy-client\"]");
        assert_eq!(data["requestheader-username-headers"], "[\"X-Remote-User\"]");
        assert_eq!(data["other"], "kept");
        // Merged once, nothing more to write.
        assert_eq!(reconcile(&merged, &wanted), None);
    }
}

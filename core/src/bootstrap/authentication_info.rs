//! `kube-system/extension-apiserver-authentication`: where the server publishes how it
//! authenticates clients, so that extension API servers (and its own controllers)
//! trust the same client CA and front proxy — upstream's ClusterAuthenticationInfo
//! controller. The data is ours: it is written again whenever it differs.

use crate::authn::RequestHeader;
use serde_json::{json, Map, Value};

pub const NAMESPACE: &str = "kube-system";
pub const NAME: &str = "extension-apiserver-authentication";

/// The ConfigMap for a server with this client CA bundle and front proxy; `None`
/// when there is nothing to publish.
pub fn config_map(client_ca_pem: Option<&str>, request_header: Option<&RequestHeader>) -> Option<Value> {
    let mut data = Map::new();
    if let Some(pem) = client_ca_pem.filter(|p| !p.is_empty()) {
        data.insert("client-ca-file".into(), pem.into());
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
        data.insert("requestheader-client-ca-file".into(), rh.client_ca_pem.clone().into());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_ca_alone_or_with_the_front_proxy() {
        assert_eq!(config_map(None, None), None);
        let only = config_map(Some("CA"), None).unwrap();
        assert_eq!(only["data"], json!({"client-ca-file": "CA"}));
        let mut rh = RequestHeader::kubeadm("FP".to_owned());
        rh.allowed_names.clear();
        let both = config_map(Some("CA"), Some(&rh)).unwrap();
        assert_eq!(
            both["data"],
            json!({
                "client-ca-file": "CA",
                "requestheader-client-ca-file": "FP",
                "requestheader-username-headers": "[\"X-Remote-User\"]",
                "requestheader-group-headers": "[\"X-Remote-Group\"]",
                "requestheader-extra-headers-prefix": "[\"X-Remote-Extra-\"]",
                "requestheader-allowed-names": "[]",
            })
        );
    }
}

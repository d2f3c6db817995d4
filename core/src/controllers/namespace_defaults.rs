//! Upstream's ServiceAccount controller and root CA publisher: every active namespace
//! has a `default` ServiceAccount, and a `kube-root-ca.crt` ConfigMap holding the CA
//! clients in the cluster verify the API server with.

use serde_json::{json, Value};

/// The ServiceAccount every namespace gets.
pub(crate) const SERVICE_ACCOUNT: &str = "default";

/// The ConfigMap the root CA is published in.
pub(crate) const ROOT_CA: &str = "kube-root-ca.crt";

const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// Whether a namespace gets them: not while it is being deleted.
pub(crate) fn active(namespace: &Value) -> bool {
    namespace.pointer("/metadata/deletionTimestamp").is_none_or(Value::is_null)
        && namespace.pointer("/status/phase").and_then(Value::as_str) != Some("Terminating")
}

/// The `default` ServiceAccount of a namespace.
pub(crate) fn service_account() -> Value {
    json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SERVICE_ACCOUNT}})
}

/// The root CA ConfigMap with `ca` (PEM), or `existing` brought up to date; `None`
/// when `existing` is up to date already.
pub(crate) fn root_ca(existing: Option<&Value>, ca: &str) -> Option<Value> {
    let Some(existing) = existing else {
        return Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": ROOT_CA, "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                           "data": {"ca.crt": ca}}));
    };
    let described = existing
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(DESCRIPTION_ANNOTATION))
        .and_then(Value::as_str)
        .is_some_and(|d| !d.is_empty());
    if existing.get("data") == Some(&json!({"ca.crt": ca})) && described {
        return None;
    }
    let mut updated = existing.clone();
    updated["data"] = json!({"ca.crt": ca});
    let meta = &mut updated["metadata"];
    if !meta["annotations"].is_object() {
        meta["annotations"] = json!({});
    }
    meta["annotations"][DESCRIPTION_ANNOTATION] = json!(DESCRIPTION);
    Some(updated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_ca_is_published_and_kept() {
        let made = root_ca(None, "PEM").unwrap();
        assert_eq!(made["data"]["ca.crt"], "PEM");
        assert_eq!(root_ca(Some(&made), "PEM"), None);
        let mut edited = made.clone();
        edited["data"]["ca.crt"] = json!("other");
        edited["metadata"]["labels"] = json!({"kept": "yes"});
        let fixed = root_ca(Some(&edited), "PEM").unwrap();
        assert_eq!((fixed["data"].clone(), fixed["metadata"]["labels"].clone()), (json!({"ca.crt": "PEM"}), json!({"kept": "yes"})));
    }
}

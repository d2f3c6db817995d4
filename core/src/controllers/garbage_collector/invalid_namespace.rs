//! Upstream's `OwnerRefInvalidNamespace` warnings. A namespaced dependent's reference
//! to a namespaced owner is read in the dependent's own namespace, so an owner that
//! lives in another namespace counts as gone (and the dependent is collected); a
//! cluster-scoped dependent cannot name a namespaced owner at all (and is left alone).
//! When the owner's uid is found elsewhere, the collector says so with a Warning
//! Event on the dependent, once per reference, as upstream's graph builder does when
//! it has seen the owner.

use super::graph::{Node, OwnerRef};
use std::collections::BTreeMap;

/// The component the Events come from, upstream's.
const COMPONENT: &str = "garbage-collector-controller";

/// A reference that may name an owner in another namespace.
#[derive(Debug)]
pub(crate) struct Suspect<'g> {
    pub dependent: &'g Node,
    /// The dependent's kind and apiVersion.
    pub dependent_kind: (String, String),
    pub reference: &'g OwnerRef,
}

/// The namespace of each object among `stored` (one resource's objects, as stored)
/// whose uid is one of `wanted`. Only objects whose bytes carry one of those uids are
/// parsed.
pub(crate) fn namespaces_of<'a>(stored: impl Iterator<Item = &'a [u8]>, wanted: &[&str]) -> BTreeMap<String, String> {
    const UID: &[u8] = b"\"uid\":\"";
    let mut found = BTreeMap::new();
    for bytes in stored {
        let mut rest = bytes;
        let mut carries = false;
        while let Some(at) = rest.windows(UID.len()).position(|w| w == UID) {
            rest = &rest[at + UID.len()..];
            let end = rest.iter().position(|&b| b == b'"').unwrap_or(rest.len());
            if wanted.iter().any(|w| w.as_bytes() == &rest[..end]) {
                carries = true;
                break;
            }
        }
        if !carries {
            continue;
        }
        let Ok(object) = serde_json::from_slice::<serde_json::Value>(bytes) else {
            continue;
        };
        let meta = |k: &str| object.pointer(&format!("/metadata/{k}")).and_then(|v| v.as_str());
        if let (Some(uid), Some(namespace)) = (meta("uid"), meta("namespace")) {
            if wanted.contains(&uid) {
                found.insert(uid.to_owned(), namespace.to_owned());
            }
        }
    }
    found
}

/// The Event for `suspect`, whose owner was found in namespace `found_in`; `None`
/// when that is the dependent's own namespace (the reference is fine).
pub(crate) fn event(suspect: &Suspect<'_>, found_in: &str, now: std::time::SystemTime) -> Option<http::Request<bytes::Bytes>> {
    let dependent = suspect.dependent;
    let namespace = dependent.namespace.as_deref().unwrap_or("");
    if namespace == found_in {
        return None;
    }
    let r = suspect.reference;
    let message = format!(
        "ownerRef [{}/{}, namespace: {namespace}, name: {}, uid: {}] does not exist in namespace {namespace:?}",
        r.api_version, r.kind, r.name, r.uid
    );
    let (kind, api_version) = &suspect.dependent_kind;
    let mut involved = serde_json::json!({"kind": kind, "name": dependent.name, "uid": dependent.uid, "apiVersion": api_version});
    if !namespace.is_empty() {
        involved["namespace"] = namespace.into();
    }
    // Events about a cluster-scoped object go to `default`, as client-go's recorder puts them.
    let home = if namespace.is_empty() { "default" } else { namespace };
    let nanos = now.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let time = crate::time::rfc3339(now);
    let body = serde_json::json!({
        "kind": "Event", "apiVersion": "v1",
        "metadata": {"name": format!("{}.{nanos:x}", dependent.name), "namespace": home},
        "involvedObject": involved,
        "reason": "OwnerRefInvalidNamespace", "message": message,
        "source": {"component": COMPONENT},
        "firstTimestamp": time, "lastTimestamp": time, "count": 1, "type": "Warning",
        "reportingComponent": COMPONENT, "reportingInstance": "",
    });
    http::Request::post(format!("/api/v1/namespaces/{home}/events"))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(bytes::Bytes::from(body.to_string()))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_objects_with_a_wanted_uid_are_read_and_only_their_own_uid_counts() {
        let owner = br#"{"metadata":{"name":"a","namespace":"one","uid":"u1"}}"#;
        // Names u1 as its owner, but is not u1.
        let dependent = br#"{"metadata":{"name":"b","namespace":"two","uid":"u2","ownerReferences":[{"uid":"u1"}]}}"#;
        let other = br#"{"metadata":{"name":"c","namespace":"three","uid":"u3"}}"#;
        let found = namespaces_of([&owner[..], &dependent[..], &other[..]].into_iter(), &["u1"]);
        assert_eq!(found, BTreeMap::from([("u1".to_owned(), "one".to_owned())]));
    }
}

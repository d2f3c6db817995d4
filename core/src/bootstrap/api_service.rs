//! The ServiceCIDR `kubernetes` (`--service-cluster-ip-range`), the `kubernetes`
//! Service in `default` and where it leads: this server. Upstream's
//! `kubernetes-service` controller and endpoint reconciler write the same objects
//! (see the recorded `default/kubernetes` Service, Endpoints and EndpointSlice).

use crate::service_network::ServiceNetwork;
use serde_json::{json, Value};
use std::net::SocketAddr;

pub const NAME: &str = "kubernetes";

/// The collection, object and owned fields of each object, in the order written: the
/// range, then the Service, so that its address is claimed before anything names it.
pub fn items(network: &ServiceNetwork, advertise: Option<SocketAddr>) -> Vec<(&'static str, Value, &'static [&'static str])> {
    let mut items = Vec::new();
    let cidrs: Vec<String> = network.cluster_ip_ranges.iter().map(ToString::to_string).collect();
    let service_cidr = json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "ServiceCIDR",
        "metadata": {"name": NAME},
        "spec": {"cidrs": cidrs},
    });
    items.push(("/apis/networking.k8s.io/v1/servicecidrs", service_cidr, &[][..]));
    // Ready, as upstream's ServiceCIDR controller marks it (written to the status
    // subresource: the item's name is `kubernetes/status`).
    let ready = json!({
        "status": {"conditions": [{
            "type": "Ready",
            "status": "True",
            "reason": "",
            "message": "Kubernetes Service CIDR is ready",
            "lastTransitionTime": "",
        }]},
    });
    items.push(("/apis/networking.k8s.io/v1/servicecidrs", ready, &["/status"][..]));
    let Some(ip) = network.api_service_ip() else { return items };
    let port = advertise.map_or(443, |a| a.port());
    let service = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": NAME, "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {
            "type": "ClusterIP",
            "clusterIP": ip.to_string(),
            "ipFamilyPolicy": "SingleStack",
            "sessionAffinity": "None",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}],
        },
    });
    items.push(("/api/v1/namespaces/default/services", service, &["/spec/ports"][..]));
    let Some(advertise) = advertise else { return items };
    let address = advertise.ip().to_string();
    // An address only this machine reaches (loopback, link-local) is no endpoint:
    // upstream's reconciler fails to write one, and the Service has none.
    if !crate::validation::network::endpoint_ip(&address).is_empty() {
        return items;
    }
    let endpoint_port = json!([{"name": "https", "port": advertise.port(), "protocol": "TCP"}]);
    let endpoints = json!({
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": NAME, "namespace": "default", "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{"addresses": [{"ip": address}], "ports": endpoint_port}],
    });
    items.push(("/api/v1/namespaces/default/endpoints", endpoints, &["/subsets"][..]));
    let family = if advertise.is_ipv4() { "IPv4" } else { "IPv6" };
    let slice = json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": NAME, "namespace": "default", "labels": {"kubernetes.io/service-name": NAME}},
        "addressType": family,
        "endpoints": [{"addresses": [address], "conditions": {"ready": true}}],
        "ports": endpoint_port,
    });
    items.push(("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", slice, &["/addressType", "/endpoints", "/ports"][..]));
    items
}

/// The name each item is written under: the Ready status goes to the ServiceCIDR's
/// status subresource.
pub fn name_of(item: &Value) -> &'static str {
    if item.get("kind").is_none() && item.get("status").is_some() {
        "kubernetes/status"
    } else {
        NAME
    }
}

/// `stored` with `fields` taken from `wanted`, when any differs: the object to PUT.
/// Conditions the server sets at start changed at the object's creation.
pub fn reconcile(mut stored: Value, wanted: &Value, fields: &[&str]) -> Option<Value> {
    let mut wanted = wanted.clone();
    let created = stored.pointer("/metadata/creationTimestamp").cloned().unwrap_or(Value::Null);
    if let Some(Value::Array(conditions)) = wanted.pointer_mut("/status/conditions") {
        for condition in conditions {
            condition["lastTransitionTime"] = created.clone();
        }
    }
    let wanted = &wanted;
    let mut changed = false;
    for field in fields {
        let want = wanted.pointer(field)?;
        if stored.pointer(field) != Some(want) {
            let (parent, key) = field.rsplit_once('/')?;
            stored.pointer_mut(parent)?.as_object_mut()?.insert(key.to_owned(), want.clone());
            changed = true;
        }
    }
    changed.then_some(stored)
}

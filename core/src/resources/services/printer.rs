//! The columns of a Service's Table, as kube-apiserver's printer fills them (the
//! `-o wide` Selector column included).

use crate::resources::columns::{at, label_map_at, str_at, Column};
use crate::resources::Object;
use serde_json::{json, Value};

pub const COLUMNS: &[Column] = &[
    Column { name: "Type", kind: "string", description: TYPE, format: "", priority: 0, cell: |o| str_at(o, &["spec", "type"]) },
    Column { name: "Cluster-IP", kind: "string", description: CLUSTER_IP, format: "", priority: 0, cell: cluster_ip },
    Column { name: "External-IP", kind: "string", description: EXTERNAL_IPS, format: "", priority: 0, cell: external_ip },
    Column { name: "Port(s)", kind: "string", description: PORTS, format: "", priority: 0, cell: ports },
    Column { name: "Selector", kind: "string", description: SELECTOR, format: "", priority: 1, cell: |o| label_map_at(o, &["spec", "selector"]) },
];

fn strings(obj: &Object, path: &[&str]) -> Vec<String> {
    at(obj, path)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn or_none(s: String) -> Value {
    json!(if s.is_empty() { "<none>".to_owned() } else { s })
}

fn cluster_ip(obj: &Object) -> Value {
    or_none(at(obj, &["spec", "clusterIP"]).and_then(Value::as_str).unwrap_or("").to_owned())
}

fn external_ip(obj: &Object) -> Value {
    let external = strings(obj, &["spec", "externalIPs"]);
    match at(obj, &["spec", "type"]).and_then(Value::as_str).unwrap_or("") {
        "ClusterIP" | "NodePort" => or_none(external.join(",")),
        "LoadBalancer" => {
            let mut shown: Vec<String> = at(obj, &["status", "loadBalancer", "ingress"])
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|i| {
                    let ip = i.get("ip").and_then(Value::as_str).filter(|s| !s.is_empty());
                    ip.or_else(|| i.get("hostname").and_then(Value::as_str).filter(|s| !s.is_empty())).map(str::to_owned)
                })
                .collect();
            shown.extend(external);
            json!(if shown.is_empty() { "<pending>".to_owned() } else { shown.join(",") })
        }
        "ExternalName" => str_at(obj, &["spec", "externalName"]),
        _ => json!("<unknown>"),
    }
}

fn ports(obj: &Object) -> Value {
    let ports = at(obj, &["spec", "ports"]).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let shown: Vec<String> = ports
        .iter()
        .map(|p| {
            let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
            let protocol = p.get("protocol").and_then(Value::as_str).unwrap_or("");
            match p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) {
                0 => format!("{port}/{protocol}"),
                node => format!("{port}:{node}/{protocol}"),
            }
        })
        .collect();
    or_none(shown.join(","))
}

const TYPE: &str = "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types";
const CLUSTER_IP: &str = "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const EXTERNAL_IPS: &str = "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.";
const PORTS: &str = "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const SELECTOR: &str = "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/";

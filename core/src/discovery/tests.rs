use super::*;
use serde_json::{json, Value};

fn reg() -> Registry {
    Registry::builtin()
}

fn text<T: Serialize>(doc: &T) -> String {
    serde_json::to_string(doc).unwrap()
}

fn value<T: Serialize>(doc: &T) -> Value {
    serde_json::to_value(doc).unwrap()
}

const CRUD: &str =
    r#"["create","delete","deletecollection","get","list","patch","update","watch"]"#;

#[test]
fn api_versions_document() {
    let addr: SocketAddr = "10.10.10.10:8050".parse().unwrap();
    assert_eq!(
        text(&api_versions(Some(addr))),
        r#"{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"10.10.10.10:8050"}]}"#
    );
    let v6: SocketAddr = "[::1]:6443".parse().unwrap();
    assert_eq!(
        value(&api_versions(Some(v6)))["serverAddressByClientCIDRs"][0]["serverAddress"],
        "[::1]:6443"
    );
    assert_eq!(
        text(&api_versions(None)),
        r#"{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":null}"#
    );
}

#[test]
fn api_group_list_document() {
    let doc = value(&api_group_list(&reg()));
    assert_eq!(doc["kind"], "APIGroupList");
    assert_eq!(doc["apiVersion"], "v1");
    let groups = doc["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 19);
    assert!(groups.iter().all(|g| g["name"] != ""));
    // Upstream's group priorities put apiregistration.k8s.io first, flowcontrol last.
    assert_eq!(groups[0]["name"], "apiregistration.k8s.io");
    assert_eq!(groups[18]["name"], "flowcontrol.apiserver.k8s.io");
    assert_eq!(
        groups[1],
        json!({
            "name": "apps",
            "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
            "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}
        })
    );
    assert_eq!(
        groups[5],
        json!({
            "name": "autoscaling",
            "versions": [
                {"groupVersion": "autoscaling/v2", "version": "v2"},
                {"groupVersion": "autoscaling/v1", "version": "v1"}
            ],
            "preferredVersion": {"groupVersion": "autoscaling/v2", "version": "v2"}
        })
    );
    // Entries of the list carry no kind or apiVersion.
    assert!(groups[0].get("kind").is_none());
    assert!(text(&api_group_list(&reg())).starts_with(
        r#"{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"apiregistration.k8s.io","versions":"#
    ));
}

#[test]
fn api_group_document() {
    assert_eq!(
        text(&api_group(&reg(), "apps").unwrap()),
        r#"{"kind":"APIGroup","apiVersion":"v1","name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}"#
    );
    assert!(api_group(&reg(), "nope.example.com").is_none());
    assert!(api_group(&reg(), "").is_none());
}

#[test]
fn core_resource_list_has_pods_and_subresources() {
    let list = api_resource_list(&reg(), "", "v1").unwrap();
    let s = text(&list);
    // kube leaves apiVersion out of /api/v1.
    assert!(s.starts_with(r#"{"kind":"APIResourceList","groupVersion":"v1","resources":["#));
    assert!(s.contains(&format!(
        r#"{{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":{CRUD},"shortNames":["po"],"categories":["all"],"storageVersionHash":"xPOwRZ+Yhw8="}}"#
    )));
    assert!(s.contains(
        r#"{"name":"pods/status","singularName":"","namespaced":true,"kind":"Pod","verbs":["get","patch","update"]}"#
    ));
    assert!(s.contains(
        r#"{"name":"pods/eviction","singularName":"","namespaced":true,"group":"policy","version":"v1","kind":"Eviction","verbs":["create"]}"#
    ));
    assert!(s.contains(&format!(
        r#"{{"name":"secrets","singularName":"secret","namespaced":true,"kind":"Secret","verbs":{CRUD},"storageVersionHash":"S6u1pOWzb84="}}"#
    )));
    let names: Vec<&str> = list.resources.iter().map(|r| r.name.as_str()).collect();
    assert!(s.contains(
        r#"{"name":"bindings","singularName":"binding","namespaced":true,"kind":"Binding","verbs":["create"]}"#
    ));
    assert!(s.contains(
        r#"{"name":"componentstatuses","singularName":"componentstatus","namespaced":false,"kind":"ComponentStatus","verbs":["get","list"],"shortNames":["cs"]}"#
    ));
    // The order of a live v1.33 /api/v1.
    assert_eq!(
        names,
        [
            "bindings",
            "componentstatuses",
            "configmaps",
            "endpoints",
            "events",
            "limitranges",
            "namespaces",
            "namespaces/finalize",
            "namespaces/status",
            "nodes",
            "nodes/proxy",
            "nodes/status",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "persistentvolumes",
            "persistentvolumes/status",
            "pods",
            "pods/attach",
            "pods/binding",
            "pods/ephemeralcontainers",
            "pods/eviction",
            "pods/exec",
            "pods/log",
            "pods/portforward",
            "pods/proxy",
            "pods/resize",
            "pods/status",
            "podtemplates",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
            "secrets",
            "serviceaccounts",
            "serviceaccounts/token",
            "services",
            "services/proxy",
            "services/status",
        ]
    );
}

#[test]
fn group_resource_list_has_api_version_and_scale_group() {
    let list = api_resource_list(&reg(), "apps", "v1").unwrap();
    let s = text(&list);
    assert!(s.starts_with(
        r#"{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps/v1","resources":["#
    ));
    assert!(s.contains(
        r#"{"name":"deployments/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":["get","patch","update"]}"#
    ));
    assert!(s.contains(&format!(
        r#"{{"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":{CRUD},"shortNames":["deploy"],"categories":["all"],"storageVersionHash":"8aSe+NMegvE="}}"#
    )));
    let crds = value(&api_resource_list(&reg(), "apiextensions.k8s.io", "v1").unwrap());
    assert_eq!(crds["resources"][0]["shortNames"], json!(["crd", "crds"]));
    assert_eq!(crds["resources"][0]["namespaced"], false);
    assert_eq!(
        crds["resources"][1]["name"],
        "customresourcedefinitions/status"
    );
    assert!(api_resource_list(&reg(), "apps", "v1beta1").is_none());
    assert!(api_resource_list(&reg(), "", "v2").is_none());
    assert!(api_resource_list(&reg(), "nope", "v1").is_none());
}

/// The `apps` item of kube v1.33's aggregated `/apis` (from aggregated_v2.json).
fn kube_apps_item() -> Value {
    let crud = json!([
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch"
    ]);
    let gpu = json!(["get", "patch", "update"]);
    let rk = |kind: &str| json!({"group": "", "kind": kind, "version": ""});
    let scale = json!({"group": "autoscaling", "kind": "Scale", "version": "v1"});
    let with_status = |resource: &str, singular: &str, kind: &str, short: &str, scaled: bool| {
        let mut subs = Vec::new();
        if scaled {
            subs.push(json!({"responseKind": scale, "subresource": "scale", "verbs": gpu}));
        }
        subs.push(json!({"responseKind": rk(kind), "subresource": "status", "verbs": gpu}));
        json!({
            "categories": ["all"],
            "resource": resource,
            "responseKind": rk(kind),
            "scope": "Namespaced",
            "shortNames": [short],
            "singularResource": singular,
            "subresources": subs,
            "verbs": crud
        })
    };
    json!({
        "metadata": {"creationTimestamp": null, "name": "apps"},
        "versions": [{
            "freshness": "Current",
            "resources": [
                {
                    "resource": "controllerrevisions",
                    "responseKind": rk("ControllerRevision"),
                    "scope": "Namespaced",
                    "singularResource": "controllerrevision",
                    "verbs": crud
                },
                with_status("daemonsets", "daemonset", "DaemonSet", "ds", false),
                with_status("deployments", "deployment", "Deployment", "deploy", true),
                with_status("replicasets", "replicaset", "ReplicaSet", "rs", true),
                with_status("statefulsets", "statefulset", "StatefulSet", "sts", true),
            ],
            "version": "v1"
        }]
    })
}

#[test]
fn aggregated_apis_matches_kube_shape() {
    let doc = aggregated_apis(&reg(), AggregatedVersion::V2);
    let v = value(&doc);
    assert_eq!(v["kind"], "APIGroupDiscoveryList");
    assert_eq!(v["apiVersion"], "apidiscovery.k8s.io/v2");
    assert_eq!(v["metadata"], json!({}));
    let items = v["items"].as_array().unwrap();
    assert_eq!(items[0]["metadata"]["name"], "apiregistration.k8s.io");
    assert_eq!(items[1], kube_apps_item());
    let names: Vec<&str> = items
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    let groups: Vec<String> = reg().groups().into_iter().map(|g| g.name).collect();
    assert_eq!(names, groups);

    let autoscaling = &items[5];
    assert_eq!(autoscaling["metadata"]["name"], "autoscaling");
    let versions: Vec<&str> = autoscaling["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["v2", "v1"]);
    assert_eq!(
        autoscaling["versions"][1]["resources"][0],
        json!({
            "categories": ["all"],
            "resource": "horizontalpodautoscalers",
            "responseKind": {"group": "", "kind": "HorizontalPodAutoscaler", "version": ""},
            "scope": "Namespaced",
            "shortNames": ["hpa"],
            "singularResource": "horizontalpodautoscaler",
            "subresources": [{
                "responseKind": {"group": "", "kind": "HorizontalPodAutoscaler", "version": ""},
                "subresource": "status",
                "verbs": ["get", "patch", "update"]
            }],
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
        })
    );

    // Field order as kube writes it (Go struct order).
    let s = text(&doc);
    assert!(s.starts_with(concat!(
        r#"{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":["#,
        r#"{"metadata":{"name":"apiregistration.k8s.io","creationTimestamp":null},"versions":[{"version":"v1","resources":["#,
        r#"{"resource":"apiservices","responseKind":{"group":"","version":"","kind":"APIService"},"scope":"Cluster","singularResource":"apiservice","verbs":["#
    )));
    assert!(s.contains(r#"],"freshness":"Current"}]}"#));
    assert!(s.contains(r#""subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","patch","update"]}"#));

    let beta = value(&aggregated_apis(&reg(), AggregatedVersion::V2Beta1));
    assert_eq!(beta["apiVersion"], "apidiscovery.k8s.io/v2beta1");
    assert_eq!(beta["items"], v["items"]);
}

#[test]
fn aggregated_api_is_the_unnamed_core_group() {
    let v = value(&aggregated_api(&reg(), AggregatedVersion::V2));
    let items = v["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["metadata"], json!({"creationTimestamp": null}));
    assert_eq!(items[0]["versions"][0]["version"], "v1");
    assert_eq!(items[0]["versions"][0]["freshness"], "Current");
    let resources = items[0]["versions"][0]["resources"].as_array().unwrap();
    let pods = resources.iter().find(|r| r["resource"] == "pods").unwrap();
    assert_eq!(pods["scope"], "Namespaced");
    assert_eq!(pods["shortNames"], json!(["po"]));
    assert_eq!(pods["categories"], json!(["all"]));
    assert_eq!(
        pods["responseKind"],
        json!({"group": "", "version": "", "kind": "Pod"})
    );
    let subs: Vec<&str> = pods["subresources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["subresource"].as_str().unwrap())
        .collect();
    assert_eq!(
        subs,
        [
            "attach",
            "binding",
            "ephemeralcontainers",
            "eviction",
            "exec",
            "log",
            "portforward",
            "proxy",
            "resize",
            "status"
        ]
    );
    let eviction = &pods["subresources"][3];
    assert_eq!(
        *eviction,
        json!({"subresource": "eviction", "responseKind": {"group": "policy", "version": "v1", "kind": "Eviction"}, "verbs": ["create"]})
    );
    let ns = resources
        .iter()
        .find(|r| r["resource"] == "namespaces")
        .unwrap();
    assert_eq!(ns["scope"], "Cluster");
    assert!(ns.get("categories").is_none());
    let secrets = resources
        .iter()
        .find(|r| r["resource"] == "secrets")
        .unwrap();
    assert!(secrets.get("shortNames").is_none());
    assert!(secrets.get("subresources").is_none());
    assert!(text(&aggregated_api(&reg(), AggregatedVersion::V2))
        .contains(r#""items":[{"metadata":{"creationTimestamp":null},"versions":[{"version":"v1","resources":[{"resource":"bindings","responseKind":{"group":"","version":"","kind":"Binding"},"scope":"Namespaced","singularResource":"binding","verbs":["create"]},{"resource":"componentstatuses","responseKind":{"group":"","version":"","kind":"ComponentStatus"},"scope":"Cluster","singularResource":"componentstatus","verbs":["get","list"],"shortNames":["cs"]},{"resource":"configmaps""#));
}

#[test]
fn negotiation_picks_the_first_acceptable_range() {
    use AggregatedVersion::*;
    let v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    let v2b1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
    // kubectl 1.30+
    assert_eq!(
        negotiate_aggregated(&format!("{v2},{v2b1},application/json")),
        Some(V2)
    );
    // kubectl 1.27
    assert_eq!(
        negotiate_aggregated(&format!("{v2b1},application/json")),
        Some(V2Beta1)
    );
    assert_eq!(
        negotiate_aggregated(&format!("{v2b1}, {v2}")),
        Some(V2Beta1)
    );
    // Plain requests.
    assert_eq!(negotiate_aggregated(""), None);
    assert_eq!(negotiate_aggregated("application/json"), None);
    assert_eq!(negotiate_aggregated("*/*"), None);
    assert_eq!(
        negotiate_aggregated("application/json, application/yaml"),
        None
    );
    // A plain range does not end the search for an aggregated one.
    assert_eq!(
        negotiate_aggregated(&format!("application/json,{v2}")),
        Some(V2)
    );
    // Parameter order and whitespace do not matter.
    assert_eq!(
        negotiate_aggregated(
            "application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io"
        ),
        Some(V2)
    );
    // Wildcards may carry the parameters.
    assert_eq!(
        negotiate_aggregated("*/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
        Some(V2)
    );
    assert_eq!(
        negotiate_aggregated(
            "application/*;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        ),
        Some(V2Beta1)
    );
    // Types we do not write are skipped: kubectl's protobuf-first header still lands on JSON.
    assert_eq!(
        negotiate_aggregated(&format!(
            "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,{v2b1},application/json"
        )),
        Some(V2Beta1)
    );
    // Wrong or partial parameters are not aggregated requests.
    assert_eq!(
        negotiate_aggregated("application/json;g=apidiscovery.k8s.io;v=v2"),
        None
    );
    assert_eq!(
        negotiate_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList"
        ),
        None
    );
    assert_eq!(
        negotiate_aggregated("application/json;as=Table;v=v1;g=meta.k8s.io"),
        None
    );
    assert_eq!(negotiate_aggregated(&format!("{v2};sv=v1")), None);
    assert_eq!(
        negotiate_aggregated(&format!("{v2};stream=watch")),
        Some(V2)
    );
    assert_eq!(negotiate_aggregated(&format!("{v2};pretty=1")), Some(V2));
    // Quality orders the ranges.
    assert_eq!(
        negotiate_aggregated(&format!("{v2b1};q=0.5,{v2}")),
        Some(V2)
    );
    assert_eq!(
        negotiate_aggregated(&format!("{v2};q=0.9,{v2b1};q=0.95")),
        Some(V2Beta1)
    );
}

#[test]
fn content_types() {
    assert_eq!(
        AGGREGATED_V2_CONTENT_TYPE,
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    assert_eq!(
        AggregatedVersion::V2.content_type(),
        AGGREGATED_V2_CONTENT_TYPE
    );
    assert_eq!(
        AggregatedVersion::V2Beta1.content_type(),
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
    );
    assert_eq!(
        AggregatedVersion::V2Beta1.api_version(),
        "apidiscovery.k8s.io/v2beta1"
    );
}

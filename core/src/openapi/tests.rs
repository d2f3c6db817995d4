use super::handler::{http_date, matches_any};
use super::spec::operation_id_part;
use super::*;
use crate::negotiation::parse_accept;
use serde_json::json;
use std::time::{Duration, UNIX_EPOCH};

fn stand_in() -> OpenApi {
    OpenApi::with_definitions(
        Registry::builtin(),
        include_str!("testdata/definitions.json"),
    )
}

#[test]
fn accept_ranges_sort_like_goautoneg() {
    let order = |h: &str| -> Vec<String> {
        parse_accept(h)
            .into_iter()
            .map(|c| format!("{}/{}", c.kind, c.subtype))
            .collect()
    };
    assert_eq!(
        order("*/*;q=0.5, application/json, text/*"),
        ["application/json", "text/*", "*/*"]
    );
    assert_eq!(
        order("application/json;q=0.9,application/com.github.proto-openapi.spec.v2@v1.0+protobuf"),
        [
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            "application/json"
        ]
    );
    // A lone `*` is `*/*`; ranges without a slash are dropped; a bad q is 0.
    assert_eq!(order("*"), ["*/*"]);
    assert!(parse_accept("json").is_empty());
    assert_eq!(parse_accept("application/json;q=x")[0].quality, 0.0);
}

#[test]
fn if_none_match_lists() {
    let etag = "\"ABC\"";
    assert!(matches_any("\"ABC\"", etag));
    assert!(matches_any("W/\"ABC\"", etag));
    assert!(matches_any("\"x\", \"ABC\"", etag));
    assert!(matches_any("*", etag));
    assert!(!matches_any("\"abc\"", etag));
    assert!(!matches_any("ABC", etag));
    // Parsing stops at a malformed entry.
    assert!(!matches_any("bogus, \"ABC\"", etag));
}

#[test]
fn http_dates() {
    let t = UNIX_EPOCH + Duration::from_secs(1_136_214_245); // 2006-01-02T15:04:05Z
    assert_eq!(http_date(t, "GMT"), "Mon, 02 Jan 2006 15:04:05 GMT");
    assert_eq!(
        http_date(UNIX_EPOCH, "UTC"),
        "Thu, 01 Jan 1970 00:00:00 UTC"
    );
    let leap = UNIX_EPOCH + Duration::from_secs(1_709_208_000); // 2024-02-29T12:00:00Z
    assert_eq!(http_date(leap, "GMT"), "Thu, 29 Feb 2024 12:00:00 GMT");
}

#[test]
fn operation_id_parts() {
    assert_eq!(
        operation_id_part("rbac.authorization", true),
        "RbacAuthorization"
    );
    assert_eq!(operation_id_part("v1beta1", true), "V1beta1");
    assert_eq!(
        operation_id_part("flowcontrol.apiserver", false),
        "flowcontrolApiserver"
    );
    assert_eq!(operation_id_part("status", true), "Status");
}

#[test]
fn yaml_text_is_json_with_spaces() {
    let v = json!([{"group": "apps", "kind": "Deployment", "version": "v1"}]);
    let text = gnostic::yaml_text(&v);
    assert_eq!(
        text,
        r#"[{"group": "apps", "kind": "Deployment", "version": "v1"}]"#
    );
    let back: Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(back, v);
    let tricky = json!({"a": "line\nbreak \"quoted\" \\ é", "b": [1, 2.5, true, null]});
    let back: Value = serde_yaml::from_str(&gnostic::yaml_text(&tricky)).unwrap();
    assert_eq!(back, tricky);
}

#[test]
fn v3_schemas_wrap_references_with_siblings() {
    let v2 = json!({
        "properties": {
            "metadata": {"$ref": "#/definitions/M", "description": "meta"},
            "items": {"items": {"$ref": "#/definitions/I"}, "type": "array"},
            "x-kubernetes-preserve-unknown-fields": true
        },
        "type": "object"
    });
    assert_eq!(
        v3::schema(&v2),
        json!({
            "properties": {
                "metadata": {"allOf": [{"$ref": "#/components/schemas/M"}], "description": "meta"},
                "items": {"items": {"$ref": "#/components/schemas/I"}, "type": "array"},
                "x-kubernetes-preserve-unknown-fields": true
            },
            "type": "object"
        })
    );
}

#[test]
fn document_keys() {
    assert_eq!(v3::document_key("/api/").as_deref(), Some("api"));
    assert_eq!(
        v3::document_key("/api/v1/namespaces/{namespace}/pods").as_deref(),
        Some("api/v1")
    );
    assert_eq!(v3::document_key("/apis/").as_deref(), Some("apis"));
    assert_eq!(
        v3::document_key("/apis/apps/").as_deref(),
        Some("apis/apps")
    );
    assert_eq!(
        v3::document_key("/apis/apps/v1/watch/deployments").as_deref(),
        Some("apis/apps/v1")
    );
    assert_eq!(v3::document_key("/version/").as_deref(), Some("version"));
}

#[test]
fn nothing_is_built_until_asked() {
    let api = stand_in();
    assert!(!api.v2_built() && !api.v3_built());
    let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let v2 = api.v2(now);
    assert_eq!(v2.built, now);
    assert!(api.v2_built() && !api.v3_built());
    // Later calls return the same bytes and keep the first build time.
    let again = api.v2(now + Duration::from_secs(60));
    assert_eq!(again.built, now);
    assert_eq!(again.hash, v2.hash);
}

#[test]
fn definitions_load_bare_or_wrapped() {
    let bare = OpenApi::with_definitions(Registry::new(), r#"{"A": {"type": "string"}}"#);
    assert_eq!(bare.definitions().len(), 1);
    let wrapped = OpenApi::with_definitions(
        Registry::new(),
        r#"{"definitions": {"A": {"type": "string"}}}"#,
    );
    assert!(wrapped.definitions().contains_key("A"));
    let broken = OpenApi::with_definitions(Registry::new(), "[");
    assert!(broken.definitions().is_empty());
}

#[test]
fn v2_paths_of_a_namespaced_resource() {
    let doc = stand_in().v2_document();
    let paths = &doc["paths"];
    let collection = &paths["/apis/apps/v1/namespaces/{namespace}/deployments"];
    assert_eq!(
        collection["get"]["operationId"],
        "listAppsV1NamespacedDeployment"
    );
    assert_eq!(
        collection["post"]["operationId"],
        "createAppsV1NamespacedDeployment"
    );
    assert_eq!(
        collection["delete"]["operationId"],
        "deleteAppsV1CollectionNamespacedDeployment"
    );
    assert_eq!(collection["post"]["description"], "create a Deployment");
    assert_eq!(
        collection["delete"]["x-kubernetes-action"],
        "deletecollection"
    );
    assert_eq!(collection["get"]["tags"], json!(["apps_v1"]));
    // namespace and pretty are on every operation, so they sit on the path.
    let path_params: Vec<&Value> = collection["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(path_params.len(), 2);
    let resolve = |p: &Value| -> Value {
        match p.get("$ref").and_then(Value::as_str) {
            Some(r) => doc["parameters"][r.trim_start_matches("#/parameters/")].clone(),
            None => p.clone(),
        }
    };
    let names: Vec<String> = path_params
        .iter()
        .map(|p| resolve(p)["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["namespace", "pretty"]);
    // dryRun and fieldValidation are inline; fieldManager is shared.
    let post: Vec<Value> = collection["post"]["parameters"].as_array().unwrap().clone();
    let inline_names: Vec<&str> = post.iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(inline_names, ["body", "dryRun", "fieldValidation"]);
    assert_eq!(
        post[0]["schema"]["$ref"],
        "#/definitions/io.k8s.api.apps.v1.Deployment"
    );
    assert!(post.iter().any(|p| resolve(p)["name"] == "fieldManager"));

    let item = &paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
    assert_eq!(item["get"]["operationId"], "readAppsV1NamespacedDeployment");
    assert_eq!(
        item["put"]["operationId"],
        "replaceAppsV1NamespacedDeployment"
    );
    assert_eq!(
        item["patch"]["operationId"],
        "patchAppsV1NamespacedDeployment"
    );
    assert_eq!(
        item["delete"]["operationId"],
        "deleteAppsV1NamespacedDeployment"
    );
    assert_eq!(
        item["delete"]["responses"]["200"]["schema"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status"
    );
    assert_eq!(item["patch"]["consumes"][3], "application/apply-patch+yaml");
    assert!(item["get"].get("parameters").is_none());

    let scale = &paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"];
    assert_eq!(
        scale["patch"]["operationId"],
        "patchAppsV1NamespacedDeploymentScale"
    );
    assert_eq!(
        scale["get"]["description"],
        "read scale of the specified Deployment"
    );
    assert_eq!(
        scale["patch"]["x-kubernetes-group-version-kind"],
        json!({"group": "autoscaling", "kind": "Scale", "version": "v1"})
    );
    assert_eq!(scale["parameters"][0]["description"], "name of the Scale");
    let status = &paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status"];
    assert_eq!(
        status["put"]["operationId"],
        "replaceAppsV1NamespacedDeploymentStatus"
    );
    assert_eq!(
        status["patch"]["description"],
        "partially update status of the specified Deployment"
    );

    let all = &paths["/apis/apps/v1/deployments"];
    assert_eq!(
        all["get"]["operationId"],
        "listAppsV1DeploymentForAllNamespaces"
    );
    let watch = &paths["/apis/apps/v1/watch/namespaces/{namespace}/deployments"];
    assert_eq!(
        watch["get"]["operationId"],
        "watchAppsV1NamespacedDeploymentList"
    );
    assert_eq!(watch["get"]["x-kubernetes-action"], "watchlist");
    assert_eq!(
        watch["get"]["responses"]["200"]["schema"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"
    );
    assert_eq!(
        paths["/apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}"]["get"]
            ["operationId"],
        "watchAppsV1NamespacedDeployment"
    );
    assert_eq!(
        paths["/apis/apps/v1/watch/deployments"]["get"]["operationId"],
        "watchAppsV1DeploymentListForAllNamespaces"
    );
}

#[test]
fn v2_paths_of_core_and_cluster_scoped_resources() {
    let doc = stand_in().v2_document();
    let paths = &doc["paths"];
    assert_eq!(
        paths["/api/v1/namespaces/{name}"]["get"]["operationId"],
        "readCoreV1Namespace"
    );
    assert_eq!(
        paths["/api/v1/namespaces"]["get"]["operationId"],
        "listCoreV1Namespace"
    );
    // Namespaces have no deletecollection.
    assert!(paths["/api/v1/namespaces"].get("delete").is_none());
    assert_eq!(
        paths["/api/v1/watch/namespaces"]["get"]["operationId"],
        "watchCoreV1NamespaceList"
    );
    assert_eq!(
        paths["/api/v1/namespaces/{namespace}/pods"]["get"]["operationId"],
        "listCoreV1NamespacedPod"
    );
    assert_eq!(
        paths["/api/v1/pods"]["get"]["operationId"],
        "listCoreV1PodForAllNamespaces"
    );
    assert_eq!(
        paths["/api/v1/watch/namespaces/{namespace}/pods"]["get"]["operationId"],
        "watchCoreV1NamespacedPodList"
    );
    assert_eq!(
        paths["/api/v1/namespaces/{namespace}/pods/{name}/status"]["get"]["operationId"],
        "readCoreV1NamespacedPodStatus"
    );
    // DELETE of a pod answers with the pod.
    assert_eq!(
        paths["/api/v1/namespaces/{namespace}/pods/{name}"]["delete"]["responses"]["200"]["schema"]
            ["$ref"],
        "#/definitions/io.k8s.api.core.v1.Pod"
    );
    assert_eq!(
        paths["/apis/rbac.authorization.k8s.io/v1/clusterroles"]["get"]["operationId"],
        "listRbacAuthorizationV1ClusterRole"
    );
    assert_eq!(
        paths["/apis/rbac.authorization.k8s.io/v1/clusterroles"]["get"]["tags"],
        json!(["rbacAuthorization_v1"])
    );
    assert_eq!(
        paths["/apis/networking.k8s.io/v1/ingresses"]["get"]["operationId"],
        "listNetworkingV1IngressForAllNamespaces"
    );
    assert_eq!(
        paths["/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses"]["post"]["description"],
        "create an Ingress"
    );
    assert_eq!(
        paths["/api/v1/namespaces/{namespace}/endpoints"]["post"]["description"],
        "create Endpoints"
    );
    // Discovery endpoints.
    assert_eq!(paths["/api/"]["get"]["operationId"], "getCoreAPIVersions");
    assert_eq!(
        paths["/api/v1/"]["get"]["operationId"],
        "getCoreV1APIResources"
    );
    assert_eq!(paths["/apis/"]["get"]["operationId"], "getAPIVersions");
    assert_eq!(
        paths["/apis/apps/"]["get"]["operationId"],
        "getAppsAPIGroup"
    );
    assert_eq!(
        paths["/apis/apps/v1/"]["get"]["operationId"],
        "getAppsV1APIResources"
    );
    assert_eq!(paths["/version/"]["get"]["operationId"], "getCodeVersion");
    assert_eq!(
        paths["/apis/autoscaling/v2/"]["get"]["tags"],
        json!(["autoscaling_v2"])
    );
}

#[test]
fn every_operation_id_is_unique() {
    let doc = stand_in().v2_document();
    let mut seen = std::collections::BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if let Some(id) = op.get("operationId").and_then(Value::as_str) {
                assert!(
                    seen.insert(id.to_owned()),
                    "{id} repeated at {method} {path}"
                );
            }
        }
    }
    assert!(seen.len() > 400, "{} operations", seen.len());
}

#[test]
fn documents_are_made_once_per_registry_generation() {
    let served = crate::registry::Served::new("/registry".into(), Registry::builtin());
    let cache = DocumentCache::default();
    let start = served.snapshot();
    // The untouched registry uses the process-wide built-in documents.
    assert!(Arc::ptr_eq(&cache.documents(&start), builtin()));
    let mut widgets = Registry::builtin().lookup("", "v1", "configmaps").unwrap().clone();
    (widgets.group, widgets.kind, widgets.plural) = ("example.com".into(), "Widget".into(), "widgets".into());
    served.add(widgets);
    let changed = served.snapshot();
    let first = cache.documents(&changed);
    assert!(!Arc::ptr_eq(&first, builtin()));
    assert!(Arc::ptr_eq(&first, &cache.documents(&changed)), "kept for its generation");
    // A request still holding the older snapshot gets its documents, and the newer
    // ones stay kept.
    assert_eq!(cache.documents(&start).registry(), &*start);
    assert!(Arc::ptr_eq(&first, &cache.documents(&changed)));
    served.remove("example.com", "v1", "widgets");
    assert!(Arc::ptr_eq(&cache.documents(&served.snapshot()), builtin()));
}

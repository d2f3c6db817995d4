//! /openapi/v2 and /openapi/v3 through the whole server: the documents kubectl reads,
//! their encodings, and the caching headers.

use apiary_core::openapi::{gnostic, gnostic_v3};
use apiary_core::{Config, Inputs, Server, Step};
use bytes::Bytes;
use prost::Message;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::{Duration, UNIX_EPOCH};

const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
const PROTOBUF_CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
const V3_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf";
const V3_PROTOBUF_DEPRECATED: &str = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf";

fn server() -> Server {
    Server::new(Config::default())
}

fn inputs() -> Inputs {
    Inputs {
        now: UNIX_EPOCH + Duration::from_secs(1_795_000_000),
        monotonic: std::time::Duration::ZERO,
        entropy: [1; 48],
        peer_certificates: Vec::new(),
        peer_certificates_rejected: false,
        request_header_common_name: None,
        remote_addr: None,
    }
}

fn request(method: &str, path: &str, headers: &[(&str, &str)]) -> http::Response<Bytes> {
    let mut builder = http::Request::builder().method(method).uri(path);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    match server().handle_as_system(builder.body(Bytes::new()).unwrap(), inputs()) {
        Step::Respond(r) => r,
        _ => panic!("an OpenAPI request needs no storage"),
    }
}

fn get(path: &str, headers: &[(&str, &str)]) -> http::Response<Bytes> {
    request("GET", path, headers)
}

fn header<'a>(r: &'a http::Response<Bytes>, name: &str) -> Option<&'a str> {
    r.headers().get(name).map(|v| v.to_str().unwrap())
}

fn json_of(r: &http::Response<Bytes>) -> Value {
    serde_json::from_slice(r.body()).expect("a JSON body")
}

fn v2_json() -> Value {
    let r = get("/openapi/v2", &[("accept", "application/json")]);
    assert_eq!(r.status(), 200);
    json_of(&r)
}

/// Every `$ref` string in `v`.
fn references(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x.as_str()) {
                    ("$ref", Some(r)) => {
                        out.insert(r.to_owned());
                    }
                    _ => references(x, out),
                }
            }
        }
        Value::Array(xs) => xs.iter().for_each(|x| references(x, out)),
        _ => {}
    }
}

fn is_etag(value: &str) -> bool {
    let inner = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or("");
    inner.len() == 128
        && inner
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
}

#[test]
fn the_openapi_documents_are_forbidden_to_anonymous_users() {
    let request = http::Request::get("/openapi/v2")
        .body(Bytes::new())
        .unwrap();
    match server().handle(request, inputs()) {
        // Only system:authenticated is bound to system:discovery.
        Step::Respond(r) => assert_eq!(r.status(), 403),
        _ => panic!("no storage expected"),
    }
}

#[test]
fn v2_json_describes_every_resource_operation() {
    let doc = v2_json();
    assert_eq!(doc["swagger"], "2.0");
    assert_eq!(
        doc["info"],
        json!({"title": "Kubernetes", "version": "v1.33.0"})
    );
    assert_eq!(
        doc["securityDefinitions"]["BearerToken"],
        json!({"description": "Bearer Token authentication", "in": "header", "name": "authorization", "type": "apiKey"})
    );
    assert_eq!(doc["security"], json!([{"BearerToken": []}]));

    let defs = &doc["definitions"];
    for (name, group, kind) in [
        ("io.k8s.api.core.v1.Pod", "", "Pod"),
        ("io.k8s.api.apps.v1.Deployment", "apps", "Deployment"),
    ] {
        assert_eq!(
            defs[name]["x-kubernetes-group-version-kind"],
            json!([{"group": group, "kind": kind, "version": "v1"}]),
            "{name}"
        );
    }

    let paths = &doc["paths"];
    let op = |path: &str, method: &str| {
        paths[path][method]["operationId"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(
        op("/api/v1/namespaces/{namespace}/pods", "get"),
        "listCoreV1NamespacedPod"
    );
    assert_eq!(
        op("/apis/apps/v1/namespaces/{namespace}/deployments", "post"),
        "createAppsV1NamespacedDeployment"
    );
    assert_eq!(
        op("/api/v1/namespaces/{name}", "get"),
        "readCoreV1Namespace"
    );
    assert_eq!(
        op(
            "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
            "patch"
        ),
        "patchAppsV1NamespacedDeploymentScale"
    );
    assert_eq!(
        op("/api/v1/namespaces/{namespace}/configmaps", "delete"),
        "deleteCoreV1CollectionNamespacedConfigMap"
    );
    assert_eq!(
        op("/api/v1/watch/namespaces/{namespace}/pods", "get"),
        "watchCoreV1NamespacedPodList"
    );
    assert_eq!(
        op(
            "/apis/batch/v1/namespaces/{namespace}/jobs/{name}/status",
            "put"
        ),
        "replaceBatchV1NamespacedJobStatus"
    );

    // The parameters of each operation, shared ones resolved.
    let params = |path: &str, method: &str| -> Vec<Value> {
        let item = &paths[path];
        item[method]["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(item["parameters"].as_array().into_iter().flatten())
            .map(|p| match p["$ref"].as_str() {
                Some(r) => doc["parameters"][r.trim_start_matches("#/parameters/")].clone(),
                None => p.clone(),
            })
            .collect()
    };
    let names = |path: &str, method: &str| -> BTreeSet<String> {
        params(path, method)
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let set = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<BTreeSet<_>>();
    let deployments = "/apis/apps/v1/namespaces/{namespace}/deployments";
    assert_eq!(
        names(deployments, "post"),
        set(&[
            "body",
            "dryRun",
            "fieldManager",
            "fieldValidation",
            "namespace",
            "pretty"
        ])
    );
    assert_eq!(
        names(deployments, "get"),
        set(&[
            "allowWatchBookmarks",
            "continue",
            "fieldSelector",
            "labelSelector",
            "limit",
            "namespace",
            "pretty",
            "resourceVersion",
            "resourceVersionMatch",
            "sendInitialEvents",
            "timeoutSeconds",
            "watch"
        ])
    );
    let item = "/apis/apps/v1/namespaces/{namespace}/deployments/{name}";
    assert_eq!(
        names(item, "delete"),
        set(&[
            "body",
            "dryRun",
            "gracePeriodSeconds",
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            "name",
            "namespace",
            "orphanDependents",
            "pretty",
            "propagationPolicy"
        ])
    );
    assert_eq!(
        names(item, "patch"),
        set(&[
            "body",
            "dryRun",
            "fieldManager",
            "fieldValidation",
            "force",
            "name",
            "namespace",
            "pretty"
        ])
    );
    assert_eq!(
        names(item, "put"),
        set(&[
            "body",
            "dryRun",
            "fieldManager",
            "fieldValidation",
            "name",
            "namespace",
            "pretty"
        ])
    );
    let validation = params(deployments, "post")
        .into_iter()
        .find(|p| p["name"] == "fieldValidation")
        .unwrap();
    assert_eq!(validation["in"], "query");
    assert_eq!(validation["type"], "string");
    // Inline on the operation, where kubectl 1.27's verifier looks.
    assert!(paths[deployments]["post"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "fieldValidation"));

    // Every reference resolves.
    let mut refs = BTreeSet::new();
    references(&doc, &mut refs);
    for r in &refs {
        let target = if let Some(name) = r.strip_prefix("#/definitions/") {
            &defs[name]
        } else if let Some(name) = r.strip_prefix("#/parameters/") {
            &doc["parameters"][name]
        } else {
            panic!("unexpected reference {r}")
        };
        assert!(target.is_object(), "{r} does not resolve");
    }
}

#[test]
fn every_registry_resource_has_its_operations() {
    let doc = v2_json();
    let mut ops = BTreeSet::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for op in item.as_object().unwrap().values() {
            if let (Some(action), Some(gvk)) = (
                op["x-kubernetes-action"].as_str(),
                op.get("x-kubernetes-group-version-kind"),
            ) {
                ops.insert((
                    gvk["group"].as_str().unwrap().to_owned(),
                    gvk["kind"].as_str().unwrap().to_owned(),
                    action.to_owned(),
                ));
            }
        }
    }
    let registry = apiary_core::registry::Registry::builtin();
    for r in registry.resources() {
        for (verb, action) in [
            ("get", "get"),
            ("list", "list"),
            ("create", "post"),
            ("update", "put"),
            ("patch", "patch"),
            ("delete", "delete"),
            ("deletecollection", "deletecollection"),
            ("watch", "watchlist"),
        ] {
            if r.has_verb(verb) {
                assert!(
                    ops.contains(&(r.group.clone(), r.kind.clone(), action.to_owned())),
                    "{} {} {action}",
                    r.group,
                    r.kind
                );
            }
        }
    }
}

#[test]
fn v2_protobuf_decodes_to_the_same_document() {
    let doc = v2_json();
    for accept in [PROTOBUF, PROTOBUF_CONTENT_TYPE] {
        let r = get("/openapi/v2", &[("accept", accept)]);
        assert_eq!(r.status(), 200);
        assert_eq!(header(&r, "content-type"), Some(PROTOBUF_CONTENT_TYPE));
        let decoded = gnostic::Document::decode(r.body().clone()).expect("a gnostic Document");
        assert_eq!(decoded.swagger, "2.0");
        assert_eq!(decoded.info.as_ref().unwrap().version, "v1.33.0");
        let paths = decoded.paths.as_ref().unwrap();
        assert_eq!(paths.path.len(), doc["paths"].as_object().unwrap().len());
        let definitions = decoded.definitions.as_ref().unwrap();
        assert_eq!(
            definitions.additional_properties.len(),
            doc["definitions"].as_object().unwrap().len()
        );
        assert_eq!(
            decoded
                .parameters
                .as_ref()
                .unwrap()
                .additional_properties
                .len(),
            doc["parameters"].as_object().unwrap().len()
        );

        // What kubectl reads: the kinds' GVK extension as YAML, and the fieldValidation
        // parameter of the PATCH of a kind (kubectl's QueryParamVerifier).
        let deployment = definitions
            .additional_properties
            .iter()
            .find(|d| d.name == "io.k8s.api.apps.v1.Deployment")
            .and_then(|d| d.value.as_ref())
            .unwrap();
        let gvk = deployment
            .vendor_extension
            .iter()
            .find(|e| e.name == "x-kubernetes-group-version-kind")
            .unwrap();
        let yaml: Value = serde_yaml::from_str(&gvk.value.as_ref().unwrap().yaml).unwrap();
        assert_eq!(
            yaml,
            json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
        );
        assert!(deployment
            .properties
            .as_ref()
            .unwrap()
            .additional_properties
            .iter()
            .any(|p| p.name == "spec"));

        let global: Vec<&gnostic::NamedParameter> = decoded
            .parameters
            .as_ref()
            .unwrap()
            .additional_properties
            .iter()
            .collect();
        let query_name = |p: &gnostic::Parameter| match &p.oneof {
            Some(gnostic::parameter::Oneof::NonBodyParameter(nb)) => match &nb.oneof {
                Some(gnostic::non_body_parameter::Oneof::QueryParameterSubSchema(q)) => {
                    Some(q.name.clone())
                }
                _ => None,
            },
            _ => None,
        };
        let mut patch_ops = 0;
        for named in &paths.path {
            let Some(patch) = named.value.as_ref().and_then(|i| i.patch.as_ref()) else {
                continue;
            };
            let gvk = patch
                .vendor_extension
                .iter()
                .find(|e| e.name == "x-kubernetes-group-version-kind")
                .unwrap();
            let gvk: Value = serde_yaml::from_str(&gvk.value.as_ref().unwrap().yaml).unwrap();
            if gvk != json!({"group": "apps", "kind": "Deployment", "version": "v1"}) {
                continue;
            }
            patch_ops += 1;
            let has = patch.parameters.iter().any(|item| match &item.oneof {
                Some(gnostic::parameters_item::Oneof::Parameter(p)) => {
                    query_name(p).as_deref() == Some("fieldValidation")
                }
                Some(gnostic::parameters_item::Oneof::JsonReference(r)) => global.iter().any(|g| {
                    format!("#/parameters/{}", g.name) == r.xref
                        && g.value.as_ref().and_then(query_name).as_deref()
                            == Some("fieldValidation")
                }),
                None => false,
            });
            assert!(has, "PATCH {} lacks fieldValidation", named.name);
        }
        assert_eq!(patch_ops, 2, "deployments and deployments/status");
    }
}

#[test]
fn v2_protobuf_models_parse_as_kubectl_parses_them() {
    // kube-openapi's proto model parser (kubectl explain v2, client-side validation):
    // every reference names a definition, arrays have exactly one item schema, and no
    // schema has more than one type.
    let r = get("/openapi/v2", &[("accept", PROTOBUF)]);
    let decoded = gnostic::Document::decode(r.body().clone()).unwrap();
    let defs = &decoded.definitions.as_ref().unwrap().additional_properties;
    let names: BTreeSet<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    fn check(s: &gnostic::Schema, names: &BTreeSet<&str>, at: &str) {
        if !s.xref.is_empty() {
            let name = s.xref.strip_prefix("#/definitions/").unwrap_or("");
            assert!(
                names.contains(name),
                "{at}: unknown model in reference {}",
                s.xref
            );
            return;
        }
        let types = s.r#type.as_ref().map(|t| t.value.len()).unwrap_or(0);
        assert!(types <= 1, "{at}: several types");
        if s.r#type.as_ref().is_some_and(|t| t.value == ["array"]) {
            assert_eq!(
                s.items.as_ref().map(|i| i.schema.len()),
                Some(1),
                "{at}: array items"
            );
        }
        for p in s.properties.iter().flat_map(|p| &p.additional_properties) {
            check(
                p.value.as_ref().unwrap(),
                names,
                &format!("{at}.{}", p.name),
            );
        }
        for i in s.items.iter().flat_map(|i| &i.schema) {
            check(i, names, &format!("{at}[]"));
        }
        if let Some(gnostic::additional_properties_item::Oneof::Schema(a)) = s
            .additional_properties
            .as_ref()
            .and_then(|a| a.oneof.as_ref())
        {
            check(a, names, &format!("{at}{{}}"));
        }
    }
    for d in defs {
        check(d.value.as_ref().unwrap(), &names, &d.name);
    }
}

#[test]
fn v2_etag_and_conditional_get() {
    let json = get("/openapi/v2", &[]);
    assert_eq!(json.status(), 200);
    assert_eq!(header(&json, "content-type"), Some("application/json"));
    assert_eq!(header(&json, "vary"), Some("Accept"));
    assert!(header(&json, "last-modified").unwrap().ends_with(" GMT"));
    let etag = header(&json, "etag").unwrap().to_owned();
    assert!(is_etag(&etag), "{etag}");
    // One ETag for both encodings (responses vary by Accept), as upstream.
    let proto = get("/openapi/v2", &[("accept", PROTOBUF)]);
    assert_eq!(header(&proto, "etag"), Some(etag.as_str()));

    for inm in [
        etag.clone(),
        format!("W/{etag}"),
        format!("\"other\", {etag}"),
        "*".to_owned(),
    ] {
        let r = get(
            "/openapi/v2",
            &[("accept", PROTOBUF), ("if-none-match", &inm)],
        );
        assert_eq!(r.status(), 304, "{inm}");
        assert!(r.body().is_empty());
        assert_eq!(header(&r, "etag"), Some(etag.as_str()));
        assert_eq!(header(&r, "content-type"), None);
        assert_eq!(header(&r, "last-modified"), None);
    }
    let r = get("/openapi/v2", &[("if-none-match", "\"stale\"")]);
    assert_eq!(r.status(), 200);
    assert!(!r.body().is_empty());
    // Not GET or HEAD: a matching ETag fails the precondition.
    let r = request("POST", "/openapi/v2", &[("if-none-match", &etag)]);
    assert_eq!(r.status(), 412);
    let r = request("HEAD", "/openapi/v2", &[]);
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "etag"), Some(etag.as_str()));
}

#[test]
fn v2_negotiation() {
    // Wildcards and no Accept at all get JSON; JSON first when equally preferred.
    for accept in [
        "*/*",
        "application/*",
        "application/json, application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
    ] {
        let r = get("/openapi/v2", &[("accept", accept)]);
        assert_eq!(
            header(&r, "content-type"),
            Some("application/json"),
            "{accept}"
        );
    }
    let r = get(
        "/openapi/v2",
        &[(
            "accept",
            "application/json;q=0.5, application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        )],
    );
    assert_eq!(header(&r, "content-type"), Some(PROTOBUF_CONTENT_TYPE));
    let r = get("/openapi/v2", &[("accept", "text/html")]);
    assert_eq!(r.status(), 406);
    assert!(r.body().is_empty());
    assert_eq!(header(&r, "vary"), Some("Accept"));
    // Only the exact path.
    assert_eq!(get("/openapi/v2/", &[]).status(), 404);
}

#[test]
fn v3_root_lists_hash_pinned_urls_that_resolve() {
    let root = get("/openapi/v3", &[("accept", "application/json")]);
    assert_eq!(root.status(), 200);
    assert_eq!(header(&root, "content-type"), Some("application/json"));
    assert!(is_etag(header(&root, "etag").unwrap()));
    let doc = json_of(&root);
    let paths = doc["paths"].as_object().unwrap();
    for key in [
        "api",
        "api/v1",
        "apis",
        "apis/apps",
        "apis/apps/v1",
        "apis/autoscaling/v2",
        "apis/rbac.authorization.k8s.io/v1",
        "version",
    ] {
        assert!(
            paths.contains_key(key),
            "{key} missing from {:?}",
            paths.keys().collect::<Vec<_>>()
        );
    }
    for (key, entry) in paths {
        let url = entry["serverRelativeURL"].as_str().unwrap();
        let (path, hash) = url.split_once("?hash=").unwrap();
        assert_eq!(path, format!("/openapi/v3/{key}"));
        assert!(is_etag(&format!("\"{hash}\"")), "{url}");
        let r = get(url, &[("accept", "application/json")]);
        assert_eq!(r.status(), 200, "{url}");
        assert_eq!(header(&r, "cache-control"), Some("public, immutable"));
        assert!(header(&r, "expires").unwrap().ends_with(" UTC"));
        assert_eq!(header(&r, "etag"), Some(format!("\"{hash}\"").as_str()));
        assert_eq!(header(&r, "vary"), Some("Accept"));
        let v3 = json_of(&r);
        assert_eq!(v3["openapi"], "3.0.0");
        // Every reference resolves within the document.
        let mut refs = BTreeSet::new();
        references(&v3, &mut refs);
        for r in refs {
            let name = r
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("{key}: {r}"));
            assert!(
                v3["components"]["schemas"][name].is_object(),
                "{key}: {r} does not resolve"
            );
        }
    }
}

#[test]
fn v3_group_version_document() {
    let r = get(
        "/openapi/v3/apis/apps/v1",
        &[("accept", "application/json")],
    );
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "cache-control"), Some("no-cache, private"));
    assert_eq!(header(&r, "expires"), None);
    let doc = json_of(&r);
    let schemas = &doc["components"]["schemas"];
    let deployment = &schemas["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        deployment["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
    // A reference with a description beside it is wrapped in allOf.
    assert_eq!(
        deployment["properties"]["spec"]["allOf"],
        json!([{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}])
    );
    // Schemas reached only through others are there; other groups' kinds are not.
    assert!(schemas["io.k8s.api.core.v1.Container"].is_object());
    assert!(schemas["io.k8s.api.autoscaling.v1.Scale"].is_object());
    assert!(schemas.get("io.k8s.api.batch.v1.Job").is_none());
    assert!(schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["oneOf"].is_array());
    assert!(doc["components"]["securitySchemes"]["BearerToken"].is_object());

    let paths = &doc["paths"];
    assert!(paths.get("/api/v1/namespaces/{namespace}/pods").is_none());
    let post = &paths["/apis/apps/v1/namespaces/{namespace}/deployments"]["post"];
    assert_eq!(post["operationId"], "createAppsV1NamespacedDeployment");
    assert_eq!(
        post["requestBody"],
        json!({"content": {"*/*": {"schema": {"$ref": "#/components/schemas/io.k8s.api.apps.v1.Deployment"}}}, "required": true})
    );
    assert_eq!(
        post["responses"]["201"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.api.apps.v1.Deployment"
    );
    assert!(post.get("consumes").is_none() && post.get("produces").is_none());
    let field_validation = post["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "fieldValidation")
        .unwrap();
    assert_eq!(field_validation["in"], "query");
    assert_eq!(field_validation["schema"]["type"], "string");

    // kubectl's v3 verifier: any PATCH operation of the kind must list fieldValidation
    // (it takes the first it finds, in no particular order).
    let mut patches = 0;
    for item in paths.as_object().unwrap().values() {
        let Some(patch) = item.get("patch") else {
            continue;
        };
        if patch["x-kubernetes-group-version-kind"]
            != json!({"group": "apps", "kind": "Deployment", "version": "v1"})
        {
            continue;
        }
        patches += 1;
        assert!(patch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation" && p["in"] == "query"));
        assert_eq!(patch["requestBody"]["required"], true);
        assert!(patch["requestBody"]["content"]["application/apply-patch+yaml"].is_object());
    }
    assert_eq!(patches, 2);
    let list = &paths["/apis/apps/v1/namespaces/{namespace}/deployments"];
    assert!(list["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "namespace" && p["required"] == true));
    assert!(
        list["get"]["responses"]["200"]["content"]["application/json;stream=watch"].is_object()
    );

    let core = json_of(&get("/openapi/v3/api/v1", &[]));
    assert!(core["components"]["schemas"]["io.k8s.api.core.v1.Pod"].is_object());
    assert_eq!(
        core["paths"]["/api/v1/namespaces/{name}"]["get"]["operationId"],
        "readCoreV1Namespace"
    );
    let version = json_of(&get("/openapi/v3/version", &[]));
    assert!(version["components"]["schemas"]["io.k8s.apimachinery.pkg.version.Info"].is_object());
}

#[test]
fn v3_caching_and_redirects() {
    let root = json_of(&get("/openapi/v3", &[]));
    let url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_owned();
    let hash = url.split_once("?hash=").unwrap().1.to_owned();

    // A stale hash redirects to the current one.
    let r = get(
        "/openapi/v3/apis/apps/v1?hash=0123",
        &[("accept", "application/json")],
    );
    assert_eq!(r.status(), 301);
    assert_eq!(header(&r, "location"), Some(url.as_str()));
    assert!(r.body().is_empty());
    assert_eq!(header(&r, "cache-control"), Some("no-cache, private"));

    // Conditional GET, pinned or not.
    for path in [url.as_str(), "/openapi/v3/apis/apps/v1"] {
        let r = get(path, &[("if-none-match", &format!("\"{hash}\""))]);
        assert_eq!(r.status(), 304, "{path}");
        assert!(r.body().is_empty());
    }
    let r = get("/openapi/v3", &[]);
    let etag = header(&r, "etag").unwrap().to_owned();
    assert_eq!(
        get("/openapi/v3", &[("if-none-match", &etag)]).status(),
        304
    );

    // Unknown documents, unacceptable types.
    let r = get("/openapi/v3/apis/nope/v1", &[]);
    assert_eq!(r.status(), 404);
    assert!(r.body().is_empty());
    assert_eq!(get("/openapi/v3/apis/apps/v1/", &[]).status(), 404);
    assert_eq!(get("/openapi/v3/", &[]).status(), 404);
    let r = get("/openapi/v3/apis/apps/v1", &[("accept", "application/yaml")]);
    assert_eq!(r.status(), 406);
    assert!(r.body().is_empty());
    let r = get(
        "/openapi/v3/apis/apps/v1",
        &[(
            "accept",
            "application/com.github.proto-openapi.spec.v3.v1.0+protobuf;q=0.4, application/json;q=0.5",
        )],
    );
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "content-type"), Some("application/json"));
}

#[test]
fn v3_protobuf_of_a_group_version() {
    let root = json_of(&get("/openapi/v3", &[]));
    let url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_owned();
    let hash = url.split_once("?hash=").unwrap().1.to_owned();
    let json = json_of(&get("/openapi/v3/apis/apps/v1", &[("accept", "application/json")]));

    // Either spelling; the answer names the current one.
    for accept in [V3_PROTOBUF, V3_PROTOBUF_DEPRECATED] {
        let r = get("/openapi/v3/apis/apps/v1", &[("accept", accept)]);
        assert_eq!(r.status(), 200, "{accept}");
        assert_eq!(header(&r, "content-type"), Some(V3_PROTOBUF), "{accept}");
        assert_eq!(header(&r, "vary"), Some("Accept"));
        assert_eq!(header(&r, "cache-control"), Some("no-cache, private"));
        assert_eq!(header(&r, "etag"), Some(format!("\"{hash}\"").as_str()));
        assert!(header(&r, "last-modified").is_some());
        let doc = gnostic_v3::Document::decode(r.body().clone()).expect("an openapi.v3.Document");
        assert_eq!(doc.openapi, "3.0.0");
        let paths: Vec<&str> = doc.paths.as_ref().unwrap().path.iter().map(|p| p.name.as_str()).collect();
        let json_paths: Vec<&str> = json["paths"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(paths, json_paths);
        let schemas = &doc.components.as_ref().unwrap().schemas.as_ref().unwrap().additional_properties;
        assert_eq!(schemas.len(), json["components"]["schemas"].as_object().unwrap().len());
        let deployment = schemas
            .iter()
            .find(|s| s.name == "io.k8s.api.apps.v1.Deployment")
            .and_then(|s| s.value.as_ref())
            .and_then(|s| match &s.oneof {
                Some(gnostic_v3::schema_or_reference::Oneof::Schema(s)) => Some(s),
                _ => None,
            })
            .expect("Deployment is a schema");
        let names: Vec<&str> = deployment
            .properties
            .as_ref()
            .unwrap()
            .additional_properties
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(names, ["apiVersion", "kind", "metadata", "spec", "status"]);
        let gvk = deployment
            .specification_extension
            .iter()
            .find(|x| x.name == "x-kubernetes-group-version-kind")
            .unwrap();
        let gvk: Value = serde_yaml::from_str(&gvk.value.as_ref().unwrap().yaml).unwrap();
        assert_eq!(gvk, json!([{"group": "apps", "kind": "Deployment", "version": "v1"}]));
    }

    // The JSON's hash pins the protobuf too; a stale one redirects.
    let r = get(&url, &[("accept", V3_PROTOBUF)]);
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "content-type"), Some(V3_PROTOBUF));
    assert_eq!(header(&r, "cache-control"), Some("public, immutable"));
    assert!(header(&r, "expires").is_some());
    let r = get("/openapi/v3/apis/apps/v1?hash=0123", &[("accept", V3_PROTOBUF)]);
    assert_eq!(r.status(), 301);
    assert_eq!(header(&r, "location"), Some(url.as_str()));
    assert!(r.body().is_empty());
    let r = get(&url, &[("accept", V3_PROTOBUF), ("if-none-match", &format!("\"{hash}\""))]);
    assert_eq!(r.status(), 304);
    assert!(r.body().is_empty());
}

/// Every schema in `v` with an `enum` keyword, by path (`…/properties/<name>` maps are
/// walked as maps of schemas, so a property called `enum` is not one).
fn enum_keywords(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "properties" {
                    for (name, s) in x.as_object().into_iter().flatten() {
                        enum_keywords(s, &format!("{at}.{name}"), out);
                    }
                } else {
                    if k == "enum" {
                        out.push(at.to_owned());
                    }
                    enum_keywords(x, &format!("{at}/{k}"), out);
                }
            }
        }
        Value::Array(xs) => xs.iter().for_each(|x| enum_keywords(x, at, out)),
        _ => {}
    }
}

/// The schema an enum table row applies to, in `schemas`.
fn enum_target<'a>(schemas: &'a Value, definition: &str, field: &str) -> &'a Value {
    use apiary_core::schema::enums::{place, Place};
    let (property, place) = place(field);
    let schema = &schemas[definition]["properties"][property];
    match place {
        Place::Property => schema,
        Place::Items => &schema["items"],
        Place::Values => &schema["additionalProperties"],
    }
}

#[test]
fn v3_enumerated_fields_carry_their_values() {
    use apiary_core::schema::enums::ENUMS;
    let core = json_of(&get(
        "/openapi/v3/api/v1",
        &[("accept", "application/json")],
    ));
    let schemas = &core["components"]["schemas"];
    let image_pull_policy =
        &schemas["io.k8s.api.core.v1.Container"]["properties"]["imagePullPolicy"];
    assert_eq!(
        image_pull_policy["enum"],
        json!(["Always", "IfNotPresent", "Never"])
    );
    assert_eq!(image_pull_policy["type"], "string");
    assert!(image_pull_policy["description"].is_string());
    let spec = &schemas["io.k8s.api.core.v1.ServiceSpec"]["properties"];
    assert_eq!(
        spec["type"]["enum"],
        json!(["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"])
    );
    // On array items and map values, as upstream places them.
    assert_eq!(
        spec["ipFamilies"]["items"]["enum"],
        json!(["", "IPv4", "IPv6"])
    );
    assert!(spec["ipFamilies"].get("enum").is_none());
    let pvc_status = &schemas["io.k8s.api.core.v1.PersistentVolumeClaimStatus"]["properties"];
    assert_eq!(
        pvc_status["accessModes"]["items"]["enum"],
        json!([
            "ReadOnlyMany",
            "ReadWriteMany",
            "ReadWriteOnce",
            "ReadWriteOncePod"
        ])
    );
    assert_eq!(
        pvc_status["allocatedResourceStatuses"]["additionalProperties"]["enum"],
        json!([
            "ControllerResizeInProgress",
            "ControllerResizeInfeasible",
            "NodeResizeInProgress",
            "NodeResizeInfeasible",
            "NodeResizePending"
        ])
    );

    // Every row whose definition a document carries is applied there, and nothing else
    // has an enum: api/v1 and apps/v1 (which carries the core types of its pod
    // templates), and every other document.
    let root = json_of(&get("/openapi/v3", &[]));
    let mut applied = BTreeSet::new();
    for key in root["paths"].as_object().unwrap().keys() {
        let doc = json_of(&get(&format!("/openapi/v3/{key}"), &[]));
        let schemas = &doc["components"]["schemas"];
        let mut expected = Vec::new();
        for &(definition, field, values) in ENUMS {
            if schemas.get(definition).is_none() {
                continue;
            }
            let target = enum_target(schemas, definition, field);
            assert_eq!(target["enum"], json!(values), "{key}: {definition}.{field}");
            assert_eq!(target["type"], "string", "{key}: {definition}.{field}");
            applied.insert((definition, field));
            expected.push((definition, field));
        }
        let mut found = Vec::new();
        enum_keywords(schemas, "", &mut found);
        assert_eq!(found.len(), expected.len(), "{key}: {found:?}");
        if key == "apis/apps/v1" {
            for (definition, field) in [
                ("io.k8s.api.apps.v1.DeploymentStrategy", "type"),
                ("io.k8s.api.apps.v1.StatefulSetSpec", "podManagementPolicy"),
                ("io.k8s.api.core.v1.Container", "imagePullPolicy"),
                ("io.k8s.api.core.v1.PodSpec", "restartPolicy"),
                ("io.k8s.api.core.v1.PodSpec", "dnsPolicy"),
                ("io.k8s.api.core.v1.ContainerPort", "protocol"),
                (
                    "io.k8s.api.core.v1.PersistentVolumeClaimSpec",
                    "accessModes[]",
                ),
            ] {
                assert!(
                    expected.contains(&(definition, field)),
                    "apps/v1 lacks {definition}.{field}"
                );
            }
            assert_eq!(
                schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["restartPolicy"]["enum"],
                json!(["Always", "Never", "OnFailure"])
            );
        }
    }
    // Every row reaches some document.
    assert_eq!(applied.len(), ENUMS.len());
}

#[test]
fn v2_carries_the_same_enums() {
    let doc = v2_json();
    let mut found = Vec::new();
    enum_keywords(&doc["definitions"], "", &mut found);
    assert_eq!(
        found.len(),
        apiary_core::schema::enums::ENUMS.len(),
        "{found:?}"
    );
    assert_eq!(
        doc["definitions"]["io.k8s.api.core.v1.Container"]["properties"]["imagePullPolicy"]["enum"],
        json!(["Always", "IfNotPresent", "Never"])
    );
}

//! flowcontrol.apiserver.k8s.io/v1 and apiregistration.k8s.io/v1 over the whole server:
//! FlowSchemas, PriorityLevelConfigurations and APIServices are created, read, listed
//! and updated with upstream's defaults and refusals; their status is written only
//! through `/status` (which changes nothing else); and the server writes upstream's
//! APF bootstrap configuration at start and keeps it as upstream's ensurer does (a
//! deleted mandatory object written back on its next pass).

use apiary_core::bootstrap::Bootstrap;
use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

const FLOWCONTROL: &str = "/apis/flowcontrol.apiserver.k8s.io/v1";
const APIREGISTRATION: &str = "/apis/apiregistration.k8s.io/v1";
const JSON: &str = "application/json";

fn call(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    h.json_call(method, path, JSON, body)
}

fn server() -> Harness<MemoryStore> {
    let h = Harness::new(Config::default(), MemoryStore::new());
    h.act_as(Some("admin"), &["system:masters"]);
    h
}

fn names(list: &Value) -> Vec<String> {
    list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_owned()).collect()
}

/// Upstream's bootstrap configuration as recorded from a real kube-apiserver.
fn recorded_bootstrap() -> Value {
    let path = format!("{}/../../shared/upstream/bootstrap/flowcontrol.json", env!("CARGO_MANIFEST_DIR"));
    let fallback = format!("{}/src/bootstrap/flowcontrol.json", env!("CARGO_MANIFEST_DIR"));
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        // Without the shared recordings, the trimmed copy beside the code.
        Err(_) => {
            let objects: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(fallback).unwrap()).unwrap();
            let of = |kind: &str| objects.iter().filter(|o| o["kind"] == kind).cloned().collect::<Vec<_>>();
            json!({"flowSchemas": of("FlowSchema"), "priorityLevelConfigurations": of("PriorityLevelConfiguration")})
        }
    }
}

#[test]
fn the_bootstrap_configuration_is_upstreams() {
    let h = server();
    let recorded = recorded_bootstrap();
    for (plural, key) in [("flowschemas", "flowSchemas"), ("prioritylevelconfigurations", "priorityLevelConfigurations")] {
        let list = call(&h, "GET", &format!("{FLOWCONTROL}/{plural}"), None).json();
        let want = recorded[key].as_array().unwrap();
        let mut want_names: Vec<String> = want.iter().map(|o| o["metadata"]["name"].as_str().unwrap().to_owned()).collect();
        want_names.sort();
        assert_eq!(names(&list), want_names, "{plural}");
        for item in list["items"].as_array().unwrap() {
            let name = &item["metadata"]["name"];
            let w = want.iter().find(|o| &o["metadata"]["name"] == name).unwrap();
            assert_eq!(item["spec"], w["spec"], "{plural} {name}");
            assert_eq!(item["metadata"]["annotations"], json!({"apf.kubernetes.io/autoupdate-spec": "true"}));
            assert_eq!(item["metadata"]["generation"], 1);
            // The status is another controller's to write: at most its Dangling condition.
            let conditions = item["status"]["conditions"].as_array().map_or(&[][..], Vec::as_slice);
            assert!(conditions.iter().all(|c| c["type"] == "Dangling"), "{plural} {name}: {}", item["status"]);
        }
    }
}

#[test]
fn the_ensurer_writes_back_mandatory_objects_and_keeps_what_users_own() {
    let h = server();
    // Deleted, the mandatory schema is written back by the ensurer's next pass, which
    // runs as soon as the schemas change (upstream's runs every minute).
    let exempt = format!("{FLOWCONTROL}/flowschemas/exempt");
    let uid = call(&h, "GET", &exempt, None).json()["metadata"]["uid"].clone();
    assert_eq!(call(&h, "DELETE", &exempt, None).status, 200);
    let back = call(&h, "GET", &exempt, None).json();
    assert_ne!(back["metadata"]["uid"], uid, "a new object");
    assert_eq!(back["spec"]["matchingPrecedence"], 1);

    // A suggested schema a user took over (annotation false) keeps the user's spec; one
    // the server keeps is made its own again.
    let global = format!("{FLOWCONTROL}/flowschemas/global-default");
    let mut taken = call(&h, "GET", &global, None).json();
    taken["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"] = json!("false");
    taken["spec"]["matchingPrecedence"] = json!(9800);
    assert_eq!(call(&h, "PUT", &global, Some(&taken)).status, 200);
    assert_eq!(call(&h, "GET", &global, None).json()["spec"]["matchingPrecedence"], 9800);
    let service_accounts = format!("{FLOWCONTROL}/flowschemas/service-accounts");
    let mut kept = call(&h, "GET", &service_accounts, None).json();
    kept["spec"]["matchingPrecedence"] = json!(8000);
    assert_eq!(call(&h, "PUT", &service_accounts, Some(&kept)).status, 200);
    let restored = call(&h, "GET", &service_accounts, None).json();
    assert_eq!(restored["spec"]["matchingPrecedence"], 9000);
    assert_eq!(restored["metadata"]["generation"], 3);
    // Without the annotation, a spec someone changed (generation past 1) is theirs.
    let nodes = format!("{FLOWCONTROL}/flowschemas/system-nodes");
    let mut unannotated = call(&h, "GET", &nodes, None).json();
    unannotated["metadata"]["annotations"] = json!({});
    unannotated["spec"]["matchingPrecedence"] = json!(600);
    assert_eq!(call(&h, "PUT", &nodes, Some(&unannotated)).status, 200);
    let theirs = call(&h, "GET", &nodes, None).json();
    assert_eq!(theirs["spec"]["matchingPrecedence"], 600);
    assert_eq!(theirs["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"], "false");

    // A schema the server kept once but no longer ships goes; a user's own stays.
    let leftover = json!({"metadata": {"name": "retired", "annotations": {"apf.kubernetes.io/autoupdate-spec": "true"}},
        "spec": {"priorityLevelConfiguration": {"name": "global-default"}}});
    assert_eq!(call(&h, "POST", &format!("{FLOWCONTROL}/flowschemas"), Some(&leftover)).status, 201);
    assert_eq!(call(&h, "GET", &format!("{FLOWCONTROL}/flowschemas/retired"), None).status, 404);
    let own = json!({"metadata": {"name": "mine"}, "spec": {"priorityLevelConfiguration": {"name": "global-default"}}});
    assert_eq!(call(&h, "POST", &format!("{FLOWCONTROL}/flowschemas"), Some(&own)).status, 201);
    assert_eq!(call(&h, "GET", &format!("{FLOWCONTROL}/flowschemas/mine"), None).status, 200);

    // The start-up pass run again finds nothing to do.
    h.run_bootstrap(Bootstrap::flowcontrol()).unwrap();
    assert_eq!(call(&h, "GET", &global, None).json()["spec"]["matchingPrecedence"], 9800);
    assert_eq!(call(&h, "GET", &nodes, None).json()["metadata"]["generation"], 2);
}

#[test]
fn schemas_and_levels_take_defaults_count_generations_and_keep_status_apart() {
    let h = server();
    let levels = format!("{FLOWCONTROL}/prioritylevelconfigurations");
    let level = json!({"metadata": {"name": "l"}, "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}});
    let created = call(&h, "POST", &levels, Some(&level));
    assert_eq!(created.status, 201, "{}", created.json());
    let mut stored = created.json();
    assert_eq!(stored["spec"]["limited"], json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
        "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}}}));
    assert_eq!(stored["metadata"]["generation"], 1);

    // A spec change is a generation; a status written through the main resource is not kept.
    stored["spec"]["limited"]["nominalConcurrencyShares"] = json!(5);
    stored["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
    let updated = call(&h, "PUT", &format!("{levels}/l"), Some(&stored)).json();
    assert_eq!(updated["metadata"]["generation"], 2);
    assert_eq!(updated["status"], json!({}));

    // Through /status only the status changes, and it is checked.
    let mut status = updated.clone();
    status["spec"]["limited"]["nominalConcurrencyShares"] = json!(99);
    status["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
    let written = call(&h, "PUT", &format!("{levels}/l/status"), Some(&status));
    assert_eq!(written.status, 200, "{}", written.json());
    assert_eq!(written.json()["spec"]["limited"]["nominalConcurrencyShares"], 5);
    assert_eq!(written.json()["status"]["conditions"][0]["type"], "Ready");
    assert_eq!(written.json()["metadata"]["generation"], 2);
    let mut twice = written.json();
    twice["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}, {"type": "Ready", "status": "False"}]);
    let refused = call(&h, "PUT", &format!("{levels}/l/status"), Some(&twice));
    assert_eq!(refused.status, 422);
    assert_eq!(refused.json()["details"]["causes"][0]["field"], "status.conditions[1].type");

    // A schema: precedence defaulted, listed with the bootstrap ones.
    let schemas = format!("{FLOWCONTROL}/flowschemas");
    let schema = json!({"metadata": {"name": "s", "labels": {"t": "x"}}, "spec": {"priorityLevelConfiguration": {"name": "l"},
        "rules": [{"subjects": [{"kind": "Group", "group": {"name": "g"}}], "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/x/*"]}]}]}});
    let created = call(&h, "POST", &schemas, Some(&schema)).json();
    assert_eq!(created["spec"]["matchingPrecedence"], 1000);
    let listed = call(&h, "GET", &format!("{schemas}?labelSelector=t%3Dx"), None).json();
    assert_eq!(names(&listed), ["s"]);

    // A refusal in upstream's words.
    let bad = json!({"metadata": {"name": "b"}, "spec": {"matchingPrecedence": 1, "priorityLevelConfiguration": {"name": "l"}}});
    let refused = call(&h, "POST", &schemas, Some(&bad)).json();
    assert_eq!(refused["message"], "FlowSchema.flowcontrol.apiserver.k8s.io \"b\" is invalid: spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1");
}

#[test]
fn api_services_are_local_and_available_or_name_a_service() {
    let h = server();
    let path = format!("{APIREGISTRATION}/apiservices");
    let local = json!({"metadata": {"name": "v1.example.com"}, "spec": {"group": "example.com", "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10}});
    let created = call(&h, "POST", &path, Some(&local));
    assert_eq!(created.status, 201, "{}", created.json());
    let stored = created.json();
    assert_eq!(stored["status"]["conditions"][0]["reason"], "Local");
    assert_eq!(stored["status"]["conditions"][0]["lastTransitionTime"], stored["metadata"]["creationTimestamp"]);
    assert!(stored["metadata"].get("generation").is_none());

    // The status changes only through /status, where a condition's status is checked.
    let mut status = stored.clone();
    status["spec"]["versionPriority"] = json!(11);
    status["status"]["conditions"][0]["status"] = json!("Maybe");
    let refused = call(&h, "PUT", &format!("{path}/v1.example.com/status"), Some(&status)).json();
    assert_eq!(refused["details"]["causes"][0]["message"], r#"Unsupported value: "Maybe": supported values: "True", "False", "Unknown""#);
    status["status"]["conditions"][0]["status"] = json!("False");
    let written = call(&h, "PUT", &format!("{path}/v1.example.com/status"), Some(&status)).json();
    assert_eq!(written["spec"]["versionPriority"], 10);
    assert_eq!(written["status"]["conditions"][0]["status"], "False");

    let remote = json!({"metadata": {"name": "v1beta1.example.com"}, "spec": {"group": "example.com", "version": "v1beta1", "groupPriorityMinimum": 100,
        "versionPriority": 5, "service": {"namespace": "ns", "name": "api"}}});
    let created = call(&h, "POST", &path, Some(&remote)).json();
    assert_eq!(created["spec"]["service"]["port"], 443);
    assert_eq!(created["status"], json!({}));
    let mismatch = json!({"metadata": {"name": "v2.example.com"}, "spec": {"group": "example.com", "version": "v1", "groupPriorityMinimum": 1, "versionPriority": 1}});
    let refused = call(&h, "POST", &path, Some(&mismatch)).json();
    assert_eq!(refused["details"]["causes"][0]["field"], "metadata.name");
    // Beside those the server registers for its own group versions.
    let listed = names(&call(&h, "GET", &path, None).json());
    let mine: Vec<&String> = listed.iter().filter(|n| n.ends_with(".example.com")).collect();
    assert_eq!(mine, ["v1.example.com", "v1beta1.example.com"]);
    assert!(listed.contains(&"v1.apps".to_owned()));
    assert_eq!(call(&h, "DELETE", &format!("{path}/v1beta1.example.com"), None).status, 200);
}

#[test]
fn openapi_v3_describes_the_kinds_as_upstream() {
    let h = server();
    let doc = call(&h, "GET", "/openapi/v3/apis/flowcontrol.apiserver.k8s.io/v1", None).json();
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["io.k8s.api.flowcontrol.v1.LimitResponse"]["x-kubernetes-unions"],
        json!([{"discriminator": "type", "fields-to-discriminateBy": {"queuing": "Queuing"}}])
    );
    assert_eq!(schemas["io.k8s.api.flowcontrol.v1.FlowSchemaSpec"]["properties"]["rules"]["x-kubernetes-list-type"], "atomic");
    assert_eq!(schemas["io.k8s.api.flowcontrol.v1.FlowSchemaStatus"]["properties"]["conditions"]["x-kubernetes-list-map-keys"], json!(["type"]));
    let doc = call(&h, "GET", "/openapi/v3/apis/apiregistration.k8s.io/v1", None).json();
    let service = &doc["components"]["schemas"]["io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService"];
    assert_eq!(service["x-kubernetes-group-version-kind"], json!([{"group": "apiregistration.k8s.io", "kind": "APIService", "version": "v1"}]));
}

/// The rows of a Table in its order, without the cells that read the clock (Age) or a
/// status (MissingPL), and without the recorder's own objects.
fn rows(table: &Value) -> Vec<Vec<Value>> {
    let columns: Vec<&str> = table["columnDefinitions"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let cells = r["cells"].as_array().unwrap();
            columns.iter().zip(cells).filter(|(c, _)| !matches!(**c, "Age" | "MissingPL")).map(|(_, v)| v.clone()).collect()
        })
        .filter(|cells: &Vec<Value>| !cells[0].as_str().unwrap().starts_with("refb-"))
        .collect()
}

/// Upstream lists schemas in a Table by matching precedence, then name; levels by name.
#[test]
fn the_bootstrap_objects_tables_are_upstreams() {
    let h = server();
    for plural in ["flowschemas", "prioritylevelconfigurations"] {
        let file = format!("{}/tests/upstream/tables/flowcontrol.apiserver.k8s.io_v1_{plural}.json", env!("CARGO_MANIFEST_DIR"));
        let recorded: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let request = format!("GET {FLOWCONTROL}/{plural} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json;as=Table;v=v1;g=meta.k8s.io\r\n\r\n");
        let table = parse_responses(&h.send(request.as_bytes())).unwrap().remove(0).json();
        assert_eq!(rows(&table), rows(&recorded["table_all_including_bootstrap"]), "{plural}");
    }
}

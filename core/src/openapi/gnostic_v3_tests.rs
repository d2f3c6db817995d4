//! The v3 protobuf: what it decodes to against the JSON it was made from, its raw wire
//! form read without our structs, and the content negotiation that picks it.

use super::gnostic::yaml_text;
use super::gnostic_v3 as pb;
use super::*;
use http::{HeaderMap, Method};
use prost::Message;
use serde_json::json;
use std::time::{Duration, UNIX_EPOCH};

fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_795_000_000)
}

/// The built-in documents, built once for the tests of this file.
fn builtin_v3() -> &'static V3 {
    builtin().v3(now())
}

fn core_v1() -> (Value, pb::Document) {
    let doc = &builtin_v3().documents["api/v1"];
    let json: Value = serde_json::from_slice(&doc.bytes).unwrap();
    let decoded = pb::Document::decode(doc.protobuf().clone()).expect("a gnostic v3 Document");
    (json, decoded)
}

/// The `x-` entries of a JSON object as (name, YAML text) pairs, in order.
fn json_extensions(v: &Value) -> Vec<(String, String)> {
    v.as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.starts_with("x-"))
        .map(|(k, x)| (k.clone(), yaml_text(x)))
        .collect()
}

fn proto_extensions(xs: &[pb::NamedAny]) -> Vec<(String, String)> {
    xs.iter()
        .map(|x| (x.name.clone(), x.value.as_ref().unwrap().yaml.clone()))
        .collect()
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .collect()
}

/// Asserts that a decoded schema-or-reference says what its JSON says, recursively.
fn same_schema(json: &Value, proto: &pb::SchemaOrReference, at: &str) {
    use pb::schema_or_reference::Oneof;
    match (json.get("$ref"), proto.oneof.as_ref()) {
        (Some(r), Some(Oneof::Reference(p))) => {
            assert_eq!(Some(p.xref.as_str()), r.as_str(), "{at}")
        }
        (None, Some(Oneof::Schema(s))) => same_plain_schema(json, s, at),
        (r, other) => panic!("{at}: $ref {r:?} against {other:?}"),
    }
}

fn same_plain_schema(json: &Value, s: &pb::Schema, at: &str) {
    let str_of = |k: &str| json.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    assert_eq!(s.r#type, str_of("type"), "{at} type");
    assert_eq!(s.format, str_of("format"), "{at} format");
    assert_eq!(s.description, str_of("description"), "{at} description");
    let required: Vec<String> = json
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| r.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(s.required, required, "{at} required");
    let enums: Vec<String> = json
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(yaml_text)
        .collect();
    assert_eq!(
        s.r#enum.iter().map(|a| a.yaml.clone()).collect::<Vec<_>>(),
        enums,
        "{at} enum"
    );
    assert_eq!(
        proto_extensions(&s.specification_extension),
        json_extensions(json),
        "{at} extensions"
    );
    match (json.get("properties"), &s.properties) {
        (None, None) => {}
        (Some(props), Some(p)) => {
            let names: Vec<&str> = p
                .additional_properties
                .iter()
                .map(|n| n.name.as_str())
                .collect();
            assert_eq!(names, keys(props), "{at} properties");
            for n in &p.additional_properties {
                same_schema(
                    &props[&n.name],
                    n.value.as_ref().unwrap(),
                    &format!("{at}.{}", n.name),
                );
            }
        }
        (j, p) => panic!("{at}: properties {j:?} against {p:?}"),
    }
    match (json.get("items"), &s.items) {
        (None, None) => {}
        (Some(items), Some(i)) => {
            assert_eq!(i.schema_or_reference.len(), 1, "{at} items");
            same_schema(items, &i.schema_or_reference[0], &format!("{at}[]"));
        }
        (j, p) => panic!("{at}: items {j:?} against {p:?}"),
    }
    for (key, list) in [
        ("allOf", &s.all_of),
        ("oneOf", &s.one_of),
        ("anyOf", &s.any_of),
    ] {
        let xs = json
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        assert_eq!(list.len(), xs.len(), "{at} {key}");
        for (i, (x, p)) in xs.iter().zip(list).enumerate() {
            same_schema(x, p, &format!("{at}/{key}/{i}"));
        }
    }
    use pb::additional_properties_item::Oneof as Additional;
    match (
        json.get("additionalProperties"),
        s.additional_properties
            .as_ref()
            .and_then(|a| a.oneof.as_ref()),
    ) {
        (None, None) => {}
        (Some(Value::Bool(b)), Some(Additional::Boolean(p))) => assert_eq!(b, p, "{at}"),
        (Some(x), Some(Additional::SchemaOrReference(p))) => {
            same_schema(x, p, &format!("{at}{{}}"))
        }
        (j, p) => panic!("{at}: additionalProperties {j:?} against {p:?}"),
    }
    use pb::default_type::Oneof as Default;
    match (json.get("default"), s.default.as_ref().map(|d| &d.oneof)) {
        (None, None) => {}
        (Some(Value::String(j)), Some(Some(Default::String(p)))) => assert_eq!(j, p, "{at}"),
        (Some(Value::Bool(j)), Some(Some(Default::Boolean(p)))) => assert_eq!(j, p, "{at}"),
        (Some(Value::Number(j)), Some(Some(Default::Number(p)))) => {
            assert_eq!(j.as_f64(), Some(*p), "{at}")
        }
        (Some(Value::Object(_) | Value::Array(_)), Some(None)) => {}
        (j, p) => panic!("{at}: default {j:?} against {p:?}"),
    }
}

#[test]
fn core_v1_protobuf_decodes_to_its_json() {
    let (json, doc) = core_v1();
    assert_eq!(doc.openapi, "3.0.0");
    let info = doc.info.as_ref().unwrap();
    assert_eq!(info.title, "Kubernetes");
    assert_eq!(info.version, json["info"]["version"].as_str().unwrap());

    // Paths, in the JSON's order, with their operations.
    let paths = &doc.paths.as_ref().unwrap().path;
    assert_eq!(
        paths.iter().map(|p| p.name.clone()).collect::<Vec<_>>(),
        keys(&json["paths"])
    );
    assert!(paths.len() > 50, "core/v1 has many paths");
    let mut operations = 0;
    for named in paths {
        let item = named.value.as_ref().unwrap();
        let j = &json["paths"][&named.name];
        let ops = [
            ("get", &item.get),
            ("put", &item.put),
            ("post", &item.post),
            ("delete", &item.delete),
            ("patch", &item.patch),
            ("head", &item.head),
            ("options", &item.options),
        ];
        assert_eq!(
            item.parameters.len(),
            j.get("parameters")
                .and_then(Value::as_array)
                .map_or(0, Vec::len),
            "{}",
            named.name
        );
        for (method, op) in ops {
            let jop = j.get(method);
            assert_eq!(op.is_some(), jop.is_some(), "{} {method}", named.name);
            let (Some(op), Some(jop)) = (op, jop) else {
                continue;
            };
            operations += 1;
            let at = format!("{method} {}", named.name);
            assert_eq!(
                op.operation_id,
                jop["operationId"].as_str().unwrap(),
                "{at}"
            );
            assert_eq!(
                op.description,
                jop["description"].as_str().unwrap_or(""),
                "{at}"
            );
            assert_eq!(
                op.tags,
                jop["tags"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_str().unwrap())
                    .collect::<Vec<_>>()
            );
            assert_eq!(
                proto_extensions(&op.specification_extension),
                json_extensions(jop),
                "{at}"
            );
            // Parameters: inline, with a schema holding their type.
            let jparams = jop
                .get("parameters")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            assert_eq!(op.parameters.len(), jparams.len(), "{at}");
            for (p, jp) in op.parameters.iter().zip(&jparams) {
                let Some(pb::parameter_or_reference::Oneof::Parameter(p)) = &p.oneof else {
                    panic!("{at}: an inline parameter");
                };
                assert_eq!(p.name, jp["name"].as_str().unwrap());
                assert_eq!(p.r#in, jp["in"].as_str().unwrap());
                same_schema(
                    &jp["schema"],
                    p.schema.as_ref().unwrap(),
                    &format!("{at} {}", p.name),
                );
            }
            // The body, by media type.
            match (&op.request_body, jop.get("requestBody")) {
                (None, None) => {}
                (Some(b), Some(jb)) => {
                    let Some(pb::request_body_or_reference::Oneof::RequestBody(b)) = &b.oneof
                    else {
                        panic!("{at}: an inline body");
                    };
                    assert_eq!(b.required, jb["required"].as_bool().unwrap_or(false));
                    let content = &b.content.as_ref().unwrap().additional_properties;
                    assert_eq!(
                        content.iter().map(|m| m.name.clone()).collect::<Vec<_>>(),
                        keys(&jb["content"])
                    );
                    for m in content {
                        let schema = m.value.as_ref().unwrap().schema.as_ref().unwrap();
                        same_schema(&jb["content"][&m.name]["schema"], schema, &at);
                    }
                }
                (b, jb) => panic!("{at}: body {b:?} against {jb:?}"),
            }
            // Responses, by status code.
            let responses = op.responses.as_ref().unwrap();
            assert!(responses.default.is_none());
            assert_eq!(
                responses
                    .response_or_reference
                    .iter()
                    .map(|r| r.name.clone())
                    .collect::<Vec<_>>(),
                keys(&jop["responses"]),
                "{at}"
            );
            for r in &responses.response_or_reference {
                let Some(pb::response_or_reference::Oneof::Response(resp)) =
                    &r.value.as_ref().unwrap().oneof
                else {
                    panic!("{at}: an inline response");
                };
                let jr = &jop["responses"][&r.name];
                assert_eq!(resp.description, jr["description"].as_str().unwrap());
                let media = resp
                    .content
                    .as_ref()
                    .map(|c| {
                        c.additional_properties
                            .iter()
                            .map(|m| m.name.clone())
                            .collect()
                    })
                    .unwrap_or_else(Vec::new);
                assert_eq!(media, keys(&jr["content"]), "{at} {}", r.name);
            }
        }
    }
    assert!(operations > 100, "{operations} operations");

    // Component schemas: every one, recursively.
    let components = doc.components.as_ref().unwrap();
    let schemas = &components.schemas.as_ref().unwrap().additional_properties;
    assert_eq!(
        schemas.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
        keys(&json["components"]["schemas"])
    );
    for s in schemas {
        same_schema(
            &json["components"]["schemas"][&s.name],
            s.value.as_ref().unwrap(),
            &s.name,
        );
    }
    let pod = schemas
        .iter()
        .find(|s| s.name == "io.k8s.api.core.v1.Pod")
        .unwrap();
    let Some(pb::schema_or_reference::Oneof::Schema(pod)) = &pod.value.as_ref().unwrap().oneof
    else {
        panic!("Pod is a schema");
    };
    let gvk = pod
        .specification_extension
        .iter()
        .find(|x| x.name == "x-kubernetes-group-version-kind")
        .expect("Pod names its kind");
    let gvk: Value = serde_yaml::from_str(&gvk.value.as_ref().unwrap().yaml).unwrap();
    assert_eq!(
        gvk,
        json!([{ "group": "", "kind": "Pod", "version": "v1" }])
    );
    // `metadata` is a reference wrapped with its description in allOf.
    let metadata = &pod.properties.as_ref().unwrap().additional_properties;
    let metadata = metadata.iter().find(|p| p.name == "metadata").unwrap();
    let Some(pb::schema_or_reference::Oneof::Schema(metadata)) =
        &metadata.value.as_ref().unwrap().oneof
    else {
        panic!("metadata has siblings beside its reference");
    };
    let Some(pb::schema_or_reference::Oneof::Reference(r)) = &metadata.all_of[0].oneof else {
        panic!("allOf holds the reference");
    };
    assert_eq!(
        r.xref,
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );

    let schemes = &components
        .security_schemes
        .as_ref()
        .unwrap()
        .additional_properties;
    assert_eq!(schemes.len(), 1);
    assert_eq!(schemes[0].name, "BearerToken");
    let Some(pb::security_scheme_or_reference::Oneof::SecurityScheme(bearer)) =
        &schemes[0].value.as_ref().unwrap().oneof
    else {
        panic!("an inline scheme");
    };
    assert_eq!(
        (bearer.r#type.as_str(), bearer.r#in.as_str()),
        ("apiKey", "header")
    );
}

#[test]
fn every_v3_document_has_a_protobuf_that_decodes() {
    for (key, doc) in &builtin_v3().documents {
        let json: Value = serde_json::from_slice(&doc.bytes).unwrap();
        let decoded = pb::Document::decode(doc.protobuf().clone()).unwrap();
        assert_eq!(
            decoded.paths.unwrap().path.len(),
            json["paths"].as_object().unwrap().len(),
            "{key}"
        );
        assert_eq!(
            decoded
                .components
                .unwrap()
                .schemas
                .map_or(0, |s| s.additional_properties.len()),
            json["components"]["schemas"].as_object().unwrap().len(),
            "{key}"
        );
        // Re-encoding what was decoded gives the same bytes: nothing was lost to an
        // unknown field.
        let again = pb::Document::decode(doc.protobuf().clone())
            .unwrap()
            .encode_to_vec();
        assert_eq!(again, doc.protobuf().as_ref(), "{key}");
    }
}

#[test]
fn schema_keywords_map_as_gnostic_reads_them() {
    let s = pb::SchemaOrReference::from_json(&json!({
        "type": "object",
        "default": {"a": 1},
        "additionalProperties": false,
        "nullable": true,
        "not": {"type": "string"},
        "x-kubernetes-preserve-unknown-fields": true,
    }));
    let Some(pb::schema_or_reference::Oneof::Schema(s)) = s.oneof else {
        panic!()
    };
    assert!(s.nullable);
    assert_eq!(
        s.default,
        Some(pb::DefaultType { oneof: None }),
        "an object default has no arm"
    );
    assert_eq!(
        s.additional_properties.unwrap().oneof,
        Some(pb::additional_properties_item::Oneof::Boolean(false))
    );
    assert_eq!(s.not.unwrap().r#type, "string");
    assert_eq!(
        proto_extensions(&s.specification_extension),
        [(
            "x-kubernetes-preserve-unknown-fields".to_owned(),
            "true".to_owned()
        )]
    );
    for (default, arm) in [
        (json!(3), pb::default_type::Oneof::Number(3.0)),
        (json!(0.5), pb::default_type::Oneof::Number(0.5)),
        (json!(true), pb::default_type::Oneof::Boolean(true)),
        (
            json!("Always"),
            pb::default_type::Oneof::String("Always".into()),
        ),
    ] {
        let s = pb::Schema::from_json(&json!({ "default": default }));
        assert_eq!(s.default.unwrap().oneof, Some(arm));
    }
    // A reference keeps only what a Reference holds.
    let r = pb::SchemaOrReference::from_json(
        &json!({"$ref": "#/components/schemas/X", "description": "d"}),
    );
    assert_eq!(
        r.oneof,
        Some(pb::schema_or_reference::Oneof::Reference(pb::Reference {
            xref: "#/components/schemas/X".into(),
            summary: String::new(),
            description: "d".into(),
        }))
    );
    // Only `/` keys are paths; only `default` and status codes are responses.
    let doc = pb::Document::from_json(&json!({
        "openapi": "3.0.0",
        "info": {"title": "t", "version": "v"},
        "paths": {
            "/a": {"get": {"responses": {"200": {"description": "OK"}, "default": {"description": "else"}, "x-r": 1}}},
            "x-p": "e",
        },
    }));
    let paths = doc.paths.unwrap();
    assert_eq!(paths.path.len(), 1);
    assert_eq!(
        proto_extensions(&paths.specification_extension),
        [("x-p".to_owned(), "\"e\"".to_owned())]
    );
    let responses = paths.path[0]
        .value
        .as_ref()
        .unwrap()
        .get
        .as_ref()
        .unwrap()
        .responses
        .clone()
        .unwrap();
    assert!(responses.default.is_some());
    assert_eq!(responses.response_or_reference.len(), 1);
    assert_eq!(responses.specification_extension.len(), 1);
}

// ---------------------------------------------------------------------------------
// The raw wire form, read with nothing but the field numbers of OpenAPIv3.proto, so a
// wrong number in our structs (which would still round-trip through themselves) fails.

/// The fields of one message: (field number, wire type, payload). Varints are kept
/// as their value's little-endian bytes; length-delimited payloads as they are.
fn fields(mut b: &[u8]) -> Vec<(u64, u8, Vec<u8>)> {
    fn varint(b: &mut &[u8]) -> u64 {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = b[0];
            *b = &b[1..];
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                break;
            }
        }
        v
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let key = varint(&mut b);
        let (number, wire) = (key >> 3, (key & 7) as u8);
        let payload = match wire {
            0 => varint(&mut b).to_le_bytes().to_vec(),
            1 => {
                let (x, rest) = b.split_at(8);
                b = rest;
                x.to_vec()
            }
            2 => {
                let n = varint(&mut b) as usize;
                let (x, rest) = b.split_at(n);
                b = rest;
                x.to_vec()
            }
            5 => {
                let (x, rest) = b.split_at(4);
                b = rest;
                x.to_vec()
            }
            other => panic!("wire type {other}"),
        };
        out.push((number, wire, payload));
    }
    out
}

fn all(b: &[u8], number: u64) -> Vec<Vec<u8>> {
    fields(b)
        .into_iter()
        .filter(|(n, wire, _)| *n == number && *wire == 2)
        .map(|(_, _, p)| p)
        .collect()
}

fn one(b: &[u8], number: u64) -> Vec<u8> {
    let mut found = all(b, number);
    assert_eq!(found.len(), 1, "field {number} once");
    found.remove(0)
}

fn string(b: &[u8], number: u64) -> String {
    String::from_utf8(one(b, number)).unwrap()
}

#[test]
fn core_v1_wire_form_has_the_published_field_numbers() {
    let doc = &builtin_v3().documents["api/v1"];
    let json: Value = serde_json::from_slice(&doc.bytes).unwrap();
    let raw = doc.protobuf().as_ref();

    // Document: openapi = 1, info = 2, paths = 4, components = 5.
    assert_eq!(string(raw, 1), "3.0.0");
    let info = one(raw, 2);
    // Info: title = 1, version = 6.
    assert_eq!(string(&info, 1), "Kubernetes");
    assert_eq!(string(&info, 6), json["info"]["version"].as_str().unwrap());

    // Paths: path = 1 (NamedPathItem: name = 1, value = 2).
    let paths = all(&one(raw, 4), 1);
    assert_eq!(paths.len(), json["paths"].as_object().unwrap().len());
    let names: Vec<String> = paths.iter().map(|p| string(p, 1)).collect();
    assert_eq!(names, keys(&json["paths"]));
    let pods = paths
        .iter()
        .find(|p| string(p, 1) == "/api/v1/namespaces/{namespace}/pods")
        .unwrap();
    let item = one(pods, 2);
    let jitem = &json["paths"]["/api/v1/namespaces/{namespace}/pods"];
    // PathItem: get = 4, post = 6, delete = 7, parameters = 13.
    for (number, method) in [(4, "get"), (6, "post"), (7, "delete")] {
        let op = one(&item, number);
        // Operation: operation_id = 5, tags = 1, responses = 8, extensions = 13.
        assert_eq!(
            string(&op, 5),
            jitem[method]["operationId"].as_str().unwrap()
        );
        assert_eq!(string(&op, 1), "core_v1");
        let responses = one(&op, 8);
        // Responses: response_or_reference = 2 (NamedResponseOrReference).
        let codes: Vec<String> = all(&responses, 2).iter().map(|r| string(r, 1)).collect();
        assert_eq!(codes, keys(&jitem[method]["responses"]));
        let extensions: Vec<String> = all(&op, 13).iter().map(|x| string(x, 1)).collect();
        assert_eq!(
            extensions,
            keys(
                jitem[method]
                    .as_object()
                    .map(|o| {
                        Value::Object(
                            o.iter()
                                .filter(|(k, _)| k.starts_with("x-"))
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect(),
                        )
                    })
                    .as_ref()
                    .unwrap()
            )
        );
    }
    assert!(all(&item, 5).is_empty(), "no put on a collection");
    // The path's parameters: ParameterOrReference parameter = 1; Parameter name = 1, in = 2.
    let params = all(&item, 13);
    assert_eq!(params.len(), jitem["parameters"].as_array().unwrap().len());
    let first = one(&params[0], 1);
    assert_eq!(
        string(&first, 1),
        jitem["parameters"][0]["name"].as_str().unwrap()
    );
    assert_eq!(
        string(&first, 2),
        jitem["parameters"][0]["in"].as_str().unwrap()
    );
    // Parameter schema = 10 → SchemaOrReference schema = 1 → Schema type = 25.
    let schema = one(&one(&first, 10), 1);
    assert_eq!(
        string(&schema, 25),
        jitem["parameters"][0]["schema"]["type"].as_str().unwrap()
    );
    // The POST body: request_body = 7 → RequestBodyOrReference request_body = 1 →
    // RequestBody content = 2, required = 3 (a varint).
    let body = one(&one(&one(&item, 6), 7), 1);
    let media: Vec<String> = all(&one(&body, 2), 1)
        .iter()
        .map(|m| string(m, 1))
        .collect();
    assert_eq!(media, keys(&jitem["post"]["requestBody"]["content"]));
    assert!(fields(&body)
        .iter()
        .any(|(n, w, v)| *n == 3 && *w == 0 && v[0] == 1));
    // MediaType schema = 1 → SchemaOrReference reference = 2 → Reference _ref = 1.
    let media_type = one(&all(&one(&body, 2), 1)[0], 2);
    let reference = one(&one(&media_type, 1), 2);
    assert_eq!(
        string(&reference, 1),
        "#/components/schemas/io.k8s.api.core.v1.Pod"
    );

    // Components: schemas = 1, security_schemes = 7.
    let components = one(raw, 5);
    let schemas = all(&one(&components, 1), 1);
    assert_eq!(
        schemas.len(),
        json["components"]["schemas"].as_object().unwrap().len()
    );
    let pod = schemas
        .iter()
        .find(|s| string(s, 1) == "io.k8s.api.core.v1.Pod")
        .unwrap();
    let pod = one(&one(pod, 2), 1);
    let jpod = &json["components"]["schemas"]["io.k8s.api.core.v1.Pod"];
    // Schema: type = 25, description = 34, properties = 31, extensions = 36.
    assert_eq!(string(&pod, 25), "object");
    assert_eq!(string(&pod, 34), jpod["description"].as_str().unwrap());
    let properties: Vec<String> = all(&one(&pod, 31), 1)
        .iter()
        .map(|p| string(p, 1))
        .collect();
    assert_eq!(properties, keys(&jpod["properties"]));
    let gvk = all(&pod, 36)
        .into_iter()
        .find(|x| string(x, 1) == "x-kubernetes-group-version-kind")
        .unwrap();
    // NamedAny value = 2 → Any yaml = 2.
    let yaml = string(&one(&gvk, 2), 2);
    let back: Value = serde_yaml::from_str(&yaml).unwrap();
    assert_eq!(back, jpod["x-kubernetes-group-version-kind"]);
    // A component that is an enum: Schema enum = 24 (Any yaml = 2).
    let policy =
        &json["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]["restartPolicy"];
    let spec = schemas
        .iter()
        .find(|s| string(s, 1) == "io.k8s.api.core.v1.PodSpec")
        .unwrap();
    let spec = one(&one(spec, 2), 1);
    let restart = all(&one(&spec, 31), 1)
        .into_iter()
        .find(|p| string(p, 1) == "restartPolicy")
        .unwrap();
    let restart = one(&one(&restart, 2), 1);
    let enums: Vec<Value> = all(&restart, 24)
        .iter()
        .map(|a| serde_yaml::from_str(&string(a, 2)).unwrap())
        .collect();
    assert_eq!(Value::Array(enums), policy["enum"]);
    let security = all(&one(&components, 7), 1);
    assert_eq!(string(&security[0], 1), "BearerToken");
}

#[test]
fn schema_wire_form_has_the_published_field_numbers() {
    // Built-in schemas have no defaults, so a made-up one: Schema default = 33 →
    // DefaultType number = 1 (a double), boolean = 2, string = 3; additional_properties
    // = 32 → AdditionalPropertiesItem boolean = 2; nullable = 1; items = 30 → ItemsItem
    // schema_or_reference = 1; all_of = 26, one_of = 27, any_of = 28; not = 29;
    // format = 35; required = 23.
    let raw = pb::Document::encode_json(&json!({
        "openapi": "3.0.0",
        "components": {"schemas": {
            "s": {"default": "x"},
            "n": {"default": 2.5, "nullable": true, "additionalProperties": false},
            "b": {"default": true, "items": {"format": "int32"}, "required": ["a", "b"]},
            "c": {"allOf": [{"$ref": "#/r"}], "oneOf": [{}, {}], "anyOf": [{}], "not": {"type": "t"}},
        }},
    }));
    let components = one(&raw, 5);
    let schemas: Vec<Vec<u8>> = all(&one(&components, 1), 1)
        .iter()
        .map(|s| one(&one(s, 2), 1))
        .collect();
    // serde_json keeps keys sorted: b, c, n, s.
    let [b, c, n, s] = &schemas[..] else {
        panic!("four schemas")
    };
    assert_eq!(string(&one(s, 33), 3), "x");
    let number = fields(&one(n, 33));
    assert_eq!((number[0].0, number[0].1), (1, 1));
    assert_eq!(
        f64::from_le_bytes(number[0].2[..8].try_into().unwrap()),
        2.5
    );
    assert!(fields(n)
        .iter()
        .any(|(f, w, v)| (*f, *w, v[0]) == (1, 0, 1)));
    assert!(fields(&one(n, 32))
        .iter()
        .any(|(f, w, v)| (*f, *w, v[0]) == (2, 0, 0)));
    assert!(fields(&one(b, 33))
        .iter()
        .any(|(f, w, v)| (*f, *w, v[0]) == (2, 0, 1)));
    let item = one(&one(&one(b, 30), 1), 1);
    assert_eq!(string(&item, 35), "int32");
    let required: Vec<String> = all(b, 23)
        .into_iter()
        .map(|r| String::from_utf8(r).unwrap())
        .collect();
    assert_eq!(required, ["a", "b"]);
    assert_eq!(string(&one(&one(c, 26), 2), 1), "#/r");
    assert_eq!((all(c, 27).len(), all(c, 28).len()), (2, 1));
    assert_eq!(string(&one(c, 29), 25), "t");
}

// ---------------------------------------------------------------------------------
// Content negotiation, as kube-openapi's handler3 answers.

fn ask(accept: Option<&str>, query: Option<&str>) -> http::Response<Bytes> {
    let api = builtin();
    let mut headers = HeaderMap::new();
    if let Some(a) = accept {
        headers.insert(http::header::ACCEPT, a.parse().unwrap());
    }
    api.handle(
        &Method::GET,
        "/openapi/v3/api/v1",
        &crate::query::Query::parse(query),
        &headers,
        now(),
    )
    .unwrap()
}

fn content_type(r: &http::Response<Bytes>) -> Option<&str> {
    r.headers().get("content-type").map(|v| v.to_str().unwrap())
}

#[test]
fn v3_negotiation_picks_the_encoding_as_kube_openapi_does() {
    let doc = &builtin_v3().documents["api/v1"];
    let json = Some("application/json");
    let protobuf = Some(PROTOBUF_V3_CONTENT_TYPE);
    let cases: [(Option<&str>, u16, Option<&str>); 13] = [
        (None, 200, json),
        (Some("*/*"), 200, json),
        (Some("application/*"), 200, json),
        (Some(PROTOBUF_V3_MEDIA_TYPES[0]), 200, protobuf),
        // The deprecated spelling is answered with the current one.
        (Some(PROTOBUF_V3_MEDIA_TYPES[1]), 200, protobuf),
        (Some("application/com.github.proto-openapi.spec.v3.v1.0+protobuf, application/json"), 200, protobuf),
        (Some("application/json, application/com.github.proto-openapi.spec.v3.v1.0+protobuf"), 200, json),
        (Some("application/json;q=0.5, application/com.github.proto-openapi.spec.v3.v1.0+protobuf"), 200, protobuf),
        (Some("application/com.github.proto-openapi.spec.v3@v1.0+protobuf;q=0.9, application/json"), 200, json),
        // A specific range sorts before a wildcard of the same quality.
        (Some("*/*, application/com.github.proto-openapi.spec.v3.v1.0+protobuf"), 200, protobuf),
        (Some("application/yaml"), 406, None),
        (Some("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"), 406, None),
        // Nothing parsable: kube-openapi writes nothing, an empty 200.
        (Some("json"), 200, None),
    ];
    for (accept, status, ct) in cases {
        let r = ask(accept, None);
        assert_eq!(r.status().as_u16(), status, "{accept:?}");
        assert_eq!(content_type(&r), ct, "{accept:?}");
        assert_eq!(r.headers()["vary"], "Accept", "{accept:?}");
        match ct {
            Some("application/json") => assert_eq!(r.body(), &doc.bytes),
            Some(_) => assert_eq!(r.body(), doc.protobuf()),
            None => assert!(r.body().is_empty()),
        }
    }

    // Both encodings carry the JSON's hash, pinned or redirected alike.
    let etag = format!("\"{}\"", doc.hash);
    let r = ask(protobuf, Some(&format!("hash={}", doc.hash)));
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["etag"], etag.as_str());
    assert_eq!(r.headers()["cache-control"], "public, immutable");
    assert!(r.headers().contains_key("expires"));
    let r = ask(protobuf, Some("hash=0123"));
    assert_eq!(r.status(), 301);
    assert_eq!(
        r.headers()["location"],
        format!("/openapi/v3/api/v1?hash={}", doc.hash).as_str()
    );
    let r = ask(protobuf, None);
    assert_eq!(r.headers()["cache-control"], "no-cache, private");
    assert_eq!(r.headers()["etag"], etag.as_str());
}

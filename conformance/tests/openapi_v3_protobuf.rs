//! The real binary serves `/openapi/v3/<group-version>` as gnostic protobuf when asked,
//! over TLS as the admin user, and the protobuf says what the JSON says.

mod raw_tls;

use apiary_conformance::harness::Apiary;
use apiary_core::openapi::gnostic_v3;
use prost::Message;

const V3_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf";

fn get(path: &str, accept: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: {accept}\r\n\r\n").into_bytes()
}

/// The length-delimited payloads of field `number` in one protobuf message, read by
/// hand so the check does not lean on the structs under test.
fn payloads(mut b: &[u8], number: u64) -> Vec<&[u8]> {
    fn varint(b: &mut &[u8]) -> u64 {
        let mut v = 0;
        let mut shift = 0;
        loop {
            let byte = b[0];
            *b = &b[1..];
            v |= u64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                return v;
            }
        }
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let key = varint(&mut b);
        let len = match key & 7 {
            0 => {
                varint(&mut b);
                continue;
            }
            1 => 8,
            2 => varint(&mut b) as usize,
            5 => 4,
            other => panic!("wire type {other}"),
        };
        let (payload, rest) = b.split_at(len);
        if key >> 3 == number && key & 7 == 2 {
            out.push(payload);
        }
        b = rest;
    }
    out
}

#[test]
fn core_v1_openapi_v3_as_protobuf_matches_its_json() {
    let apiary = Apiary::start();
    raw_tls::runtime().block_on(async {
        let mut raw = raw_tls::connect(&apiary).await.expect("connect");
        raw.send(&get("/openapi/v3/api/v1", "application/json"))
            .await
            .unwrap();
        let json = raw.read_response().await.unwrap();
        assert_eq!(json.status, 200);
        let json = json.json();

        raw.send(&get("/openapi/v3/api/v1", V3_PROTOBUF))
            .await
            .unwrap();
        let r = raw.read_response().await.unwrap();
        assert_eq!(r.status, 200, "{:?}", r.headers);
        assert_eq!(r.header("content-type"), Some(V3_PROTOBUF));
        assert_eq!(r.header("vary"), Some("Accept"));
        assert!(r.header("etag").is_some_and(|e| e.len() == 130));

        let paths = json["paths"].as_object().unwrap();
        // By hand: Document.paths = 4, Paths.path = 1, NamedPathItem.name = 1.
        let raw_paths = payloads(payloads(&r.body, 4)[0], 1);
        assert_eq!(raw_paths.len(), paths.len());
        let first = std::str::from_utf8(payloads(raw_paths[0], 1)[0]).unwrap();
        assert_eq!(first, paths.keys().next().unwrap());

        let doc = gnostic_v3::Document::decode(r.body.as_slice()).expect("an openapi.v3.Document");
        assert_eq!(doc.openapi, "3.0.0");
        assert_eq!(doc.paths.as_ref().unwrap().path.len(), paths.len());
        let schemas = &doc.components.as_ref().unwrap().schemas.as_ref().unwrap();
        let config_map = schemas
            .additional_properties
            .iter()
            .find(|s| s.name == "io.k8s.api.core.v1.ConfigMap")
            .and_then(|s| match &s.value.as_ref()?.oneof {
                Some(gnostic_v3::schema_or_reference::Oneof::Schema(s)) => Some(s),
                _ => None,
            })
            .expect("ConfigMap is a schema");
        let names: Vec<&str> = config_map
            .properties
            .as_ref()
            .unwrap()
            .additional_properties
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        let json_names: Vec<&str> = json["components"]["schemas"]["io.k8s.api.core.v1.ConfigMap"]
            ["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(names, json_names);
        assert!(names.contains(&"binaryData") && names.contains(&"immutable"));
        assert_eq!(config_map.r#type, "object");

        // The deprecated spelling is answered with the same bytes.
        raw.send(&get(
            "/openapi/v3/api/v1",
            "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
        ))
        .await
        .unwrap();
        let again = raw.read_response().await.unwrap();
        assert_eq!(again.status, 200);
        assert_eq!(again.body, r.body);
    });
}

//! The protobuf encoder, `apiary_core::protobuf::encode`, through the decoder: whatever
//! `decode` makes of any bytes, `encode` writes, and `decode` reads back the same JSON
//! (the encoder writes every value the decoder can produce, as Go's Marshal would).
//!
//! Layout as `protobuf_decode`: byte 0 even → the rest is the body; odd → byte 1 picks a
//! kind (registry kinds, their lists, their subresources' kinds, DeleteOptions) and the
//! rest is the object, in a valid envelope.

#![no_main]

use std::sync::OnceLock;

use apiary_core::protobuf;
use apiary_core::registry::Registry;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// `(apiVersion, kind)` of everything the transcoder should know.
fn kinds() -> &'static [(String, String)] {
    static KINDS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    KINDS.get_or_init(|| {
        let mut out = vec![("v1".to_owned(), "DeleteOptions".to_owned())];
        for r in Registry::builtin().resources() {
            let av = r.api_version();
            out.push((av.clone(), r.kind.clone()));
            out.push((av, r.list_kind()));
            for s in &r.subresources {
                let group = s.group.as_deref().unwrap_or(&r.group);
                let version = s.version.as_deref().unwrap_or(&r.version);
                let av = if group.is_empty() {
                    version.to_owned()
                } else {
                    format!("{group}/{version}")
                };
                out.push((av, s.kind.clone()));
            }
        }
        out.sort();
        out.dedup();
        out
    })
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn field(out: &mut Vec<u8>, num: u8, bytes: &[u8]) {
    out.push(num << 3 | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn without_nulls(v: Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        other => other,
    }
}

fuzz_target!(|data: &[u8]| {
    let decoded = match data {
        [mode, pick, raw @ ..] if mode % 2 == 1 => {
            let (api_version, kind) = &kinds()[usize::from(*pick) % kinds().len()];
            let mut type_meta = Vec::new();
            field(&mut type_meta, 1, api_version.as_bytes());
            field(&mut type_meta, 2, kind.as_bytes());
            let mut body = b"k8s\x00".to_vec();
            field(&mut body, 1, &type_meta);
            field(&mut body, 2, raw);
            protobuf::decode(&body)
        }
        [_, body @ ..] => protobuf::decode(body),
        [] => protobuf::decode(data),
    };
    let Ok(value) = decoded else { return };
    let encoded = protobuf::encode(&value).unwrap_or_else(|e| panic!("{e}: {value}"));
    let again = protobuf::decode(&encoded).unwrap_or_else(|e| panic!("{e}: {value}"));
    // Up to a `null` read from a pointer that is set but whose value Go writes as null (a
    // zero `Time`, an empty `FieldsV1`): Go's decoder reads `null` as a nil pointer, so the
    // encoder, like Go's Marshal after it, writes nothing and it reads back absent.
    assert_eq!(without_nulls(again.clone()), without_nulls(value.clone()));
    // Encoding is a function of the JSON: the second encoding is the first.
    assert_eq!(protobuf::encode(&again).unwrap(), encoded);
});

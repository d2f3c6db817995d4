//! The protobuf encoder, `apiary_core::protobuf::encode`, through the decoder: whatever
//! `decode` makes of any bytes, `encode` writes, and `decode` reads back the same JSON
//! (the encoder writes every value the decoder can produce, as Go's Marshal would).
//!
//! A list written around its items encoded one by one (`encode_list`, as a LIST from
//! stored bytes writes it) is the same bytes, and a watch frame holds the encoding
//! behind its length prefix.
//!
//! Layout as `protobuf_decode`: byte 0 even → the rest is the body; odd → byte 1 picks a
//! kind (registry kinds, their lists, their subresources' kinds, DeleteOptions) and the
//! rest is the object, in a valid envelope.

#![no_main]

#[path = "shared/protobuf_input.rs"]
mod protobuf_input;

use apiary_core::protobuf;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

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
    let decoded = protobuf::decode(&protobuf_input::body(data).0);
    let Ok(value) = decoded else { return };
    let encoded = protobuf::encode(&value).unwrap_or_else(|e| panic!("{e}: {value}"));
    let again = protobuf::decode(&encoded).unwrap_or_else(|e| panic!("{e}: {value}"));
    // Up to a `null` read from a pointer that is set but whose value Go writes as null (a
    // zero `Time`, an empty `FieldsV1`): Go's decoder reads `null` as a nil pointer, so the
    // encoder, like Go's Marshal after it, writes nothing and it reads back absent.
    assert_eq!(without_nulls(again.clone()), without_nulls(value.clone()));
    // Encoding is a function of the JSON: the second encoding is the first.
    assert_eq!(protobuf::encode(&again).unwrap(), encoded);

    let text = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    if let (Some(item_kind), Some(Value::Array(items))) = (kind.strip_suffix("List"), value.get("items")) {
        let items: Result<Vec<bytes::Bytes>, _> = items
            .iter()
            .map(|item| protobuf::encode_item(api_version, item_kind, item).map(bytes::Bytes::from))
            .collect();
        if let Ok(items) = items {
            let meta = value.get("metadata").cloned().unwrap_or(Value::Null);
            assert_eq!(protobuf::encode_list(api_version, kind, &meta, &items).unwrap(), encoded);
        }
    }
    let frame = protobuf::watch_frame("MODIFIED", &value).unwrap();
    let len = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
    assert_eq!(len, frame.len() - 4);
    assert!(frame.ends_with(&encoded));
});

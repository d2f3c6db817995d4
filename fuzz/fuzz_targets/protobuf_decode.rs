//! The protobuf request-body transcoder, `apiary_core::protobuf::decode`: never panics,
//! never recurses without bound, on any bytes. Half the inputs are taken as a whole body
//! (magic, envelope and all); the other half are wrapped in a valid envelope for one of the
//! kinds the registry serves, so the fuzzer spends its time inside the object schemas.
//!
//! Layout: byte 0 even → the rest is the body; odd → byte 1 picks a kind (registry kinds,
//! their lists, their subresources' kinds, DeleteOptions) and the rest is the object.

#![no_main]

#[path = "shared/protobuf_input.rs"]
mod protobuf_input;

use apiary_core::protobuf;
use libfuzzer_sys::fuzz_target;

/// Parses `text` as the type of `like` (`serde_json::Value`, without depending on it here).
fn reparse<T: std::str::FromStr>(_like: &T, text: &str) -> Result<T, T::Err> {
    text.parse()
}

fuzz_target!(|data: &[u8]| {
    let (body, picked) = protobuf_input::body(data);
    let result = protobuf::decode(&body);
    if let (Ok(v), Some((api_version, kind))) = (&result, picked) {
        assert_eq!(v["kind"], kind.as_str());
        assert_eq!(v["apiVersion"], api_version.as_str());
    }
    match result {
        Ok(value) => {
            assert!(value.is_object());
            // What the server does next: write it out, as JSON that reads back. (Not compared
            // for equality: serde_json's default float parsing may be off by an ulp.)
            let text = value.to_string();
            assert!(reparse(&value, &text).is_ok(), "{text}");
        }
        Err(e) => assert!(e.to_string().starts_with("protobuf: ")),
    }
});

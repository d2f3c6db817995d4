//! The protobuf request-body transcoder, `apiary_core::protobuf::decode`: never panics,
//! never recurses without bound, on any bytes. Half the inputs are taken as a whole body
//! (magic, envelope and all); the other half are wrapped in a valid envelope for one of the
//! kinds the registry serves, so the fuzzer spends its time inside the object schemas.
//!
//! Layout: byte 0 even → the rest is the body; odd → byte 1 picks a kind (registry kinds,
//! their lists, their subresources' kinds, DeleteOptions) and the rest is the object.

#![no_main]

use std::sync::OnceLock;

use apiary_core::protobuf;
use apiary_core::registry::Registry;
use libfuzzer_sys::fuzz_target;

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

/// Parses `text` as the type of `like` (`serde_json::Value`, without depending on it here).
fn reparse<T: std::str::FromStr>(_like: &T, text: &str) -> Result<T, T::Err> {
    text.parse()
}

fuzz_target!(|data: &[u8]| {
    let result = match data {
        [mode, pick, raw @ ..] if mode % 2 == 1 => {
            let (api_version, kind) = &kinds()[usize::from(*pick) % kinds().len()];
            let mut type_meta = Vec::new();
            field(&mut type_meta, 1, api_version.as_bytes());
            field(&mut type_meta, 2, kind.as_bytes());
            let mut body = b"k8s\x00".to_vec();
            field(&mut body, 1, &type_meta);
            field(&mut body, 2, raw);
            let result = protobuf::decode(&body);
            if let Ok(v) = &result {
                assert_eq!(v["kind"], kind.as_str());
                assert_eq!(v["apiVersion"], api_version.as_str());
            }
            result
        }
        [_, body @ ..] => protobuf::decode(body),
        [] => protobuf::decode(data),
    };
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

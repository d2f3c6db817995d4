//! The input layout the protobuf fuzz targets share: byte 0 even → the rest is the
//! body; odd → byte 1 picks a kind (registry kinds, their lists, their subresources'
//! kinds, DeleteOptions) and the rest is the object, wrapped in a valid envelope.

use std::sync::OnceLock;

use apiary_core::registry::Registry;

/// `(apiVersion, kind)` of everything the transcoder should know.
pub fn kinds() -> &'static [(String, String)] {
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

/// The body to decode from fuzz input, and the `(apiVersion, kind)` its envelope names
/// when the input picked one.
pub fn body(data: &[u8]) -> (Vec<u8>, Option<&'static (String, String)>) {
    match data {
        [mode, pick, raw @ ..] if mode % 2 == 1 => {
            let picked = &kinds()[usize::from(*pick) % kinds().len()];
            let mut type_meta = Vec::new();
            field(&mut type_meta, 1, picked.0.as_bytes());
            field(&mut type_meta, 2, picked.1.as_bytes());
            let mut body = b"k8s\x00".to_vec();
            field(&mut body, 1, &type_meta);
            field(&mut body, 2, raw);
            (body, Some(picked))
        }
        [_, body @ ..] => (body.to_vec(), None),
        [] => (Vec::new(), None),
    }
}

//! `apiary_core::authn::RequestHeader` over any request headers (one `name: value` a
//! line; the first line is the front proxy's common name): never panics; a user comes
//! only from an allowed name and a non-empty username header, and then none of the
//! headers it reads is left in the request; otherwise the headers are untouched.

#![no_main]

use apiary_core::authn::RequestHeader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut lines = data.split(|b| *b == b'\n');
    let common_name = String::from_utf8_lossy(lines.next().unwrap_or_default()).into_owned();
    let mut headers = http::HeaderMap::new();
    for line in lines {
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            continue;
        };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        let value = value.strip_prefix(b" ").unwrap_or(value);
        if let (Ok(name), Ok(value)) = (http::HeaderName::from_bytes(name), http::HeaderValue::from_bytes(value)) {
            headers.append(name, value);
        }
    }
    let settings = RequestHeader::kubeadm(String::new());
    let before = headers.clone();
    match settings.authenticate(&common_name, &mut headers) {
        Some(user) => {
            assert_eq!(common_name, "front-proxy-client");
            assert!(!user.name.is_empty());
            assert!(!headers.contains_key("x-remote-user") && !headers.contains_key("x-remote-group"));
            assert!(headers.keys().all(|k| !k.as_str().starts_with("x-remote-extra-")));
        }
        None => assert_eq!(headers, before),
    }
});

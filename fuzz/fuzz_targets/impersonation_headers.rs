//! `apiary_core::impersonation` over any request headers (one `name: value` a line):
//! never panics; a request that asks for nothing acts as itself; one that asks is
//! either refused (500 for attributes without a user, 403 when refused) or acts as a
//! named user in `system:authenticated` or `system:unauthenticated`; and once the
//! headers are stripped it asks for nothing.

#![no_main]

use apiary_core::authn::UserInfo;
use apiary_core::authorization::{Attributes, Decision};
use apiary_core::impersonation::{impersonate, requested, strip};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut headers = http::HeaderMap::new();
    for line in data.split(|b| *b == b'\n') {
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            continue;
        };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        let value = value.strip_prefix(b" ").unwrap_or(value);
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name),
            http::HeaderValue::from_bytes(value),
        ) {
            headers.append(name, value);
        }
    }
    let requester = UserInfo::named("fuzzer", vec!["system:authenticated".to_owned()]);
    let allow = |_: Attributes<'_>| Decision::Allow;
    let deny = |_: Attributes<'_>| Decision::Deny("Everything is forbidden.".to_owned());
    let asked = requested(&headers);
    match impersonate(&requester, &headers, allow) {
        Ok(None) => assert_eq!(asked, Ok(Vec::new())),
        Ok(Some(user)) => {
            assert!(!user.name.is_empty());
            assert!(user.groups.iter().any(|g| g == "system:authenticated" || g == "system:unauthenticated"));
            assert_eq!(impersonate(&requester, &headers, deny).unwrap_err().code, 403);
        }
        Err(e) => {
            assert_eq!(e.code, 500);
            assert!(e.message.ends_with("without impersonating a user"));
        }
    }
    strip(&mut headers);
    assert_eq!(requested(&headers), Ok(Vec::new()));
});

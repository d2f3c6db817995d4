//! Request-info resolution over arbitrary methods, paths and queries: never panics,
//! and what it resolves is consistent with the path it came from.

#![no_main]

use apiary_core::request_info::resolve;
use libfuzzer_sys::fuzz_target;

const METHODS: [http::Method; 6] = [
    http::Method::GET,
    http::Method::POST,
    http::Method::PUT,
    http::Method::PATCH,
    http::Method::DELETE,
    http::Method::HEAD,
];

fuzz_target!(|data: &[u8]| {
    let Some((&m, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let (path, query) = match text.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (&*text, None),
    };
    let info = resolve(&METHODS[m as usize % METHODS.len()], path, query);
    if info.is_resource_request {
        assert!(!info.resource.is_empty());
        assert!(!info.api_version.is_empty());
        assert!(matches!(
            info.verb.as_str(),
            "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection"
        ));
        assert!(path.contains(&info.resource));
        if !info.namespace.is_empty() {
            assert!(path.contains(&info.namespace));
        }
    }
});

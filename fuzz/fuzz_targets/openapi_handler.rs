//! The OpenAPI endpoints over arbitrary paths, methods, `Accept`, `If-None-Match` and
//! queries: never panics, and every answer is one kube-apiserver could give.

#![no_main]

use apiary_core::openapi::OpenApi;
use apiary_core::query::Query;
use apiary_core::registry::Registry;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use std::time::{Duration, UNIX_EPOCH};

const METHODS: [http::Method; 4] = [
    http::Method::GET,
    http::Method::HEAD,
    http::Method::POST,
    http::Method::DELETE,
];

fuzz_target!(|data: &[u8]| {
    static API: OnceLock<OpenApi> = OnceLock::new();
    let api = API.get_or_init(|| OpenApi::new(Registry::builtin()));
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let mut fields = rest.split(|&b| b == 0);
    let mut next = || String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
    let (suffix, accept, if_none_match, query) = (next(), next(), next(), next());
    let path = match selector % 4 {
        0 => "/openapi/v2".to_owned(),
        1 => "/openapi/v3".to_owned(),
        2 => "/openapi/v3/apis/apps/v1".to_owned(),
        _ => format!("/openapi/v3/{suffix}"),
    };
    let method = &METHODS[(selector / 4) as usize % METHODS.len()];
    let mut headers = http::HeaderMap::new();
    if let Ok(v) = http::HeaderValue::from_str(&accept) {
        headers.insert(http::header::ACCEPT, v);
    }
    if let Ok(v) = http::HeaderValue::from_str(&if_none_match) {
        headers.insert(http::header::IF_NONE_MATCH, v);
    }
    let now = UNIX_EPOCH + Duration::from_secs(1_795_000_000);
    let response = api
        .handle(method, &path, &Query::parse(Some(&query)), &headers, now)
        .expect("an OpenAPI path");
    let status = response.status().as_u16();
    assert!(
        matches!(status, 200 | 301 | 304 | 404 | 406 | 412),
        "{status}"
    );
    if matches!(status, 301 | 304 | 404 | 406 | 412) {
        assert!(response.body().is_empty());
    }
    if status == 301 {
        let location = response.headers()[http::header::LOCATION].to_str().unwrap();
        assert!(location.starts_with("/openapi/v3/") && location.contains("?hash="));
    }
});

//! The HTTP side of the OpenAPI endpoints, answering as kube-apiserver does.
//!
//! - `/openapi/v2`: the `Accept` header is read like kube-openapi's handler does (media
//!   ranges sorted by quality, then specific before wildcard); the first range that
//!   matches JSON or either spelling of the gnostic protobuf type wins, else 406 with
//!   no body. Both encodings carry the same ETag (the hash of the JSON) and
//!   `Vary: Accept`.
//! - `/openapi/v3`: the discovery document, naming each document by a URL pinned to
//!   its hash.
//! - `/openapi/v3/<key>`: one document. With `?hash=` equal to the current hash the
//!   response may be cached for good (`Cache-Control: public, immutable`, `Expires` a
//!   year out); with a stale hash it is a 301 to the current URL; without one it is
//!   `no-cache, private` like every other kube-apiserver response. An unknown key is a
//!   404 with no body. The first media range (in the order of `/openapi/v2`) that
//!   covers JSON or either spelling of the v3 gnostic protobuf picks the encoding,
//!   JSON first when a range covers both; both carry the JSON's hash as ETag and for
//!   `?hash=`. No matching range is a 406; an `Accept` with no parsable range, an
//!   empty 200.
//!
//! Every 200 carries `Last-Modified` (when the documents were built) and honours
//! `If-None-Match` against the ETag: 304 without a body for GET and HEAD, 412 for
//! other methods (kube-apiserver serves these documents to any method).

use super::OpenApi;
use crate::negotiation::parse_accept;
use crate::query::Query;
use crate::time;
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Response, StatusCode};
use serde_json::{Map, Value};
use std::time::SystemTime;

/// The gnostic protobuf media type of `/openapi/v2`, as responses name it.
pub const PROTOBUF_V2_CONTENT_TYPE: &str =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The media types a client may ask for to get the v2 protobuf: the one kubectl sends
/// (with `@`, deprecated upstream) and the current one.
pub const PROTOBUF_V2_MEDIA_TYPES: [&str; 2] = [
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
    PROTOBUF_V2_CONTENT_TYPE,
];

/// The gnostic protobuf media type of `/openapi/v3/<key>`, as responses name it.
pub const PROTOBUF_V3_CONTENT_TYPE: &str =
    "application/com.github.proto-openapi.spec.v3.v1.0+protobuf";

/// The media types a client may ask for to get the v3 protobuf: the current one and
/// the deprecated spelling with `@`, both answered with the current one.
pub const PROTOBUF_V3_MEDIA_TYPES: [&str; 2] = [
    PROTOBUF_V3_CONTENT_TYPE,
    "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
];

/// The `Cache-Control` kube-apiserver puts on every response that sets none itself.
const NO_CACHE: &str = "no-cache, private";

/// `/openapi/v3/<key>?hash=<hash>`.
pub(crate) fn server_relative_url(key: &str, hash: &str) -> String {
    format!("/openapi/v3/{key}?hash={hash}")
}

pub(super) fn handle(
    api: &OpenApi,
    method: &Method,
    path: &str,
    query: &Query,
    headers: &HeaderMap,
    now: SystemTime,
    remote: &Map<String, Value>,
) -> Option<Response<Bytes>> {
    Some(match path {
        "/openapi/v2" => v2(api, method, headers, now),
        "/openapi/v3" => v3_root(api, method, headers, now, remote),
        _ => {
            let key = path.strip_prefix("/openapi/v3/")?;
            v3_document(api, key, method, query, headers, now)
        }
    })
}

fn v2(api: &OpenApi, method: &Method, headers: &HeaderMap, now: SystemTime) -> Response<Bytes> {
    let mut out = HeaderMap::new();
    out.insert(header::VARY, HeaderValue::from_static("Accept"));
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static(NO_CACHE));
    let offered: [(&str, bool); 3] = [
        ("json", false),
        ("com.github.proto-openapi.spec.v2@v1.0+protobuf", true),
        ("com.github.proto-openapi.spec.v2.v1.0+protobuf", true),
    ];
    for clause in parse_accept(accept(headers)) {
        for (subtype, protobuf) in offered {
            if !clause.matches("application", subtype) {
                continue;
            }
            let doc = api.v2(now);
            let (content_type, body) = if protobuf {
                (PROTOBUF_V2_CONTENT_TYPE, doc.protobuf.clone())
            } else {
                ("application/json", doc.json.clone())
            };
            out.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            out.insert(header::ETAG, quoted(&doc.hash));
            return serve_content(method, headers, out, doc.built, body);
        }
    }
    respond(StatusCode::NOT_ACCEPTABLE, out, Bytes::new())
}

fn v3_root(
    api: &OpenApi,
    method: &Method,
    headers: &HeaderMap,
    now: SystemTime,
    remote: &Map<String, Value>,
) -> Response<Bytes> {
    let v3 = api.v3(now);
    let merged;
    let root = if remote.is_empty() {
        &v3.root
    } else {
        merged = api.v3_index(now, remote);
        &merged
    };
    let mut out = HeaderMap::new();
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static(NO_CACHE));
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    out.insert(header::ETAG, quoted(&root.hash));
    serve_content(method, headers, out, v3.built, root.bytes.clone())
}

fn v3_document(
    api: &OpenApi,
    key: &str,
    method: &Method,
    query: &Query,
    headers: &HeaderMap,
    now: SystemTime,
) -> Response<Bytes> {
    let v3 = api.v3(now);
    let mut out = HeaderMap::new();
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static(NO_CACHE));
    let Some(doc) = v3.documents.get(key) else {
        return respond(StatusCode::NOT_FOUND, out, Bytes::new());
    };
    out.insert(header::VARY, HeaderValue::from_static("Accept"));
    let clauses = parse_accept(accept(headers));
    if clauses.is_empty() {
        // kube-openapi answers an Accept it cannot parse at all with an empty 200.
        return respond(StatusCode::OK, out, Bytes::new());
    }
    // kube-openapi's order: JSON, then the protobuf, then its deprecated spelling.
    let offered: [(&str, bool); 3] = [
        ("json", false),
        ("com.github.proto-openapi.spec.v3.v1.0+protobuf", true),
        ("com.github.proto-openapi.spec.v3@v1.0+protobuf", true),
    ];
    for clause in clauses {
        for (subtype, protobuf) in offered {
            if !clause.matches("application", subtype) {
                continue;
            }
            let (content_type, body) = if protobuf {
                (PROTOBUF_V3_CONTENT_TYPE, doc.protobuf().clone())
            } else {
                ("application/json", doc.bytes.clone())
            };
            out.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            out.insert(header::ETAG, quoted(&doc.hash));
            if let Some(hash) = query.get("hash").filter(|h| !h.is_empty()) {
                if hash != doc.hash {
                    let location = server_relative_url(key, &doc.hash);
                    out.insert(
                        header::LOCATION,
                        HeaderValue::from_str(&location).expect("a URL of path and hex characters"),
                    );
                    return respond(StatusCode::MOVED_PERMANENTLY, out, Bytes::new());
                }
                out.insert(
                    header::CACHE_CONTROL,
                    HeaderValue::from_static("public, immutable"),
                );
                out.insert(header::EXPIRES, http_date(time::a_year_after(now), "UTC"));
            }
            return serve_content(method, headers, out, v3.built, body);
        }
    }
    respond(StatusCode::NOT_ACCEPTABLE, out, Bytes::new())
}

fn accept(headers: &HeaderMap) -> &str {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .unwrap_or("*/*")
}

fn quoted(hash: &str) -> HeaderValue {
    HeaderValue::from_str(&format!("\"{hash}\"")).expect("hex digits in quotes")
}

fn respond(status: StatusCode, headers: HeaderMap, body: Bytes) -> Response<Bytes> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

/// The body with `Last-Modified`, unless `If-None-Match` names the response's ETag:
/// then 304 (GET, HEAD) or 412 (other methods), without a body.
fn serve_content(
    method: &Method,
    request: &HeaderMap,
    mut headers: HeaderMap,
    modified: SystemTime,
    body: Bytes,
) -> Response<Bytes> {
    headers.insert(header::LAST_MODIFIED, http_date(modified, "GMT"));
    let etag = headers
        .get(header::ETAG)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let none_match = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|inm| !inm.is_empty() && matches_any(inm, etag));
    if !none_match {
        return respond(StatusCode::OK, headers, body);
    }
    if *method == Method::GET || *method == Method::HEAD {
        headers.remove(header::CONTENT_TYPE);
        headers.remove(header::LAST_MODIFIED);
        return respond(StatusCode::NOT_MODIFIED, headers, Bytes::new());
    }
    respond(StatusCode::PRECONDITION_FAILED, headers, Bytes::new())
}

/// Whether an `If-None-Match` list names `etag` (weak comparison) or is `*`. Parsing
/// stops at the first malformed entry, as Go's `net/http` does.
pub(crate) fn matches_any(if_none_match: &str, etag: &str) -> bool {
    let strip_weak = |t: &str| t.strip_prefix("W/").unwrap_or(t).to_owned();
    let ours = strip_weak(etag);
    let mut rest = if_none_match;
    loop {
        rest = rest.trim_matches([' ', '\t']);
        if rest.is_empty() {
            return false;
        }
        if let Some(r) = rest.strip_prefix(',') {
            rest = r;
            continue;
        }
        if rest.starts_with('*') {
            return true;
        }
        let Some((tag, remain)) = scan_etag(rest) else {
            return false;
        };
        if !ours.is_empty() && strip_weak(tag) == ours {
            return true;
        }
        rest = remain;
    }
}

/// One entity tag (`"…"` or `W/"…"`) at the start of `s`, and what follows it.
fn scan_etag(s: &str) -> Option<(&str, &str)> {
    let start = if s.starts_with("W/") { 2 } else { 0 };
    let bytes = s.as_bytes();
    if bytes.get(start) != Some(&b'"') {
        return None;
    }
    for (i, &c) in bytes.iter().enumerate().skip(start + 1) {
        match c {
            b'"' => return Some((&s[..=i], &s[i + 1..])),
            0x21 | 0x23..=0x7e | 0x80..=0xff => {}
            _ => return None,
        }
    }
    None
}

/// An HTTP date header value; see [`crate::time::http_date`].
pub(crate) fn http_date(t: SystemTime, zone: &str) -> HeaderValue {
    HeaderValue::from_str(&time::http_date(t, zone)).expect("ASCII date")
}

//! A request to another server, encoded: origin-form target, `Host` from the URI,
//! the caller's headers, and the body framed by `Content-Length`.

use bytes::{Bytes, BytesMut};
use http::{header, Method};

use super::super::encode;

/// Why a request cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestError {
    /// The URI names no host to send it to.
    NoHost,
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::NoHost => f.write_str("the request's URI has no host"),
        }
    }
}

/// Encode `request` (its URI absolute) as HTTP/1.1 bytes, head and body.
///
/// As Go's client writes it: `Host` is the URI's host and port whatever the headers
/// say (a proxied request keeps the caller's other headers, not its `Host`); the
/// framing and `Connection` headers are the codec's own (a persistent connection, a
/// `Content-Length` body); a bodiless GET, HEAD, DELETE, OPTIONS or TRACE carries no
/// `Content-Length`.
pub fn encode_request(request: &http::Request<bytes::Bytes>) -> Result<Bytes, RequestError> {
    let uri = request.uri();
    let host = uri.host().filter(|h| !h.is_empty()).ok_or(RequestError::NoHost)?;
    let body = request.body();
    let mut out = BytesMut::with_capacity(128 + encode::head_capacity(request.headers()) + body.len());
    out.extend_from_slice(request.method().as_str().as_bytes());
    out.extend_from_slice(b" ");
    out.extend_from_slice(uri.path_and_query().map_or("/", |p| p.as_str()).as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    // The host and port only: never a URI's user information.
    out.extend_from_slice(host.as_bytes());
    if let Some(port) = uri.port() {
        out.extend_from_slice(b":");
        out.extend_from_slice(port.as_str().as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    for (name, value) in request.headers() {
        if [header::HOST, header::CONTENT_LENGTH, header::TRANSFER_ENCODING, header::CONNECTION].contains(name) {
            continue;
        }
        encode::field_name(&mut out, name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !body.is_empty() || !bodiless_method(request.method()) {
        encode::content_length(&mut out, body.len());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    Ok(out.freeze())
}

/// Methods whose requests usually carry no body, so an empty one goes unannounced.
fn bodiless_method(method: &Method) -> bool {
    [Method::GET, Method::HEAD, Method::DELETE, Method::OPTIONS, Method::TRACE].contains(method)
}

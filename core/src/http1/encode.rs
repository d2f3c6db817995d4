//! Response encoding: status line, headers (names in Go's canonical case), framing, and
//! the canned responses to unusable input.

use std::fmt::Write as _;

use bytes::{BufMut, Bytes, BytesMut};
use http::header::{self, HeaderMap, HeaderName};
use http::StatusCode;

use super::decode::Failure;
use super::Limits;

/// `HTTP/1.1 <code> <reason>\r\n`.
pub(super) fn status_line(out: &mut BytesMut, status: StatusCode) {
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.as_str().as_bytes());
    out.put_u8(b' ');
    match reason(status) {
        Some(reason) => out.extend_from_slice(reason.as_bytes()),
        // As Go writes a code it has no text for.
        None => {
            let _ = write!(out, "status code {}", status.as_u16());
        }
    }
    out.extend_from_slice(b"\r\n");
}

/// The reason phrase, as Go's `StatusText` has it where it differs from the `http` crate.
fn reason(status: StatusCode) -> Option<&'static str> {
    match status.as_u16() {
        413 => Some("Request Entity Too Large"),
        414 => Some("Request URI Too Long"),
        416 => Some("Requested Range Not Satisfiable"),
        _ => status.canonical_reason(),
    }
}

/// A guess at the size of the encoded head, to allocate once.
pub(super) fn head_capacity(headers: &HeaderMap) -> usize {
    let fields: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    64 + fields
}

/// The handler's headers, less the framing ones (the codec frames the body itself).
/// When `close`, any `Connection` header is replaced by `Connection: close`; when
/// `keep_alive_10` (an HTTP/1.0 peer that asked to keep the connection) and the handler
/// gave no `Connection`, `Connection: keep-alive` is added.
pub(super) fn headers(out: &mut BytesMut, headers: &HeaderMap, close: bool, keep_alive_10: bool) {
    let mut has_connection = false;
    for (name, value) in headers {
        if name == header::CONTENT_LENGTH || name == header::TRANSFER_ENCODING {
            continue;
        }
        if name == header::CONNECTION {
            if close {
                continue;
            }
            has_connection = true;
        }
        field_name(out, name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if close {
        out.extend_from_slice(b"Connection: close\r\n");
    } else if keep_alive_10 && !has_connection {
        out.extend_from_slice(b"Connection: keep-alive\r\n");
    }
}

/// A header name in canonical case (`content-type` → `Content-Type`), as Go writes them.
pub(super) fn field_name(out: &mut BytesMut, name: &HeaderName) {
    let mut upper = true;
    for &b in name.as_str().as_bytes() {
        out.put_u8(if upper { b.to_ascii_uppercase() } else { b });
        upper = b == b'-';
    }
}

/// `Content-Length: <n>\r\n`.
pub(super) fn content_length(out: &mut BytesMut, length: usize) {
    let _ = write!(out, "Content-Length: {length}\r\n");
}

/// The handler's own `Content-Length`, if it gave a valid one (HEAD, 304).
pub(super) fn given_content_length(out: &mut BytesMut, headers: &HeaderMap) {
    if let Some(value) = headers.get(header::CONTENT_LENGTH) {
        let value = value.as_bytes();
        if !value.is_empty() && value.iter().all(u8::is_ascii_digit) {
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// Whether a response with this status may carry no body (RFC 9110: 1xx, 204, 304).
pub(super) fn bodiless(status: StatusCode) -> bool {
    status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
}

/// Whether the handler's `Connection` header says `close`.
pub(super) fn asks_close(headers: &HeaderMap) -> bool {
    headers.get_all(header::CONNECTION).iter().any(|value| {
        value
            .as_bytes()
            .split(|&b| b == b',')
            .any(|token| token.trim_ascii().eq_ignore_ascii_case(b"close"))
    })
}

/// `<hex length>\r\n<data>\r\n`.
pub(super) fn chunk(data: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(data.len() + 20);
    let _ = write!(out, "{:x}\r\n", data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out.freeze()
}

/// The response to unusable input; the connection closes after it.
pub(super) fn failure(failure: Failure, limits: &Limits) -> Bytes {
    match failure {
        Failure::BadRequest => text(StatusCode::BAD_REQUEST, "400 Bad Request"),
        Failure::HeaderTooLarge => text(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "431 Request Header Fields Too Large",
        ),
        Failure::VersionNotSupported => text(
            StatusCode::HTTP_VERSION_NOT_SUPPORTED,
            "505 HTTP Version Not Supported",
        ),
        Failure::UnsupportedTransferEncoding => {
            text(StatusCode::NOT_IMPLEMENTED, "Unsupported transfer encoding")
        }
        Failure::ExpectationFailed => {
            let mut out = BytesMut::with_capacity(96);
            status_line(&mut out, StatusCode::EXPECTATION_FAILED);
            out.extend_from_slice(b"Content-Length: 0\r\nConnection: close\r\n\r\n");
            out.freeze()
        }
        Failure::BodyTooLarge => {
            let response = super::request_entity_too_large(limits.max_body_bytes);
            let body = response.body();
            let mut out = BytesMut::with_capacity(128 + body.len());
            status_line(&mut out, StatusCode::PAYLOAD_TOO_LARGE);
            out.extend_from_slice(b"Content-Type: application/json\r\n");
            content_length(&mut out, body.len());
            out.extend_from_slice(b"Connection: close\r\n\r\n");
            out.extend_from_slice(body);
            out.freeze()
        }
    }
}

/// A plain-text error as Go's server writes them (plus a Content-Length).
fn text(status: StatusCode, body: &str) -> Bytes {
    let mut out = BytesMut::with_capacity(128 + body.len());
    status_line(&mut out, status);
    out.extend_from_slice(b"Content-Type: text/plain; charset=utf-8\r\n");
    content_length(&mut out, body.len());
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out.extend_from_slice(body.as_bytes());
    out.freeze()
}

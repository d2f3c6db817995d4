//! What every answer gets on its way out: `Audit-Id`, `Date`, and `Connection: close`
//! once the server takes no new requests; and the answers the chain itself writes.

use bytes::Bytes;
use std::time::SystemTime;

/// The response header naming the request's audit ID, as upstream writes it.
pub const AUDIT_ID: &str = "audit-id";

/// What kube-apiserver answers when a handler panics.
const PANIC_MESSAGE: &str = "This request caused apiserver to panic. Look in the logs for details.";

/// Add the headers every answer gets: `Audit-Id` (unless empty), `Date` as of `now`
/// (unless the handler set one), and `Connection: close` when `closing`.
pub fn answer_headers(
    headers: &mut http::HeaderMap,
    audit_id: &http::HeaderValue,
    now: SystemTime,
    closing: bool,
) {
    if !audit_id.is_empty() {
        headers.insert(AUDIT_ID, audit_id.clone());
    }
    if !headers.contains_key(http::header::DATE) {
        if let Ok(date) = http::HeaderValue::from_str(&crate::time::imf_fixdate(now)) {
            headers.insert(http::header::DATE, date);
        }
    }
    if closing {
        headers.insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
    }
}

pub(super) fn panic_response() -> http::Response<Bytes> {
    crate::status::plain_text(http::StatusCode::INTERNAL_SERVER_ERROR, PANIC_MESSAGE)
}

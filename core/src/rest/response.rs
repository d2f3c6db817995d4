//! Responses as every handler writes them: encoded values, error Statuses and
//! warnings.

use crate::effect::Step;
use crate::negotiation::{self, Output};
use crate::schema;
use crate::status::ApiError;
use bytes::Bytes;
use serde_json::Value;
use std::sync::Arc;

/// The `Status` a subresource that acts (a pod's binding or eviction) answers with:
/// Success, code 201, as upstream's create handler writes it.
pub(crate) fn created_status() -> Value {
    serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    })
}

/// `step`, and every step it leads to, with a `Warning` header for each of `warnings` on
/// the response: warnings recorded while decoding are sent whatever the outcome, as
/// kube-apiserver sends them.
pub(crate) fn warned(step: Step, warnings: Vec<String>) -> Step {
    if warnings.is_empty() {
        return step;
    }
    match step {
        Step::Respond(r) => Step::Respond(with_warnings(r, &warnings)),
        Step::Storage(op, pending) => Step::storage(op, move |done| warned(pending.resume(done), warnings)),
        Step::Call(out, pending) => Step::Call(
            out,
            crate::effect::PendingCall::new(move |answer| warned(pending.resume(answer), warnings)),
        ),
        Step::Calls(out, pending) => Step::Calls(
            out,
            crate::effect::PendingCalls::new(move |answers| warned(pending.resume(answers), warnings)),
        ),
        // Writes never become watches or relays.
        streamed @ (Step::Watch(..) | Step::Relay(..)) => streamed,
    }
}

/// `step`, and every step it leads to, with what admission noted on its response:
/// a `Warning` header for each warning, and the audit annotations (in the response's
/// extensions, for the audit record).
pub(crate) fn noted(step: Step, notes: Arc<std::sync::Mutex<crate::admission::Notes>>) -> Step {
    match step {
        Step::Respond(r) => {
            let latest = notes.lock().map(|n| n.clone()).unwrap_or_default();
            let mut r = with_warnings(r, &latest.warnings);
            if !latest.audit_annotations.is_empty() {
                r.extensions_mut().insert(crate::audit::AuditAnnotations(latest.audit_annotations));
            }
            Step::Respond(r)
        }
        Step::Storage(op, pending) => Step::storage(op, move |done| noted(pending.resume(done), notes)),
        Step::Call(out, pending) => Step::Call(
            out,
            crate::effect::PendingCall::new(move |answer| noted(pending.resume(answer), notes)),
        ),
        Step::Calls(out, pending) => Step::Calls(
            out,
            crate::effect::PendingCalls::new(move |answers| noted(pending.resume(answers), notes)),
        ),
        streamed @ (Step::Watch(..) | Step::Relay(..)) => streamed,
    }
}

/// [`warned`] with warnings known only as the request goes (a patch's come from the
/// patched object, made again on every retry): the last ones set when it answers.
pub(crate) fn warned_by(step: Step, warnings: Arc<std::sync::Mutex<Vec<String>>>) -> Step {
    match step {
        Step::Respond(r) => {
            let latest = warnings.lock().map(|w| w.clone()).unwrap_or_default();
            Step::Respond(with_warnings(r, &latest))
        }
        Step::Storage(op, pending) => {
            Step::storage(op, move |done| warned_by(pending.resume(done), warnings))
        }
        Step::Call(out, pending) => Step::Call(
            out,
            crate::effect::PendingCall::new(move |answer| warned_by(pending.resume(answer), warnings)),
        ),
        Step::Calls(out, pending) => Step::Calls(
            out,
            crate::effect::PendingCalls::new(move |answers| warned_by(pending.resume(answers), warnings)),
        ),
        streamed @ (Step::Watch(..) | Step::Relay(..)) => streamed,
    }
}

/// Add a `Warning: 299 - "<text>"` header for each warning.
pub(crate) fn with_warnings(mut response: http::Response<Bytes>, warnings: &[String]) -> http::Response<Bytes> {
    for header in schema::warning_headers(warnings) {
        if let Ok(value) = http::HeaderValue::from_bytes(header.as_bytes()) {
            response.headers_mut().append(http::header::WARNING, value);
        }
    }
    response
}

/// A response carrying `value` in `output`'s encoding. A value the protobuf encoder
/// cannot write (no known kind, or JSON Go could not have decoded into its type) is a
/// 500 in JSON, as upstream answers an encoder's failure.
pub(crate) fn encoded(output: Output, code: u16, value: &Value) -> http::Response<Bytes> {
    match output.encode(value) {
        Ok(body) => http::Response::builder()
            .status(code)
            .header(http::header::CONTENT_TYPE, output.content_type())
            .body(body)
            .expect("valid status and header"),
        Err(e) => error_response(&ApiError::internal(e), Output::JSON),
    }
}

/// An error Status written as upstream writes one it cannot negotiate (the Accept
/// header named nothing this endpoint serves, or metadata only): JSON indented by two
/// spaces, no trailing newline.
pub(crate) fn raw_json_error(error: &ApiError) -> http::Response<Bytes> {
    http::Response::builder()
        .status(error.code)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Bytes::from(crate::typed_json::indent(&error.to_json())))
        .expect("valid status and header")
}

/// An error Status response; Tables are never used for errors. Compact JSON is
/// written in upstream's field order with its trailing newline.
pub(crate) fn error_response(error: &ApiError, output: Output) -> http::Response<Bytes> {
    if matches!(
        output.shape,
        negotiation::Shape::PartialObjectMetadata(_) | negotiation::Shape::PartialObjectMetadataList(_)
    ) {
        // Upstream writes an error's Status in the negotiated media type, which it cannot
        // find for a metadata-only Accept (no transform is allowed for a Status).
        return raw_json_error(error);
    }
    let output = Output {
        shape: negotiation::Shape::Object,
        ..output
    };
    if output == Output::JSON {
        let mut body = error.to_json();
        body.push(b'\n');
        return http::Response::builder()
            .status(error.code)
            .header(http::header::CONTENT_TYPE, output.content_type())
            .body(Bytes::from(body))
            .expect("valid status and header");
    }
    encoded(output, error.code, &error.to_value())
}

//! The aggregator's proxy: a request for a group version another API server serves is
//! sent there as an outbound call, and its answer relayed, as kube-aggregator proxies
//! to an APIService's backend.
//!
//! Where it differs from upstream, until issue 21 builds the aggregation layer: the
//! caller's identity is not forwarded (kube-aggregator adds `X-Remote-User` and
//! `X-Remote-Group` under its front-proxy client certificate), and a backend that
//! cannot be reached gets a 503 `Status` with upstream's message, where upstream writes
//! the message as text/plain; a Status is what clients decode for every other error.

use crate::config::AggregatedApi;
use crate::effect::{CallOutcome, Outbound, PendingCall, Step};
use crate::negotiation::Output;
use crate::rest::error_response;
use crate::status::ApiError;
use bytes::Bytes;
use std::time::Duration;

/// How long a proxied request may wait for its answer (the request's own deadline still
/// applies).
pub const PROXY_TIMEOUT: Duration = Duration::from_secs(60);

/// Headers of one hop only: never forwarded either way.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Send `request` to `api` and relay the answer.
pub fn proxy(api: &AggregatedApi, request: http::Request<Bytes>) -> Step {
    let (mut parts, body) = request.into_parts();
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let uri = format!("{}{path_and_query}", api.url.trim_end_matches('/'));
    let Ok(uri) = uri.parse::<http::Uri>() else {
        let e = ApiError::service_unavailable(format!("invalid aggregated API address {uri:?}"));
        return Step::Respond(error_response(&e, Output::JSON));
    };
    parts.uri = uri;
    strip_hop_by_hop(&mut parts.headers);
    let outbound = Outbound {
        request: http::Request::from_parts(parts, body),
        timeout: PROXY_TIMEOUT,
        // Aggregated APIs name no CA yet (issue 21 brings APIService caBundle).
        tls: None,
    };
    Step::Call(outbound, PendingCall::new(relay))
}

/// The backend's answer as the client gets it; 503 when there is none.
fn relay(outcome: CallOutcome) -> Step {
    match outcome {
        Ok(mut response) => {
            strip_hop_by_hop(response.headers_mut());
            Step::Respond(response)
        }
        Err(e) => {
            let e = ApiError::service_unavailable(format!("error trying to reach service: {e}"));
            Step::Respond(error_response(&e, Output::JSON))
        }
    }
}

pub(crate) fn strip_hop_by_hop(headers: &mut http::HeaderMap) {
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
}

//! The aggregator's proxy: a request for a group version an extension API server serves
//! is sent to an endpoint of its APIService's Service as an outbound call (Apiary has no
//! kube-proxy, so endpoints, as upstream's `--enable-aggregator-routing`), with the
//! caller's identity in `X-Remote-*` headers under the proxy client certificate, and the
//! answer relayed. A long-running request's answer (a watch) is streamed as it comes;
//! any other is collected whole (up to the adapter's bound) and then answered, under
//! the request's deadline as the server's own answers are.

use crate::status::plain_text;
use super::Backend;
use crate::authn::UserInfo;
use crate::effect::{CallError, CallOutcome, Outbound, PendingCall, PendingRelay, Relaying, Step};
use crate::request_info::RequestInfo;
use crate::shared::Shared;
use bytes::Bytes;
use std::sync::Arc;
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

/// The identity headers an extension server trusts from the proxy client certificate.
const REMOTE_USER: &str = "x-remote-user";
const REMOTE_GROUP: &str = "x-remote-group";
const REMOTE_UID: &str = "x-remote-uid";
const REMOTE_EXTRA: &str = "x-remote-extra-";

/// Send `request` of `user` to `backend` and relay the answer.
pub(crate) fn proxy(shared: &Shared, backend: &Backend, user: &UserInfo, info: &RequestInfo, request: http::Request<Bytes>) -> Step {
    if !backend.available {
        return Step::Respond(plain_text(http::StatusCode::SERVICE_UNAVAILABLE, "service unavailable"));
    }
    let endpoints = crate::rest::conversion::CachedEndpoints { served: &shared.served, root: &shared.config.storage_prefix };
    let at = match crate::webhook::client_config::Endpoints::resolve(&endpoints, &backend.namespace, &backend.service, backend.port) {
        Ok(at) => at,
        Err(e) => {
            tracing::warn!(apiservice = %backend.name, "error resolving {}/{}: {e}", backend.namespace, backend.service);
            return Step::Respond(plain_text(http::StatusCode::SERVICE_UNAVAILABLE, "service unavailable"));
        }
    };
    let (mut parts, body) = request.into_parts();
    let path_and_query = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let Ok(uri) = format!("https://{at}{path_and_query}").parse::<http::Uri>() else {
        return Step::Respond(plain_text(http::StatusCode::SERVICE_UNAVAILABLE, "service unavailable"));
    };
    parts.uri = uri;
    strip_hop_by_hop(&mut parts.headers);
    // The caller's credentials are for this server; the backend trusts the headers.
    parts.headers.remove(http::header::AUTHORIZATION);
    set_remote_identity(&mut parts.headers, user);
    let outbound = Outbound {
        request: http::Request::from_parts(parts, body),
        timeout: PROXY_TIMEOUT,
        tls: Some(Arc::new(backend.tls(shared.config.proxy_client.as_deref()))),
    };
    if crate::inflight::is_long_running(info) {
        return Step::Relay(outbound, PendingRelay::new(Streamed));
    }
    Step::Call(outbound, PendingCall::new(relay))
}

/// The backend's answer as the client gets it; [`unreachable`] when there is none.
fn relay(outcome: CallOutcome) -> Step {
    match outcome {
        Ok(mut response) => {
            strip_hop_by_hop(response.headers_mut());
            Step::Respond(response)
        }
        Err(e) => unreachable(e),
    }
}

/// 503 with why the backend gave no answer, in plain text as upstream's proxy writes it.
fn unreachable(error: CallError) -> Step {
    Step::Respond(plain_text(http::StatusCode::SERVICE_UNAVAILABLE, &error.to_string()))
}

/// A long-running answer streamed from the backend as it comes.
#[derive(Debug)]
struct Streamed;

impl Relaying for Streamed {
    fn head(&self, head: &mut http::response::Parts) {
        strip_hop_by_hop(&mut head.headers);
        // Streamed on in the client's own framing, whatever length the backend gave.
        head.headers.remove(http::header::CONTENT_LENGTH);
    }

    fn failed(self: Box<Self>, error: CallError) -> Step {
        unreachable(error)
    }
}

/// Replace any identity headers the client sent with `user`'s, as client-go's
/// `SetAuthProxyHeaders`: one `X-Remote-Group` per group, one `X-Remote-Extra-<key>`
/// per value with the key percent-encoded.
pub(crate) fn set_remote_identity(headers: &mut http::HeaderMap, user: &UserInfo) {
    let forged: Vec<http::HeaderName> = headers
        .keys()
        .filter(|k| [REMOTE_USER, REMOTE_GROUP, REMOTE_UID].contains(&k.as_str()) || k.as_str().starts_with(REMOTE_EXTRA))
        .cloned()
        .collect();
    for name in forged {
        headers.remove(name);
    }
    let value = |v: &str| http::HeaderValue::from_str(v).ok();
    if let Some(name) = value(&user.name) {
        headers.insert(REMOTE_USER, name);
    }
    for group in user.groups.iter().filter_map(|g| value(g)) {
        headers.append(REMOTE_GROUP, group);
    }
    for (key, values) in &user.extra {
        let Ok(name) = http::HeaderName::from_bytes(format!("{REMOTE_EXTRA}{}", escape_header_key(key)).as_bytes()) else {
            continue;
        };
        for v in values.iter().filter_map(|v| value(v)) {
            headers.append(name.clone(), v);
        }
    }
}

/// Percent-encode every byte not allowed in a header name, and `%` itself (so that the
/// receiver's unescaping is exact).
fn escape_header_key(key: &str) -> String {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$&'*+-.^_`|~".contains(&b);
    key.bytes().map(|b| if token(b) { char::from(b).to_string() } else { format!("%{b:02X}") }).collect()
}

pub(crate) fn strip_hop_by_hop(headers: &mut http::HeaderMap) {
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_keys_are_percent_encoded_as_client_go_does() {
        assert_eq!(escape_header_key("example.com/scopes"), "example.com%2Fscopes");
        assert_eq!(escape_header_key("100%"), "100%25");
        assert_eq!(escape_header_key("a b"), "a%20b");
    }
}

//! The outbound HTTPS client: how the adapter answers the core's
//! [`Step::Call`](apiary_core::Step::Call) effects (aggregated API servers, webhooks).
//!
//! HTTP/1.1 over TCP, with TLS (rustls on ring) for `https`; the request and response
//! are encoded and read by the core's sans-IO [`client`](apiary_core::http1::client)
//! codec. The whole exchange — connect, handshake, request, response — runs within the
//! call's timeout ([`CallError::TimedOut`] after it). Connections are kept alive and
//! reused per destination and TLS configuration ([`pool`]), TLS configurations built
//! once per [`ClientTls`](apiary_core::effect::ClientTls) ([`tls`]). Answers are bounded
//! ([`MAX_RESPONSE_BODY`]).
//!
//! A request that finds its reused connection broken before any byte of the answer
//! arrived — the server closed it while idle — is sent once more on a fresh connection
//! if it is safe to send twice: GET, HEAD, OPTIONS and TRACE, as Go's transport, and
//! requests the core marks [`Replayable`] (the webhook reviews, which change nothing).

mod conn;
mod pool;
mod tls;

use apiary_core::effect::{CallError, CallOutcome, ClientTls, Outbound, Replayable};
use apiary_core::http1::client::{encode_request, Received};
use apiary_core::http1::Limits;
use bytes::Bytes;
use conn::{Answer, Conn, Target, Want};
pub use conn::StreamedBody;
use http::Method;
use pool::{Pool, PoolKey};
use std::sync::{Arc, OnceLock};

/// The largest response body taken (kube-apiserver's own objects stay under 3 MiB; an
/// aggregated API's lists may be larger).
pub const MAX_RESPONSE_BODY: usize = 16 << 20;

/// Sends outbound requests; shared by every request of the server.
#[derive(Debug)]
pub struct Client {
    configs: tls::Configs,
    pool: Pool,
    limits: Limits,
}

impl Default for Client {
    fn default() -> Self {
        Client::new()
    }
}

/// The process's client (one pool, one set of TLS configurations).
pub fn shared() -> &'static Client {
    static CLIENT: OnceLock<Client> = OnceLock::new();
    CLIENT.get_or_init(Client::new)
}

impl Client {
    pub fn new() -> Client {
        Client {
            configs: tls::Configs::default(),
            pool: Pool::default(),
            limits: Limits {
                max_header_bytes: crate::serve::MAX_HEADER_BYTES,
                max_body_bytes: MAX_RESPONSE_BODY,
            },
        }
    }

    /// Send `outbound` and wait for its answer, within its timeout.
    pub async fn call(&self, outbound: Outbound) -> CallOutcome {
        match self.within_timeout(outbound, Want::Whole).await? {
            (Answer::Whole(received), conn, key) => Ok(self.keep(key, conn, received)),
            (Answer::Streaming(..), ..) => Err(CallError::Unreachable("a streamed answer where a whole one was asked for".into())),
        }
    }

    /// Send `outbound` and wait for the head of its answer, within its timeout: the
    /// head, and its body to stream on as it comes (on a connection of its own from
    /// then on).
    pub async fn open(&self, outbound: Outbound) -> Result<(http::response::Parts, StreamedBody), CallError> {
        match self.within_timeout(outbound, Want::Head).await? {
            (Answer::Streaming(head, reader), conn, _) => Ok((head, StreamedBody::new(conn, reader))),
            (Answer::Whole(_), ..) => Err(CallError::Unreachable("a whole answer where a head was asked for".into())),
        }
    }

    async fn within_timeout(&self, outbound: Outbound, want: Want) -> Result<(Answer, Conn, PoolKey), CallError> {
        let Outbound {
            request,
            timeout,
            tls,
        } = outbound;
        let uri = request.uri().clone();
        let outcome = match crate::serve::timeout(timeout, self.send(request, tls, want)).await {
            Some(outcome) => outcome,
            None => Err(CallError::TimedOut),
        };
        if let Err(e) = &outcome {
            tracing::debug!(%uri, "outbound request failed: {e}");
        }
        outcome
    }

    async fn send(
        &self,
        request: http::Request<Bytes>,
        tls: Option<Arc<ClientTls>>,
        want: Want,
    ) -> Result<(Answer, Conn, PoolKey), CallError> {
        let target = Target::of(request.uri()).map_err(CallError::Unreachable)?;
        let bytes = encode_request(&request).map_err(|e| CallError::Unreachable(e.to_string()))?;
        let secured = if target.https {
            let built = self.configs.get(tls.as_ref()).map_err(CallError::Unreachable)?;
            let name =
                tls::server_name(tls.as_deref(), &target.host).map_err(CallError::Unreachable)?;
            Some((built, name))
        } else {
            None
        };
        let key = PoolKey {
            target,
            tls: secured.as_ref().map_or(0, |(built, _)| built.id),
        };
        let method = request.method();

        if let Some(mut conn) = self.idle(&key).await {
            match conn.exchange(&bytes, method, self.limits, want).await {
                Ok(answer) => return Ok((answer, conn, key)),
                Err(broken) if broken.unanswered && replayable(&request) => {
                    tracing::debug!(
                        uri = %request.uri(),
                        "a kept-alive connection broke ({}); sending again on a new one",
                        broken.why
                    );
                }
                Err(broken) => return Err(CallError::Unreachable(broken.why)),
            }
        }
        let tls = secured.map(|(built, name)| (built.config, name));
        let mut conn = conn::connect(&key.target, tls)
            .await
            .map_err(CallError::Unreachable)?;
        match conn.exchange(&bytes, method, self.limits, want).await {
            Ok(answer) => Ok((answer, conn, key)),
            Err(broken) => Err(CallError::Unreachable(broken.why)),
        }
    }

    /// A pooled connection to `key` that is still open, if there is one.
    async fn idle(&self, key: &PoolKey) -> Option<Conn> {
        while let Some(mut conn) = self.pool.take(key) {
            if conn.is_idle_and_open().await {
                return Some(conn);
            }
        }
        None
    }

    /// Pool the connection if the response leaves it usable; the response.
    fn keep(&self, key: PoolKey, conn: Conn, received: Received) -> http::Response<Bytes> {
        if received.reusable {
            self.pool.put(key, conn);
        }
        received.response
    }
}

/// Whether sending `request` twice does no harm.
fn replayable(request: &http::Request<Bytes>) -> bool {
    [Method::GET, Method::HEAD, Method::OPTIONS, Method::TRACE].contains(request.method())
        || request.extensions().get::<Replayable>().is_some()
}

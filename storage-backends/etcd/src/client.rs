//! Calls to an etcd cluster through one connection at a time, with a deadline on each,
//! moving to the next endpoint when the current one fails.

use crate::grpc::{code, Channel, Endpoint, GrpcError, MessageStream, Sender};
use apiary_core::storage::StorageError;
use futures_rustls::TlsConnector;
use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// How long connecting to one endpoint may take before the next is tried.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

pub(crate) struct Client {
    endpoints: Vec<Endpoint>,
    tls: Option<TlsConnector>,
    /// The connection in use, and the endpoint to try first when there is none.
    state: Mutex<(Option<Channel>, usize)>,
    request_timeout: Duration,
}

/// Run `future` for at most `limit`.
pub(crate) async fn deadline<T>(
    limit: Duration,
    what: &str,
    future: impl Future<Output = Result<T, GrpcError>>,
) -> Result<T, GrpcError> {
    futures_lite::future::or(future, async {
        smol::Timer::after(limit).await;
        Err(GrpcError::Status {
            code: code::DEADLINE_EXCEEDED,
            message: format!("{what} took longer than {limit:?}"),
        })
    })
    .await
}

impl Client {
    pub(crate) fn new(
        endpoints: Vec<Endpoint>,
        tls: Option<TlsConnector>,
        request_timeout: Duration,
    ) -> Self {
        Self {
            endpoints,
            tls,
            state: Mutex::new((None, 0)),
            request_timeout,
        }
    }

    pub(crate) fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// The current connection, or a new one to the first endpoint that answers.
    pub(crate) async fn channel(&self) -> Result<Channel, GrpcError> {
        let start = {
            let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(channel) = &state.0 {
                return Ok(channel.clone());
            }
            state.1
        };
        let mut last = GrpcError::Transport("no etcd endpoints".into());
        for i in 0..self.endpoints.len() {
            let index = (start + i) % self.endpoints.len();
            let endpoint = &self.endpoints[index];
            match deadline(
                CONNECT_TIMEOUT,
                "connecting",
                Channel::connect(endpoint, self.tls.as_ref()),
            )
            .await
            {
                Ok(channel) => {
                    let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                    *state = (Some(channel.clone()), index);
                    tracing::debug!(%endpoint, "connected to etcd");
                    return Ok(channel);
                }
                Err(e) => {
                    tracing::debug!(%endpoint, "cannot reach etcd: {e}");
                    last = e;
                }
            }
        }
        Err(last)
    }

    /// Forget the connection after a failure on it; the next call starts with the next
    /// endpoint.
    fn drop_channel(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.0.take().is_some() {
            state.1 = (state.1 + 1) % self.endpoints.len().max(1);
        }
    }

    /// A unary call with the request deadline. A call that only reads is tried once
    /// more on a fresh connection when the connection failed under it.
    pub(crate) async fn unary<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        path: &str,
        request: &Req,
        read_only: bool,
    ) -> Result<Resp, GrpcError> {
        let attempts = if read_only { 2 } else { 1 };
        let mut outcome = Err(GrpcError::Transport("not tried".into()));
        for _ in 0..attempts {
            outcome = deadline(self.request_timeout, path, async {
                let channel = self.channel().await?;
                channel.unary(path, request).await
            })
            .await;
            match &outcome {
                Err(GrpcError::Transport(_)) => self.drop_channel(),
                Err(GrpcError::Status { code, .. }) if *code == code::DEADLINE_EXCEEDED => {
                    self.drop_channel()
                }
                _ => return outcome,
            }
        }
        outcome
    }

    /// Open a stream with the request deadline on its opening.
    pub(crate) async fn stream<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        path: &str,
        first: &Req,
    ) -> Result<(Sender<Req>, MessageStream<Resp>), GrpcError> {
        let outcome = deadline(self.request_timeout, path, async {
            let channel = self.channel().await?;
            channel.stream(path, first).await
        })
        .await;
        if matches!(outcome, Err(GrpcError::Transport(_))) {
            self.drop_channel();
        }
        outcome
    }
}

/// A failed call as the contract's error, for the cases that need no more context.
pub(crate) fn storage_error(e: GrpcError) -> StorageError {
    match e {
        GrpcError::Transport(why) => StorageError::Unavailable(why),
        GrpcError::Status { code, message }
            if code == code::UNAVAILABLE || code == code::DEADLINE_EXCEEDED =>
        {
            StorageError::Unavailable(message)
        }
        other => StorageError::Internal(other.to_string()),
    }
}

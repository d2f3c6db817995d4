//! One HTTP/2 stream: its body gathered within the limits, the request run through the
//! core's exchange, the answer sent as the client's flow control allows.

use super::{Handler, Shared};
use crate::serve::request::Arrival;
use crate::serve::watch_pump::WatchSink;
use crate::serve::{timeout, Apiary, Driven};
use apiary_core::lifecycle::InFlight;
use apiary_core::storage::Storage;
use bytes::{Bytes, BytesMut};
use h2::server::SendResponse;
use h2::{RecvStream, SendStream};
use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;

/// What became of a request's body.
#[derive(Debug)]
enum Gathered {
    Whole(Bytes),
    /// Over `--max-request-body-bytes`: 413.
    TooLarge,
    /// Not all there within the request timeout: 504.
    TimedOut,
    /// The client reset the stream, or the connection failed.
    Broken,
}

impl<S: Storage> Apiary<S> {
    /// Serve one stream of an HTTP/2 connection.
    pub(super) async fn serve_stream(
        &self,
        handler: Handler,
        request: http::Request<RecvStream>,
        mut respond: SendResponse<Bytes>,
        remote: SocketAddr,
        begun: Option<InFlight>,
    ) {
        let shared = &handler.0;
        let (parts, mut incoming) = request.into_parts();
        // Kept until the answer is out: dropping it earlier would reset the stream.
        let body = match self.gather(&parts.headers, &mut incoming).await {
            Gathered::Whole(body) => body,
            Gathered::Broken => return shared.reset_early(),
            Gathered::TooLarge => {
                let response = apiary_core::http1::request_entity_too_large(self.limits.max_body_bytes);
                return self.refuse(respond, response, shared).await;
            }
            Gathered::TimedOut => {
                return self.refuse(respond, apiary_core::lifecycle::timed_out(), shared).await;
            }
        };
        let head = parts.method == http::Method::HEAD;
        let request = origin_form(http::Request::from_parts(parts, body));
        let arrival = {
            let mut peer = shared.peer.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            self.arrive(request, remote, &mut peer, begun)
        };
        let Some(mut arrival) = arrival else {
            // No new requests are taken: the client may retry this one elsewhere.
            respond.send_reset(h2::Reason::REFUSED_STREAM);
            shared.ask_goaway();
            return;
        };
        drop(incoming);
        let mut driven = self.answer(&mut arrival, remote).await;
        if self.http2.goaway_now() {
            // The client's other streams go on; its next requests go elsewhere.
            driven.close_after();
        }
        let sent = match driven {
            Driven::Respond(_) if was_reset(&mut respond).await => {
                // Nobody to answer: the exchange ends unwritten.
                shared.reset_early();
                Ok(())
            }
            Driven::Respond(response) => self.respond(arrival, respond, response, head, shared).await,
            Driven::Close => {
                respond.send_reset(h2::Reason::INTERNAL_ERROR);
                Ok(())
            }
            Driven::Stream(streamed) => {
                let mut sink = WatchStream::Unanswered(respond, handler.0.clone());
                self.stream(arrival, &mut sink, streamed).await
            }
        };
        if let Err(e) = sent {
            tracing::debug!(%remote, "HTTP/2 stream ended: {e}");
        }
    }

    /// The request's body, read as it comes (its flow-control window given back as it
    /// is read), within `--max-request-body-bytes` and the request timeout.
    async fn gather(&self, headers: &http::HeaderMap, body: &mut RecvStream) -> Gathered {
        if body.is_end_stream() {
            return Gathered::Whole(Bytes::new());
        }
        let limit = self.limits.max_body_bytes;
        let announced = headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if announced.is_some_and(|n| n > limit as u64) {
            return Gathered::TooLarge;
        }
        let read = async {
            // One DATA frame (most bodies) is kept as it came; more are joined.
            let mut first: Option<Bytes> = None;
            let mut joined = BytesMut::new();
            loop {
                match poll_fn(|cx| body.poll_data(cx)).await {
                    None => return Gathered::Whole(first.unwrap_or_else(|| joined.freeze())),
                    Some(Err(_)) => return Gathered::Broken,
                    Some(Ok(chunk)) => {
                        let _ = body.flow_control().release_capacity(chunk.len());
                        let had = first.as_ref().map_or(joined.len(), Bytes::len);
                        if had + chunk.len() > limit {
                            return Gathered::TooLarge;
                        }
                        match first.take() {
                            None if joined.is_empty() => first = Some(chunk),
                            earlier => {
                                if let Some(earlier) = earlier {
                                    joined.extend_from_slice(&earlier);
                                }
                                joined.extend_from_slice(&chunk);
                            }
                        }
                    }
                }
            }
        };
        timeout(self.timeouts.request_body, read).await.unwrap_or(Gathered::TimedOut)
    }

    /// Answer a request the connection refuses itself (413, 504), with the headers every
    /// answer gets; the rest of its body is not read.
    async fn refuse(&self, respond: SendResponse<Bytes>, mut response: http::Response<Bytes>, shared: &Shared) {
        self.finish_headers(&mut response, http::HeaderValue::from_static(""));
        let _ = send_whole(respond, response, false, shared).await;
    }

    /// Send a whole answer and end the exchange.
    async fn respond(
        &self,
        mut arrival: Arrival,
        respond: SendResponse<Bytes>,
        response: http::Response<Bytes>,
        head: bool,
        shared: &Shared,
    ) -> io::Result<()> {
        self.write_audit(&mut arrival.exchange);
        let sent = send_whole(respond, response, head, shared).await;
        self.written(arrival);
        sent
    }
}

/// Whether the client has reset the stream (looked at without waiting).
async fn was_reset(respond: &mut SendResponse<Bytes>) -> bool {
    let reset = poll_fn(|cx| respond.poll_reset(cx));
    matches!(smol::future::poll_once(reset).await, Some(Ok(_)))
}

/// The request as the HTTP/1.1 codec hands it over: an origin-form URI (path and
/// query), and `:authority` as `Host` (Go's `Request.Host`).
fn origin_form(mut request: http::Request<Bytes>) -> http::Request<Bytes> {
    let uri = request.uri().clone();
    if let Some(authority) = uri.authority() {
        if !request.headers().contains_key(http::header::HOST) {
            if let Ok(host) = http::HeaderValue::from_str(authority.as_str()) {
                request.headers_mut().insert(http::header::HOST, host);
            }
        }
    }
    if let Some(path) = uri.path_and_query() {
        if let Ok(origin) = http::Uri::try_from(path.as_str()) {
            *request.uri_mut() = origin;
        }
    }
    request
}

/// Make a response head fit for HTTP/2: the connection-specific headers HTTP/2 forbids
/// are dropped. Whether it said `Connection: close`, which Go's server turns into a
/// GOAWAY.
fn h2_head(headers: &mut http::HeaderMap) -> bool {
    let close = headers
        .get(http::header::CONNECTION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("close"));
    for name in [
        http::header::CONNECTION,
        http::header::TRANSFER_ENCODING,
        http::header::UPGRADE,
        http::header::HeaderName::from_static("keep-alive"),
        http::header::HeaderName::from_static("proxy-connection"),
    ] {
        headers.remove(name);
    }
    if headers.get(http::header::TE).is_some_and(|v| v != "trailers") {
        headers.remove(http::header::TE);
    }
    close
}

/// Send a whole response: the head, then the body as flow control allows.
async fn send_whole(
    mut respond: SendResponse<Bytes>,
    response: http::Response<Bytes>,
    head: bool,
    shared: &Shared,
) -> io::Result<()> {
    let (mut parts, body) = response.into_parts();
    let close = h2_head(&mut parts.headers);
    let status = parts.status;
    let bodiless = status.is_informational()
        || status == http::StatusCode::NO_CONTENT
        || status == http::StatusCode::NOT_MODIFIED;
    // As the HTTP/1.1 encoder: the body's length, unless HEAD keeps the handler's.
    if !(bodiless || head && body.is_empty()) {
        parts.headers.insert(http::header::CONTENT_LENGTH, http::HeaderValue::from(body.len()));
    }
    let body = if bodiless || head { Bytes::new() } else { body };
    let sent = respond.send_response(http::Response::from_parts(parts, ()), body.is_empty());
    if close {
        shared.ask_goaway();
    }
    let mut stream = sent.map_err(io::Error::other)?;
    match body.is_empty() {
        // The head ended the stream.
        true => Ok(()),
        false => send_data(&mut stream, body, true).await,
    }
}

/// Send `data` on a stream as the client's flow-control window opens: h2 is given no
/// more than the capacity it has granted, so nothing piles up in its buffers, and a
/// client that stops reading a stream stalls that stream alone.
async fn send_data(stream: &mut SendStream<Bytes>, mut data: Bytes, end: bool) -> io::Result<()> {
    if data.is_empty() {
        // Nothing to send but, perhaps, the end of the stream (a watch's end).
        return match end {
            true => stream.send_data(Bytes::new(), true).map_err(io::Error::other),
            false => Ok(()),
        };
    }
    while !data.is_empty() {
        stream.reserve_capacity(data.len());
        let mut granted = stream.capacity();
        while granted == 0 {
            granted = match poll_fn(|cx| stream.poll_capacity(cx)).await {
                Some(Ok(n)) => n,
                Some(Err(e)) => return Err(io::Error::other(e)),
                None => return Err(io::Error::new(io::ErrorKind::BrokenPipe, "stream closed")),
            };
        }
        let chunk = data.split_to(granted.min(data.len()));
        let last = end && data.is_empty();
        stream.send_data(chunk, last).map_err(io::Error::other)?;
    }
    Ok(())
}

/// A watch's HTTP/2 stream: its head not sent yet, then its DATA frames.
enum WatchStream {
    Unanswered(SendResponse<Bytes>, std::sync::Arc<Shared>),
    Streaming(SendStream<Bytes>),
    Ended,
}

impl std::fmt::Debug for WatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WatchStream::Unanswered(..) => "Unanswered",
            WatchStream::Streaming(_) => "Streaming",
            WatchStream::Ended => "Ended",
        })
    }
}

impl WatchSink for WatchStream {
    async fn head(&mut self, head: &http::response::Parts) -> io::Result<()> {
        let WatchStream::Unanswered(mut respond, shared) = std::mem::replace(self, WatchStream::Ended) else {
            return Err(io::Error::other("the watch's head was sent already"));
        };
        let mut response = http::Response::new(());
        *response.status_mut() = head.status;
        *response.headers_mut() = head.headers.clone();
        if h2_head(response.headers_mut()) {
            shared.ask_goaway();
        }
        let stream = respond.send_response(response, false).map_err(io::Error::other)?;
        *self = WatchStream::Streaming(stream);
        Ok(())
    }

    fn frame(&mut self, frame: &[u8], batch: &mut Vec<u8>) {
        // HTTP/2 frames the data itself: the watch's frames go as they are.
        batch.extend_from_slice(frame);
    }

    async fn send(&mut self, batch: Vec<u8>) -> io::Result<()> {
        match self {
            WatchStream::Streaming(stream) => send_data(stream, Bytes::from(batch), false).await,
            _ => Err(io::Error::other("the watch's head is not sent")),
        }
    }

    async fn gone(&mut self) {
        let reset = match self {
            WatchStream::Unanswered(respond, _) => poll_fn(|cx| respond.poll_reset(cx)).await,
            WatchStream::Streaming(stream) => poll_fn(|cx| stream.poll_reset(cx)).await,
            WatchStream::Ended => return,
        };
        tracing::trace!("watch stream reset by the client: {reset:?}");
    }

    async fn end(&mut self) -> io::Result<()> {
        match std::mem::replace(self, WatchStream::Ended) {
            WatchStream::Streaming(mut stream) => send_data(&mut stream, Bytes::new(), true).await,
            _ => Ok(()),
        }
    }
}

//! A small gRPC client over one HTTP/2 connection: unary calls and bidirectional
//! streams of prost messages, as etcd's API needs them.
//!
//! gRPC frames each message as a flag byte (0: not compressed), a big-endian u32 length
//! and the encoded message, sends `content-type: application/grpc` and `te: trailers`,
//! and reports the outcome as `grpc-status` (and `grpc-message`) in the trailers, or in
//! the headers of a response without a body.

use apiary_io_compat::Compat;
use bytes::{Buf, BufMut, Bytes, BytesMut};
use futures_rustls::rustls::pki_types::ServerName;
use futures_rustls::TlsConnector;
use h2::client::SendRequest;
use h2::{RecvStream, SendStream};
use std::future::poll_fn;
use std::marker::PhantomData;
use std::sync::Arc;

/// Why a call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GrpcError {
    /// The connection failed or closed (etcd down, restarting, unreachable).
    Transport(String),
    /// The server answered with a non-OK gRPC status.
    Status { code: u32, message: String },
}

impl std::fmt::Display for GrpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Transport(why) => write!(f, "connection to etcd failed: {why}"),
            Self::Status { code, message } => {
                write!(f, "etcd answered {message} (gRPC code {code})")
            }
        }
    }
}

impl From<h2::Error> for GrpcError {
    fn from(e: h2::Error) -> Self {
        Self::Transport(e.to_string())
    }
}

/// gRPC status codes this client tells apart.
pub mod code {
    pub const OK: u32 = 0;
    pub const DEADLINE_EXCEEDED: u32 = 4;
    pub const OUT_OF_RANGE: u32 = 11;
    pub const UNAVAILABLE: u32 = 14;
}

/// Where an etcd member listens: `http://host:port` or `https://host:port`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub tls: bool,
    pub host: String,
    pub port: u16,
}

impl Endpoint {
    /// Parse an `--etcd-servers` entry.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| format!("{url:?} is not a URL: {e}"))?;
        let tls = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            _ => return Err(format!("{url:?}: the scheme must be http or https")),
        };
        let host = uri
            .host()
            .ok_or_else(|| format!("{url:?} has no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = uri.port_u16().unwrap_or(2379);
        Ok(Endpoint { tls, host, port })
    }

    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.tls { "https" } else { "http" };
        write!(f, "{scheme}://{}", self.authority())
    }
}

/// One HTTP/2 connection to an etcd member. Clones share it.
#[derive(Clone)]
pub struct Channel {
    send: SendRequest<Bytes>,
    base: Arc<str>,
}

impl Channel {
    /// Connect (TLS when the endpoint says https) and start the task that drives the
    /// connection. The channel fails with [`GrpcError::Transport`] once it is gone.
    pub async fn connect(
        endpoint: &Endpoint,
        tls: Option<&TlsConnector>,
    ) -> Result<Channel, GrpcError> {
        let transport = |e: std::io::Error| GrpcError::Transport(format!("{endpoint}: {e}"));
        let tcp = smol::net::TcpStream::connect((endpoint.host.as_str(), endpoint.port))
            .await
            .map_err(transport)?;
        tcp.set_nodelay(true).map_err(transport)?;
        let send = if endpoint.tls {
            let connector = tls.ok_or_else(|| {
                GrpcError::Transport(format!("{endpoint}: https needs the etcd TLS flags"))
            })?;
            let name = ServerName::try_from(endpoint.host.clone())
                .map_err(|e| GrpcError::Transport(format!("{endpoint}: {e}")))?;
            let stream = connector.connect(name, tcp).await.map_err(transport)?;
            handshake(Compat(stream)).await?
        } else {
            handshake(Compat(tcp)).await?
        };
        let scheme = if endpoint.tls { "https" } else { "http" };
        Ok(Channel {
            send,
            base: format!("{scheme}://{}", endpoint.authority()).into(),
        })
    }

    fn request(&self, path: &str) -> http::Request<()> {
        http::Request::builder()
            .method(http::Method::POST)
            .uri(format!("{}{path}", self.base))
            .header(http::header::CONTENT_TYPE, "application/grpc")
            .header(http::header::TE, "trailers")
            .body(())
            .expect("a valid request")
    }

    /// Call a unary method.
    pub async fn unary<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        path: &str,
        request: &Req,
    ) -> Result<Resp, GrpcError> {
        let mut send = self.send.clone().ready().await?;
        let (response, mut body) = send.send_request(self.request(path), false)?;
        send_all(&mut body, frame(request), true).await?;
        let response = response.await?;
        check_headers(response.headers())?;
        let mut stream = MessageStream::<Resp>::new(response.into_body());
        match stream.next().await? {
            Some(message) => {
                // Read to the end for the status in the trailers.
                if stream.next().await?.is_some() {
                    return Err(GrpcError::Transport(format!(
                        "{path}: more than one response message"
                    )));
                }
                Ok(message)
            }
            None => Err(GrpcError::Transport(format!("{path}: no response message"))),
        }
    }

    /// Open a bidirectional stream; send with the first half, read with the second.
    pub async fn stream<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        path: &str,
        first: &Req,
    ) -> Result<(Sender<Req>, MessageStream<Resp>), GrpcError> {
        let mut send = self.send.clone().ready().await?;
        let (response, mut body) = send.send_request(self.request(path), false)?;
        send_all(&mut body, frame(first), false).await?;
        let response = response.await?;
        check_headers(response.headers())?;
        Ok((
            Sender {
                body,
                _message: PhantomData,
            },
            MessageStream::new(response.into_body()),
        ))
    }
}

async fn handshake<T>(io: T) -> Result<SendRequest<Bytes>, GrpcError>
where
    T: apiary_io_compat::TokioRead + apiary_io_compat::TokioWrite + Unpin + Send + 'static,
{
    let (send, connection) = h2::client::Builder::new()
        // etcd's replies can be large (lists, watch bursts): a wide window keeps them moving.
        .initial_window_size(4 << 20)
        .initial_connection_window_size(16 << 20)
        .handshake::<_, Bytes>(io)
        .await?;
    smol::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!("etcd connection closed: {e}");
        }
    })
    .detach();
    Ok(send)
}

/// A message in gRPC's framing.
fn frame<M: prost::Message>(message: &M) -> Bytes {
    let len = message.encoded_len();
    let mut buf = BytesMut::with_capacity(5 + len);
    buf.put_u8(0);
    buf.put_u32(len as u32);
    message
        .encode(&mut buf)
        .expect("the buffer has room for the message");
    buf.freeze()
}

/// Send `data` as the flow-control window allows.
async fn send_all(
    stream: &mut SendStream<Bytes>,
    mut data: Bytes,
    end: bool,
) -> Result<(), GrpcError> {
    while !data.is_empty() {
        stream.reserve_capacity(data.len());
        let granted = poll_fn(|cx| stream.poll_capacity(cx))
            .await
            .ok_or_else(|| GrpcError::Transport("the stream closed while sending".into()))??;
        if granted == 0 {
            continue;
        }
        let chunk = data.split_to(granted.min(data.len()));
        stream.send_data(chunk, end && data.is_empty())?;
    }
    Ok(())
}

/// A non-OK `grpc-status` in headers or trailers as an error.
fn check_headers(headers: &http::HeaderMap) -> Result<(), GrpcError> {
    let Some(status) = headers.get("grpc-status") else {
        return Ok(());
    };
    let code = status
        .to_str()
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .unwrap_or(2);
    if code == code::OK {
        return Ok(());
    }
    let message = headers
        .get("grpc-message")
        .and_then(|m| m.to_str().ok())
        .map(percent_decode)
        .unwrap_or_default();
    Err(GrpcError::Status { code, message })
}

/// grpc-message is percent-encoded.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(byte) = u8::from_str_radix(&text[i + 1..i + 3], 16) {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The largest message read: far above what etcd sends (values are at most 1.5 MiB by
/// default and lists come in pages), far below what a bad length could make us buffer.
const MAX_MESSAGE: usize = 64 << 20;

/// Take the next whole gRPC message out of `buf`, if it holds one: a flag byte (only 0,
/// uncompressed, since none other was asked for), a big-endian u32 length, the message.
pub fn next_frame(buf: &mut BytesMut) -> Result<Option<Bytes>, GrpcError> {
    if buf.len() < 5 {
        return Ok(None);
    }
    if buf[0] != 0 {
        return Err(GrpcError::Transport(
            "a compressed message, which was not asked for".into(),
        ));
    }
    let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    if len > MAX_MESSAGE {
        return Err(GrpcError::Transport(format!(
            "a message of {len} bytes, over the {MAX_MESSAGE} this client accepts"
        )));
    }
    if buf.len() - 5 < len {
        return Ok(None);
    }
    buf.advance(5);
    Ok(Some(buf.split_to(len).freeze()))
}

/// The sending half of a stream.
pub struct Sender<M> {
    body: SendStream<Bytes>,
    _message: PhantomData<fn(M)>,
}

impl<M: prost::Message> Sender<M> {
    pub async fn send(&mut self, message: &M) -> Result<(), GrpcError> {
        send_all(&mut self.body, frame(message), false).await
    }
}

/// The receiving half of a stream (or a unary response): messages as they arrive.
pub struct MessageStream<M> {
    body: RecvStream,
    buf: BytesMut,
    done: bool,
    _message: PhantomData<fn() -> M>,
}

impl<M: prost::Message + Default> MessageStream<M> {
    fn new(body: RecvStream) -> Self {
        Self {
            body,
            buf: BytesMut::new(),
            done: false,
            _message: PhantomData,
        }
    }

    /// The next message; `None` when the server ended the stream with status OK.
    pub async fn next(&mut self) -> Result<Option<M>, GrpcError> {
        loop {
            if let Some(message) = next_frame(&mut self.buf)? {
                return M::decode(message)
                    .map(Some)
                    .map_err(|e| GrpcError::Transport(format!("undecodable message: {e}")));
            }
            if self.done {
                return Ok(None);
            }
            match self.body.data().await {
                Some(chunk) => {
                    let chunk = chunk?;
                    let _ = self.body.flow_control().release_capacity(chunk.len());
                    self.buf.extend_from_slice(&chunk);
                }
                None => {
                    self.done = true;
                    match self.body.trailers().await? {
                        Some(trailers) => check_headers(&trailers)?,
                        None if self.buf.is_empty() => {}
                        None => {
                            return Err(GrpcError::Transport("the stream ended mid-message".into()))
                        }
                    }
                    if !self.buf.is_empty() && self.buf.len() < 5 {
                        return Err(GrpcError::Transport("the stream ended mid-message".into()));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_as_kube_apiserver_takes_them() {
        assert_eq!(
            Endpoint::parse("http://127.0.0.1:2379"),
            Ok(Endpoint {
                tls: false,
                host: "127.0.0.1".into(),
                port: 2379
            })
        );
        assert_eq!(
            Endpoint::parse("https://[::1]:12379").map(|e| e.to_string()),
            Ok("https://[::1]:12379".into())
        );
        assert!(Endpoint::parse("etcd:2379").is_err());
        assert!(Endpoint::parse("ftp://x:1").is_err());
    }

    #[test]
    fn frames_are_taken_whole_and_only_whole() {
        let mut buf = BytesMut::new();
        assert_eq!(next_frame(&mut buf), Ok(None));
        buf.extend_from_slice(&[0, 0, 0, 0, 3, b'a', b'b']);
        assert_eq!(next_frame(&mut buf), Ok(None));
        buf.extend_from_slice(&[b'c', 0, 0, 0, 0, 0]);
        assert_eq!(next_frame(&mut buf), Ok(Some(Bytes::from_static(b"abc"))));
        assert_eq!(next_frame(&mut buf), Ok(Some(Bytes::new())));
        assert!(buf.is_empty());
        buf.extend_from_slice(&[1, 0, 0, 0, 0]);
        assert!(next_frame(&mut buf).is_err(), "compressed");
        let mut huge = BytesMut::from(&[0u8, 0xFF, 0xFF, 0xFF, 0xFF][..]);
        assert!(next_frame(&mut huge).is_err(), "over the limit");
    }

    #[test]
    fn grpc_messages_are_percent_decoded() {
        assert_eq!(percent_decode("etcdserver%3A%20mvcc"), "etcdserver: mvcc");
        assert_eq!(percent_decode("100%"), "100%");
    }
}

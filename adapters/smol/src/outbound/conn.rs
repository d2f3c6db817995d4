//! One connection to another server, plain or TLS, and one request's exchange over it
//! with the core's HTTP/1.1 client codec.

use apiary_core::http1::client::{BodyPiece, Received, ResponseError, ResponseReader};
use bytes::Bytes;
use apiary_core::http1::Limits;
use futures_rustls::client::TlsStream;
use futures_rustls::rustls::pki_types::ServerName;
use futures_rustls::rustls::ClientConfig;
use futures_rustls::TlsConnector;
use http::Method;
use smol::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use smol::net::TcpStream;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// How much is read from the socket at a time.
const READ_SIZE: usize = 16 * 1024;

/// A connection to another server.
pub(super) enum Conn {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// Where a request goes: the URI's scheme, host and port.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Target {
    pub(super) https: bool,
    /// The host as connected to and verified (an IPv6 address without brackets).
    pub(super) host: String,
    pub(super) port: u16,
}

impl Target {
    /// The target of an absolute `http` or `https` URI.
    pub(super) fn of(uri: &http::Uri) -> Result<Target, String> {
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            Some(other) => return Err(format!("unsupported protocol scheme {other:?}")),
            None => return Err(format!("no scheme in request URL {uri}")),
        };
        let host = uri
            .host()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| format!("no host in request URL {uri}"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        Ok(Target { https, host, port })
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// Open a connection to `target`, with TLS when `tls` gives its configuration and the
/// name to verify.
pub(super) async fn connect(
    target: &Target,
    tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
) -> Result<Conn, String> {
    let tcp = TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(|e| format!("dial tcp {target}: {e}"))?;
    // Requests are written whole; nothing is gained by waiting to coalesce.
    let _ = tcp.set_nodelay(true);
    match tls {
        None => Ok(Conn::Plain(tcp)),
        Some((config, name)) => TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .map(|stream| Conn::Tls(Box::new(stream)))
            .map_err(|e| format!("TLS handshake with {target}: {e}")),
    }
}

/// Why an exchange brought no response.
#[derive(Debug)]
pub(super) struct Broken {
    pub(super) why: String,
    /// No byte of a response arrived: the server cannot have answered, though it may
    /// have acted on the request.
    pub(super) unanswered: bool,
}

impl Conn {
    /// Whether a connection that sat idle in the pool can still be used: nothing may
    /// have arrived on it meanwhile (the peer's close, or stray bytes).
    pub(super) async fn is_idle_and_open(&mut self) -> bool {
        let mut byte = [0u8; 1];
        smol::future::poll_once(self.read(&mut byte)).await.is_none()
    }

    /// Send `request` (already encoded) and read its response, whole or its head only.
    pub(super) async fn exchange(
        &mut self,
        request: &[u8],
        method: &Method,
        limits: Limits,
        want: Want,
    ) -> Result<Answer, Broken> {
        let sent = async {
            self.write_all(request).await?;
            self.flush().await
        };
        if let Err(e) = sent.await {
            return Err(Broken {
                why: format!("writing the request: {e}"),
                unanswered: true,
            });
        }
        let mut reader = ResponseReader::new(method, limits);
        let mut buf = vec![0u8; READ_SIZE];
        loop {
            match want {
                Want::Whole => match reader.poll() {
                    Ok(Some(received)) => return Ok(Answer::Whole(received)),
                    Ok(None) => {}
                    Err(e) => return Err(Broken::from(e)),
                },
                Want::Head => match reader.poll_head() {
                    Ok(Some(head)) => return Ok(Answer::Streaming(head, reader)),
                    Ok(None) => {}
                    Err(e) => return Err(Broken::from(e)),
                },
            }
            if let Err(e) = self.read_into(&mut reader, &mut buf).await {
                return Err(Broken {
                    why: format!("reading the response: {e}"),
                    unanswered: !reader.received_any(),
                });
            }
        }
    }

    /// Read what the peer sent next into `reader`.
    async fn read_into(&mut self, reader: &mut ResponseReader, buf: &mut [u8]) -> io::Result<()> {
        match self.read(buf).await {
            Ok(0) => reader.feed_eof(),
            Ok(n) => reader.feed(&buf[..n]),
            // A TLS peer that closed without close_notify: the codec decides whether
            // what came is whole.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => reader.feed_eof(),
            Err(e) => return Err(e),
        }
        Ok(())
    }
}

/// How much of an answer an exchange waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Want {
    Whole,
    /// The head, the body to be streamed after it.
    Head,
}

/// What an exchange read.
pub(super) enum Answer {
    Whole(Received),
    /// The head ([`Want::Head`]), and the reader to take the body from.
    Streaming(http::response::Parts, ResponseReader),
}

impl From<ResponseError> for Broken {
    fn from(e: ResponseError) -> Broken {
        Broken {
            unanswered: e == ResponseError::ClosedBeforeResponse,
            why: e.to_string(),
        }
    }
}

/// The body of an answer streamed on from its connection, piece by piece as it comes.
pub struct StreamedBody {
    conn: Conn,
    reader: ResponseReader,
    buf: Vec<u8>,
}

impl StreamedBody {
    pub(super) fn new(conn: Conn, reader: ResponseReader) -> StreamedBody {
        StreamedBody { conn, reader, buf: vec![0u8; READ_SIZE] }
    }

    /// The next piece of the body; `None` once it has ended; an error when it was cut
    /// short or is not HTTP.
    pub async fn next(&mut self) -> Option<Result<Bytes, String>> {
        loop {
            match self.reader.poll_body() {
                Ok(BodyPiece::Data(data)) => return Some(Ok(data)),
                Ok(BodyPiece::End { .. }) => return None,
                Ok(BodyPiece::NeedMore) => {}
                Err(e) => return Some(Err(e.to_string())),
            }
            if let Err(e) = self.conn.read_into(&mut self.reader, &mut self.buf).await {
                return Some(Err(format!("reading the response: {e}")));
            }
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Conn::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Conn::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Conn::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(tcp) => Pin::new(tcp).poll_close(cx),
            Conn::Tls(tls) => Pin::new(tls.as_mut()).poll_close(cx),
        }
    }
}

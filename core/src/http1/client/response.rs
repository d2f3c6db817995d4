//! Reading the response to a request the server sent: bytes in, one
//! `http::Response` out, with whether the connection may carry another request — or,
//! for an answer relayed as it comes (a watch through the aggregator), its head first
//! and then its body piece by piece ([`ResponseReader::poll_head`],
//! [`ResponseReader::poll_body`]).

use bytes::{Buf, Bytes, BytesMut};
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, StatusCode, Version};

use super::super::decode::{self, Chunked, ConnectionOptions, Failure, MAX_HEADERS};
use super::super::{encode, Limits};

/// How many interim (1xx) responses may come before the final one, as Go allows.
const MAX_INTERIM: usize = 5;

/// Why no usable response came.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResponseError {
    /// The peer closed the connection before sending a byte: on a reused connection
    /// the request may be sent again on a fresh one.
    ClosedBeforeResponse,
    /// The peer closed the connection in the middle of its response.
    Truncated,
    /// The status line, a header or the body's framing is not HTTP/1.1.
    Malformed(&'static str),
    /// The status line and headers (or the trailers) are over this many bytes.
    HeadTooLarge(usize),
    /// The body is over this many bytes.
    BodyTooLarge(usize),
}

impl std::fmt::Display for ResponseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResponseError::ClosedBeforeResponse => {
                f.write_str("the server closed the connection without answering")
            }
            ResponseError::Truncated => {
                f.write_str("the server closed the connection in the middle of its answer")
            }
            ResponseError::Malformed(what) => write!(f, "malformed HTTP response: {what}"),
            ResponseError::HeadTooLarge(limit) => {
                write!(f, "the server's response headers exceeded {limit} bytes")
            }
            ResponseError::BodyTooLarge(limit) => {
                write!(f, "the server's response body exceeded {limit} bytes")
            }
        }
    }
}

impl std::error::Error for ResponseError {}

/// A whole response.
#[derive(Debug)]
pub struct Received {
    /// The response, its body decoded from its framing (no `Transfer-Encoding` left).
    pub response: http::Response<Bytes>,
    /// The connection may carry another request: the response was delimited, the
    /// server did not say `close`, and nothing followed it.
    pub reusable: bool,
}

/// The next piece of a streamed body.
#[derive(Debug, PartialEq, Eq)]
pub enum BodyPiece {
    /// Body bytes, decoded from their framing.
    Data(Bytes),
    /// More bytes are needed.
    NeedMore,
    /// The body is whole; the connection may carry another request when `reusable`.
    End { reusable: bool },
}

/// Reads one response from the bytes fed to it.
#[derive(Debug)]
pub struct ResponseReader {
    limits: Limits,
    /// The request was `HEAD`: no body follows, whatever the headers say.
    head_request: bool,
    input: Input,
    state: State,
    /// Interim responses skipped so far.
    interim: usize,
}

/// What the peer sent and has not been parsed yet.
#[derive(Debug, Default)]
struct Input {
    buf: BytesMut,
    /// The peer closed its side.
    eof: bool,
    /// Some byte of the response has arrived.
    received: bool,
}

/// Where the reader is.
#[derive(Debug)]
enum State {
    /// Waiting for the status line and headers; the first `scanned` buffered bytes hold
    /// no end of them.
    Head { scanned: usize },
    /// The head is read; waiting for the body.
    Body(Box<PartialResponse>),
    /// The head was handed out ([`ResponseReader::poll_head`]); the body is handed out
    /// as it comes.
    Streaming { framing: Framing, reusable: bool },
    /// The response was returned.
    Done,
}

/// A response whose head is read and whose body is still arriving.
#[derive(Debug)]
struct PartialResponse {
    parts: http::response::Parts,
    framing: Framing,
    reusable: bool,
}

/// How the body is delimited.
#[derive(Debug)]
enum Framing {
    /// Exactly this many bytes (0: none).
    Length(usize),
    Chunked(Box<Chunked>),
    /// Everything until the peer closes the connection.
    UntilClose,
}

impl ResponseReader {
    /// A reader for the response to a `method` request; the head (and trailers) may
    /// take `limits.max_header_bytes`, the body `limits.max_body_bytes`.
    pub fn new(method: &Method, limits: Limits) -> ResponseReader {
        ResponseReader {
            limits,
            head_request: method == Method::HEAD,
            input: Input::default(),
            state: State::Head { scanned: 0 },
            interim: 0,
        }
    }

    /// Bytes read from the connection. Bytes after the response are kept (they make
    /// the connection unusable), not parsed.
    pub fn feed(&mut self, bytes: &[u8]) {
        if bytes.is_empty() || self.input.eof {
            return;
        }
        self.input.received = true;
        if !matches!(self.state, State::Done) {
            self.input.buf.extend_from_slice(bytes);
        }
    }

    /// The peer closed its side (read returned 0).
    pub fn feed_eof(&mut self) {
        self.input.eof = true;
    }

    /// Whether any byte of a response has arrived (before it, a request is known not
    /// to have been answered).
    pub fn received_any(&self) -> bool {
        self.input.received
    }

    /// The response once it is whole; `None` while more bytes are needed (and forever
    /// after the response was returned).
    pub fn poll(&mut self) -> Result<Option<Received>, ResponseError> {
        loop {
            match &mut self.state {
                State::Done => return Ok(None),
                State::Head { scanned } => {
                    let scanned = *scanned;
                    let Some(partial) = self.head(scanned)? else {
                        return Ok(None);
                    };
                    self.state = State::Body(partial);
                }
                State::Body(partial) => {
                    let Some(body) = self.input.body(&mut partial.framing, &self.limits)? else {
                        return Ok(None);
                    };
                    let State::Body(partial) = std::mem::replace(&mut self.state, State::Done)
                    else {
                        unreachable!("matched above")
                    };
                    let PartialResponse { parts, reusable, .. } = *partial;
                    let reusable = reusable && !self.input.eof && self.input.buf.is_empty();
                    self.input.buf = BytesMut::new();
                    return Ok(Some(Received {
                        response: http::Response::from_parts(parts, body),
                        reusable,
                    }));
                }
                State::Streaming { .. } => return Ok(None),
            }
        }
    }

    /// The response's head once it is read (interim responses skipped), for an answer
    /// streamed on: its body then comes from [`ResponseReader::poll_body`]. `None` while
    /// more bytes are needed, and after the head was handed out.
    pub fn poll_head(&mut self) -> Result<Option<http::response::Parts>, ResponseError> {
        let State::Head { scanned } = self.state else {
            return Ok(None);
        };
        let Some(partial) = self.head(scanned)? else {
            return Ok(None);
        };
        let PartialResponse { parts, framing, reusable } = *partial;
        self.state = State::Streaming { framing, reusable };
        Ok(Some(parts))
    }

    /// The next piece of a body whose head [`ResponseReader::poll_head`] handed out:
    /// whatever has been decoded, so that nothing waits for more. The body limit holds
    /// for each piece buffered, not for the whole (a watch runs for as long as it runs).
    pub fn poll_body(&mut self) -> Result<BodyPiece, ResponseError> {
        let State::Streaming { framing, reusable } = &mut self.state else {
            return Ok(BodyPiece::NeedMore);
        };
        let input = &mut self.input;
        let piece = match framing {
            Framing::Length(0) => None,
            Framing::Length(left) => match input.buf.len().min(*left) {
                0 if input.eof => return Err(input.closed()),
                0 => return Ok(BodyPiece::NeedMore),
                n => {
                    *left -= n;
                    Some(input.buf.split_to(n).freeze())
                }
            },
            Framing::Chunked(chunked) => match chunked.decode(&mut input.buf, &self.limits) {
                // The last chunk is in: what came with it, then the end.
                Ok(Some(rest)) => {
                    *framing = Framing::Length(0);
                    if rest.is_empty() {
                        None
                    } else {
                        Some(rest)
                    }
                }
                Ok(None) => match chunked.take_decoded() {
                    data if !data.is_empty() => Some(data),
                    _ if input.eof => return Err(input.closed()),
                    _ => return Ok(BodyPiece::NeedMore),
                },
                Err(failure) => return Err(chunk_failure(failure, &self.limits)),
            },
            Framing::UntilClose if input.buf.is_empty() && input.eof => None,
            Framing::UntilClose if input.buf.is_empty() => return Ok(BodyPiece::NeedMore),
            Framing::UntilClose => Some(input.buf.split().freeze()),
        };
        match piece {
            Some(data) => Ok(BodyPiece::Data(data)),
            None => {
                let reusable = *reusable && !input.eof && input.buf.is_empty();
                self.state = State::Done;
                Ok(BodyPiece::End { reusable })
            }
        }
    }

    /// Parse the head if it is complete, skipping interim responses.
    fn head(&mut self, scanned: usize) -> Result<Option<Box<PartialResponse>>, ResponseError> {
        let max = self.limits.max_header_bytes;
        let window = &self.input.buf[..self.input.buf.len().min(max)];
        let (end, _) = decode::find_head_end(window, scanned);
        let Some(end) = end else {
            if self.input.buf.len() >= max {
                return Err(ResponseError::HeadTooLarge(max));
            }
            if self.input.eof {
                return Err(self.input.closed());
            }
            self.state = State::Head {
                scanned: window.len().saturating_sub(2),
            };
            return Ok(None);
        };

        let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut slots);
        let len = match response.parse(&self.input.buf[..end]) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => return Err(ResponseError::Malformed("incomplete head")),
            Err(httparse::Error::TooManyHeaders) => return Err(ResponseError::HeadTooLarge(max)),
            Err(_) => return Err(ResponseError::Malformed("bad status line or header")),
        };
        let version = match response.version {
            Some(0) => Version::HTTP_10,
            Some(1) => Version::HTTP_11,
            _ => return Err(ResponseError::Malformed("not HTTP/1.0 or HTTP/1.1")),
        };
        let status = response
            .code
            .and_then(|code| StatusCode::from_u16(code).ok())
            .ok_or(ResponseError::Malformed("bad status code"))?;
        let mut headers = HeaderMap::with_capacity(response.headers.len());
        for field in response.headers.iter() {
            let name = HeaderName::from_bytes(field.name.as_bytes())
                .map_err(|_| ResponseError::Malformed("bad header name"))?;
            let value = HeaderValue::from_bytes(field.value)
                .map_err(|_| ResponseError::Malformed("bad header value"))?;
            headers.append(name, value);
        }
        self.input.buf.advance(len);

        if status == StatusCode::SWITCHING_PROTOCOLS {
            return Err(ResponseError::Malformed("switching protocols without being asked to"));
        }
        if status.is_informational() {
            // 100 Continue, 103 Early Hints, …: the final response is still to come.
            self.interim += 1;
            if self.interim > MAX_INTERIM {
                return Err(ResponseError::Malformed("too many interim (1xx) responses"));
            }
            self.state = State::Head { scanned: 0 };
            return self.head(0);
        }
        let (framing, reusable) = self.framing(status, version, &mut headers)?;
        let (mut parts, ()) = http::Response::new(()).into_parts();
        parts.status = status;
        parts.version = version;
        parts.headers = headers;
        Ok(Some(Box::new(PartialResponse {
            parts,
            framing,
            reusable,
        })))
    }

    /// How the body is delimited (RFC 9112 §6.3), and whether the connection persists.
    fn framing(
        &self,
        status: StatusCode,
        version: Version,
        headers: &mut HeaderMap,
    ) -> Result<(Framing, bool), ResponseError> {
        let mut reusable = ConnectionOptions::of(headers).persistent(version);
        if self.head_request || encode::bodiless(status) {
            // The framing this response would have had says nothing once it is read.
            headers.remove(header::TRANSFER_ENCODING);
            return Ok((Framing::Length(0), reusable));
        }
        if headers.contains_key(header::TRANSFER_ENCODING) {
            if version == Version::HTTP_10 {
                return Err(ResponseError::Malformed("Transfer-Encoding in an HTTP/1.0 response"));
            }
            decode::only_chunked(headers).map_err(|failure| match failure {
                Failure::UnsupportedTransferEncoding => {
                    ResponseError::Malformed("unsupported transfer encoding")
                }
                _ => ResponseError::Malformed("bad Transfer-Encoding"),
            })?;
            // Chunked wins over a Content-Length; such a message may be an attempt at
            // smuggling, so the connection is not used again.
            if headers.remove(header::CONTENT_LENGTH).is_some() {
                reusable = false;
            }
            headers.remove(header::TRANSFER_ENCODING);
            return Ok((Framing::Chunked(Box::default()), reusable));
        }
        let length = decode::content_length(headers)
            .map_err(|_| ResponseError::Malformed("bad Content-Length"))?;
        match length {
            Some(length) if length > self.limits.max_body_bytes as u64 => {
                Err(ResponseError::BodyTooLarge(self.limits.max_body_bytes))
            }
            Some(length) => Ok((Framing::Length(length as usize), reusable)),
            None => Ok((Framing::UntilClose, false)),
        }
    }
}

impl Input {
    /// The body, if it is whole.
    fn body(&mut self, framing: &mut Framing, limits: &Limits) -> Result<Option<Bytes>, ResponseError> {
        let max = limits.max_body_bytes;
        match framing {
            Framing::Length(length) if self.buf.len() >= *length => {
                Ok(Some(self.buf.split_to(*length).freeze()))
            }
            Framing::Length(length) => {
                if self.eof {
                    return Err(self.closed());
                }
                self.buf.reserve(*length - self.buf.len());
                Ok(None)
            }
            Framing::Chunked(chunked) => match chunked.decode(&mut self.buf, limits) {
                Ok(Some(body)) => Ok(Some(body)),
                Ok(None) if self.eof => Err(self.closed()),
                Ok(None) => Ok(None),
                Err(failure) => Err(chunk_failure(failure, limits)),
            },
            Framing::UntilClose if self.buf.len() > max => Err(ResponseError::BodyTooLarge(max)),
            Framing::UntilClose if self.eof => Ok(Some(self.buf.split().freeze())),
            Framing::UntilClose => Ok(None),
        }
    }

    /// The connection ended before the response did.
    fn closed(&self) -> ResponseError {
        if self.received {
            ResponseError::Truncated
        } else {
            ResponseError::ClosedBeforeResponse
        }
    }
}

/// What a chunked body's framing failure means for the response.
fn chunk_failure(failure: Failure, limits: &Limits) -> ResponseError {
    match failure {
        Failure::BodyTooLarge => ResponseError::BodyTooLarge(limits.max_body_bytes),
        Failure::HeaderTooLarge => ResponseError::HeadTooLarge(limits.max_header_bytes),
        _ => ResponseError::Malformed("bad chunked framing"),
    }
}

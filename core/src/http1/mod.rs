//! HTTP/1.1 as a sans-IO connection codec: bytes in, `http::Request`s out; responses
//! (whole or streamed in chunks) in, bytes out. Keep-alive, pipelining, chunked and
//! Content-Length bodies, and limits on header and body size.
//!
//! The behaviour follows Go's `net/http` server, which kube-apiserver uses:
//!
//! * the request line and headers are parsed with `httparse`; an invalid request line,
//!   header, `Content-Length` or chunk framing is answered with a plain-text
//!   `400 Bad Request` and the connection is closed;
//! * a header block larger than [`Limits::max_header_bytes`] is answered with
//!   `431 Request Header Fields Too Large` as soon as the buffered partial head passes
//!   the limit;
//! * a body larger than [`Limits::max_body_bytes`] is answered with a Kubernetes
//!   `Status` (`413`, reason `RequestEntityTooLarge`): before any of it is buffered when
//!   `Content-Length` says so, as soon as the decoded size passes the limit when chunked;
//! * `Expect: 100-continue` gets one [`Event::Continue`] when the head is complete and
//!   the body is not;
//! * HTTP/1.1 connections stay open unless `Connection: close`; HTTP/1.0 ones close unless
//!   `Connection: keep-alive`;
//! * a peer that is slow to send is timed out as kube-apiserver's server does (see
//!   [`Timeouts`]): closed when idle or slow with a request's head, answered `504` when
//!   slow with its body.
//!
//! # Driving a connection
//!
//! Time is an input: a monotonic [`Duration`] since an origin the adapter picks. The
//! codec never reads a clock; it says when it next needs one ([`Connection::poll_timeout`]).
//!
//! ```text
//! loop {
//!     match conn.poll() {
//!         Event::Request(req) => write(conn.encode_response(&handle(req))),
//!         Event::Continue(bytes) => write(bytes),
//!         Event::NeedMore => {
//!             conn.start_waiting(now());
//!             match read_until(conn.poll_timeout()) {
//!                 TimedOut => conn.handle_timeout(now()),
//!                 Read(0) => conn.feed_eof(),
//!                 Read(n) => conn.feed(&buf[..n], now()),
//!             }
//!         }
//!         Event::TimedOut(response) => { write(conn.encode_response(&response)); break }
//!         Event::Fatal(bytes) => { write(bytes); break }
//!         Event::Closed => break,
//!     }
//!     if conn.should_close() { break }
//! }
//! ```
//!
//! An adapter that polls ahead (several pipelined requests in flight) must write the
//! responses in the order the requests were returned, and write the bytes of a
//! [`Event::Fatal`] — or close after [`Event::Closed`] — only once every request returned
//! before it has been answered: responses are always matched to the oldest unanswered
//! request.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::{Bytes, BytesMut};

pub mod client;
mod decode;
mod encode;
#[cfg(test)]
mod tests;
mod timers;

use decode::{Failure, PartialRequest};
pub use timers::Timeouts;
use timers::{Expiry, Timer};

/// Size limits the codec enforces on what the peer sends.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest request line plus header block; more → 431.
    pub max_header_bytes: usize,
    /// Largest request body; more → 413.
    pub max_body_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_header_bytes: 1 << 20,
            max_body_bytes: 3 << 20,
        }
    }
}

/// What the decoder produced from the bytes fed so far.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // a request is moved out right away
pub enum Event {
    /// A complete request (origin-form URI: path and query).
    Request(http::Request<Bytes>),
    /// The request said `Expect: 100-continue`: write these bytes, then keep reading.
    Continue(Bytes),
    /// Feed more bytes.
    NeedMore,
    /// The peer's input is unusable: write this response (already encoded), then close.
    Fatal(Bytes),
    /// A request's body did not arrive within [`Timeouts::request_body`]: add the headers
    /// every response carries, write [`Connection::encode_response`] of this `504`
    /// (it says `Connection: close`), then close. The rest of the body is not read.
    TimedOut(http::Response<Bytes>),
    /// The peer closed cleanly between requests; nothing more will come. Also returned
    /// once the last request the connection will carry has been returned (it said
    /// `Connection: close`, or the connection switched protocols): answer the requests
    /// already returned, then close.
    Closed,
}

/// kube-apiserver's answer to a request body over `limit` bytes (`--max-request-body-bytes`),
/// for the HTTP/1.1 codec and the HTTP/2 adapter alike.
pub fn request_entity_too_large(limit: usize) -> http::Response<Bytes> {
    let body = format!(
        concat!(
            r#"{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","#,
            r#""message":"Request entity too large: limit is {}","#,
            r#""reason":"RequestEntityTooLarge","code":413}}"#
        ),
        limit
    );
    http::Response::builder()
        .status(http::StatusCode::PAYLOAD_TOO_LARGE)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Bytes::from(body))
        .expect("static response")
}

/// The bytes of an interim `100 Continue` response.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// What the codec remembers about a request returned by `poll` until it is answered.
#[derive(Clone, Copy, Debug)]
struct Answer {
    /// The request was `HEAD`: the response carries headers only.
    head: bool,
    /// The connection may carry another request after this one.
    keep_alive: bool,
    /// The request asked to switch protocols (`Connection: upgrade` + `Upgrade`).
    upgrade: bool,
    /// The request was HTTP/1.0: no chunked responses, `Connection: keep-alive` to keep.
    http10: bool,
}

impl Answer {
    /// A response nobody asked for (the adapter's mistake, or after a `Fatal`): close.
    const ORPHAN: Answer = Answer {
        head: false,
        keep_alive: false,
        upgrade: false,
        http10: false,
    };
}

/// Where the decoder is.
enum Read {
    /// Waiting for a request head; the first `scanned` buffered bytes hold no end of it,
    /// `line_checked` says whether the request line was already validated.
    Head { scanned: usize, line_checked: bool },
    /// The head is parsed; waiting for the body.
    Body(Box<PartialRequest>),
    /// The last request returned asked to switch protocols: wait for its answer before
    /// reading on (the bytes after it may not be HTTP).
    AwaitUpgrade,
    /// A request's body took too long: answer it `504`, then read no more.
    TimedOut,
    /// No more requests on this connection.
    Done,
}

/// How the body of a streamed response is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// HTTP/1.0 peer: the body as is, delimited by closing the connection.
    Raw,
    /// `HEAD`, 1xx, 204, 304: no body at all.
    Empty,
}

/// One HTTP/1.1 server connection.
pub struct Connection {
    limits: Limits,
    timeouts: Timeouts,
    timer: Timer,
    /// Bytes fed and not yet consumed by the decoder.
    buf: BytesMut,
    read: Read,
    /// The peer closed its side.
    eof: bool,
    /// Requests returned by `poll` and not yet answered, oldest first.
    unanswered: VecDeque<Answer>,
    /// The streamed response in progress, if any.
    stream: Option<Stream>,
    /// Close once the bytes encoded so far are written.
    close: bool,
    /// A `101 Switching Protocols` answered an upgrade request.
    upgraded: bool,
}

impl Default for Connection {
    fn default() -> Self {
        Connection::new(Limits::default(), Timeouts::default())
    }
}

impl Connection {
    /// A connection enforcing `limits` and `timeouts`. No timer runs until the adapter
    /// first waits for the peer ([`Connection::start_waiting`]) or feeds it bytes.
    pub fn new(limits: Limits, timeouts: Timeouts) -> Self {
        Connection {
            limits,
            timeouts,
            timer: Timer::Paused,
            buf: BytesMut::new(),
            read: Read::Head {
                scanned: 0,
                line_checked: false,
            },
            eof: false,
            unanswered: VecDeque::new(),
            stream: None,
            close: false,
            upgraded: false,
        }
    }

    /// The limits this connection enforces.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Hand the codec bytes read from the socket at `now`.
    ///
    /// Bytes fed after the connection is done (a `Fatal`, `Closed`, a timeout, or the end
    /// of the last request) are dropped.
    pub fn feed(&mut self, bytes: &[u8], now: Duration) {
        if self.eof || matches!(self.read, Read::Done | Read::TimedOut) || bytes.is_empty() {
            return;
        }
        self.buf.extend_from_slice(bytes);
        let owed = self.owes_answer();
        self.timer.bytes_came(now, owed);
    }

    /// The adapter starts waiting for the peer's bytes at `now` (after
    /// [`Event::NeedMore`]): the idle timer counts from here.
    pub fn start_waiting(&mut self, now: Duration) {
        let owed = self.owes_answer();
        self.timer.waiting(now, owed);
    }

    /// When [`Connection::handle_timeout`] must next be called, if the peer does not send
    /// anything first. `None` while the peer is owed an answer (a request is being
    /// handled, a response streams) or the connection reads no more.
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.running_timer().map(|(deadline, _)| deadline)
    }

    /// Time has come to `now`: fire the timer due by then, if any. [`Connection::poll`]
    /// then says what to do: [`Event::Closed`] (idle, or a head too slow) or
    /// [`Event::TimedOut`] (a body too slow).
    pub fn handle_timeout(&mut self, now: Duration) {
        let Some((deadline, expiry)) = self.running_timer() else {
            return;
        };
        if now < deadline {
            return;
        }
        tracing::debug!(?expiry, ?deadline, "HTTP/1.1 connection timed out");
        self.timer = Timer::Expired(expiry);
        self.close = true;
        match expiry {
            Expiry::Idle | Expiry::Head => self.finish(),
            Expiry::Body => {
                self.read = Read::TimedOut;
                self.buf = BytesMut::new();
            }
        }
    }

    /// The timer that runs now: when it fires and which it is.
    fn running_timer(&self) -> Option<(Duration, Expiry)> {
        let body = match self.read {
            Read::Head { .. } => false,
            Read::Body(_) => true,
            Read::AwaitUpgrade | Read::TimedOut | Read::Done => return None,
        };
        if self.owes_answer() {
            return None;
        }
        self.timer.deadline(&self.timeouts, body)
    }

    /// Whether a request returned by `poll` is still unanswered or its response streams.
    fn owes_answer(&self) -> bool {
        !self.unanswered.is_empty() || self.stream.is_some()
    }

    /// The peer closed its side (read returned 0).
    pub fn feed_eof(&mut self) {
        self.eof = true;
    }

    /// How many bytes are fed and not yet consumed. An adapter may stop reading while
    /// requests are unanswered and this is large (pipelined requests waiting).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Whether a request's head has been read and its body is still awaited.
    pub fn reading_body(&self) -> bool {
        matches!(self.read, Read::Body(_))
    }

    /// How many requests `poll` returned that have not been answered yet.
    pub fn unanswered(&self) -> usize {
        self.unanswered.len()
    }

    /// Whether a `101 Switching Protocols` response answered an upgrade request: the
    /// connection no longer speaks HTTP/1.1 and [`Connection::take_buffered`] holds the
    /// first bytes of the new protocol.
    pub fn is_upgraded(&self) -> bool {
        self.upgraded
    }

    /// Take the bytes fed and not consumed by the decoder (after an upgrade: the start of
    /// the new protocol's stream).
    pub fn take_buffered(&mut self) -> Bytes {
        self.buf.split().freeze()
    }

    /// The next decoded event.
    pub fn poll(&mut self) -> Event {
        loop {
            match &mut self.read {
                Read::Done => return Event::Closed,
                Read::TimedOut => {
                    self.read = Read::Done;
                    return Event::TimedOut(crate::lifecycle::timed_out());
                }
                Read::AwaitUpgrade => {
                    return if self.eof {
                        Event::Closed
                    } else {
                        Event::NeedMore
                    };
                }
                Read::Head {
                    scanned,
                    line_checked,
                } => match decode::head(&mut self.buf, scanned, line_checked, &self.limits) {
                    Ok(Some(partial)) => self.read = Read::Body(partial),
                    Ok(None) if self.eof => {
                        // The peer is gone: a partial head is not worth an answer.
                        self.finish();
                        return Event::Closed;
                    }
                    Ok(None) => return Event::NeedMore,
                    Err(failure) => return self.fatal(failure),
                },
                Read::Body(partial) => match partial.body(&mut self.buf, &self.limits) {
                    Ok(Some(body)) => {
                        let Read::Body(partial) = std::mem::replace(&mut self.read, Read::Done)
                        else {
                            unreachable!("matched above")
                        };
                        let (request, answer) = partial.finish(body);
                        self.unanswered.push_back(answer);
                        self.timer = Timer::Paused;
                        self.read = if !answer.keep_alive {
                            Read::Done
                        } else if answer.upgrade {
                            Read::AwaitUpgrade
                        } else {
                            Read::Head {
                                scanned: 0,
                                line_checked: false,
                            }
                        };
                        if matches!(self.read, Read::Done) {
                            self.buf = BytesMut::new();
                        }
                        return Event::Request(request);
                    }
                    Ok(None) if self.eof => return self.fatal(Failure::BadRequest),
                    Ok(None) => {
                        if partial.wants_continue() && self.unanswered.is_empty() {
                            partial.continue_sent();
                            return Event::Continue(Bytes::from_static(CONTINUE));
                        }
                        return Event::NeedMore;
                    }
                    Err(failure) => return self.fatal(failure),
                },
            }
        }
    }

    /// Encode the whole response to the oldest request not yet answered.
    ///
    /// `Content-Length` is set from the body (except for 1xx, 204 and 304, which have
    /// none, and `HEAD`, whose body is dropped: an empty body keeps the handler's
    /// `Content-Length`); `Transfer-Encoding` is dropped. An informational response
    /// other than `101` does not answer the request.
    pub fn encode_response(&mut self, response: &http::Response<Bytes>) -> Bytes {
        let status = response.status();
        let headers = response.headers();
        let body = response.body();
        let (answer, close) = self.begin_response(status, headers);
        let mut out = BytesMut::with_capacity(encode::head_capacity(headers) + body.len());
        encode::status_line(&mut out, status);
        encode::headers(&mut out, headers, close, answer.http10 && answer.keep_alive);
        let bodiless = encode::bodiless(status);
        if status.is_informational() || status == http::StatusCode::NO_CONTENT {
            // No Content-Length at all.
        } else if status == http::StatusCode::NOT_MODIFIED || (answer.head && body.is_empty()) {
            encode::given_content_length(&mut out, headers);
        } else {
            encode::content_length(&mut out, body.len());
        }
        out.extend_from_slice(b"\r\n");
        if !bodiless && !answer.head {
            out.extend_from_slice(body);
        }
        out.freeze()
    }

    /// Encode the head of a streamed (chunked) response to the oldest request not yet answered.
    ///
    /// The body follows with [`Connection::encode_chunk`] and ends with
    /// [`Connection::encode_stream_end`]. To an HTTP/1.0 peer the body is sent as is and
    /// the connection closes after it; to `HEAD` (and for 1xx, 204, 304) there is no body.
    pub fn encode_stream_head(&mut self, head: &http::response::Parts) -> Bytes {
        let status = head.status;
        let headers = &head.headers;
        let (answer, mut close) = self.begin_response(status, headers);
        let stream = if encode::bodiless(status) || answer.head {
            Stream::Empty
        } else if answer.http10 {
            close = true;
            self.mark_close();
            Stream::Raw
        } else {
            Stream::Chunked
        };
        let mut out = BytesMut::with_capacity(encode::head_capacity(headers) + 32);
        encode::status_line(&mut out, status);
        encode::headers(&mut out, headers, close, answer.http10 && !close);
        if stream == Stream::Chunked {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
        } else if stream == Stream::Empty
            && !status.is_informational()
            && status != http::StatusCode::NO_CONTENT
        {
            encode::given_content_length(&mut out, headers);
        }
        out.extend_from_slice(b"\r\n");
        self.stream = Some(stream);
        out.freeze()
    }

    /// Encode one chunk of a streamed response (empty data encodes nothing).
    pub fn encode_chunk(&mut self, data: &[u8]) -> Bytes {
        if data.is_empty() {
            return Bytes::new();
        }
        match self.stream.unwrap_or(Stream::Chunked) {
            Stream::Chunked => encode::chunk(data),
            Stream::Raw => Bytes::copy_from_slice(data),
            Stream::Empty => Bytes::new(),
        }
    }

    /// Encode the end of a streamed response.
    pub fn encode_stream_end(&mut self) -> Bytes {
        match self.stream.take().unwrap_or(Stream::Chunked) {
            Stream::Chunked => Bytes::from_static(b"0\r\n\r\n"),
            Stream::Raw | Stream::Empty => Bytes::new(),
        }
    }

    /// Whether the connection must be closed after the bytes encoded so far are written.
    pub fn should_close(&self) -> bool {
        self.close
    }

    /// Which request a response answers, and whether the connection closes after it.
    fn begin_response(
        &mut self,
        status: http::StatusCode,
        headers: &http::HeaderMap,
    ) -> (Answer, bool) {
        if status.is_informational() && status != http::StatusCode::SWITCHING_PROTOCOLS {
            // 100, 102, 103: interim, the final response is still to come.
            let answer = self.unanswered.front().copied().unwrap_or(Answer::ORPHAN);
            return (answer, false);
        }
        let answer = self.unanswered.pop_front().unwrap_or(Answer::ORPHAN);
        if answer.upgrade
            && status == http::StatusCode::SWITCHING_PROTOCOLS
            && !encode::asks_close(headers)
        {
            self.upgraded = true;
            self.read = Read::Done;
            return (answer, false);
        }
        if answer.upgrade && matches!(self.read, Read::AwaitUpgrade) {
            // Not switching after all: the next bytes are HTTP again.
            self.read = Read::Head {
                scanned: 0,
                line_checked: false,
            };
        }
        let close = self.close || !answer.keep_alive || encode::asks_close(headers);
        if close {
            self.mark_close();
        }
        (answer, close)
    }

    /// The connection closes after the bytes encoded so far: read no more requests.
    fn mark_close(&mut self) {
        self.close = true;
        self.finish();
    }

    /// Read no more requests.
    fn finish(&mut self) {
        if !self.upgraded {
            self.read = Read::Done;
            self.buf = BytesMut::new();
        }
    }

    /// The peer's input is unusable: answer it and close.
    fn fatal(&mut self, failure: Failure) -> Event {
        self.close = true;
        self.finish();
        Event::Fatal(encode::failure(failure, &self.limits))
    }
}

//! Request decoding: the head (request line and headers, with `httparse`), the body
//! framing it announces, and the body itself (Content-Length or chunked).

use std::mem::MaybeUninit;
use std::ops::Range;

use bytes::{Buf, Bytes, BytesMut};
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Uri, Version};

use super::{Answer, Limits};

/// Why the peer's input cannot be used; each has its own response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Failure {
    /// 400: malformed request line, header, Content-Length or chunked framing.
    BadRequest,
    /// 431: the request line and headers (or the trailers) are over the limit.
    HeaderTooLarge,
    /// 413: the body is over the limit.
    BodyTooLarge,
    /// 505: not HTTP/1.0 or HTTP/1.1.
    VersionNotSupported,
    /// 501: a transfer coding other than `chunked`.
    UnsupportedTransferEncoding,
    /// 417: an `Expect` other than `100-continue`.
    ExpectationFailed,
}

/// Most headers a request may carry; more → 431.
pub(super) const MAX_HEADERS: usize = 256;
/// Longest chunk-size line (with extensions) in a chunked body, as Go's `maxLineLength`.
pub(super) const MAX_CHUNK_LINE: usize = 4096;
/// How much framing overhead beyond the allowance a chunked body may carry (Go's rule:
/// 16 bytes per chunk plus twice the chunk's data are free).
const MAX_CHUNK_EXCESS: u64 = 16 * 1024;

/// A request whose head is parsed and whose body is still being read.
pub(super) struct PartialRequest {
    parts: http::request::Parts,
    answer: Answer,
    framing: Framing,
    /// `Expect: 100-continue` and the `Continue` is not sent yet.
    expect_continue: bool,
}

/// How the body is delimited.
enum Framing {
    /// Exactly this many bytes (0: no body).
    Length(usize),
    Chunked(Box<Chunked>),
}

/// A chunked body being decoded: the raw framing is consumed as it arrives, the data
/// copied once into `body`. Requests and (in [`super::client`]) responses share it.
#[derive(Debug, Default)]
pub(super) struct Chunked {
    state: ChunkState,
    body: BytesMut,
    /// Framing overhead not covered by the allowance (see [`MAX_CHUNK_EXCESS`]).
    excess: u64,
    /// Bytes of trailer lines read so far.
    trailer_bytes: usize,
    /// How many bytes of the line being read (size or trailer) hold no line feed.
    scanned: usize,
}

#[derive(Clone, Copy, Debug, Default)]
enum ChunkState {
    /// Expecting `<hex size>[;extensions]\r\n`.
    #[default]
    Size,
    /// This many data bytes of the current chunk still to come.
    Data(u64),
    /// Expecting the `\r\n` after a chunk's data.
    DataEnd,
    /// After the last chunk: trailer lines until an empty one.
    Trailer,
}

/// Parse the request head if it is complete. `scanned`: how many buffered bytes are known
/// not to hold the end of the head; `line_checked`: whether the request line was
/// validated already while the head was partial.
pub(super) fn head(
    buf: &mut BytesMut,
    scanned: &mut usize,
    line_checked: &mut bool,
    limits: &Limits,
) -> Result<Option<Box<PartialRequest>>, Failure> {
    // RFC 9112 §2.2: ignore empty lines before the request line (a client may send an
    // extra CRLF after a body). They cost no memory and count toward no limit.
    let skip = leading_empty_lines(buf);
    if skip > 0 {
        buf.advance(skip);
        *scanned = 0;
    }
    if buf.is_empty() {
        return Ok(None);
    }
    let window = &buf[..buf.len().min(limits.max_header_bytes)];
    let (end, saw_newline) = find_head_end(window, *scanned);
    let Some(end) = end else {
        if buf.len() >= limits.max_header_bytes {
            return Err(Failure::HeaderTooLarge);
        }
        *scanned = window.len().saturating_sub(2);
        if saw_newline && !*line_checked {
            // The request line is complete: reject garbage now rather than buffering it
            // up to the limit.
            *line_checked = true;
            check_request_line(window)?;
        }
        return Ok(None);
    };

    let mut slots = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut []);
    let len = match request.parse_with_uninit_headers(&buf[..end], &mut slots) {
        Ok(httparse::Status::Complete(len)) => len,
        // The window ends with an empty line after a non-empty one: cannot be partial.
        Ok(httparse::Status::Partial) => return Err(Failure::BadRequest),
        Err(error) => return Err(parse_failure(error, &buf[..end])),
    };
    let base = &buf[..len];
    let method = range_in(base, request.method.unwrap_or("").as_bytes())?;
    let target = range_in(base, request.path.unwrap_or("").as_bytes())?;
    let version = match request.version {
        Some(0) => Version::HTTP_10,
        Some(1) => Version::HTTP_11,
        _ => return Err(Failure::VersionNotSupported),
    };
    let mut fields = Vec::with_capacity(request.headers.len());
    for field in request.headers.iter() {
        fields.push((
            range_in(base, field.name.as_bytes())?,
            range_in(base, field.value)?,
        ));
    }

    // The head is ours now: header values and the URI share its bytes.
    let head = buf.split_to(len).freeze();
    let method = Method::from_bytes(&head[method]).map_err(|_| Failure::BadRequest)?;
    let uri = parse_target(&method, head.slice(target))?;
    let mut headers = HeaderMap::with_capacity(fields.len());
    for (name, value) in fields {
        let name = HeaderName::from_bytes(&head[name]).map_err(|_| Failure::BadRequest)?;
        let value =
            HeaderValue::from_maybe_shared(head.slice(value)).map_err(|_| Failure::BadRequest)?;
        headers.append(name, value);
    }

    let partial = interpret(method, uri, version, headers, limits)?;
    if let Framing::Length(length) = partial.framing {
        // Bounded by the body limit; saves reallocating while the body arrives.
        buf.reserve(length.saturating_sub(buf.len()));
    }
    Ok(Some(partial))
}

/// Apply the headers' meaning: connection persistence, body framing, limits, `Expect`.
fn interpret(
    method: Method,
    uri: Uri,
    version: Version,
    mut headers: HeaderMap,
    limits: &Limits,
) -> Result<Box<PartialRequest>, Failure> {
    if headers.get_all(header::HOST).iter().count() > 1 {
        return Err(Failure::BadRequest);
    }

    let options = ConnectionOptions::of(&headers);
    let http10 = version == Version::HTTP_10;
    let mut keep_alive = options.persistent(version);
    let upgrade = options.upgrade && !http10 && headers.contains_key(header::UPGRADE);

    let framing = if headers.contains_key(header::TRANSFER_ENCODING) {
        // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 means faulty framing.
        if http10 {
            return Err(Failure::BadRequest);
        }
        // gzip, deflate, …: Go answers 501 too and so do we (the body could not be
        // handed on decoded).
        only_chunked(&headers)?;
        // RFC 9112 §6.3: chunked wins over Content-Length; such a message may be an
        // attempt at request smuggling, so the connection closes after the response.
        if headers.remove(header::CONTENT_LENGTH).is_some() {
            keep_alive = false;
        }
        headers.remove(header::TRANSFER_ENCODING);
        Framing::Chunked(Box::default())
    } else {
        match content_length(&headers)? {
            Some(length) if length > limits.max_body_bytes as u64 => {
                return Err(Failure::BodyTooLarge)
            }
            Some(length) => Framing::Length(length as usize),
            None => Framing::Length(0),
        }
    };

    let mut expect_continue = false;
    if let Some(expect) = headers.get(header::EXPECT) {
        if tokens(expect.as_bytes()).any(|t| t.eq_ignore_ascii_case(b"100-continue")) {
            expect_continue = !http10 && !matches!(framing, Framing::Length(0));
        } else {
            return Err(Failure::ExpectationFailed);
        }
    }

    let answer = Answer {
        head: method == Method::HEAD,
        keep_alive,
        upgrade,
        http10,
    };
    let (mut parts, ()) = http::Request::new(()).into_parts();
    parts.method = method;
    parts.uri = uri;
    parts.version = version;
    parts.headers = headers;
    Ok(Box::new(PartialRequest {
        parts,
        answer,
        framing,
        expect_continue,
    }))
}

impl PartialRequest {
    /// Read the body from the buffered bytes: `Some` when complete.
    pub(super) fn body(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
    ) -> Result<Option<Bytes>, Failure> {
        match &mut self.framing {
            Framing::Length(0) => Ok(Some(Bytes::new())),
            Framing::Length(length) if buf.len() >= *length => {
                Ok(Some(buf.split_to(*length).freeze()))
            }
            Framing::Length(_) => Ok(None),
            Framing::Chunked(chunked) => chunked.decode(buf, limits),
        }
    }

    /// Whether a `100 Continue` is owed.
    pub(super) fn wants_continue(&self) -> bool {
        self.expect_continue
    }

    pub(super) fn continue_sent(&mut self) {
        self.expect_continue = false;
    }

    /// The complete request, and what its response must honour.
    pub(super) fn finish(self: Box<Self>, body: Bytes) -> (http::Request<Bytes>, Answer) {
        let PartialRequest { parts, answer, .. } = *self;
        (http::Request::from_parts(parts, body), answer)
    }
}

impl Chunked {
    /// The data decoded so far and not yet taken: a streamed body's next piece. The
    /// body limit then applies to what is buffered between takes, not to the whole.
    pub(super) fn take_decoded(&mut self) -> Bytes {
        self.body.split().freeze()
    }

    /// Consume the framing buffered in `buf`: the whole body once its last chunk and
    /// trailers are in, `None` while more is to come. Trailers count against
    /// `limits.max_header_bytes`, the data against `limits.max_body_bytes`.
    pub(super) fn decode(&mut self, buf: &mut BytesMut, limits: &Limits) -> Result<Option<Bytes>, Failure> {
        loop {
            match self.state {
                ChunkState::Size => {
                    let line =
                        find_line(buf, &mut self.scanned, MAX_CHUNK_LINE, Failure::BadRequest);
                    let Some(line_end) = line? else {
                        return Ok(None);
                    };
                    let size = parse_chunk_size(&buf[..line_end - 2])?;
                    // Go's guard against bodies made mostly of framing (chunk extensions).
                    self.excess = (self.excess + line_end as u64)
                        .saturating_sub(16u64.saturating_add(size.saturating_mul(2)));
                    if self.excess > MAX_CHUNK_EXCESS {
                        return Err(Failure::BadRequest);
                    }
                    buf.advance(line_end);
                    if size == 0 {
                        self.state = ChunkState::Trailer;
                        continue;
                    }
                    let room = limits.max_body_bytes.saturating_sub(self.body.len());
                    if size > room as u64 {
                        return Err(Failure::BodyTooLarge);
                    }
                    self.body.reserve(size as usize);
                    self.state = ChunkState::Data(size);
                }
                ChunkState::Data(remaining) => {
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    let take = remaining.min(buf.len() as u64) as usize;
                    self.body.extend_from_slice(&buf[..take]);
                    buf.advance(take);
                    let remaining = remaining - take as u64;
                    self.state = if remaining == 0 {
                        ChunkState::DataEnd
                    } else {
                        ChunkState::Data(remaining)
                    };
                }
                ChunkState::DataEnd => {
                    if buf.len() < 2 {
                        if buf.first().is_some_and(|&b| b != b'\r') {
                            return Err(Failure::BadRequest);
                        }
                        return Ok(None);
                    }
                    if &buf[..2] != b"\r\n" {
                        return Err(Failure::BadRequest);
                    }
                    buf.advance(2);
                    self.state = ChunkState::Size;
                }
                ChunkState::Trailer => {
                    let budget = limits
                        .max_header_bytes
                        .saturating_sub(self.trailer_bytes)
                        .max(2);
                    let line = find_line(buf, &mut self.scanned, budget, Failure::HeaderTooLarge);
                    let Some(line_end) = line? else {
                        return Ok(None);
                    };
                    if line_end == 2 {
                        buf.advance(2);
                        return Ok(Some(self.body.split().freeze()));
                    }
                    check_trailer(&buf[..line_end - 2])?;
                    self.trailer_bytes += line_end;
                    buf.advance(line_end);
                }
            }
        }
    }
}

/// The length of the CRLF-terminated line at the start of `buf` (CRLF included), if it is
/// complete; the first `scanned` bytes are known to hold no line feed (updated here, reset
/// when a line is found). A line longer than `max` fails with `too_long`; a bare LF is
/// malformed (accepting it invites request smuggling).
fn find_line(
    buf: &[u8],
    scanned: &mut usize,
    max: usize,
    too_long: Failure,
) -> Result<Option<usize>, Failure> {
    let window = &buf[..buf.len().min(max)];
    let from = (*scanned).min(window.len());
    match window[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| from + i)
    {
        Some(0) => Err(Failure::BadRequest),
        Some(lf) if window[lf - 1] != b'\r' => Err(Failure::BadRequest),
        Some(lf) => {
            *scanned = 0;
            Ok(Some(lf + 1))
        }
        None if buf.len() >= max => Err(too_long),
        None => {
            *scanned = window.len();
            Ok(None)
        }
    }
}

/// `<hex size>[ ][;extensions]` → the size. Extensions are ignored but may hold no
/// control characters.
fn parse_chunk_size(line: &[u8]) -> Result<u64, Failure> {
    let size_end = line.iter().position(|&b| b == b';').unwrap_or(line.len());
    let (size, extensions) = line.split_at(size_end);
    if extensions
        .iter()
        .any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f)
    {
        return Err(Failure::BadRequest);
    }
    let size = trim_end(size);
    if size.is_empty() || size.len() > 16 {
        return Err(Failure::BadRequest);
    }
    size.iter().try_fold(0u64, |n, &b| {
        let digit = (b as char).to_digit(16).ok_or(Failure::BadRequest)?;
        Ok((n << 4) | digit as u64)
    })
}

/// A trailer field is read and dropped; it must still look like a field.
fn check_trailer(line: &[u8]) -> Result<(), Failure> {
    let Some(colon) = line.iter().position(|&b| b == b':') else {
        return Err(Failure::BadRequest);
    };
    let name_ok = colon > 0 && HeaderName::from_bytes(&line[..colon]).is_ok();
    let value_ok = line[colon + 1..]
        .iter()
        .all(|&b| b >= 0x20 && b != 0x7f || b == b'\t');
    if name_ok && value_ok {
        Ok(())
    } else {
        Err(Failure::BadRequest)
    }
}

/// What a message's `Connection` header asks for.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ConnectionOptions {
    pub(super) close: bool,
    pub(super) keep_alive: bool,
    pub(super) upgrade: bool,
}

impl ConnectionOptions {
    pub(super) fn of(headers: &HeaderMap) -> ConnectionOptions {
        let mut options = ConnectionOptions::default();
        for value in headers.get_all(header::CONNECTION) {
            for token in tokens(value.as_bytes()) {
                options.close |= token.eq_ignore_ascii_case(b"close");
                options.keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
                options.upgrade |= token.eq_ignore_ascii_case(b"upgrade");
            }
        }
        options
    }

    /// Whether the connection carries another message after this one: HTTP/1.1 unless
    /// `close`, HTTP/1.0 only with `keep-alive`.
    pub(super) fn persistent(&self, version: Version) -> bool {
        !self.close && (version != Version::HTTP_10 || self.keep_alive)
    }
}

/// The `Transfer-Encoding` header names `chunked` and nothing else: an empty or repeated
/// coding is malformed, any other coding unsupported.
pub(super) fn only_chunked(headers: &HeaderMap) -> Result<(), Failure> {
    let mut codings = 0usize;
    let mut chunked = 0usize;
    for value in headers.get_all(header::TRANSFER_ENCODING) {
        for coding in value.as_bytes().split(|&b| b == b',') {
            let coding = trim(coding);
            if coding.is_empty() {
                return Err(Failure::BadRequest);
            }
            codings += 1;
            if coding.eq_ignore_ascii_case(b"chunked") {
                chunked += 1;
            }
        }
    }
    if chunked > 1 {
        return Err(Failure::BadRequest);
    }
    if codings != 1 || chunked != 1 {
        return Err(Failure::UnsupportedTransferEncoding);
    }
    Ok(())
}

/// The body length the `Content-Length` headers give, if any: repeated fields must agree.
pub(super) fn content_length(headers: &HeaderMap) -> Result<Option<u64>, Failure> {
    let mut length: Option<(&[u8], u64)> = None;
    for value in headers.get_all(header::CONTENT_LENGTH) {
        let text = trim(value.as_bytes());
        match length {
            None => length = Some((text, parse_content_length(text)?)),
            Some((first, _)) if first == text => {}
            Some(_) => return Err(Failure::BadRequest),
        }
    }
    Ok(length.map(|(_, length)| length))
}

/// A Content-Length: one decimal number, nothing else.
fn parse_content_length(text: &[u8]) -> Result<u64, Failure> {
    if text.is_empty() {
        return Err(Failure::BadRequest);
    }
    text.iter().try_fold(0u64, |n, &b| {
        if !b.is_ascii_digit() {
            return Err(Failure::BadRequest);
        }
        n.checked_mul(10)
            .and_then(|n| n.checked_add((b - b'0') as u64))
            .ok_or(Failure::BadRequest)
    })
}

/// The request target: origin-form (`/path?query`), absolute-form
/// (`http://host/path`), `*` for OPTIONS, authority-form for CONNECT.
fn parse_target(method: &Method, target: Bytes) -> Result<Uri, Failure> {
    let origin = target.first() == Some(&b'/');
    let asterisk = &target[..] == b"*";
    let uri = Uri::from_maybe_shared(target).map_err(|_| Failure::BadRequest)?;
    let ok = if origin {
        uri.scheme().is_none() && uri.authority().is_none()
    } else if asterisk {
        method == Method::OPTIONS
    } else if uri.scheme().is_some() {
        uri.authority().is_some()
    } else {
        method == Method::CONNECT && uri.authority().is_some()
    };
    if ok {
        Ok(uri)
    } else {
        Err(Failure::BadRequest)
    }
}

/// Validate the request line of a partial head (only that line, so that the outcome does
/// not depend on how much of the head has arrived).
fn check_request_line(window: &[u8]) -> Result<(), Failure> {
    let Some(lf) = window.iter().position(|&b| b == b'\n') else {
        return Ok(());
    };
    let line = &window[..=lf];
    let mut request = httparse::Request::new(&mut []);
    match request.parse(line) {
        Ok(_) => Ok(()),
        Err(error) => Err(parse_failure(error, line)),
    }
}

fn parse_failure(error: httparse::Error, head: &[u8]) -> Failure {
    match error {
        httparse::Error::TooManyHeaders => Failure::HeaderTooLarge,
        // As Go: a well-formed version it does not speak is 505, anything else 400.
        httparse::Error::Version if well_formed_version(head) => Failure::VersionNotSupported,
        _ => Failure::BadRequest,
    }
}

/// Whether the request line is `<method> <target> HTTP/<digit>.<digit>`.
fn well_formed_version(head: &[u8]) -> bool {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut parts = line.split(|&b| b == b' ');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(_), Some(_), Some([b'H', b'T', b'T', b'P', b'/', major, b'.', minor]), None) => {
            major.is_ascii_digit() && minor.is_ascii_digit()
        }
        _ => false,
    }
}

/// Where the head ends (just after the empty line), searching from about `from`; and
/// whether any line feed was seen in the searched part.
pub(super) fn find_head_end(buf: &[u8], from: usize) -> (Option<usize>, bool) {
    let mut at = from.min(buf.len());
    let mut saw_newline = false;
    while let Some(offset) = buf[at..].iter().position(|&b| b == b'\n') {
        saw_newline = true;
        let lf = at + offset;
        match (buf.get(lf + 1), buf.get(lf + 2)) {
            (Some(b'\n'), _) => return (Some(lf + 2), true),
            (Some(b'\r'), Some(b'\n')) => return (Some(lf + 3), true),
            _ => at = lf + 1,
        }
    }
    (None, saw_newline)
}

/// How many bytes of empty lines (`\r\n` or `\n`) start `buf`.
fn leading_empty_lines(buf: &[u8]) -> usize {
    let mut at = 0;
    loop {
        match &buf[at..] {
            [b'\n', ..] => at += 1,
            [b'\r', b'\n', ..] => at += 2,
            _ => return at,
        }
    }
}

/// Where `part` lies inside `base` (httparse hands out sub-slices of its input).
fn range_in(base: &[u8], part: &[u8]) -> Result<Range<usize>, Failure> {
    if part.is_empty() {
        return Ok(0..0);
    }
    let start = (part.as_ptr() as usize).wrapping_sub(base.as_ptr() as usize);
    match start.checked_add(part.len()) {
        Some(end) if start <= base.len() && end <= base.len() => Ok(start..end),
        _ => Err(Failure::BadRequest),
    }
}

/// The comma-separated tokens of a header value, trimmed, empty ones skipped.
fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(trim)
        .filter(|t| !t.is_empty())
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(bytes.len());
    trim_end(&bytes[start..])
}

fn trim_end(bytes: &[u8]) -> &[u8] {
    let end = bytes
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(0, |i| i + 1);
    &bytes[..end]
}

//! Fuzz the sans-IO HTTP/1.1 server codec (`apiary_core::http1`).
//!
//! The first input byte is a control byte: its low 5 bits choose how the rest is split
//! into feeds (0: one feed, n: feeds of n bytes), bit 5 selects tiny limits (so the 431
//! and 413 paths are reached), bit 6 answers with streamed responses, bit 7 leaves out
//! the final `feed_eof`. The rest is fed to a connection which is polled until it needs
//! more input, and every request is answered.
//!
//! Checked: no panic; buffered bytes stay within the limits while the codec waits for
//! input; bodies stay within the body limit; `Continue` comes at most once per request;
//! `Fatal` and `Closed` are final; every request returned gets its response; and the
//! requests decoded do not depend on how the input was split (the same input fed whole
//! decodes to the same requests).

#![no_main]

use apiary_core::http1::{Connection, Event, Limits};
use bytes::Bytes;
use http::{Method, Response, StatusCode};
use libfuzzer_sys::fuzz_target;

/// Longest chunk-size line the codec buffers (Go's limit, mirrored by the codec).
const MAX_CHUNK_LINE: usize = 4096;

#[derive(Debug, PartialEq, Eq)]
struct Decoded {
    method: Method,
    uri: String,
    version: http::Version,
    headers: Vec<(String, Vec<u8>)>,
    body: Bytes,
}

#[derive(Debug, PartialEq, Eq)]
enum End {
    /// The connection ended with this failure status.
    Fatal(u16),
    /// Closed cleanly, or the last request said close.
    Closed,
    /// Still open, waiting for input (no EOF was fed).
    Open,
    /// Switched protocols.
    Upgraded,
}

fn run(input: &[u8], step: usize, limits: Limits, stream: bool, eof: bool) -> (Vec<Decoded>, End) {
    let mut conn = Connection::new(limits);
    let mut feeds = input.chunks(step.max(1));
    let mut fed = 0usize;
    let mut eof_fed = false;
    let mut decoded = Vec::new();
    let mut continues = 0u32;
    // Every poll either consumes input, produces an event that needs none, or ends.
    let mut budget = 4 * input.len() + 64;

    let end = loop {
        budget = budget
            .checked_sub(1)
            .expect("the codec does not make progress");
        let event = conn.poll();
        match event {
            Event::Request(request) => {
                continues = 0;
                assert!(request.body().len() <= limits.max_body_bytes);
                assert!(conn.unanswered() == 1);
                decoded.push(summary(&request));
                answer(&mut conn, &request, stream);
                assert_eq!(conn.unanswered(), 0);
                if conn.is_upgraded() {
                    assert!(matches!(conn.poll(), Event::Closed));
                    break End::Upgraded;
                }
            }
            Event::Continue(bytes) => {
                assert_eq!(&bytes[..], b"HTTP/1.1 100 Continue\r\n\r\n");
                continues += 1;
                assert!(continues <= 1, "Continue more than once for a request");
            }
            Event::NeedMore => {
                assert!(!eof_fed, "NeedMore after EOF");
                let bound = limits
                    .max_header_bytes
                    .max(limits.max_body_bytes)
                    .max(MAX_CHUNK_LINE);
                assert!(
                    conn.buffered() <= bound,
                    "{} bytes buffered while waiting (bound {bound})",
                    conn.buffered()
                );
                match feeds.next() {
                    Some(bytes) => {
                        conn.feed(bytes);
                        fed += bytes.len();
                        assert!(conn.buffered() <= fed);
                    }
                    None if eof => {
                        conn.feed_eof();
                        eof_fed = true;
                    }
                    None => break End::Open,
                }
            }
            Event::Fatal(bytes) => {
                assert!(conn.should_close());
                let code = status_of(&bytes);
                assert!(
                    matches!(code, 400 | 413 | 417 | 431 | 501 | 505),
                    "unexpected failure status {code}"
                );
                assert!(bytes.windows(19).any(|w| w == b"\r\nConnection: close"));
                // Final: nothing more comes out, whatever is fed.
                conn.feed(b"GET / HTTP/1.1\r\n\r\n");
                assert_eq!(conn.buffered(), 0);
                assert!(matches!(conn.poll(), Event::Closed));
                break End::Fatal(code);
            }
            Event::Closed => {
                assert!(matches!(conn.poll(), Event::Closed));
                break End::Closed;
            }
        }
    };
    (decoded, end)
}

fn summary(request: &http::Request<Bytes>) -> Decoded {
    Decoded {
        method: request.method().clone(),
        uri: request.uri().to_string(),
        version: request.version(),
        headers: request
            .headers()
            .iter()
            .map(|(name, value)| (name.to_string(), value.as_bytes().to_vec()))
            .collect(),
        body: request.body().clone(),
    }
}

/// Answer a request the way a handler might, chosen by its path: switch protocols,
/// close, or respond (whole or streamed) with a small body.
fn answer(conn: &mut Connection, request: &http::Request<Bytes>, stream: bool) {
    let path = request.uri().path();
    let head = request.method() == Method::HEAD;
    let mut response = Response::new(Bytes::from_static(b"{\"kind\":\"Status\"}"));
    if path.contains("101") {
        *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        response
            .headers_mut()
            .insert("upgrade", "x".parse().unwrap());
    } else if path.contains("204") {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    if path.contains("close") {
        response
            .headers_mut()
            .insert("connection", "close".parse().unwrap());
    }
    let was_closing = conn.should_close();
    let bytes = if stream && response.status() != StatusCode::SWITCHING_PROTOCOLS {
        let (parts, body) = response.into_parts();
        let mut out = conn.encode_stream_head(&parts).to_vec();
        out.extend_from_slice(&conn.encode_chunk(&body));
        out.extend_from_slice(&conn.encode_chunk(b""));
        out.extend_from_slice(&conn.encode_stream_end());
        out
    } else {
        let out = conn.encode_response(&response).to_vec();
        if head || !response.status().is_success() || response.status() == StatusCode::NO_CONTENT {
            assert!(
                out.ends_with(b"\r\n\r\n"),
                "a response without body carries one"
            );
        } else {
            assert!(out.ends_with(response.body()));
        }
        out
    };
    assert!(bytes.starts_with(b"HTTP/1.1 "));
    let closes = bytes.windows(19).any(|w| w == b"\r\nConnection: close");
    if conn.should_close() && !was_closing {
        assert!(closes, "closing without saying so");
    }
    if closes {
        assert!(conn.should_close());
    }
}

fn status_of(response: &[u8]) -> u16 {
    assert!(response.starts_with(b"HTTP/1.1 "));
    std::str::from_utf8(&response[9..12])
        .unwrap()
        .parse()
        .unwrap()
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, input)) = data.split_first() else {
        return;
    };
    let step = match control & 0x1f {
        0 => input.len(),
        n => n as usize,
    };
    let limits = if control & 0x20 != 0 {
        Limits {
            max_header_bytes: 256,
            max_body_bytes: 64,
        }
    } else {
        Limits::default()
    };
    let stream = control & 0x40 != 0;
    let eof = control & 0x80 == 0;

    let (split, split_end) = run(input, step, limits, stream, eof);
    if step < input.len() {
        // The same bytes in one feed decode to the same requests.
        let (whole, whole_end) = run(input, input.len(), limits, stream, eof);
        assert_eq!(split, whole, "requests depend on how the input is split");
        match (&split_end, &whole_end) {
            // A bad head over the limit: its request line found bad early (400, 505) or
            // only its size (431).
            (End::Fatal(431), End::Fatal(400 | 505)) | (End::Fatal(400 | 505), End::Fatal(431)) => {
            }
            (a, b) => assert_eq!(a, b, "the outcome depends on how the input is split"),
        }
    }
});

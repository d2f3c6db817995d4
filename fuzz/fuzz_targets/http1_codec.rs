//! Fuzz the sans-IO HTTP/1.1 server codec (`apiary_core::http1`).
//!
//! The first input byte is a control byte: its low 5 bits choose how the rest is split
//! into feeds (0: one feed, n: feeds of n bytes), bit 5 selects tiny limits (so the 431
//! and 413 paths are reached), bit 6 answers with streamed responses, bit 7 leaves out
//! the final `feed_eof`. The second byte is a clock byte: 0 leaves time standing still
//! (no timer fires); otherwise the next three bytes are the idle, head and body timeouts
//! in seconds, and the peer waits `clock × (0..=3)` quarter seconds before each feed and
//! the handler as long before each answer. The rest is fed to a connection which is
//! polled until it needs more input, and every request is answered.
//!
//! Checked: no panic; buffered bytes stay within the limits while the codec waits for
//! input; bodies stay within the body limit; `Continue` comes at most once per request;
//! `Fatal` and `Closed` are final; every request returned gets its response; a timer
//! runs whenever the codec waits for the peer and none while a request is unanswered;
//! handling a timeout early changes nothing; a timeout closes the connection, with a
//! `504` only while a body was being read; and the requests decoded do not depend on
//! how the input was split (the same input fed whole decodes to the same requests, or,
//! when a timer fired, one run's requests are the start of the other's).

#![no_main]

use std::time::Duration;

use apiary_core::http1::{Connection, Event, Limits, Timeouts};
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
    /// A timer fired: closed, or answered 504 and closed.
    TimedOut,
}

/// The connection's timeouts, and how slow the peer and the handler are.
#[derive(Clone, Copy, Debug)]
struct Clock {
    timeouts: Timeouts,
    /// The peer waits a multiple (0 to 3) of this before each feed; the handler this
    /// long before each answer.
    pace: Duration,
}

impl Clock {
    /// How long the peer waits before its `n`th feed.
    fn delay(&self, n: usize) -> Duration {
        self.pace * (n % 4) as u32
    }
}

fn run(
    input: &[u8],
    step: usize,
    limits: Limits,
    clock: Clock,
    stream: bool,
    eof: bool,
) -> (Vec<Decoded>, End) {
    let mut conn = Connection::new(limits, clock.timeouts);
    let mut feeds = input.chunks(step.max(1)).enumerate();
    let mut fed = 0usize;
    let mut now = Duration::ZERO;
    // A timer fired, while a body was being read or not.
    let mut fired: Option<bool> = None;
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
                assert!(fired.is_none(), "a request after a timeout");
                assert!(request.body().len() <= limits.max_body_bytes);
                assert!(conn.unanswered() == 1);
                decoded.push(summary(&request));
                // However long the handler takes, the peer owes nothing meanwhile.
                assert_eq!(conn.poll_timeout(), None);
                now += clock.pace;
                conn.handle_timeout(now);
                assert_eq!(conn.poll_timeout(), None);
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
                assert!(fired.is_none(), "waiting after a timeout");
                conn.start_waiting(now);
                let deadline = conn
                    .poll_timeout()
                    .expect("a timer runs while the peer owes bytes");
                match feeds.next() {
                    Some((n, bytes)) => {
                        let arrives = now + clock.delay(n);
                        if deadline <= arrives {
                            // The peer is too slow: the timer fires first.
                            let body = conn.reading_body();
                            now = deadline;
                            conn.handle_timeout(now);
                            assert_eq!(conn.poll_timeout(), None);
                            assert!(conn.should_close());
                            fired = Some(body);
                            continue;
                        }
                        now = arrives;
                        // Early: nothing happens.
                        conn.handle_timeout(now);
                        assert_eq!(conn.poll_timeout(), Some(deadline));
                        conn.feed(bytes, now);
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
            Event::TimedOut(response) => {
                assert_eq!(fired, Some(true), "504 without a body timing out");
                assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
                let bytes = conn.encode_response(&response);
                assert!(bytes.starts_with(b"HTTP/1.1 504 Gateway Timeout\r\n"));
                assert!(bytes.windows(19).any(|w| w == b"\r\nConnection: close"));
                assert!(matches!(conn.poll(), Event::Closed));
                break End::TimedOut;
            }
            Event::Fatal(bytes) => {
                assert!(fired.is_none(), "a failure after a timeout");
                assert!(conn.should_close());
                let code = status_of(&bytes);
                assert!(
                    matches!(code, 400 | 413 | 417 | 431 | 501 | 505),
                    "unexpected failure status {code}"
                );
                assert!(bytes.windows(19).any(|w| w == b"\r\nConnection: close"));
                // Final: nothing more comes out, whatever is fed.
                conn.feed(b"GET / HTTP/1.1\r\n\r\n", now);
                assert_eq!(conn.buffered(), 0);
                assert!(matches!(conn.poll(), Event::Closed));
                break End::Fatal(code);
            }
            Event::Closed => {
                assert!(matches!(conn.poll(), Event::Closed));
                if fired.is_some() {
                    // Final: nothing is taken after a timeout.
                    conn.feed(b"GET / HTTP/1.1\r\n\r\n", now);
                    assert_eq!(conn.buffered(), 0);
                    break End::TimedOut;
                }
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
    let Some((&pace, input)) = input.split_first() else {
        return;
    };
    let (clock, input) = if pace == 0 {
        let clock = Clock {
            timeouts: Timeouts::default(),
            pace: Duration::ZERO,
        };
        (clock, input)
    } else {
        let Some((&[idle, head, body], input)) = input.split_first_chunk::<3>() else {
            return;
        };
        let secs = |s: u8| Duration::from_secs(s.into());
        let clock = Clock {
            timeouts: Timeouts {
                idle: secs(idle),
                read_header: secs(head),
                request_body: secs(body),
            },
            pace: Duration::from_millis(250) * pace.into(),
        };
        (clock, input)
    };

    let (split, split_end) = run(input, step, limits, clock, stream, eof);
    if step < input.len() {
        // The same bytes in one feed decode to the same requests.
        let (whole, whole_end) = run(input, input.len(), limits, clock, stream, eof);
        if split_end == End::TimedOut || whole_end == End::TimedOut {
            // The peer's pace differs with the number of feeds: a timer may cut either
            // run short, but never changes what was decoded before it.
            let common = split.len().min(whole.len());
            assert_eq!(
                split[..common],
                whole[..common],
                "requests depend on the split"
            );
            return;
        }
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

//! Fuzz the client side of the HTTP/1.1 codec (`apiary_core::http1::client`): the
//! reader of responses from servers apiary calls (aggregated APIs, webhooks).
//!
//! The first input byte is a control byte: its low 5 bits choose how the rest is split
//! into feeds (0: one feed, n: feeds of n bytes), bit 5 selects tiny limits (so the
//! size refusals are reached), bit 6 makes the request a `HEAD`, bit 7 leaves out the
//! final `feed_eof`. The reader is polled after every feed.
//!
//! Checked: no panic; a body never passes the body limit; a response whose connection
//! may be reused came with no EOF; a `HEAD` response has no body; nothing comes after
//! the response; "closed before a response" only when no byte came; and the outcome
//! does not depend on how the input was split (fed whole, it reads the same). Read as a
//! stream (the head, then the body piece by piece, as a relayed watch is), the same
//! input gives the same response, whenever neither way hit a size limit (a stream has
//! no limit on its whole body).

#![no_main]

use apiary_core::http1::client::{BodyPiece, ResponseError, ResponseReader};
use apiary_core::http1::Limits;
use bytes::Bytes;
use http::Method;
use libfuzzer_sys::fuzz_target;

#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Response {
        status: u16,
        headers: Vec<(String, Vec<u8>)>,
        body: Bytes,
        reusable: bool,
    },
    Failed(ResponseError),
    /// Still waiting for bytes (no EOF was fed).
    Open,
}

fn run(input: &[u8], step: usize, limits: Limits, method: &Method, eof: bool) -> Outcome {
    let mut reader = ResponseReader::new(method, limits);
    let mut feeds = input.chunks(step.max(1));
    let mut eof_fed = false;
    loop {
        match reader.poll() {
            Ok(Some(received)) => {
                let body = received.response.body().clone();
                assert!(body.len() <= limits.max_body_bytes, "a body over the limit");
                if method == Method::HEAD {
                    assert!(body.is_empty(), "a body after HEAD");
                }
                if received.reusable {
                    assert!(!eof_fed, "reusable after the peer closed");
                }
                assert!(received.response.headers().get("transfer-encoding").is_none());
                // Final: nothing more comes out.
                reader.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                assert!(matches!(reader.poll(), Ok(None)));
                return Outcome::Response {
                    status: received.response.status().as_u16(),
                    headers: received
                        .response
                        .headers()
                        .iter()
                        .map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec()))
                        .collect(),
                    body,
                    // Bytes not fed yet follow the response as those fed do.
                    reusable: received.reusable && feeds.next().is_none(),
                };
            }
            Err(e) => {
                if e == ResponseError::ClosedBeforeResponse {
                    assert!(!reader.received_any() && input.is_empty());
                }
                return Outcome::Failed(e);
            }
            Ok(None) => {
                if !feed_next(&mut reader, &mut feeds, eof, &mut eof_fed) {
                    return Outcome::Open;
                }
            }
        }
    }
}

/// Feed the reader its next bytes, or its EOF once they are all fed (if the input
/// ends with one); `false` when nothing is left to feed.
fn feed_next<'a>(reader: &mut ResponseReader, feeds: &mut impl Iterator<Item = &'a [u8]>, eof: bool, eof_fed: &mut bool) -> bool {
    assert!(!*eof_fed, "more wanted after EOF");
    match feeds.next() {
        Some(bytes) => reader.feed(bytes),
        None if eof => {
            reader.feed_eof();
            *eof_fed = true;
        }
        None => return false,
    }
    true
}

/// The same input read as a stream: the head, then each piece of the body as it is
/// decoded.
fn run_streamed(input: &[u8], step: usize, limits: Limits, method: &Method, eof: bool) -> Outcome {
    let mut reader = ResponseReader::new(method, limits);
    let mut feeds = input.chunks(step.max(1));
    let mut eof_fed = false;
    let mut head = None;
    let mut body = Vec::new();
    loop {
        let polled = match head {
            None => reader.poll_head().map(|parts| {
                head = parts;
                None
            }),
            Some(_) => reader.poll_body().map(Some),
        };
        match polled {
            Err(e) => return Outcome::Failed(e),
            Ok(Some(BodyPiece::Data(data))) => {
                assert!(!data.is_empty(), "an empty piece");
                body.extend_from_slice(&data);
                continue;
            }
            Ok(Some(BodyPiece::End { reusable })) => {
                let head: http::response::Parts = head.expect("a head before the body");
                if reusable {
                    assert!(!eof_fed, "reusable after the peer closed");
                }
                return Outcome::Response {
                    status: head.status.as_u16(),
                    headers: head.headers.iter().map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec())).collect(),
                    body: Bytes::from(body),
                    reusable: reusable && feeds.next().is_none(),
                };
            }
            Ok(None) if head.is_some() => continue,
            Ok(None | Some(BodyPiece::NeedMore)) => {}
        }
        if !feed_next(&mut reader, &mut feeds, eof, &mut eof_fed) {
            return Outcome::Open;
        }
    }
}

/// Whether reading failed on a size limit.
fn over_a_limit(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Failed(ResponseError::HeadTooLarge(_) | ResponseError::BodyTooLarge(_)))
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, input)) = data.split_first() else {
        return;
    };
    let step = (control & 0x1f) as usize;
    let limits = if control & 0x20 != 0 {
        Limits {
            max_header_bytes: 64,
            max_body_bytes: 16,
        }
    } else {
        Limits {
            max_header_bytes: 1 << 20,
            max_body_bytes: 1 << 20,
        }
    };
    let method = if control & 0x40 != 0 {
        Method::HEAD
    } else {
        Method::GET
    };
    let eof = control & 0x80 == 0;
    let split = run(input, if step == 0 { input.len() } else { step }, limits, &method, eof);
    let whole = run(input, input.len(), limits, &method, eof);
    // Bytes beyond the limits may be refused sooner when they arrive at once; what
    // reads either way reads the same.
    if !over_a_limit(&split) && !over_a_limit(&whole) {
        assert_eq!(split, whole, "the outcome depends on how the input was split");
    }
    let streamed = run_streamed(input, if step == 0 { input.len() } else { step }, limits, &method, eof);
    if !over_a_limit(&streamed) && !over_a_limit(&split) {
        assert_eq!(streamed, split, "read as a stream, the response differs");
    }
});

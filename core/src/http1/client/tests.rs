use bytes::Bytes;
use http::{Method, StatusCode, Version};

use super::super::{Connection, Event, Limits, Timeouts};
use super::*;

const LIMITS: Limits = Limits {
    max_header_bytes: 1024,
    max_body_bytes: 64,
};

/// What reading `input` (all at once, then EOF if `eof`) for a `method` request gives.
fn read(method: Method, input: &[u8], eof: bool) -> Result<Option<Received>, ResponseError> {
    let mut reader = ResponseReader::new(&method, LIMITS);
    reader.feed(input);
    if eof {
        reader.feed_eof();
    }
    reader.poll()
}

/// The same, fed one byte at a time with a poll after each: the outcome must not
/// depend on how the bytes arrive.
fn read_bytewise(method: Method, input: &[u8], eof: bool) -> Result<Option<Received>, ResponseError> {
    let mut reader = ResponseReader::new(&method, LIMITS);
    for byte in input {
        reader.feed(std::slice::from_ref(byte));
        match reader.poll() {
            Ok(None) => {}
            done => return done,
        }
    }
    if eof {
        reader.feed_eof();
    }
    reader.poll()
}

#[track_caller]
fn whole(method: Method, input: &[u8], eof: bool) -> Received {
    let bytewise = read_bytewise(method.clone(), input, eof);
    let received = read(method, input, eof)
        .expect("a well-formed response")
        .expect("a whole response");
    let again = bytewise.expect("well-formed bytewise").expect("whole bytewise");
    assert_eq!(again.response.status(), received.response.status());
    assert_eq!(again.response.body(), received.response.body());
    assert_eq!(again.reusable, received.reusable);
    received
}

#[track_caller]
fn error(input: &[u8], eof: bool) -> ResponseError {
    let err = read(Method::GET, input, eof).expect_err("a broken response");
    assert_eq!(read_bytewise(Method::GET, input, eof).expect_err("broken bytewise"), err);
    err
}

#[test]
fn a_content_length_body_is_read_and_the_connection_kept() {
    let got = whole(
        Method::POST,
        b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\":\"bcd\"}",
        false,
    );
    assert_eq!(got.response.status(), StatusCode::CREATED);
    assert_eq!(got.response.version(), Version::HTTP_11);
    assert_eq!(got.response.headers()["content-type"], "application/json");
    assert_eq!(got.response.body(), &Bytes::from_static(b"{\"a\":\"bcd\"}"));
    assert!(got.reusable);
}

#[test]
fn a_partial_response_needs_more() {
    assert!(read(Method::GET, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", false)
        .unwrap()
        .is_none());
    assert!(read(Method::GET, b"HTTP/1.1 200 OK\r\nContent-Le", false).unwrap().is_none());
}

#[test]
fn a_chunked_body_is_decoded_and_its_framing_headers_dropped() {
    let got = whole(
        Method::GET,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n",
        false,
    );
    assert_eq!(got.response.body(), &Bytes::from_static(b"hello world"));
    assert!(got.response.headers().get("transfer-encoding").is_none());
    assert!(got.reusable);
}

#[test]
fn chunked_wins_over_a_content_length_but_the_connection_is_not_reused() {
    let got = whole(
        Method::GET,
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        false,
    );
    assert_eq!(got.response.body(), &Bytes::from_static(b"ok"));
    assert!(got.response.headers().get("content-length").is_none());
    assert!(!got.reusable);
}

#[test]
fn a_body_without_framing_runs_to_the_end_of_the_connection() {
    let input = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close";
    assert!(read(Method::GET, input, false).unwrap().is_none(), "not done before EOF");
    let got = whole(Method::GET, input, true);
    assert_eq!(got.response.body(), &Bytes::from_static(b"until close"));
    assert!(!got.reusable);
}

#[test]
fn head_204_and_304_have_no_body_whatever_the_headers_say() {
    let head = whole(Method::HEAD, b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n", false);
    assert!(head.response.body().is_empty());
    assert_eq!(head.response.headers()["content-length"], "40");
    assert!(head.reusable);
    let chunked = whole(Method::HEAD, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false);
    assert!(chunked.response.body().is_empty());
    assert!(chunked.response.headers().get("transfer-encoding").is_none());
    for status in ["204 No Content", "304 Not Modified"] {
        let input = format!("HTTP/1.1 {status}\r\nContent-Length: 3\r\n\r\n");
        let got = whole(Method::GET, input.as_bytes(), false);
        assert!(got.response.body().is_empty());
        assert!(got.reusable);
    }
}

#[test]
fn interim_responses_are_skipped_up_to_a_limit() {
    let got = whole(
        Method::POST,
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        false,
    );
    assert_eq!(got.response.status(), StatusCode::OK);
    assert_eq!(got.response.body(), &Bytes::from_static(b"ok"));
    let endless = "HTTP/1.1 100 Continue\r\n\r\n".repeat(6);
    assert_eq!(
        error(endless.as_bytes(), false),
        ResponseError::Malformed("too many interim (1xx) responses")
    );
    assert_eq!(
        error(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", false),
        ResponseError::Malformed("switching protocols without being asked to")
    );
}

#[test]
fn the_connection_is_kept_only_when_the_server_allows() {
    let close = whole(Method::GET, b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false);
    assert!(!close.reusable);
    let old = whole(Method::GET, b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false);
    assert_eq!(old.response.version(), Version::HTTP_10);
    assert!(!old.reusable);
    let kept = whole(Method::GET, b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", false);
    assert!(kept.reusable);
    // Bytes after the response: the connection's framing cannot be trusted.
    let extra = read(Method::GET, b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy", false)
        .unwrap()
        .unwrap();
    assert_eq!(extra.response.body(), &Bytes::from_static(b"x"));
    assert!(!extra.reusable);
    // Closed right after a whole response.
    let closed = read(Method::GET, b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", true)
        .unwrap()
        .unwrap();
    assert!(!closed.reusable);
}

#[test]
fn oversized_responses_are_refused() {
    let at_limit = format!("HTTP/1.1 200 OK\r\nContent-Length: 64\r\n\r\n{}", "x".repeat(64));
    assert_eq!(whole(Method::GET, at_limit.as_bytes(), false).response.body().len(), 64);
    // Announced: refused before any of it arrives.
    assert_eq!(
        error(b"HTTP/1.1 200 OK\r\nContent-Length: 65\r\n\r\n", false),
        ResponseError::BodyTooLarge(64)
    );
    let chunked = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n{}\r\n1\r\n", "x".repeat(64));
    assert_eq!(error(chunked.as_bytes(), false), ResponseError::BodyTooLarge(64));
    let until_close = format!("HTTP/1.1 200 OK\r\n\r\n{}", "x".repeat(65));
    assert_eq!(error(until_close.as_bytes(), false), ResponseError::BodyTooLarge(64));
    let big_head = format!("HTTP/1.1 200 OK\r\nX-Big: {}\r\n\r\n", "h".repeat(1024));
    assert_eq!(error(big_head.as_bytes(), false), ResponseError::HeadTooLarge(1024));
    let big_trailer = format!(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Big: {}\r\n\r\n",
        "h".repeat(1024)
    );
    assert_eq!(error(big_trailer.as_bytes(), false), ResponseError::HeadTooLarge(1024));
}

#[test]
fn malformed_responses_say_what_is_wrong() {
    let cases: &[(&[u8], &str)] = &[
        (b"HTTP/1.1 abc OK\r\n\r\n", "bad status line or header"),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "bad status line or header"),
        (b"HTTP/2.0 200 OK\r\n\r\n", "bad status line or header"),
        (b"HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n", "bad status line or header"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "bad Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "unsupported transfer encoding"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", "bad Transfer-Encoding"),
        (b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "Transfer-Encoding in an HTTP/1.0 response"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunked framing"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n", "bad chunked framing"),
    ];
    for (input, what) in cases {
        assert_eq!(
            error(input, false),
            ResponseError::Malformed(what),
            "{}",
            String::from_utf8_lossy(input)
        );
    }
    assert_eq!(
        ResponseError::Malformed("bad Content-Length").to_string(),
        "malformed HTTP response: bad Content-Length"
    );
}

#[test]
fn a_connection_that_ends_early_says_whether_anything_came() {
    assert_eq!(error(b"", true), ResponseError::ClosedBeforeResponse);
    assert_eq!(error(b"HTTP/1.1 200 OK\r\n", true), ResponseError::Truncated);
    assert_eq!(
        error(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", true),
        ResponseError::Truncated
    );
    assert_eq!(
        error(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n", true),
        ResponseError::Truncated
    );
    let mut reader = ResponseReader::new(&Method::GET, LIMITS);
    assert!(!reader.received_any());
    reader.feed(b"H");
    assert!(reader.received_any());
}

/// Decode `bytes` with the server codec, as the peer will.
fn as_served(bytes: &[u8]) -> http::Request<Bytes> {
    let mut server = Connection::new(Limits::default(), Timeouts::default());
    server.feed(bytes, std::time::Duration::ZERO);
    match server.poll() {
        Event::Request(request) => {
            assert_eq!(server.buffered(), 0, "nothing after the request");
            request
        }
        other => panic!("the server codec read {other:?}"),
    }
}

#[test]
fn a_request_is_written_as_a_server_reads_it() {
    let request = http::Request::post("https://webhook.example:8443/authenticate?timeout=30s")
        .header("content-type", "application/json")
        .header("host", "apiary.local:6443")
        .header("connection", "close")
        .header("x-remote-user", "alice")
        .body(Bytes::from_static(br#"{"kind":"TokenReview"}"#))
        .unwrap();
    let bytes = encode_request(&request).unwrap();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    assert!(text.starts_with("POST /authenticate?timeout=30s HTTP/1.1\r\nHost: webhook.example:8443\r\n"), "{text}");
    assert!(text.contains("\r\nContent-Type: application/json\r\n"), "{text}");
    assert!(!text.contains("apiary.local"), "the caller's Host is replaced: {text}");
    assert!(!text.to_ascii_lowercase().contains("connection:"), "{text}");
    let served = as_served(&bytes);
    assert_eq!(served.method(), Method::POST);
    assert_eq!(served.uri(), "/authenticate?timeout=30s");
    assert_eq!(served.headers()["host"], "webhook.example:8443");
    assert_eq!(served.headers()["content-length"], "22");
    assert_eq!(served.headers()["x-remote-user"], "alice");
    assert_eq!(served.body(), &Bytes::from_static(br#"{"kind":"TokenReview"}"#));
}

#[test]
fn bodiless_requests_announce_no_length_unless_they_write() {
    let get = encode_request(&http::Request::get("https://[::1]/apis").body(Bytes::new()).unwrap()).unwrap();
    assert_eq!(&get[..], b"GET /apis HTTP/1.1\r\nHost: [::1]\r\n\r\n");
    assert_eq!(as_served(&get).uri(), "/apis");
    let post = encode_request(&http::Request::post("https://a.example").body(Bytes::new()).unwrap()).unwrap();
    assert_eq!(&post[..], b"POST / HTTP/1.1\r\nHost: a.example\r\nContent-Length: 0\r\n\r\n");
    let no_host = http::Request::get("/relative").body(Bytes::new()).unwrap();
    assert_eq!(encode_request(&no_host), Err(RequestError::NoHost));
}

/// Streaming `input` fed in `pieces` (then EOF if `eof`): the head's status, the body
/// pieces handed out (each as it became available), and how the body ended.
fn stream(pieces: &[&[u8]], eof: bool) -> (StatusCode, Vec<Bytes>, Result<BodyPiece, ResponseError>) {
    let mut reader = ResponseReader::new(&Method::GET, LIMITS);
    let mut head = None;
    let mut data = Vec::new();
    let mut feed = pieces.iter();
    let mut ended = false;
    loop {
        if head.is_none() {
            match reader.poll_head() {
                Ok(Some(parts)) => head = Some(parts.status),
                Ok(None) => {}
                Err(e) => panic!("head: {e}"),
            }
        }
        if let Some(status) = head {
            match reader.poll_body() {
                Ok(BodyPiece::Data(piece)) => {
                    data.push(piece);
                    continue;
                }
                Ok(BodyPiece::NeedMore) => {}
                end => return (status, data, end),
            }
        }
        match feed.next() {
            Some(piece) => reader.feed(piece),
            None if eof && !ended => {
                ended = true;
                reader.feed_eof();
            }
            None => return (head.expect("a head"), data, Ok(BodyPiece::NeedMore)),
        }
    }
}

#[test]
fn a_streamed_chunked_body_comes_out_as_each_chunk_arrives() {
    let (status, data, end) = stream(
        &[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n", b"6\r\nsec", b"ond\r\n", b"0\r\n\r\n"],
        false,
    );
    assert_eq!(status, StatusCode::OK);
    assert_eq!(data, ["first", "sec", "ond"].map(Bytes::from));
    assert_eq!(end, Ok(BodyPiece::End { reusable: true }));
}

#[test]
fn a_streamed_body_has_no_limit_of_its_own_only_per_piece() {
    // 3 × 40 bytes is over the 64-byte body limit, each piece is not.
    let chunk = [b'x'; 40];
    let framed: Vec<u8> = [b"28\r\n".as_slice(), &chunk, b"\r\n"].concat();
    let (_, data, end) = stream(
        &[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", &framed, &framed, &framed, b"0\r\n\r\n"],
        false,
    );
    assert_eq!(data.iter().map(Bytes::len).sum::<usize>(), 120);
    assert_eq!(end, Ok(BodyPiece::End { reusable: true }));
}

#[test]
fn a_streamed_body_cut_short_is_an_error_not_an_end() {
    let (_, data, end) = stream(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"], true);
    assert_eq!(data, [Bytes::from_static(b"abc")]);
    assert_eq!(end, Err(ResponseError::Truncated));
    let (_, data, end) = stream(&[b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"], true);
    assert_eq!(data, [Bytes::from_static(b"abc")]);
    assert_eq!(end, Err(ResponseError::Truncated));
}

#[test]
fn streamed_length_and_until_close_bodies_end_where_their_framing_says() {
    let (_, data, end) = stream(&[b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", b"cde"], false);
    assert_eq!(data, ["ab", "cde"].map(Bytes::from));
    assert_eq!(end, Ok(BodyPiece::End { reusable: true }));
    let (_, data, end) = stream(&[b"HTTP/1.1 200 OK\r\n\r\nab", b"cde"], true);
    assert_eq!(data, ["ab", "cde"].map(Bytes::from));
    assert_eq!(end, Ok(BodyPiece::End { reusable: false }));
}

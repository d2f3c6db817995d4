use bytes::Bytes;
use http::{Method, Response, StatusCode, Version};

use super::*;

/// The time the tests that do not look at timers feed bytes at.
const T0: Duration = Duration::ZERO;

const STATUS_413: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}"#;

fn conn() -> Connection {
    Connection::new(Limits::default(), Timeouts::default())
}

fn small(max_header_bytes: usize, max_body_bytes: usize) -> Connection {
    Connection::new(
        Limits {
            max_header_bytes,
            max_body_bytes,
        },
        Timeouts::default(),
    )
}

#[track_caller]
fn request(event: Event) -> http::Request<Bytes> {
    match event {
        Event::Request(request) => request,
        other => panic!("expected a request, got {other:?}"),
    }
}

#[track_caller]
fn fatal(event: Event) -> String {
    match event {
        Event::Fatal(bytes) => String::from_utf8(bytes.to_vec()).unwrap(),
        other => panic!("expected Fatal, got {other:?}"),
    }
}

#[track_caller]
fn assert_need_more(event: Event) {
    assert!(
        matches!(event, Event::NeedMore),
        "expected NeedMore, got {event:?}"
    );
}

#[track_caller]
fn assert_closed(event: Event) {
    assert!(
        matches!(event, Event::Closed),
        "expected Closed, got {event:?}"
    );
}

/// Feed, expect a fatal response starting with `status_line`, and a closed connection.
#[track_caller]
fn assert_fatal(input: &[u8], status_line: &str) -> String {
    let mut c = conn();
    c.feed(input, T0);
    let response = fatal(c.poll());
    assert!(
        response.starts_with(status_line),
        "expected {status_line:?}, got {response:?}"
    );
    assert!(
        response.contains("\r\nConnection: close\r\n"),
        "{response:?}"
    );
    assert!(c.should_close());
    assert_closed(c.poll());
    response
}

fn ok(body: &'static str) -> Response<Bytes> {
    let mut response = Response::new(Bytes::from_static(body.as_bytes()));
    response
        .headers_mut()
        .insert("content-type", "text/plain".parse().unwrap());
    response
}

fn text(bytes: Bytes) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn simple_get() {
    let mut c = conn();
    c.feed(b"GET /api/v1/namespaces?limit=5 HTTP/1.1\r\nHost: example\r\nAccept: application/json\r\n\r\n", T0);
    let req = request(c.poll());
    assert_eq!(req.method(), Method::GET);
    assert_eq!(req.uri().path(), "/api/v1/namespaces");
    assert_eq!(req.uri().query(), Some("limit=5"));
    assert_eq!(req.version(), Version::HTTP_11);
    assert_eq!(req.headers()["host"], "example");
    assert_eq!(req.headers()["accept"], "application/json");
    assert!(req.body().is_empty());
    assert_need_more(c.poll());

    let out = text(c.encode_response(&ok("hello")));
    assert_eq!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"
    );
    assert!(!c.should_close());
}

#[test]
fn keep_alive_two_sequential_requests() {
    let mut c = conn();
    c.feed(b"GET /a HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    assert_eq!(request(c.poll()).uri().path(), "/a");
    assert_need_more(c.poll());
    c.encode_response(&ok("a"));
    assert!(!c.should_close());

    c.feed(b"GET /b HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    assert_eq!(request(c.poll()).uri().path(), "/b");
    c.encode_response(&ok("b"));
    assert!(!c.should_close());
    assert_need_more(c.poll());
    c.feed_eof();
    assert_closed(c.poll());
}

#[test]
fn pipelined_requests_answered_in_order() {
    let mut c = conn();
    c.feed(
        b"GET /one HTTP/1.1\r\nHost: h\r\n\r\n\
          HEAD /two HTTP/1.1\r\nHost: h\r\n\r\n\
          POST /three HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
        T0,
    );
    let one = request(c.poll());
    let two = request(c.poll());
    let three = request(c.poll());
    assert_eq!(one.uri().path(), "/one");
    assert_eq!(two.method(), Method::HEAD);
    assert_eq!(three.uri().path(), "/three");
    assert_eq!(&three.body()[..], b"abc");
    // The third said close: nothing more is read.
    assert_closed(c.poll());
    assert_eq!(c.unanswered(), 3);

    let r1 = text(c.encode_response(&ok("first")));
    assert!(r1.ends_with("Content-Length: 5\r\n\r\nfirst"), "{r1:?}");
    assert!(!c.should_close());
    // HEAD: the Content-Length of the body, no body.
    let r2 = text(c.encode_response(&ok("second")));
    assert!(r2.ends_with("Content-Length: 6\r\n\r\n"), "{r2:?}");
    assert!(!c.should_close());
    let r3 = text(c.encode_response(&ok("third")));
    assert!(r3.contains("\r\nConnection: close\r\n"), "{r3:?}");
    assert!(r3.ends_with("\r\n\r\nthird"), "{r3:?}");
    assert!(c.should_close());
    assert_eq!(c.unanswered(), 0);
}

#[test]
fn request_split_byte_by_byte() {
    let input: &[u8] = b"POST /apis/x/v1/foos HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\":\"bcd\"}\
                         PUT /chunked HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nabcd\r\n2\r\nef\r\n0\r\nT: v\r\n\r\n";
    let mut c = conn();
    let mut requests = Vec::new();
    for &b in input {
        c.feed(&[b], T0);
        loop {
            match c.poll() {
                Event::Request(req) => {
                    c.encode_response(&ok(""));
                    requests.push(req);
                }
                Event::NeedMore => break,
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].method(), Method::POST);
    assert_eq!(&requests[0].body()[..], br#"{"a":"bcd"}"#);
    assert_eq!(requests[1].method(), Method::PUT);
    assert_eq!(&requests[1].body()[..], b"abcdef");
    assert!(!c.should_close());
}

#[test]
fn content_length_body() {
    let mut c = conn();
    c.feed(
        b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n01234",
        T0,
    );
    assert_need_more(c.poll());
    c.feed(b"56789GET", T0);
    let req = request(c.poll());
    assert_eq!(&req.body()[..], b"0123456789");
    assert_eq!(req.headers()["content-length"], "10");
    assert_need_more(c.poll());
    assert_eq!(c.buffered(), 3);
}

#[test]
fn identical_duplicate_content_length_is_fine() {
    let mut c = conn();
    c.feed(
        b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab",
        T0,
    );
    assert_eq!(&request(c.poll()).body()[..], b"ab");
}

#[test]
fn chunked_body_with_extensions_and_trailers() {
    let mut c = conn();
    c.feed(
        b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\
          5;name=value;other\r\nhello\r\n\
          1 ; ext=\"quoted\"\r\n \r\n\
          A\r\n0123456789\r\n\
          0;last\r\nX-Trailer: one\r\nX-Other: two\r\n\r\n\
          GET /next HTTP/1.1\r\nHost: h\r\n\r\n",
        T0,
    );
    let req = request(c.poll());
    assert_eq!(&req.body()[..], b"hello 0123456789");
    assert!(!req.headers().contains_key("transfer-encoding"));
    assert!(!req.headers().contains_key("x-trailer"));
    c.encode_response(&ok(""));
    assert_eq!(request(c.poll()).uri().path(), "/next");
}

#[test]
fn chunked_split_across_feeds() {
    let mut c = conn();
    c.feed(
        b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1",
        T0,
    );
    assert_need_more(c.poll());
    c.feed(b"0\r\n0123456", T0);
    assert_need_more(c.poll());
    c.feed(b"789abcdef\r", T0);
    assert_need_more(c.poll());
    c.feed(b"\n0\r\n", T0);
    assert_need_more(c.poll());
    c.feed(b"\r\n", T0);
    assert_eq!(&request(c.poll()).body()[..], b"0123456789abcdef");
}

#[test]
fn transfer_encoding_and_content_length_use_chunked_and_close() {
    let mut c = conn();
    c.feed(b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n", T0);
    let req = request(c.poll());
    assert_eq!(&req.body()[..], b"abc");
    assert!(!req.headers().contains_key("content-length"));
    assert_closed(c.poll());
    let out = text(c.encode_response(&ok("x")));
    assert!(out.contains("\r\nConnection: close\r\n"));
    assert!(c.should_close());
}

#[test]
fn unsupported_transfer_encoding() {
    let out = assert_fatal(
        b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 501 Not Implemented\r\n",
    );
    assert!(out.ends_with("Unsupported transfer encoding"));
    assert_fatal(
        b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "HTTP/1.1 501 ",
    );
    assert_fatal(
        b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
        "HTTP/1.1 400 ",
    );
    assert_fatal(
        b"POST /x HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 400 ",
    );
}

#[test]
fn expect_100_continue() {
    let mut c = conn();
    c.feed(
        b"PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n",
        T0,
    );
    match c.poll() {
        Event::Continue(bytes) => assert_eq!(&bytes[..], b"HTTP/1.1 100 Continue\r\n\r\n"),
        other => panic!("expected Continue, got {other:?}"),
    }
    // Only once.
    assert_need_more(c.poll());
    c.feed(b"ab", T0);
    assert_need_more(c.poll());
    c.feed(b"cd", T0);
    assert_eq!(&request(c.poll()).body()[..], b"abcd");
}

#[test]
fn expect_100_continue_not_sent_when_body_already_here() {
    let mut c = conn();
    c.feed(
        b"PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nab",
        T0,
    );
    assert_eq!(&request(c.poll()).body()[..], b"ab");
    // Nor without a body.
    c.encode_response(&ok(""));
    c.feed(
        b"PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n",
        T0,
    );
    assert!(request(c.poll()).body().is_empty());
}

#[test]
fn expect_100_continue_chunked() {
    let mut c = conn();
    c.feed(
        b"PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nTransfer-Encoding: chunked\r\n\r\n",
        T0,
    );
    assert!(matches!(c.poll(), Event::Continue(_)));
    c.feed(b"0\r\n\r\n", T0);
    assert!(request(c.poll()).body().is_empty());
}

#[test]
fn unknown_expectation_fails() {
    assert_fatal(
        b"PUT /x HTTP/1.1\r\nHost: h\r\nExpect: something\r\nContent-Length: 1\r\n\r\nx",
        "HTTP/1.1 417 Expectation Failed\r\n",
    );
}

#[test]
fn header_block_over_limit_with_end() {
    let mut c = small(64, 1024);
    let mut input = b"GET / HTTP/1.1\r\nHost: h\r\n".to_vec();
    input.extend_from_slice(format!("X-Big: {}\r\n\r\n", "a".repeat(64)).as_bytes());
    c.feed(&input, T0);
    let out = fatal(c.poll());
    assert_eq!(
        out,
        "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 35\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large"
    );
    assert!(c.should_close());
    assert_closed(c.poll());
}

#[test]
fn header_block_over_limit_without_end() {
    let mut c = small(64, 1024);
    c.feed(b"GET / HTTP/1.1\r\nHost: h\r\nX-Big: ", T0);
    assert_need_more(c.poll());
    c.feed(&[b'a'; 100], T0);
    let out = fatal(c.poll());
    assert!(out.starts_with("HTTP/1.1 431 "), "{out}");
    assert!(c.should_close());
    // Further input is dropped.
    c.feed(&[b'a'; 100], T0);
    assert_eq!(c.buffered(), 0);
    assert_closed(c.poll());
}

#[test]
fn header_block_at_limit_is_fine() {
    let head = b"GET / HTTP/1.1\r\nHost: h\r\n\r\n";
    let mut c = small(head.len(), 0);
    c.feed(head, T0);
    request(c.poll());
    let mut c = small(head.len() - 1, 0);
    c.feed(head, T0);
    assert!(fatal(c.poll()).starts_with("HTTP/1.1 431 "));
}

#[test]
fn default_header_limit_without_end() {
    let mut c = conn();
    c.feed(b"GET / HTTP/1.1\r\nX: ", T0);
    let filler = vec![b'a'; 64 * 1024];
    let mut fed = 0;
    loop {
        match c.poll() {
            Event::NeedMore => {
                c.feed(&filler, T0);
                fed += filler.len();
                assert!(fed <= (1 << 20) + filler.len());
            }
            Event::Fatal(bytes) => {
                assert!(bytes.starts_with(b"HTTP/1.1 431 "));
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn too_many_headers() {
    let mut input = b"GET / HTTP/1.1\r\n".to_vec();
    for i in 0..300 {
        input.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
    }
    input.extend_from_slice(b"\r\n");
    assert_fatal(&input, "HTTP/1.1 431 ");
}

#[test]
fn content_length_over_body_limit() {
    let mut c = conn();
    c.feed(
        b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3145729\r\n\r\n",
        T0,
    );
    let out = fatal(c.poll());
    let expected = format!(
        "HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{STATUS_413}",
        STATUS_413.len()
    );
    assert_eq!(out, expected);
    assert!(c.should_close());
    assert_closed(c.poll());

    // Huge declared lengths are refused before anything is buffered.
    let mut c = conn();
    c.feed(
        b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 18446744073709551615\r\n\r\n",
        T0,
    );
    assert!(fatal(c.poll()).starts_with("HTTP/1.1 413 "));
}

#[test]
fn body_limit_is_configurable() {
    let mut c = small(1024, 10);
    c.feed(
        b"POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789",
        T0,
    );
    assert_eq!(request(c.poll()).body().len(), 10);
    c.encode_response(&ok(""));
    c.feed(b"POST /x HTTP/1.1\r\nContent-Length: 11\r\n\r\n", T0);
    let out = fatal(c.poll());
    assert!(out.ends_with(r#""message":"Request entity too large: limit is 10","reason":"RequestEntityTooLarge","code":413}"#), "{out}");
}

#[test]
fn chunked_over_body_limit() {
    let mut c = small(1024, 10);
    c.feed(
        b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n",
        T0,
    );
    assert_need_more(c.poll());
    c.feed(b"5\r\n", T0);
    let out = fatal(c.poll());
    assert!(
        out.starts_with("HTTP/1.1 413 Request Entity Too Large\r\n"),
        "{out}"
    );
    assert!(out.contains("limit is 10"));
    assert!(c.should_close());

    // Exactly at the limit is fine.
    let mut c = small(1024, 10);
    c.feed(b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n4\r\nghij\r\n0\r\n\r\n", T0);
    assert_eq!(request(c.poll()).body().len(), 10);

    // A huge chunk size is refused up front.
    let mut c = conn();
    c.feed(
        b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n",
        T0,
    );
    assert!(fatal(c.poll()).starts_with("HTTP/1.1 413 "));
}

#[test]
fn malformed_request_line() {
    let out = assert_fatal(b"GET\r\n\r\n", "HTTP/1.1 400 Bad Request\r\n");
    assert_eq!(
        out,
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 15\r\nConnection: close\r\n\r\n400 Bad Request"
    );
    assert_fatal(b"GET /  HTTP/1.1\r\n\r\n", "HTTP/1.1 400 ");
    assert_fatal(b"G@T / HTTP/1.1\r\n\r\n", "HTTP/1.1 400 ");
    assert_fatal(b"GET / HTTP/1.1 extra\r\n\r\n", "HTTP/1.1 400 ");
    assert_fatal(
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
        "HTTP/1.1 400 ",
    );
}

#[test]
fn malformed_request_line_detected_before_head_end() {
    let mut c = conn();
    c.feed(b"NOT HTTP AT ALL\r\n", T0);
    assert!(fatal(c.poll()).starts_with("HTTP/1.1 400 "));
}

#[test]
fn bad_request_targets() {
    assert_fatal(b"GET foo HTTP/1.1\r\n\r\n", "HTTP/1.1 400 ");
    assert_fatal(b"GET * HTTP/1.1\r\n\r\n", "HTTP/1.1 400 ");
    assert_fatal(b"GET example.com:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 400 ");

    let mut c = conn();
    c.feed(b"OPTIONS * HTTP/1.1\r\n\r\n", T0);
    assert_eq!(request(c.poll()).uri(), "*");
}

#[test]
fn absolute_form_target() {
    let mut c = conn();
    c.feed(
        b"GET http://example.com:8080/api?watch=1 HTTP/1.1\r\nHost: example.com:8080\r\n\r\n",
        T0,
    );
    let req = request(c.poll());
    assert_eq!(req.uri().path(), "/api");
    assert_eq!(req.uri().query(), Some("watch=1"));
    assert_eq!(req.uri().host(), Some("example.com"));
}

#[test]
fn unsupported_version() {
    assert_fatal(
        b"GET / HTTP/2.0\r\n\r\n",
        "HTTP/1.1 505 HTTP Version Not Supported\r\n",
    );
    assert_fatal(
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        "HTTP/1.1 505 HTTP Version Not Supported\r\n",
    );
}

#[test]
fn bad_headers() {
    assert_fatal(b"GET / HTTP/1.1\r\nBad Header: x\r\n\r\n", "HTTP/1.1 400 ");
    assert_fatal(b"GET / HTTP/1.1\r\nNoColon\r\n\r\n", "HTTP/1.1 400 ");
    assert_fatal(b"GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n", "HTTP/1.1 400 ");
    assert_fatal(b"GET / HTTP/1.1\r\nX : a\r\n\r\n", "HTTP/1.1 400 ");
    assert_fatal(
        b"GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
        "HTTP/1.1 400 ",
    );
    assert_fatal(
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "HTTP/1.1 400 ",
    );
}

#[test]
fn bad_chunk_size() {
    let head = b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
    for body in [
        &b"zz\r\n"[..],
        b"\r\n",
        b"-1\r\n",
        b"0x5\r\n",
        b"10000000000000000\r\n",
        b"5\nhello\r\n0\r\n\r\n",
        b"5\r\nhelloXX0\r\n\r\n",
        b"5\r\nhello\n0\r\n\r\n",
        b"3;a\x00b\r\nabc\r\n0\r\n\r\n",
        b"0\r\nnot a trailer\r\n\r\n",
        b"0\r\nX: a\n\r\n",
    ] {
        let mut input = head.to_vec();
        input.extend_from_slice(body);
        assert_fatal(&input, "HTTP/1.1 400 ");
    }
}

#[test]
fn chunk_line_too_long() {
    let mut c = conn();
    c.feed(
        b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;",
        T0,
    );
    c.feed(&[b'x'; 5000], T0);
    assert!(fatal(c.poll()).starts_with("HTTP/1.1 400 "));
}

#[test]
fn chunk_extension_flood() {
    let mut c = conn();
    c.feed(
        b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
        T0,
    );
    let chunk = format!("1;{}\r\nx\r\n", "e".repeat(1000));
    for _ in 0..100 {
        c.feed(chunk.as_bytes(), T0);
        match c.poll() {
            Event::NeedMore => {}
            Event::Fatal(bytes) => {
                assert!(bytes.starts_with(b"HTTP/1.1 400 "));
                return;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    panic!("an extension flood was accepted");
}

#[test]
fn bad_content_length() {
    for value in [
        "abc",
        "-1",
        "+5",
        "1 2",
        "5,5",
        "",
        "0x10",
        "99999999999999999999999",
    ] {
        let input = format!("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: {value}\r\n\r\n");
        assert_fatal(input.as_bytes(), "HTTP/1.1 400 ");
    }
}

#[test]
fn conflicting_content_length() {
    assert_fatal(
        b"POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        "HTTP/1.1 400 ",
    );
}

#[test]
fn http10_closes_by_default() {
    let mut c = conn();
    c.feed(b"GET / HTTP/1.0\r\n\r\nGET /ignored HTTP/1.0\r\n\r\n", T0);
    let req = request(c.poll());
    assert_eq!(req.version(), Version::HTTP_10);
    assert_closed(c.poll());
    let out = text(c.encode_response(&ok("x")));
    assert!(out.starts_with("HTTP/1.1 200 OK\r\n"));
    assert!(out.contains("\r\nConnection: close\r\n"));
    assert!(c.should_close());
}

#[test]
fn http10_keep_alive() {
    let mut c = conn();
    c.feed(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", T0);
    request(c.poll());
    let out = text(c.encode_response(&ok("x")));
    assert!(out.contains("\r\nConnection: keep-alive\r\n"), "{out}");
    assert!(!c.should_close());
    c.feed(b"GET / HTTP/1.0\r\n\r\n", T0);
    request(c.poll());
    c.encode_response(&ok("x"));
    assert!(c.should_close());
}

#[test]
fn connection_close_closes() {
    let mut c = conn();
    c.feed(
        b"GET / HTTP/1.1\r\nHost: h\r\nConnection: Close\r\n\r\n",
        T0,
    );
    request(c.poll());
    assert_closed(c.poll());
    assert!(!c.should_close());
    let out = text(c.encode_response(&ok("x")));
    assert!(out.contains("\r\nConnection: close\r\n"));
    assert!(c.should_close());
}

#[test]
fn handler_may_close() {
    let mut c = conn();
    c.feed(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    request(c.poll());
    let mut response = ok("x");
    response
        .headers_mut()
        .insert("connection", "close".parse().unwrap());
    let out = text(c.encode_response(&response));
    assert_eq!(out.matches("Connection: close").count(), 1, "{out}");
    assert!(c.should_close());
    assert_closed(c.poll());
}

#[test]
fn head_response_has_length_but_no_body() {
    let mut c = conn();
    c.feed(b"HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    request(c.poll());
    let out = text(c.encode_response(&ok("twelve bytes")));
    assert_eq!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\n"
    );

    // An empty body keeps the handler's Content-Length.
    c.feed(b"HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    request(c.poll());
    let mut response = Response::new(Bytes::new());
    response
        .headers_mut()
        .insert("content-length", "1234".parse().unwrap());
    let out = text(c.encode_response(&response));
    assert_eq!(out, "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n");
}

#[test]
fn bodiless_statuses() {
    let mut c = conn();
    c.feed(
        b"DELETE /x HTTP/1.1\r\nHost: h\r\n\r\nGET /y HTTP/1.1\r\nHost: h\r\n\r\n",
        T0,
    );
    request(c.poll());
    request(c.poll());
    let mut response = Response::new(Bytes::from_static(b"ignored"));
    *response.status_mut() = StatusCode::NO_CONTENT;
    assert_eq!(
        text(c.encode_response(&response)),
        "HTTP/1.1 204 No Content\r\n\r\n"
    );
    *response.status_mut() = StatusCode::NOT_MODIFIED;
    assert_eq!(
        text(c.encode_response(&response)),
        "HTTP/1.1 304 Not Modified\r\n\r\n"
    );
}

#[test]
fn response_headers_are_canonical_and_framing_replaced() {
    let mut c = conn();
    c.feed(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    request(c.poll());
    let mut response = Response::new(Bytes::from_static(b"{}"));
    *response.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    let headers = response.headers_mut();
    headers.insert("content-length", "999".parse().unwrap());
    headers.insert("transfer-encoding", "chunked".parse().unwrap());
    headers.insert("x-kubernetes-pf-flowschema-uid", "abc".parse().unwrap());
    headers.append("warning", "1".parse().unwrap());
    headers.append("warning", "2".parse().unwrap());
    let out = text(c.encode_response(&response));
    assert_eq!(
        out,
        "HTTP/1.1 422 Unprocessable Entity\r\nX-Kubernetes-Pf-Flowschema-Uid: abc\r\nWarning: 1\r\nWarning: 2\r\nContent-Length: 2\r\n\r\n{}"
    );
}

#[test]
fn streamed_response() {
    let mut c = conn();
    c.feed(b"GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    request(c.poll());
    let (mut parts, ()) = Response::new(()).into_parts();
    parts
        .headers
        .insert("content-type", "application/json".parse().unwrap());
    parts.headers.insert("content-length", "5".parse().unwrap());
    let head = text(c.encode_stream_head(&parts));
    assert_eq!(
        head,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    assert_eq!(
        text(c.encode_chunk(b"{\"type\":\"ADDED\"}\n")),
        "11\r\n{\"type\":\"ADDED\"}\n\r\n"
    );
    assert!(c.encode_chunk(b"").is_empty());
    assert_eq!(
        text(c.encode_chunk(&[b'x'; 255])[..5].to_vec().into()),
        "ff\r\nx"
    );
    assert_eq!(text(c.encode_stream_end()), "0\r\n\r\n");
    assert!(!c.should_close());

    // The next request on the same connection.
    c.feed(
        b"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
        T0,
    );
    request(c.poll());
    let head = text(c.encode_stream_head(&parts));
    assert!(
        head.contains("Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n"),
        "{head}"
    );
    assert!(c.should_close());
}

#[test]
fn streamed_response_to_head_and_http10() {
    let mut c = conn();
    c.feed(b"HEAD / HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    request(c.poll());
    let (parts, ()) = Response::new(()).into_parts();
    assert_eq!(
        text(c.encode_stream_head(&parts)),
        "HTTP/1.1 200 OK\r\n\r\n"
    );
    assert!(c.encode_chunk(b"data").is_empty());
    assert!(c.encode_stream_end().is_empty());

    let mut c = conn();
    c.feed(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", T0);
    request(c.poll());
    assert_eq!(
        text(c.encode_stream_head(&parts)),
        "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
    );
    assert!(c.should_close());
    assert_eq!(&c.encode_chunk(b"data")[..], b"data");
    assert!(c.encode_stream_end().is_empty());
}

#[test]
fn eof_between_requests_is_closed() {
    let mut c = conn();
    c.feed_eof();
    assert_closed(c.poll());

    let mut c = conn();
    c.feed(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    c.feed_eof();
    request(c.poll());
    assert_closed(c.poll());
}

#[test]
fn eof_inside_a_request() {
    // A partial head: the peer is gone, nothing to answer.
    let mut c = conn();
    c.feed(b"GET / HTTP/1.1\r\nHo", T0);
    assert_need_more(c.poll());
    c.feed_eof();
    assert_closed(c.poll());

    // A partial body: 400.
    let mut c = conn();
    c.feed(
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nab",
        T0,
    );
    assert_need_more(c.poll());
    c.feed_eof();
    assert!(fatal(c.poll()).starts_with("HTTP/1.1 400 "));
}

#[test]
fn leading_empty_lines_are_skipped() {
    let mut c = conn();
    c.feed(
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx\r\n",
        T0,
    );
    request(c.poll());
    c.encode_response(&ok(""));
    assert_need_more(c.poll());
    c.feed(b"\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    assert_eq!(request(c.poll()).uri().path(), "/b");
}

#[test]
fn bare_lf_head_is_accepted() {
    let mut c = conn();
    c.feed(b"GET /lf HTTP/1.1\nHost: h\n\n", T0);
    assert_eq!(request(c.poll()).uri().path(), "/lf");
}

#[test]
fn upgrade_waits_for_the_answer() {
    let mut c = conn();
    c.feed(b"GET /exec HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x05hello", T0);
    request(c.poll());
    // The bytes after an upgrade request are not parsed as HTTP.
    assert_need_more(c.poll());
    let mut response = Response::new(Bytes::new());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    response
        .headers_mut()
        .insert("connection", "Upgrade".parse().unwrap());
    response
        .headers_mut()
        .insert("upgrade", "websocket".parse().unwrap());
    let out = text(c.encode_response(&response));
    assert_eq!(
        out,
        "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
    );
    assert!(c.is_upgraded());
    assert!(!c.should_close());
    assert_closed(c.poll());
    assert_eq!(&c.take_buffered()[..], b"\x81\x05hello");
}

#[test]
fn upgrade_refused_reads_on() {
    let mut c = conn();
    c.feed(b"GET /exec HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    request(c.poll());
    assert_need_more(c.poll());
    let mut response = ok("no");
    *response.status_mut() = StatusCode::BAD_REQUEST;
    c.encode_response(&response);
    assert!(!c.is_upgraded());
    assert_eq!(request(c.poll()).uri().path(), "/next");
}

#[test]
fn fatal_after_pipelined_request_keeps_order_info() {
    let mut c = conn();
    c.feed(b"GET /ok HTTP/1.1\r\nHost: h\r\n\r\nGARBAGE\r\n\r\n", T0);
    request(c.poll());
    assert!(fatal(c.poll()).starts_with("HTTP/1.1 400 "));
    // The request returned before the failure can still be answered (first).
    assert_eq!(c.unanswered(), 1);
    let out = text(c.encode_response(&ok("x")));
    assert!(out.contains("Connection: close"));
    assert_eq!(c.unanswered(), 0);
}

#[test]
fn interim_response_does_not_answer() {
    let mut c = conn();
    c.feed(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    request(c.poll());
    let mut early = Response::new(Bytes::new());
    *early.status_mut() = StatusCode::from_u16(103).unwrap();
    assert_eq!(
        text(c.encode_response(&early)),
        "HTTP/1.1 103 Early Hints\r\n\r\n"
    );
    assert_eq!(c.unanswered(), 1);
    c.encode_response(&ok(""));
    assert_eq!(c.unanswered(), 0);
}

#[test]
fn unknown_status_reason() {
    let mut c = conn();
    c.feed(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", T0);
    request(c.poll());
    let mut response = ok("");
    *response.status_mut() = StatusCode::from_u16(599).unwrap();
    assert!(text(c.encode_response(&response)).starts_with("HTTP/1.1 599 status code 599\r\n"));
}

#[test]
fn request_body_shares_the_buffer() {
    // The body is handed out without another copy: it points into the read buffer.
    let mut c = conn();
    c.feed(b"POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody", T0);
    let req = request(c.poll());
    let value = req.headers()["content-length"].as_bytes().as_ptr() as usize;
    let body = req.body().as_ptr() as usize;
    assert_eq!(body - value, "4\r\n\r\n".len());
}

// Timers.

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn no_timer_before_the_adapter_waits() {
    let c = conn();
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn idle_connection_closes_after_idle_timeout() {
    let mut c = conn();
    assert_need_more(c.poll());
    c.start_waiting(secs(5));
    assert_eq!(c.poll_timeout(), Some(secs(95)));
    // Early: nothing happens.
    c.handle_timeout(secs(94));
    assert_need_more(c.poll());
    assert_eq!(c.poll_timeout(), Some(secs(95)));
    c.handle_timeout(secs(95));
    assert_closed(c.poll());
    assert!(c.should_close());
    assert_eq!(c.poll_timeout(), None);
    // Nothing more is taken.
    c.feed(b"GET / HTTP/1.1\r\n\r\n", secs(96));
    assert_eq!(c.buffered(), 0);
    assert_closed(c.poll());
}

#[test]
fn slow_head_closes_without_an_answer() {
    let mut c = conn();
    c.start_waiting(secs(0));
    c.feed(b"GET / HTTP/1.1\r\nHo", secs(10));
    assert_need_more(c.poll());
    c.start_waiting(secs(10));
    // From the request's first bytes.
    assert_eq!(c.poll_timeout(), Some(secs(42)));
    c.feed(b"st: h\r\n", secs(20));
    assert_need_more(c.poll());
    c.start_waiting(secs(20));
    assert_eq!(c.poll_timeout(), Some(secs(42)));
    c.handle_timeout(secs(42));
    assert_closed(c.poll());
    assert!(c.should_close());
}

#[test]
fn idle_limit_bounds_each_silence_while_reading() {
    let timeouts = Timeouts {
        read_header: secs(200),
        ..Timeouts::default()
    };
    let mut c = Connection::new(Limits::default(), timeouts);
    c.feed(b"GET / HTTP/1.1\r\n", secs(10));
    assert_need_more(c.poll());
    c.start_waiting(secs(10));
    assert_eq!(c.poll_timeout(), Some(secs(100)));
    c.feed(b"Host: h\r\n", secs(150));
    assert_need_more(c.poll());
    c.start_waiting(secs(150));
    assert_eq!(c.poll_timeout(), Some(secs(210)));
}

const STATUS_504: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}"#;

#[test]
fn slow_body_is_answered_504() {
    let mut c = conn();
    c.start_waiting(secs(0));
    c.feed(
        b"POST /api/v1/namespaces HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc",
        secs(1),
    );
    assert_need_more(c.poll());
    assert!(c.reading_body());
    c.start_waiting(secs(2));
    // --request-timeout from the request's first bytes.
    assert_eq!(c.poll_timeout(), Some(secs(61)));
    c.handle_timeout(secs(60));
    assert_need_more(c.poll());
    c.handle_timeout(secs(61));
    let Event::TimedOut(response) = c.poll() else {
        panic!("expected TimedOut");
    };
    assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(
        text(c.encode_response(&response)),
        format!(
            "HTTP/1.1 504 Gateway Timeout\r\nContent-Type: application/json\r\n\
             X-Content-Type-Options: nosniff\r\nConnection: close\r\n\
             Content-Length: {}\r\n\r\n{STATUS_504}",
            STATUS_504.len()
        )
    );
    assert!(c.should_close());
    assert_closed(c.poll());
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn body_timeout_is_configurable() {
    let timeouts = Timeouts {
        request_body: secs(5),
        ..Timeouts::default()
    };
    let mut c = Connection::new(Limits::default(), timeouts);
    c.feed(
        b"PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n",
        secs(3),
    );
    assert!(matches!(c.poll(), Event::Continue(_)));
    assert_need_more(c.poll());
    c.start_waiting(secs(4));
    assert_eq!(c.poll_timeout(), Some(secs(8)));
    c.handle_timeout(secs(9));
    assert!(matches!(c.poll(), Event::TimedOut(_)));
}

#[test]
fn no_timer_while_a_request_is_unanswered() {
    let mut c = conn();
    c.start_waiting(secs(0));
    c.feed(b"GET / HTTP/1.1\r\nHost: h\r\n\r\nGET /next", secs(1));
    request(c.poll());
    assert_need_more(c.poll());
    c.start_waiting(secs(2));
    assert_eq!(c.poll_timeout(), None);
    c.handle_timeout(secs(1000));
    assert_eq!(c.poll_timeout(), None);
    c.encode_response(&ok("done"));
    assert_need_more(c.poll());
    assert!(!c.should_close());
}

#[test]
fn no_timer_while_a_response_streams() {
    let mut c = conn();
    c.feed(b"GET /watch HTTP/1.1\r\nHost: h\r\n\r\n", secs(0));
    request(c.poll());
    let (head, _) = ok("").into_parts();
    c.encode_stream_head(&head);
    c.encode_chunk(b"frame");
    // The answer is complete once the stream ends, not before.
    c.start_waiting(secs(10));
    assert_eq!(c.poll_timeout(), None);
    c.feed(b"GET /", secs(20));
    c.start_waiting(secs(20));
    assert_eq!(c.poll_timeout(), None);
    c.encode_stream_end();
    assert_need_more(c.poll());
    c.start_waiting(secs(300));
    assert_eq!(c.poll_timeout(), Some(secs(390)));
}

#[test]
fn timers_restart_after_a_response() {
    let mut c = conn();
    c.start_waiting(secs(0));
    c.feed(b"GET /slow HTTP/1.1\r\nHost: h\r\n\r\n", secs(1));
    request(c.poll());
    c.encode_response(&ok("late"));
    // Not the first request's head timer (from 1 s): idle from the wait after the answer.
    assert_eq!(c.poll_timeout(), None);
    assert_need_more(c.poll());
    c.start_waiting(secs(50));
    assert_eq!(c.poll_timeout(), Some(secs(140)));
    // The next request's head timer counts from its own first bytes.
    c.feed(b"GET /next HTTP/1.1\r\n", secs(60));
    assert_need_more(c.poll());
    c.start_waiting(secs(60));
    assert_eq!(c.poll_timeout(), Some(secs(92)));
    c.feed(b"\r\n", secs(61));
    request(c.poll());
    assert_eq!(c.poll_timeout(), None);
}

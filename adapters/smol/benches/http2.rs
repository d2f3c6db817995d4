//! HTTP/2 against HTTP/1.1 on the real `apiary` binary (release build, memory storage)
//! on a loopback port, rounds of the protocols alternating in one run:
//!
//! * GET of one ConfigMap for 3 s: 64 HTTP/2 streams on 1 connection, 64 streams on 8
//!   connections (8 each), and 64 keep-alive HTTP/1.1 connections; requests/s.
//! * 1,000 watches of one namespace, on one HTTP/2 connection or on 1,000 HTTP/1.1
//!   connections, while a writer updates a ConfigMap there 50 times a second (100
//!   writes); each write carries its send time, each watcher times each event it gets:
//!   delivery p50 and p99.
//!
//! The HTTP/2 client is the h2 crate on smol (through apiary-io-compat), as the server.
//! The server is started with `--http2-max-streams-per-connection=1100` so that the
//! 1,000 watches fit on one connection (the default is 100).
//!
//! Run: `cargo bench -p apiary-smol --bench http2`

mod support;

use apiary_io_compat::Compat;
use bytes::Bytes;
use futures_rustls::rustls::ClientConfig;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::Timer;
use std::future::poll_fn;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{connect, median, requests_per_second, round_trip, tls_config, Server};

const ROUNDS: usize = 5;
const ROUND_TIME: Duration = Duration::from_secs(3);
const STREAMS: usize = 64;
const GET_PATH: &str = "/api/v1/namespaces/default/configmaps/bench";
const WATCHERS: usize = 1_000;
const WATCH_ROUNDS: usize = 3;
const WRITES: usize = 100;
const PACE: Duration = Duration::from_millis(20);
const WATCH_NAMESPACE: &str = "watched";

fn h2_config(pki: &std::path::Path) -> Arc<ClientConfig> {
    let mut config = (*tls_config(pki)).clone();
    config.alpn_protocols = vec![b"h2".to_vec()];
    Arc::new(config)
}

/// An HTTP/2 client connection; its driver runs on smol's executor.
async fn h2_connect(addr: &str, config: &Arc<ClientConfig>) -> h2::client::SendRequest<Bytes> {
    let tls = connect(addr, config).await;
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let mut builder = h2::client::Builder::new();
    // Go's client windows are large; h2's 64 KiB defaults would throttle 1,000 watches.
    builder.initial_window_size(1 << 20).initial_connection_window_size(64 << 20);
    let (send, connection) = builder.handshake(Compat(tls)).await.expect("HTTP/2 handshake");
    smol::spawn(async move {
        let _ = connection.await;
    })
    .detach();
    send
}

fn h2_request(addr: &str, path: &str) -> http::Request<()> {
    http::Request::builder()
        .uri(format!("https://{addr}{path}"))
        .header("accept", "application/json")
        .body(())
        .unwrap()
}

/// Read a body, handing its window back; calls `each` with every piece.
async fn h2_read(mut body: h2::RecvStream, mut each: impl FnMut(&[u8])) {
    while let Some(chunk) = poll_fn(|cx| body.poll_data(cx)).await {
        let chunk = chunk.expect("body data");
        let _ = body.flow_control().release_capacity(chunk.len());
        each(&chunk);
    }
}

/// GETs on `streams` streams of each of `connections` HTTP/2 connections for `time`.
async fn h2_requests_per_second(addr: &str, config: &Arc<ClientConfig>, connections: usize, time: Duration) -> f64 {
    let served = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let send = h2_connect(addr, config).await;
        for _ in 0..STREAMS / connections {
            let (send, served, addr) = (send.clone(), served.clone(), addr.to_owned());
            tasks.push(smol::spawn(async move {
                let deadline = Instant::now() + time;
                while Instant::now() < deadline {
                    let mut send = send.clone().ready().await.expect("ready");
                    let (response, _) = send.send_request(h2_request(&addr, GET_PATH), true).expect("sent");
                    let response = response.await.expect("answer");
                    assert_eq!(response.status(), 200);
                    h2_read(response.into_body(), |_| {}).await;
                    served.fetch_add(1, Ordering::Relaxed);
                }
            }));
        }
    }
    for task in tasks {
        task.await;
    }
    served.load(Ordering::Relaxed) as f64 / time.as_secs_f64()
}

/// Send times found in a watch's bytes (`"t":"<ns>"`), as delivery latencies.
#[derive(Default)]
struct Deliveries {
    pending: Vec<u8>,
    latencies: Vec<u64>,
}

impl Deliveries {
    fn feed(&mut self, bytes: &[u8], epoch: Instant, since: u64) {
        let now = epoch.elapsed().as_nanos() as u64;
        self.pending.extend_from_slice(bytes);
        const MARK: &[u8] = b"\"t\":\"";
        let mut at = 0;
        // Where the unread part starts: a marker whose number is not all here yet, or
        // the last bytes, which may be the start of a marker.
        let mut keep_from = None;
        while let Some(found) = self.pending[at..].windows(MARK.len()).position(|w| w == MARK) {
            let start = at + found + MARK.len();
            let Some(len) = self.pending[start..].iter().position(|b| *b == b'"') else {
                keep_from = Some(at + found);
                break;
            };
            let sent: u64 = std::str::from_utf8(&self.pending[start..start + len]).unwrap().parse().unwrap();
            if sent >= since {
                self.latencies.push(now.saturating_sub(sent));
            }
            at = start + len;
        }
        let keep_from = keep_from.unwrap_or_else(|| at.max(self.pending.len().saturating_sub(MARK.len() - 1)));
        self.pending.drain(..keep_from);
    }
}

/// One watch round: open the watches, write, collect; the latencies in ns.
fn watch_round(server: &Server, pki: &std::path::Path, h2: bool, epoch: Instant) -> (Vec<u64>, usize) {
    let addr = server.addr.clone();
    let (h1_config, h2_config) = (tls_config(pki), h2_config(pki));
    smol::block_on(async {
        let ready = Arc::new(AtomicUsize::new(0));
        let results = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicUsize::new(0));
        let since = epoch.elapsed().as_nanos() as u64;
        let path = format!("/api/v1/namespaces/{WATCH_NAMESPACE}/configmaps?watch=1&allowWatchBookmarks=false");
        let mut tasks = Vec::new();
        if h2 {
            let send = h2_connect(&addr, &h2_config).await;
            for _ in 0..WATCHERS {
                let (send, ready, results, stop, addr, path) =
                    (send.clone(), ready.clone(), results.clone(), stop.clone(), addr.clone(), path.clone());
                tasks.push(smol::spawn(async move {
                    let mut send = send.ready().await.expect("ready");
                    let (response, _) = send.send_request(h2_request(&addr, &path), true).expect("sent");
                    let response = response.await.expect("watch head");
                    assert_eq!(response.status(), 200);
                    ready.fetch_add(1, Ordering::Relaxed);
                    let mut seen = Deliveries::default();
                    let mut body = response.into_body();
                    while stop.load(Ordering::Relaxed) == 0 {
                        let next = async { Some(poll_fn(|cx| body.poll_data(cx)).await) };
                        let tick = async {
                            Timer::after(Duration::from_millis(100)).await;
                            None
                        };
                        match smol::future::or(next, tick).await {
                            Some(Some(Ok(chunk))) => {
                                let _ = body.flow_control().release_capacity(chunk.len());
                                seen.feed(&chunk, epoch, since);
                            }
                            Some(_) => break,
                            None => {}
                        }
                    }
                    results.lock().unwrap().extend(seen.latencies);
                }));
            }
        } else {
            for i in 0..WATCHERS {
                if i % 50 == 0 {
                    // The listener's backlog is finite: connect in waves.
                    while ready.load(Ordering::Relaxed) < i {
                        Timer::after(Duration::from_millis(1)).await;
                    }
                }
                let (config, ready, results, stop, addr, path) =
                    (h1_config.clone(), ready.clone(), results.clone(), stop.clone(), addr.clone(), path.clone());
                tasks.push(smol::spawn(async move {
                    let mut stream = connect(&addr, &config).await;
                    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n");
                    stream.write_all(request.as_bytes()).await.unwrap();
                    stream.flush().await.unwrap();
                    let mut buf = vec![0u8; 16 * 1024];
                    let mut seen = Deliveries::default();
                    let mut head = Vec::new();
                    // The head first.
                    loop {
                        let n = stream.read(&mut buf).await.unwrap();
                        assert!(n > 0);
                        head.extend_from_slice(&buf[..n]);
                        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                            assert!(head.starts_with(b"HTTP/1.1 200"));
                            seen.feed(&head[end + 4..], epoch, since);
                            break;
                        }
                    }
                    ready.fetch_add(1, Ordering::Relaxed);
                    while stop.load(Ordering::Relaxed) == 0 {
                        let next = async { Some(stream.read(&mut buf).await) };
                        let tick = async {
                            Timer::after(Duration::from_millis(100)).await;
                            None
                        };
                        match smol::future::or(next, tick).await {
                            Some(Ok(n)) if n > 0 => seen.feed(&buf[..n], epoch, since),
                            Some(_) => break,
                            None => {}
                        }
                    }
                    results.lock().unwrap().extend(seen.latencies);
                }));
            }
        }
        while ready.load(Ordering::Relaxed) < WATCHERS {
            Timer::after(Duration::from_millis(10)).await;
        }
        // The writer, on a connection of its own.
        let mut writer = connect(&addr, &h1_config).await;
        let mut buf = Vec::new();
        let mut next = Instant::now();
        for _ in 0..WRITES {
            next += PACE;
            Timer::at(next).await;
            let sent = epoch.elapsed().as_nanos();
            let body = format!(r#"{{"data":{{"t":"{sent}"}}}}"#);
            let patch = format!(
                "PATCH /api/v1/namespaces/{WATCH_NAMESPACE}/configmaps/ticker HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/merge-patch+json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            assert_eq!(round_trip(&mut writer, patch.as_bytes(), &mut buf).await, 200);
        }
        // Let the last events arrive.
        Timer::after(Duration::from_secs(2)).await;
        stop.store(1, Ordering::Relaxed);
        for task in tasks {
            task.await;
        }
        let mut latencies = std::mem::take(&mut *results.lock().unwrap());
        latencies.sort_unstable();
        let got = latencies.len();
        (latencies, got)
    })
}

fn percentile_ms(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize] as f64 / 1e6
}

fn main() {
    let dir = std::env::temp_dir().join(format!("apiary-bench-h2-{}", std::process::id()));
    let server = Server::start_with(&dir, &["--storage", "memory", "--http2-max-streams-per-connection=1100"]);
    let pki = dir.join("pki");
    let (h1_config, h2_config) = (tls_config(&pki), h2_config(&pki));
    let addr = server.addr.clone();
    smol::block_on(async {
        let mut setup = connect(&addr, &h1_config).await;
        let mut buf = Vec::new();
        for (path, body) in [
            ("/api/v1/namespaces/default/configmaps", r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench"},"data":{"key":"value"}}"#.to_owned()),
            ("/api/v1/namespaces", format!(r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{WATCH_NAMESPACE}"}}}}"#)),
            (
                format!("/api/v1/namespaces/{WATCH_NAMESPACE}/configmaps").as_str(),
                r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ticker"},"data":{"t":"0"}}"#.to_owned(),
            ),
        ] {
            let request = support::request("POST", path, &body);
            assert_eq!(round_trip(&mut setup, &request, &mut buf).await, 201, "{}", String::from_utf8_lossy(&buf));
        }
    });

    // GET throughput, the three ways in turn each round.
    let get = Arc::new(
        format!("GET {GET_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n").into_bytes(),
    );
    let (mut h1s, mut one, mut eight) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let (a, b, c) = smol::block_on(async {
            let a = requests_per_second(&addr, &h1_config, &get, ROUND_TIME).await;
            let b = h2_requests_per_second(&addr, &h2_config, 1, ROUND_TIME).await;
            let c = h2_requests_per_second(&addr, &h2_config, 8, ROUND_TIME).await;
            (a, b, c)
        });
        println!(
            "GET round {}: HTTP/1.1 64 conns {a:.0}/s; HTTP/2 64 streams on 1 conn {b:.0}/s ({:.3}x), on 8 conns {c:.0}/s ({:.3}x)",
            round + 1,
            b / a,
            c / a
        );
        h1s.push(a);
        one.push(b);
        eight.push(c);
    }
    let ratios = |v: &[f64]| median(v.iter().zip(&h1s).map(|(x, a)| x / a).collect());
    println!(
        "GET medians: HTTP/1.1 {:.0}/s; HTTP/2 1 conn {:.0}/s, median ratio {:.3}; HTTP/2 8 conns {:.0}/s, median ratio {:.3}",
        median(h1s.clone()),
        median(one.clone()),
        ratios(&one),
        median(eight.clone()),
        ratios(&eight)
    );

    // Watch delivery, the protocols alternating.
    let epoch = Instant::now();
    let (mut h1_p99, mut h2_p99, mut h1_p50, mut h2_p50) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..WATCH_ROUNDS {
        for h2 in [false, true] {
            let (latencies, got) = watch_round(&server, &pki, h2, epoch);
            let (p50, p99) = (percentile_ms(&latencies, 0.5), percentile_ms(&latencies, 0.99));
            println!(
                "watch round {} {}: {got} of {} events, delivery p50 {p50:.2} ms, p99 {p99:.2} ms",
                round + 1,
                if h2 { "HTTP/2 (1 conn)" } else { "HTTP/1.1 (1000 conns)" },
                WATCHERS * WRITES
            );
            if h2 {
                h2_p50.push(p50);
                h2_p99.push(p99);
            } else {
                h1_p50.push(p50);
                h1_p99.push(p99);
            }
        }
    }
    println!(
        "watch medians: HTTP/1.1 p50 {:.2} ms p99 {:.2} ms; HTTP/2 p50 {:.2} ms p99 {:.2} ms; p99 ratio h2/h1 {:.3}",
        median(h1_p50.clone()),
        median(h1_p99.clone()),
        median(h2_p50.clone()),
        median(h2_p99.clone()),
        median(h2_p99.iter().zip(&h1_p99).map(|(b, a)| b / a).collect())
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

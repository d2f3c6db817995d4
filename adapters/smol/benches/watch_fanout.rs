//! Watch fan-out over HTTPS against the real `apiary` binary (release build, memory
//! storage) on a loopback port: 1,000 concurrent watches of the ConfigMaps in
//! `default`, then 1,000 writes from one writer connection at a steady pace (100
//! creates, then 900 unconditional updates of those objects, one every 2 ms). Every
//! write carries its send time (nanoseconds since an `Instant` the writer and watchers
//! share) and its sequence number in its data, so each watcher can time every event it
//! receives and tell whether it saw each write exactly once, in order.
//!
//! Prints the delivery latency (receive time − send time) over all events of all
//! watchers (p50, p90, p99, max), the events received against the 1,000,000 expected
//! (missing, duplicated, out of order, unexpected frames), how long the last event took
//! to arrive after the last write, the writer's own request latency, and the CPU time
//! and peak resident memory of the server.
//!
//! There is no watch cache yet: each watch opens its own backend watch on the memory
//! store, and each watcher's connection decodes and encodes every event itself.
//!
//! Client and server share the machine's cores: the watchers run on one executor thread
//! (`APIARY_BENCH_WATCHER_THREADS` for more), the writer on another. The bench stops
//! once every watcher has every event, or 20 s after deliveries stop making progress,
//! or 120 s after the first write, whichever comes first, and then kills the server.
//!
//! File descriptors: the bench process and the server (which inherits its limits) each
//! hold one socket per watcher, so the soft `ulimit -n` must be above the watcher count
//! plus a margin (about 1,100 for the default 1,000 watchers); the bench checks and
//! says so. Raise it with `ulimit -n 4096` before `cargo bench` if needed.
//!
//! `APIARY_BENCH_WATCHERS` and `APIARY_BENCH_WRITES` override the counts (for a quick
//! smoke run).
//!
//! Run: `cargo bench -p apiary-smol --bench watch_fanout`

mod support;

use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::{Executor, Timer};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{connect, memory_kib, round_trip, tls_config, Server, Tls};

const WATCHERS: usize = 1_000;
const WRITES: usize = 1_000;
/// The first this many writes create objects; the rest update them in turn.
const OBJECTS: usize = 100;
/// The writer's pace (`APIARY_BENCH_PACE_US` overrides it, in microseconds).
const PACE: Duration = Duration::from_millis(2);
/// Watchers connect this many at a time (the listener's backlog is finite).
const WAVE: usize = 50;
const SETUP_TIMEOUT: Duration = Duration::from_secs(60);
/// Everything after the first write must be done within this.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);
/// Give up once no event has arrived for this long after the last write.
const STALL_TIMEOUT: Duration = Duration::from_secs(20);

/// What one watcher saw.
#[derive(Default)]
struct Seen {
    /// Delivery latency of every data event, in nanoseconds.
    latencies: Vec<u64>,
    /// How many times each write was seen.
    counts: Vec<u16>,
    /// The highest sequence number seen so far, to spot events out of order.
    last_seq: Option<usize>,
    out_of_order: usize,
    /// ADDED for an update or MODIFIED for a create.
    wrong_type: usize,
    /// Frames that are neither ADDED nor MODIFIED of a benchmark write (first few kept).
    unexpected: Vec<String>,
    unexpected_count: usize,
    /// Why the stream ended, if it did.
    ended: Option<String>,
    /// The delivery latency of the last write's event.
    last_write: Option<u64>,
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The soft limit on open files of this process (`Max open files` in /proc).
fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// User plus system CPU time of a process, from /proc/<pid>/stat.
fn cpu_time(pid: &str) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    // USER_HZ is 100 on every Linux configuration that matters here.
    Duration::from_millis(ticks * 10)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The decimal digits of a string field `"<key>":"<digits>"` in a frame.
fn number_after(frame: &[u8], key: &[u8]) -> Option<u64> {
    let at = find(frame, key)? + key.len();
    let digits = frame[at..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    std::str::from_utf8(&frame[at..at + digits])
        .ok()?
        .parse()
        .ok()
}

fn record(frame: &[u8], now_ns: u64, seen: &mut Seen) {
    let kind = frame
        .strip_prefix(b"{\"type\":\"")
        .and_then(|rest| rest.iter().position(|&b| b == b'"').map(|end| &rest[..end]));
    let data = match (
        kind,
        number_after(frame, b"\"bench-seq\":\""),
        number_after(frame, b"\"bench-sent-ns\":\""),
    ) {
        (Some(kind @ (b"ADDED" | b"MODIFIED")), Some(seq), Some(sent))
            if (seq as usize) < seen.counts.len() =>
        {
            Some((kind == b"ADDED", seq as usize, sent))
        }
        _ => None,
    };
    let Some((added, seq, sent)) = data else {
        seen.unexpected_count += 1;
        if seen.unexpected.len() < 3 {
            let text = String::from_utf8_lossy(&frame[..frame.len().min(400)]).into_owned();
            seen.unexpected.push(text);
        }
        return;
    };
    let latency = now_ns.saturating_sub(sent);
    seen.latencies.push(latency);
    if seq + 1 == seen.counts.len() {
        seen.last_write = Some(latency);
    }
    seen.counts[seq] += 1;
    if seen.last_seq.is_some_and(|last| seq <= last) {
        seen.out_of_order += 1;
    }
    seen.last_seq = Some(seen.last_seq.map_or(seq, |last| last.max(seq)));
    if added != (seq < OBJECTS) {
        seen.wrong_type += 1;
    }
}

/// One watcher: open the watch, report ready, then read the chunked stream and record
/// every frame until the stream ends.
async fn watch(
    mut stream: Tls,
    request: Arc<String>,
    epoch: Instant,
    seen: Arc<Mutex<Seen>>,
    ready: Arc<AtomicUsize>,
    received: Arc<AtomicU64>,
) -> Result<(), String> {
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| format!("write: {e}"))?;
    stream.flush().await.map_err(|e| format!("flush: {e}"))?;
    let mut buf: Vec<u8> = Vec::with_capacity(32 * 1024);
    let mut chunk = vec![0u8; 16 * 1024];
    // The response head.
    let body_start = loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            if !head.starts_with("HTTP/1.1 200")
                || !head
                    .to_ascii_lowercase()
                    .contains("transfer-encoding: chunked")
            {
                return Err(format!("unexpected watch response head: {head}"));
            }
            break end + 4;
        }
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|e| format!("read head: {e}"))?;
        if n == 0 {
            return Err("closed before the response head".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    buf.drain(..body_start);
    ready.fetch_add(1, Ordering::SeqCst);

    // Chunks: "<hex size>\r\n<data>\r\n"; the data of consecutive chunks is a sequence
    // of newline-terminated JSON frames.
    let mut frames: Vec<u8> = Vec::with_capacity(4096);
    loop {
        let now_ns = epoch.elapsed().as_nanos() as u64;
        let mut pos = 0;
        let mut events = 0;
        while let Some(line_end) = find(&buf[pos..], b"\r\n") {
            let size_text = std::str::from_utf8(&buf[pos..pos + line_end])
                .map_err(|_| "bad chunk size".to_owned())?;
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| format!("bad chunk size line {size_text:?}"))?;
            let data_start = pos + line_end + 2;
            if buf.len() < data_start + size + 2 {
                break;
            }
            if size == 0 {
                return Err("the server ended the watch (last chunk)".into());
            }
            if &buf[data_start + size..data_start + size + 2] != b"\r\n" {
                return Err("chunk data not followed by CRLF".into());
            }
            frames.extend_from_slice(&buf[data_start..data_start + size]);
            pos = data_start + size + 2;
        }
        buf.drain(..pos);
        if let Some(last_newline) = frames.iter().rposition(|&b| b == b'\n') {
            let mut seen = seen.lock().unwrap();
            for frame in frames[..last_newline].split(|&b| b == b'\n') {
                if !frame.is_empty() {
                    record(frame, now_ns, &mut seen);
                    events += 1;
                }
            }
            drop(seen);
            frames.drain(..=last_newline);
            received.fetch_add(events, Ordering::Relaxed);
        }
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("connection closed mid-stream".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The `metadata.resourceVersion` of a list body.
fn list_revision(body: &[u8]) -> String {
    let at = find(body, b"\"resourceVersion\":\"").expect("list has a resourceVersion") + 19;
    let len = body[at..]
        .iter()
        .position(|&b| b == b'"')
        .expect("closing quote");
    String::from_utf8(body[at..at + len].to_vec()).expect("utf-8")
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn main() {
    let watchers = env_usize("APIARY_BENCH_WATCHERS", WATCHERS);
    let writes = env_usize("APIARY_BENCH_WRITES", WRITES);
    let watcher_threads = env_usize("APIARY_BENCH_WATCHER_THREADS", 1).max(1);
    let pace =
        Duration::from_micros(env_usize("APIARY_BENCH_PACE_US", PACE.as_micros() as usize) as u64);
    let needed = watchers as u64 + 100;
    match open_files_limit() {
        Some(limit) if limit < needed => panic!(
            "the open-files limit is {limit}; {watchers} watchers need about {needed} here and in the server: run `ulimit -n 4096` first"
        ),
        Some(limit) => println!("open-files limit {limit} (about {needed} needed by this process and by the server)"),
        None => println!("open-files limit unknown; about {needed} needed by this process and by the server"),
    }

    let dir = std::env::temp_dir().join(format!("apiary-bench-watch-{}", std::process::id()));
    let server = Server::start(&dir);
    let addr = server.addr.clone();
    let config = tls_config(&dir.join("pki"));
    let pid = server.pid().to_string();

    // The revision the watches start after.
    let (mut writer, revision) = smol::block_on(async {
        let mut writer = connect(&addr, &config).await;
        let list = b"GET /api/v1/namespaces/default/configmaps?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n";
        let mut buf = Vec::new();
        assert_eq!(round_trip(&mut writer, list, &mut buf).await, 200);
        let revision = list_revision(&buf);
        (writer, revision)
    });
    let request = Arc::new(format!(
        "GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion={revision}&timeoutSeconds=600 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nUser-Agent: apiary-bench\r\n\r\n"
    ));

    // The watchers' executor.
    let executor = Arc::new(Executor::new());
    let (stop, stopped) = smol::channel::bounded::<()>(1);
    let threads: Vec<_> = (0..watcher_threads)
        .map(|_| {
            let (executor, stopped) = (executor.clone(), stopped.clone());
            std::thread::spawn(move || {
                smol::block_on(executor.run(async move {
                    let _ = stopped.recv().await;
                }))
            })
        })
        .collect();

    let epoch = Instant::now();
    let ready = Arc::new(AtomicUsize::new(0));
    let received = Arc::new(AtomicU64::new(0));
    let seen: Vec<Arc<Mutex<Seen>>> = (0..watchers)
        .map(|_| {
            Arc::new(Mutex::new(Seen {
                counts: vec![0; writes],
                latencies: Vec::with_capacity(writes),
                ..Seen::default()
            }))
        })
        .collect();
    let idle_rss = memory_kib(server.pid(), "VmRSS:");
    let setup_start = Instant::now();
    let mut tasks = Vec::with_capacity(watchers);
    for (i, seen) in seen.iter().enumerate() {
        let (task_addr, task_config, task_request, seen, task_ready, task_received) = (
            addr.clone(),
            config.clone(),
            request.clone(),
            seen.clone(),
            ready.clone(),
            received.clone(),
        );
        tasks.push(executor.spawn(async move {
            let stream = connect(&task_addr, &task_config).await;
            let result = watch(
                stream,
                task_request,
                epoch,
                seen.clone(),
                task_ready,
                task_received,
            )
            .await;
            if let Err(e) = result {
                seen.lock().unwrap().ended = Some(e);
            }
        }));
        // Let each wave finish its handshakes and open its watches before the next.
        if (i + 1) % WAVE == 0 || i + 1 == watchers {
            while ready.load(Ordering::SeqCst) < i + 1 {
                if setup_start.elapsed() > SETUP_TIMEOUT {
                    drop(server);
                    panic!(
                        "only {} of {} watches opened within {SETUP_TIMEOUT:?}",
                        ready.load(Ordering::SeqCst),
                        i + 1
                    );
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
    let setup = setup_start.elapsed();
    let watching_rss = memory_kib(server.pid(), "VmRSS:");
    println!(
        "{watchers} watches open after {:.2} s (from revision {revision}); server RSS {idle_rss} KiB before, {watching_rss} KiB with the watches open",
        setup.as_secs_f64()
    );

    // The writer: its own thread, a steady pace, each write's send time in its data.
    let server_cpu_before = cpu_time(&pid);
    let self_cpu_before = cpu_time("self");
    let write_latencies = Arc::new(Mutex::new(Vec::with_capacity(writes)));
    let writer_thread = {
        let write_latencies = write_latencies.clone();
        std::thread::spawn(move || {
            smol::block_on(async move {
                let start = Instant::now();
                let mut buf = Vec::new();
                for seq in 0..writes {
                    let due = start + pace * seq as u32;
                    if due > Instant::now() {
                        Timer::at(due).await;
                    }
                    let name = format!("watch-{:03}", seq % OBJECTS);
                    let sent = epoch.elapsed().as_nanos() as u64;
                    let body = format!(
                        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{{"bench-seq":"{seq}","bench-sent-ns":"{sent}"}}}}"#
                    );
                    let (method, path, status) = if seq < OBJECTS {
                        (
                            "POST",
                            "/api/v1/namespaces/default/configmaps".to_owned(),
                            201,
                        )
                    } else {
                        (
                            "PUT",
                            format!("/api/v1/namespaces/default/configmaps/{name}"),
                            200,
                        )
                    };
                    let request = format!(
                        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    let code = round_trip(&mut writer, request.as_bytes(), &mut buf).await;
                    assert_eq!(
                        code,
                        status,
                        "write {seq}: {}",
                        String::from_utf8_lossy(&buf)
                    );
                    let done = epoch.elapsed().as_nanos() as u64;
                    write_latencies
                        .lock()
                        .unwrap()
                        .push((seq, sent, done - sent));
                }
                start.elapsed()
            })
        })
    };

    // Wait for every event, a stall, or the overall deadline.
    let expected = (watchers * writes) as u64;
    let run_start = Instant::now();
    let mut last_progress = (0u64, Instant::now());
    let mut peak_rss = 0;
    // The longest stretch without a new event, and when it began (since the first write).
    let mut longest_gap = (Duration::ZERO, Duration::ZERO);
    let outcome = loop {
        std::thread::sleep(Duration::from_millis(10));
        let got = received.load(Ordering::Relaxed);
        peak_rss = peak_rss.max(memory_kib(server.pid(), "VmRSS:"));
        if got != last_progress.0 {
            let gap = last_progress.1.elapsed();
            if gap > longest_gap.0 && last_progress.0 > 0 {
                longest_gap = (gap, last_progress.1 - run_start);
            }
            last_progress = (got, Instant::now());
        }
        let writer_done = writer_thread.is_finished();
        if got >= expected && writer_done {
            break "every watcher received every write";
        }
        if writer_done && last_progress.1.elapsed() > STALL_TIMEOUT {
            break "stopped: no events for 20 s after the last write";
        }
        if run_start.elapsed() > RUN_TIMEOUT {
            break "stopped: 120 s deadline";
        }
    };
    let server_cpu = cpu_time(&pid).saturating_sub(server_cpu_before);
    let self_cpu = cpu_time("self").saturating_sub(self_cpu_before);
    let server_hwm = memory_kib(server.pid(), "VmHWM:");
    let elapsed = run_start.elapsed();
    // Stop the watchers before the server, so that its exit does not end their streams.
    drop(stop);
    for t in threads {
        let _ = t.join();
    }
    drop(tasks);
    drop(server);
    let writer_took = if writer_thread.is_finished() {
        writer_thread.join().ok()
    } else {
        None
    };
    let _ = std::fs::remove_dir_all(&dir);

    // Tally.
    let mut latencies = Vec::with_capacity(expected as usize);
    let (mut missing, mut duplicated, mut out_of_order, mut wrong_type, mut unexpected) =
        (0u64, 0u64, 0, 0, 0);
    let (mut complete, mut ended) = (0, Vec::new());
    let mut samples = Vec::new();
    let mut last_write = 0u64;
    for s in &seen {
        let s = s.lock().unwrap();
        latencies.extend_from_slice(&s.latencies);
        for &c in &s.counts {
            match c {
                0 => missing += 1,
                1 => {}
                n => duplicated += n as u64 - 1,
            }
        }
        if s.counts.iter().all(|&c| c == 1) {
            complete += 1;
        }
        out_of_order += s.out_of_order;
        wrong_type += s.wrong_type;
        unexpected += s.unexpected_count;
        if samples.len() < 3 {
            samples.extend(s.unexpected.iter().cloned());
        }
        last_write = last_write.max(s.last_write.unwrap_or(0));
        if let Some(e) = &s.ended {
            ended.push(e.clone());
        }
    }
    latencies.sort_unstable();
    let write_log = write_latencies.lock().unwrap().clone();
    let write_latencies = {
        let mut w: Vec<u64> = write_log.iter().map(|w| w.2).collect();
        w.sort_unstable();
        w
    };

    println!("{outcome} after {:.1} s", elapsed.as_secs_f64());
    match writer_took {
        Some(took) => println!(
            "writer: {writes} writes in {:.2} s (paced at one per {pace:?}: {:.2} s ideal); write latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            took.as_secs_f64(),
            (pace * writes as u32).as_secs_f64(),
            ms(percentile(&write_latencies, 0.5)),
            ms(percentile(&write_latencies, 0.99)),
            ms(*write_latencies.last().unwrap())
        ),
        None => println!("writer: did not finish; {} of {writes} writes done", write_latencies.len()),
    }
    let mut slowest = write_log.clone();
    slowest.sort_unstable_by_key(|w| std::cmp::Reverse(w.2));
    let first_sent = write_log.first().map_or(0, |w| w.1);
    let slowest: Vec<String> = slowest
        .iter()
        .take(5)
        .map(|&(seq, sent, took)| {
            format!(
                "#{seq} at +{:.2} s: {:.1} ms",
                ms(sent - first_sent) / 1e3,
                ms(took)
            )
        })
        .collect();
    println!("  slowest writes: {}", slowest.join(", "));
    println!(
        "  longest time without any event received while writes or deliveries were outstanding: {:.0} ms (at +{:.2} s)",
        longest_gap.0.as_secs_f64() * 1e3,
        longest_gap.1.as_secs_f64()
    );
    println!(
        "events: received {} of {expected} expected ({complete} of {watchers} watchers complete); missing {missing}, duplicated {duplicated}, out of order {out_of_order}, wrong type {wrong_type}, other frames {unexpected}",
        latencies.len()
    );
    for sample in samples {
        println!("  other frame: {sample}");
    }
    if !ended.is_empty() {
        let mut reasons: Vec<(String, usize)> = Vec::new();
        for e in ended {
            match reasons.iter_mut().find(|(r, _)| *r == e) {
                Some((_, n)) => *n += 1,
                None => reasons.push((e, 1)),
            }
        }
        for (reason, n) in reasons {
            println!("  {n} watches ended early: {reason}");
        }
    }
    if !latencies.is_empty() {
        println!(
            "delivery latency over {} events: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms; the last write reached every watcher that saw it {:.2} ms after it was sent",
            latencies.len(),
            ms(percentile(&latencies, 0.50)),
            ms(percentile(&latencies, 0.90)),
            ms(percentile(&latencies, 0.99)),
            ms(*latencies.last().unwrap()),
            ms(last_write)
        );
    }
    println!(
        "CPU over the run: server {:.2} s, bench process (writer + watchers) {:.2} s, in {:.2} s wall; server RSS {peak_rss} KiB peak sampled, VmHWM {server_hwm} KiB",
        server_cpu.as_secs_f64(),
        self_cpu.as_secs_f64(),
        elapsed.as_secs_f64()
    );
}

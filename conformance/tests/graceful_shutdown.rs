//! Graceful termination of the real binary, as kube-apiserver does it: on SIGTERM
//! /readyz fails at once while requests are still served for --shutdown-delay-duration;
//! then new connections are refused (or, with --shutdown-send-retry-after, answered 429),
//! requests in flight get their whole answer, watches end with a clean end of stream,
//! and the process exits 0 within the delay plus --request-timeout. A second signal
//! exits at once with 1.

mod raw_tls;

use apiary_conformance::harness::Apiary;
use raw_tls::{connect, request_bytes, runtime, Raw, CONFIGMAPS};
use std::time::{Duration, Instant};

fn configmap(name: &str) -> Vec<u8> {
    raw_tls::configmap(name, serde_json::json!({"payload": "x".repeat(2000)}))
}

/// A create whose headers and first half of the body are sent now; the rest is returned
/// for later. The server counts it in flight from its first bytes.
async fn half_sent_create(apiary: &Apiary, name: &str) -> (Raw, Vec<u8>) {
    let mut conn = connect(apiary).await.expect("connect");
    let bytes = request_bytes("POST", CONFIGMAPS, Some(&configmap(name)));
    let half = bytes.len() - 1000;
    conn.send(&bytes[..half]).await.unwrap();
    (conn, bytes[half..].to_vec())
}

#[test]
fn sigterm_drains_in_flight_requests_and_ends_watches() {
    let dir = tempfile::tempdir().unwrap();
    let delay = Duration::from_secs(2);
    let request_timeout = Duration::from_secs(5);
    let mut apiary = Apiary::start_in(
        dir.path(),
        &["--shutdown-delay-duration=2s", "--request-timeout=5s"],
    );
    let rt = runtime();
    // The watch's end is timed from the stuck upload's first bytes.
    let (signalled, watch_ended_at) = rt.block_on(async {
        let mut setup = connect(&apiary).await.unwrap();
        let created = setup
            .call("POST", CONFIGMAPS, Some(&configmap("before")))
            .await
            .unwrap();
        assert_eq!(created.status, 201);

        // A watch, streaming: its first event is the ConfigMap above.
        let mut watch = connect(&apiary).await.unwrap();
        watch
            .send(&request_bytes("GET", &format!("{CONFIGMAPS}?watch=1"), None))
            .await
            .unwrap();
        let (status, headers) = watch.read_head().await.unwrap();
        assert_eq!(status, 200);
        assert!(headers.contains(&("transfer-encoding".into(), "chunked".into())));
        let first = watch.read_chunk().await.unwrap().expect("an event");
        assert!(String::from_utf8_lossy(&first).contains("\"before\""));

        // A kept-alive connection with nothing in flight.
        let mut idle = connect(&apiary).await.unwrap();
        assert_eq!(idle.call("GET", "/api/v1/namespaces", None).await.unwrap().status, 200);

        // A create still uploading, finished during the drain; another never finished.
        let (mut slow, rest) = half_sent_create(&apiary, "slow").await;
        let (mut stuck, _) = half_sent_create(&apiary, "stuck").await;
        let stuck_since = Instant::now();
        tokio::time::sleep(Duration::from_millis(200)).await;

        let signalled = Instant::now();
        apiary.signal("TERM");
        tokio::time::sleep(Duration::from_millis(100)).await;

        // ShutdownInitiated: readyz fails at once; livez and healthz pass; requests are
        // still served until the delay has passed.
        let mut probe = connect(&apiary).await.expect("still listening during the delay");
        let readyz = probe.call("GET", "/readyz?verbose", None).await.unwrap();
        assert_eq!(readyz.status, 500, "{}", String::from_utf8_lossy(&readyz.body));
        assert!(String::from_utf8_lossy(&readyz.body).contains("[-]shutdown failed"));
        assert_eq!(probe.call("GET", "/livez", None).await.unwrap().status, 200);
        assert_eq!(probe.call("GET", "/healthz", None).await.unwrap().status, 200);
        let served = probe.call("GET", CONFIGMAPS, None).await.unwrap();
        assert_eq!(served.status, 200);
        assert!(
            signalled.elapsed() < delay,
            "the checks above took longer than the delay; the test cannot tell"
        );

        // NotAcceptingNewRequest once the delay is over: connections are refused.
        let refused_at = loop {
            if connect(&apiary).await.is_err() {
                break signalled.elapsed();
            }
            assert!(signalled.elapsed() < delay + Duration::from_secs(3), "still accepting");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(refused_at >= delay, "refused after {refused_at:?}, before the delay");
        // The kept-alive connection with nothing in flight has been closed.
        assert!(idle.closed_without_answer().await);

        // The upload in flight completes and gets its whole answer.
        slow.send(&rest).await.unwrap();
        let answer = slow.read_response().await.unwrap();
        assert_eq!(answer.status, 201, "{}", String::from_utf8_lossy(&answer.body));
        assert_eq!(answer.json()["metadata"]["name"], "slow");
        assert_eq!(answer.header("connection"), Some("close"));

        // The upload never finished holds the drain until its body times out, a
        // --request-timeout after its first bytes: 504.
        let answer = stuck.read_response().await.unwrap();
        assert_eq!(answer.status, 504, "{}", String::from_utf8_lossy(&answer.body));
        assert!(stuck_since.elapsed() >= request_timeout);

        // Then the watch ends with the chunked stream's terminator.
        let ended = tokio::time::timeout(Duration::from_secs(15), async {
            while watch.read_chunk().await.expect("a clean stream").is_some() {}
        })
        .await;
        assert!(ended.is_ok(), "the watch did not end");
        (signalled, stuck_since.elapsed())
    });

    let status = apiary
        .wait_exit(Duration::from_secs(10))
        .expect("apiary exits");
    let exited_at = signalled.elapsed();
    assert_eq!(status.code(), Some(0));
    assert!(
        watch_ended_at >= request_timeout,
        "the watch ended {watch_ended_at:?} after the stuck upload began, before it was \
         answered"
    );
    assert!(
        exited_at < delay + request_timeout + Duration::from_secs(3),
        "exited after {exited_at:?}"
    );
    drop(apiary);

    // The answered create is stored; the one never finished is not.
    let apiary = Apiary::start_in(dir.path(), &[]);
    let out = apiary.kubectl("1.33", &["get", "configmap", "slow", "-o", "name"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "configmap/slow");
    let out = apiary.kubectl("1.33", &["get", "configmap", "stuck"]);
    assert!(!out.status.success());
}

#[test]
fn send_retry_after_answers_429_while_draining() {
    let mut apiary = Apiary::start_with(&[
        "--storage=memory",
        "--shutdown-send-retry-after",
        "--request-timeout=20s",
    ]);
    let rt = runtime();
    let signalled = rt.block_on(async {
        let (mut slow, rest) = half_sent_create(&apiary, "slow").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let signalled = Instant::now();
        apiary.signal("TERM");
        tokio::time::sleep(Duration::from_millis(300)).await;

        // The listener stays open: new requests get 429 with Retry-After and the
        // connection closes after it.
        let mut late = connect(&apiary).await.expect("still listening");
        let answer = late.call("GET", "/api/v1/namespaces", None).await.unwrap();
        assert_eq!(answer.status, 429);
        assert_eq!(answer.header("retry-after"), Some("5"));
        assert_eq!(answer.header("connection"), Some("close"));
        let status = answer.json();
        assert_eq!(status["kind"], "Status");
        assert_eq!(status["reason"], "TooManyRequests");
        assert!(late.closed_without_answer().await);
        // Health probes are still answered (each on its own connection: while draining,
        // every answer closes its connection).
        for (path, code) in [("/livez", 200), ("/readyz", 500)] {
            let mut probe = connect(&apiary).await.unwrap();
            let answer = probe.call("GET", path, None).await.unwrap();
            assert_eq!(answer.status, code, "{path}");
            assert_eq!(answer.header("connection"), Some("close"));
        }

        slow.send(&rest).await.unwrap();
        let answer = slow.read_response().await.unwrap();
        assert_eq!(answer.status, 201);
        signalled
    });
    let status = apiary.wait_exit(Duration::from_secs(10)).expect("apiary exits");
    assert_eq!(status.code(), Some(0));
    // Drained as soon as the upload was answered, well before --request-timeout.
    assert!(signalled.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_second_signal_exits_at_once_with_1() {
    let mut apiary = Apiary::start_with(&["--storage=memory", "--request-timeout=60s"]);
    let rt = runtime();
    let _held = rt.block_on(half_sent_create(&apiary, "held"));
    std::thread::sleep(Duration::from_millis(200));
    apiary.signal("TERM");
    // The drain waits for the upload: no exit.
    assert!(apiary.wait_exit(Duration::from_millis(1500)).is_none());
    apiary.signal("INT");
    let status = apiary.wait_exit(Duration::from_secs(5)).expect("exits at once");
    assert_eq!(status.code(), Some(1));
}

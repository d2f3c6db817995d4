//! --request-timeout on the real binary over a real etcd that stops answering (SIGSTOP):
//! a write gets 504 with a Timeout Status in time (sooner with `?timeout=`, as kubectl's
//! --request-timeout sends), and once etcd answers again the write either happened in
//! full or not at all, and the server serves on.

mod raw_tls;

use apiary_conformance::etcd::Etcd;
use apiary_conformance::harness::Apiary;
use raw_tls::{connect, runtime, CONFIGMAPS};
use std::time::{Duration, Instant};

fn configmap(name: &str) -> Vec<u8> {
    raw_tls::configmap(name, serde_json::json!({"a": "1", "b": "2"}))
}

#[test]
fn writes_time_out_with_504_and_are_never_half_done() {
    let etcd = Etcd::start();
    let servers = format!("--etcd-servers={}", etcd.url());
    let apiary = Apiary::start_with(&["--storage=etcd", &servers, "--request-timeout=2s"]);
    let rt = runtime();
    rt.block_on(async {
        let mut conn = connect(&apiary).await.unwrap();
        let created = conn
            .call("POST", CONFIGMAPS, Some(&configmap("first")))
            .await
            .unwrap();
        assert_eq!(created.status, 201);

        etcd.pause();
        let cases = [
            ("during", CONFIGMAPS.to_owned(), Duration::from_secs(2)),
            ("asked", format!("{CONFIGMAPS}?timeout=1s"), Duration::from_secs(1)),
        ];
        for (name, path, limit) in &cases {
            let mut conn = connect(&apiary).await.unwrap();
            let started = Instant::now();
            let answer = conn
                .call("POST", path, Some(&configmap(name)))
                .await
                .unwrap();
            let took = started.elapsed();
            assert_eq!(answer.status, 504, "{}", String::from_utf8_lossy(&answer.body));
            let status = answer.json();
            assert_eq!(status["kind"], "Status");
            assert_eq!(status["reason"], "Timeout");
            assert_eq!(status["code"], 504);
            assert_eq!(
                status["message"],
                "Timeout: request did not complete within the allotted timeout"
            );
            assert!(
                took >= *limit && took < *limit + Duration::from_secs(2),
                "{path}: answered after {took:?}"
            );
        }
        etcd.resume();

        // Each timed-out create happened in full or not at all.
        for (name, _, _) in &cases {
            let mut seen = None;
            for _ in 0..100 {
                let mut conn = connect(&apiary).await.unwrap();
                let got = conn
                    .call("GET", &format!("{CONFIGMAPS}/{name}"), None)
                    .await
                    .unwrap();
                if got.status != 503 {
                    seen = Some(got);
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let got = seen.expect("the server answers once etcd is back");
            match got.status {
                200 => assert_eq!(got.json()["data"], serde_json::json!({"a": "1", "b": "2"})),
                404 => {}
                other => panic!("{name}: {other} {}", String::from_utf8_lossy(&got.body)),
            }
        }
        // Counted as upstream's timeout filter counts them.
        let mut conn = connect(&apiary).await.unwrap();
        let metrics = conn.call("GET", "/metrics", None).await.unwrap();
        let text = String::from_utf8_lossy(&metrics.body);
        let terminations: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("apiserver_request_terminations_total{"))
            .filter(|l| l.contains("code=\"504\"") && l.contains("verb=\"POST\""))
            .collect();
        assert_eq!(terminations.len(), 1, "{text}");
        assert!(terminations[0].contains("resource=\"configmaps\""));
        assert!(terminations[0].ends_with(" 2"), "{}", terminations[0]);
        let answered_504 = text
            .lines()
            .filter(|l| l.starts_with("apiserver_request_total{"))
            .filter(|l| l.contains("code=\"504\"") && l.contains("verb=\"POST\""))
            .count();
        assert_eq!(answered_504, 1, "{text}");

        let mut conn = connect(&apiary).await.unwrap();
        let after = conn
            .call("POST", CONFIGMAPS, Some(&configmap("after")))
            .await
            .unwrap();
        assert_eq!(after.status, 201, "{}", String::from_utf8_lossy(&after.body));
    });
}

#[test]
fn a_timeout_that_is_not_a_duration_is_a_400() {
    let apiary = Apiary::start_with(&["--storage=memory"]);
    runtime().block_on(async {
        let mut conn = connect(&apiary).await.unwrap();
        let answer = conn
            .call("GET", &format!("{CONFIGMAPS}?timeout=soon"), None)
            .await
            .unwrap();
        assert_eq!(answer.status, 400);
        let status = answer.json();
        assert_eq!(status["reason"], "BadRequest");
        assert_eq!(
            status["message"],
            "invalid timeout specified in the request URL - time: invalid duration \"soon\""
        );
        let answer = conn
            .call("GET", &format!("{CONFIGMAPS}?timeout=30s"), None)
            .await
            .unwrap();
        assert_eq!(answer.status, 200);
    });
}

#[test]
fn a_body_that_never_finishes_arriving_gets_504() {
    let apiary = Apiary::start_with(&["--storage=memory", "--request-timeout=2s"]);
    runtime().block_on(async {
        let mut conn = connect(&apiary).await.unwrap();
        let bytes = raw_tls::request_bytes("POST", CONFIGMAPS, Some(&configmap("slow")));
        let started = Instant::now();
        conn.send(&bytes[..bytes.len() - 10]).await.unwrap();
        let answer = conn.read_response().await.unwrap();
        let took = started.elapsed();
        assert_eq!(answer.status, 504);
        assert_eq!(answer.json()["reason"], "Timeout");
        assert_eq!(answer.header("connection"), Some("close"));
        assert!(
            took >= Duration::from_secs(2) && took < Duration::from_secs(4),
            "answered after {took:?}"
        );
        assert!(conn.closed_without_answer().await);
        // Nothing was created.
        let mut conn = connect(&apiary).await.unwrap();
        let got = conn.call("GET", &format!("{CONFIGMAPS}/slow"), None).await.unwrap();
        assert_eq!(got.status, 404);
    });
}

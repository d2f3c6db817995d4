//! HTTP/2 on the real binary: real clients (kubectl 1.33 and 1.27, curl, an h2 client)
//! speak it on the same port as HTTP/1.1 clients (curl --http1.1, kube-rs), and each
//! test checks which protocol was used; the stream limit, flow control that lets a
//! stalled watch wait alone, the request body limit, and a client that resets streams
//! in a loop being cut off while others are served; `--goaway-chance` sending a client
//! away after some answer, and kubectl carrying on over a new connection.

mod h2_client;
mod kube_support;
mod raw_tls;

use apiary_conformance::harness::{ok, Apiary};
use bytes::Bytes;
use std::process::Command;
use std::time::Duration;

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
/// What the server logs at `-v=4` for each connection, by protocol.
const H2_LINE: &str = "serving HTTP/2";
const H1_LINE: &str = "serving HTTP/1.1";

fn start() -> Apiary {
    Apiary::start_with(&["--storage", "memory", "-v=4"])
}

/// `curl` as the admin user; what it printed for `-w`, then its output.
fn curl(apiary: &Apiary, protocol: &str, args: &[&str], path: &str) -> String {
    let pki = apiary.data_dir.join("pki");
    let out = Command::new("curl")
        .args(["-sS", protocol, "-o", "/dev/null", "-w", "%{http_version} %{http_code}"])
        .arg("--cacert")
        .arg(pki.join("ca.crt"))
        .arg("--cert")
        .arg(pki.join("admin.crt"))
        .arg("--key")
        .arg(pki.join("admin.key"))
        .args(args)
        .arg(format!("{}{path}", apiary.url))
        .output()
        .expect("curl runs");
    assert!(out.status.success(), "curl: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Wait until the server has logged `needle` at least `count` times.
fn wait_count(apiary: &Apiary, needle: &str, count: usize) -> usize {
    for _ in 0..100 {
        let seen = apiary.log_count(needle);
        if seen >= count {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    apiary.log_count(needle)
}

#[test]
fn curl_speaks_http2_and_http1_on_one_port() {
    let apiary = start();
    assert_eq!(curl(&apiary, "--http2", &[], "/api/v1/namespaces/default"), "2 200");
    assert_eq!(curl(&apiary, "--http1.1", &[], "/api/v1/namespaces/default"), "1.1 200");
    // A write with a body, then the object read back over HTTP/2.
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"over-h2"},"data":{"a":"b"}}"#;
    let created = curl(
        &apiary,
        "--http2",
        &["-X", "POST", "-H", "Content-Type: application/json", "--data-binary", body],
        CONFIGMAPS,
    );
    assert_eq!(created, "2 201");
    assert_eq!(curl(&apiary, "--http2", &[], &format!("{CONFIGMAPS}/over-h2")), "2 200");
    assert_eq!(wait_count(&apiary, H2_LINE, 3), 3);
    assert_eq!(wait_count(&apiary, H1_LINE, 1), 1);
}

#[test]
fn kubectl_uses_http2() {
    let apiary = start();
    for version in ["1.33", "1.27"] {
        let (h2_before, h1_before) = (apiary.log_count(H2_LINE), apiary.log_count(H1_LINE));
        let name = format!("from-kubectl-{}", version.replace('.', "-"));
        ok(&apiary.kubectl(version, &["create", "configmap", &name, "--from-literal=a=b"]));
        let got = ok(&apiary.kubectl(version, &["get", "configmap", &name, "-o", "name"]));
        assert_eq!(got.trim(), format!("configmap/{name}"));
        assert!(wait_count(&apiary, H2_LINE, h2_before + 1) > h2_before, "kubectl {version} spoke HTTP/2");
        assert_eq!(apiary.log_count(H1_LINE), h1_before, "kubectl {version} opened no HTTP/1.1 connection");
    }
}

#[test]
fn kube_rs_speaks_http1_beside_http2() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, PostParams};
    let apiary = start();
    let rt = raw_tls::runtime();
    rt.block_on(async {
        // kube-client 5 builds its rustls connector with HTTP/1.1 only (no ALPN offered).
        let client = kube_support::client(&apiary).await;
        let configmaps: Api<ConfigMap> = Api::namespaced(client, "default");
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("from-kube-rs".into());
        configmaps.create(&PostParams::default(), &cm).await.expect("created");
        // The same server answers HTTP/2 meanwhile.
        let mut h2 = h2_client::connect(&apiary).await;
        let got = h2.call("GET", &format!("{CONFIGMAPS}/from-kube-rs"), None).await;
        assert_eq!(got.status, 200);
        assert_eq!(got.json()["metadata"]["name"], "from-kube-rs");
        assert!(configmaps.get("from-kube-rs").await.is_ok());
    });
    assert!(wait_count(&apiary, H1_LINE, 1) >= 1, "kube-rs spoke HTTP/1.1");
    assert_eq!(wait_count(&apiary, H2_LINE, 1), 1, "only the h2 client spoke HTTP/2");
}

#[test]
fn answers_carry_no_connection_specific_headers() {
    let apiary = start();
    let rt = raw_tls::runtime();
    rt.block_on(async {
        let mut h2 = h2_client::connect(&apiary).await;
        let got = h2.call("GET", "/api/v1/namespaces/default", None).await;
        assert_eq!(got.status, 200);
        for name in ["connection", "transfer-encoding", "keep-alive"] {
            assert!(got.headers.get(name).is_none(), "{name} in {:?}", got.headers);
        }
        assert!(got.headers.get("audit-id").is_some());
        assert_eq!(got.headers["content-length"], got.body.len().to_string().as_str());
    });
}

#[test]
fn a_body_over_the_limit_is_answered_413() {
    let apiary = Apiary::start_with(&["--storage", "memory", "--max-request-body-bytes=1000"]);
    let rt = raw_tls::runtime();
    rt.block_on(async {
        let mut h2 = h2_client::connect(&apiary).await;
        // Sent without a content-length: the limit is found while the body is read.
        let data = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"big"}},"data":{{"a":"{}"}}}}"#,
            "x".repeat(5000)
        );
        let got = h2.call("POST", CONFIGMAPS, Some(data.as_bytes())).await;
        assert_eq!(got.status, 413);
        assert_eq!(got.json()["reason"], "RequestEntityTooLarge");
        assert_eq!(got.json()["message"], "Request entity too large: limit is 1000");
        // The connection goes on.
        let small = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"small"}}"#;
        assert_eq!(h2.call("POST", CONFIGMAPS, Some(small.as_bytes())).await.status, 201);
    });
}

#[test]
fn a_body_that_does_not_finish_in_time_is_answered_504() {
    let apiary = Apiary::start_with(&["--storage", "memory", "--request-timeout=1s"]);
    let rt = raw_tls::runtime();
    rt.block_on(async {
        let h2 = h2_client::connect(&apiary).await;
        let mut create = h2.request("POST", CONFIGMAPS);
        create.headers_mut().insert("content-type", http::HeaderValue::from_static("application/json"));
        let mut send = h2.send.clone().ready().await.unwrap();
        let (answer, mut body) = send.send_request(create, false).unwrap();
        body.send_data(Bytes::from_static(b"{\"apiVersion\":"), false).unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(10), answer).await.expect("answered in time").unwrap();
        assert_eq!(answer.status(), 504);
        let status: serde_json::Value = serde_json::from_slice(&h2_client::read_all(answer.into_body()).await).unwrap();
        assert_eq!(status["reason"], "Timeout");
    });
}

#[test]
fn many_streams_on_one_connection_respect_the_limit() {
    for (flag, limit) in [(None, 100usize), (Some("--http2-max-streams-per-connection=30"), 30)] {
        let mut args = vec!["--storage", "memory"];
        args.extend(flag);
        let apiary = Apiary::start_with(&args);
        let rt = raw_tls::runtime();
        rt.block_on(async {
            let h2 = h2_client::connect(&apiary).await;
            // One answer first: the server's SETTINGS (its stream limit) have then been
            // read, and the client keeps to them. Before, streams past the limit are
            // refused (REFUSED_STREAM), as Go's server refuses them.
            let mut send = h2.send.clone().ready().await.expect("ready");
            let (first, _) = send.send_request(h2.request("GET", "/api/v1/namespaces/default"), true).expect("sent");
            h2_client::read_all(first.await.expect("answered").into_body()).await;
            // 300 GETs at once on the one connection.
            let mut tasks = Vec::new();
            for _ in 0..300 {
                let request = h2.request("GET", "/api/v1/namespaces/default");
                let send = h2.send.clone();
                tasks.push(tokio::spawn(async move {
                    let mut send = send.ready().await.expect("ready");
                    let (response, _) = send.send_request(request, true).expect("sent");
                    let response = response.await.expect("answered");
                    let status = response.status();
                    h2_client::read_all(response.into_body()).await;
                    status
                }));
            }
            for task in tasks {
                assert_eq!(task.await.unwrap(), 200);
            }
        });
        // Watches hold their streams open: the one past the limit waits for a free one.
        rt.block_on(async {
            let h2 = h2_client::connect(&apiary).await;
            let mut watches = Vec::new();
            for _ in 0..limit {
                let mut send = h2.send.clone().ready().await.unwrap();
                let (response, _) = send.send_request(h2.request("GET", &format!("{CONFIGMAPS}?watch=1")), true).unwrap();
                watches.push(response.await.expect("watch head"));
            }
            let mut send = h2.send.clone().ready().await.unwrap();
            let (over, _) = send.send_request(h2.request("GET", "/version"), true).unwrap();
            let waited = tokio::time::timeout(Duration::from_millis(500), over).await;
            assert!(waited.is_err(), "a stream past the limit of {limit} was served");
            drop(watches);
        });
    }
}

#[test]
fn a_stalled_watch_does_not_stop_other_streams() {
    let apiary = start();
    let rt = raw_tls::runtime();
    rt.block_on(async {
        // A small stream window, a large connection window: the watch left unread fills
        // its own window only.
        let mut builder = h2::client::Builder::new();
        builder.initial_window_size(64 * 1024).initial_connection_window_size(64 << 20);
        let mut h2 = h2_client::connect_with(&apiary, &builder).await;
        let mut send = h2.send.clone().ready().await.unwrap();
        let (watch, _) = send.send_request(h2.request("GET", &format!("{CONFIGMAPS}?watch=1")), true).unwrap();
        let watch = watch.await.expect("watch head");
        assert_eq!(watch.status(), 200);
        // Never read: its window fills and the server's pump waits for it.
        let _stalled = watch.into_body();
        let payload = "y".repeat(16 * 1024);
        for i in 0..40 {
            let body = format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm-{i}"}},"data":{{"a":"{payload}"}}}}"#
            );
            let created = tokio::time::timeout(Duration::from_secs(10), h2.call("POST", CONFIGMAPS, Some(body.as_bytes())))
                .await
                .expect("a create on the same connection is answered");
            assert_eq!(created.status, 201);
        }
        // 40 events of 16 KiB are far past the watch's 64 KiB window; GETs still answer.
        for i in [0, 20, 39] {
            let got = tokio::time::timeout(Duration::from_secs(10), h2.call("GET", &format!("{CONFIGMAPS}/cm-{i}"), None))
                .await
                .expect("a GET on the same connection is answered");
            assert_eq!(got.status, 200);
        }
    });
}

#[test]
fn a_client_resetting_streams_in_a_loop_is_cut_off() {
    let apiary = start();
    let rt = raw_tls::runtime();
    rt.block_on(async {
        let mut normal = h2_client::connect(&apiary).await;
        let attacker = h2_client::connect(&apiary).await;
        let mut cut_off = false;
        for _ in 0..100_000 {
            let Ok(mut send) = attacker.send.clone().ready().await else {
                cut_off = true;
                break;
            };
            match send.send_request(attacker.request("GET", "/api/v1/namespaces"), true) {
                Ok((_, mut stream)) => {
                    // The HEADERS go out, the RST_STREAM right behind them.
                    tokio::task::yield_now().await;
                    stream.send_reset(h2::Reason::CANCEL)
                }
                Err(_) => {
                    cut_off = true;
                    break;
                }
            }
            if attacker.driver.is_finished() {
                cut_off = true;
                break;
            }
        }
        assert!(cut_off, "the server kept taking reset streams");
        let ended = tokio::time::timeout(Duration::from_secs(10), attacker.driver).await.expect("the connection ends");
        // GOAWAY with ENHANCE_YOUR_CALM, or, still writing resets, a broken pipe after it.
        let error = ended.unwrap().expect_err("the connection ended with an error");
        assert!(
            error.reason() == Some(h2::Reason::ENHANCE_YOUR_CALM) || error.is_io(),
            "{error}"
        );
        // Another client's connection is served all along.
        assert_eq!(normal.call("GET", "/api/v1/namespaces/default", None).await.status, 200);
    });
    // The server said why.
    assert!(
        apiary.wait_for_log("detected excessive load generating behavior", Duration::from_secs(5))
            || apiary.wait_for_log("HTTP/2 client cut off", Duration::from_secs(1))
    );
    // And new connections are served too.
    assert_eq!(curl(&apiary, "--http2", &[], "/api/v1/namespaces/default"), "2 200");
}

#[test]
fn goaway_chance_sends_clients_away_now_and_then_and_loses_no_request() {
    let apiary = Apiary::start_with(&["--storage", "memory", "-v=4", "--goaway-chance=0.02"]);
    let rt = raw_tls::runtime();
    let answered = rt.block_on(async {
        let h2 = h2_client::connect(&apiary).await;
        // One in 50 answers says GOAWAY: after 2,000 a connection still open would have
        // a chance of 3e-18.
        for n in 1..=2000 {
            // A stream opened before the client read the GOAWAY is refused unprocessed
            // (past the GOAWAY's last stream): safe to send again elsewhere.
            let Ok(mut send) = h2.send.clone().ready().await else { return n };
            let Ok((response, _)) = send.send_request(h2.request("GET", "/api/v1/namespaces/default"), true) else { return n };
            match response.await {
                Ok(answer) => {
                    assert_eq!(answer.status(), 200, "request {n} on a connection being sent away");
                    assert!(answer.headers().get("connection").is_none(), "HTTP/2 carries no Connection header");
                    let _ = h2_client::read_all(answer.into_body()).await;
                }
                Err(e) if e.is_go_away() => return n,
                Err(e) => panic!("request {n}: {e}"),
            }
            if h2.driver.is_finished() {
                return n;
            }
        }
        panic!("2,000 answers and no GOAWAY");
    });
    assert!(answered >= 1, "{answered}");
    assert!(apiary.wait_for_log("HTTP/2 GOAWAY", Duration::from_secs(5)));
    // kubectl (over HTTP/2) carries on: each GOAWAY moves it to a new connection.
    for _ in 0..20 {
        ok(&apiary.kubectl("1.33", &["get", "namespace", "default"]));
    }
}

#[test]
fn sigterm_sends_goaway_ends_h2_watches_and_loses_no_request() {
    let mut apiary = Apiary::start_with(&["--storage", "memory", "-v=4", "--shutdown-delay-duration=1s"]);
    // A kubectl watch over HTTP/2.
    let h2_before = apiary.log_count(H2_LINE);
    let mut kubectl = apiary_conformance::harness::kubectl_command("1.33", &apiary.kubeconfig)
        .args(["get", "configmaps", "-w", "--request-timeout=0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl starts");
    assert!(wait_count(&apiary, H2_LINE, h2_before + 1) > h2_before, "kubectl's watch is on HTTP/2");
    let rt = raw_tls::runtime();
    rt.block_on(async {
        let mut h2 = h2_client::connect(&apiary).await;
        // A watch of our own, and a create whose body is half sent when the signal comes.
        let mut send = h2.send.clone().ready().await.unwrap();
        let (watch, _) = send.send_request(h2.request("GET", &format!("{CONFIGMAPS}?watch=1")), true).unwrap();
        let watch = watch.await.expect("watch head");
        let mut create = h2.request("POST", CONFIGMAPS);
        create.headers_mut().insert("content-type", http::HeaderValue::from_static("application/json"));
        let mut send = h2.send.clone().ready().await.unwrap();
        let (created, mut body) = send.send_request(create, false).unwrap();
        let json = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"during-shutdown"}}"#;
        body.send_data(Bytes::from_static(&json[..20]), false).unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;

        apiary.signal("TERM");
        // During the delay requests are still served on the connection.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(h2.call("GET", "/livez", None).await.status, 200);
        // Once requests are no longer taken: GOAWAY; the stream opened before it is served.
        tokio::time::sleep(Duration::from_millis(1200)).await;
        body.send_data(Bytes::from_static(&json[20..]), true).unwrap();
        let created = tokio::time::timeout(Duration::from_secs(10), created).await.expect("answered").expect("an answer");
        assert_eq!(created.status(), 201, "the request accepted before GOAWAY was served");
        // The watch ends cleanly.
        let events = tokio::time::timeout(Duration::from_secs(10), h2_client::read_all(watch.into_body()))
            .await
            .expect("the watch ends");
        assert!(String::from_utf8_lossy(&events).contains("during-shutdown"));
        // And the connection is over: no new stream is taken.
        let refused = match h2.send.clone().ready().await {
            Ok(mut send) => match send.send_request(h2.request("GET", "/livez"), true) {
                Ok((response, _)) => response.await.is_err(),
                Err(_) => true,
            },
            Err(_) => true,
        };
        assert!(refused, "a stream opened after GOAWAY was taken");
    });
    assert!(apiary.wait_for_log("HTTP/2 GOAWAY: no new requests are taken", Duration::from_secs(5)));
    // kubectl sees its watch end and exits.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = kubectl.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = kubectl.kill();
            panic!("kubectl's watch did not end");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = kubectl.wait_with_output().unwrap();
    assert!(status.success(), "kubectl: {}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("during-shutdown"));
    assert_eq!(apiary.wait_exit(Duration::from_secs(20)).map(|s| s.code()), Some(Some(0)));
}

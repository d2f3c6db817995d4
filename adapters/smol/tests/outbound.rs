//! The outbound client against real TLS servers on loopback: a backend that demands a
//! client certificate from its CA and serves `webhook.test`, answering with the core's
//! own HTTP/1.1 server codec.

use apiary_core::effect::{CallError, ClientTls, Outbound, Replayable};
use apiary_core::http1::{Connection, Event};
use apiary_smol::outbound::Client;
use bytes::Bytes;
use futures_rustls::pki_types::pem::PemObject;
use futures_rustls::pki_types::{CertificateDer, PrivateKeyDer};
use futures_rustls::rustls::crypto::ring;
use futures_rustls::rustls::server::WebPkiClientVerifier;
use futures_rustls::rustls::{RootCertStore, ServerConfig};
use futures_rustls::TlsAcceptor;
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use smol::io::{AsyncReadExt as _, AsyncWriteExt as _};
use smol::net::{TcpListener, TcpStream};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The certificates: the backend's CA and its serving and client certificates, and a
/// CA that signed none of them.
struct Pki {
    ca_pem: String,
    serving_cert_pem: String,
    serving_key_pem: String,
    client_cert_pem: String,
    client_key_pem: String,
    other_ca_pem: String,
}

fn ca(name: &str) -> (rcgen::Certificate, KeyPair) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(rcgen::DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().unwrap();
    (params.self_signed(&key).unwrap(), key)
}

fn pki() -> &'static Pki {
    static PKI: OnceLock<Pki> = OnceLock::new();
    PKI.get_or_init(|| {
        let (ca_cert, ca_key) = ca("backend-ca");
        let leaf = |names: Vec<String>, cn: &str| {
            let mut params = CertificateParams::new(names).unwrap();
            params.distinguished_name.push(rcgen::DnType::CommonName, cn);
            let key = KeyPair::generate().unwrap();
            let cert = params.signed_by(&key, &ca_cert, &ca_key).unwrap();
            (cert.pem(), key.serialize_pem())
        };
        // Named only `webhook.test`: reaching it at 127.0.0.1 needs the name override.
        let (serving_cert_pem, serving_key_pem) = leaf(vec!["webhook.test".into()], "webhook");
        let (client_cert_pem, client_key_pem) = leaf(vec![], "kube-apiserver");
        Pki {
            ca_pem: ca_cert.pem(),
            serving_cert_pem,
            serving_key_pem,
            client_cert_pem,
            client_key_pem,
            other_ca_pem: ca("someone-else").0.pem(),
        }
    })
}

/// How the backend treats the requests on each connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Behaviour {
    /// Answer every request with what it saw.
    Echo,
    /// Answer the first request; close the connection on the second, unanswered.
    CloseOnSecond,
    /// Answer, then close the connection (without saying so).
    AnswerThenClose,
    /// Take the request and never answer.
    Silent,
    /// Announce a body of 17 MiB.
    Huge,
}

/// A TLS backend on loopback; stopped (its tasks cancelled) when dropped.
struct Backend {
    addr: SocketAddr,
    accepts: Arc<AtomicUsize>,
    _tasks: Arc<Mutex<Vec<smol::Task<()>>>>,
}

impl Backend {
    fn start(behaviour: Behaviour) -> Backend {
        let pki = pki();
        let provider = Arc::new(ring::default_provider());
        let mut roots = RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(pki.ca_pem.as_bytes()).unwrap())
            .unwrap();
        // A client certificate from the CA is required.
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .unwrap();
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_client_cert_verifier(verifier)
            .with_single_cert(
                vec![CertificateDer::from_pem_slice(pki.serving_cert_pem.as_bytes()).unwrap()],
                PrivateKeyDer::from_pem_slice(pki.serving_key_pem.as_bytes()).unwrap(),
            )
            .unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener =
            TcpListener::try_from(std::net::TcpListener::bind("127.0.0.1:0").unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let accepts = Arc::new(AtomicUsize::new(0));
        let tasks = Arc::new(Mutex::new(Vec::new()));
        let accept_loop = {
            let accepts = accepts.clone();
            let tasks = Arc::downgrade(&tasks);
            async move {
                while let Ok((tcp, _)) = listener.accept().await {
                    accepts.fetch_add(1, Ordering::SeqCst);
                    let Some(tasks) = tasks.upgrade() else { return };
                    let acceptor = acceptor.clone();
                    let task = smol::spawn(serve(acceptor, tcp, behaviour));
                    tasks.lock().unwrap().push(task);
                }
            }
        };
        tasks.lock().unwrap().push(smol::spawn(accept_loop));
        Backend {
            addr,
            accepts,
            _tasks: tasks,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    fn accepts(&self) -> usize {
        self.accepts.load(Ordering::SeqCst)
    }
}

/// One connection of the backend.
async fn serve(acceptor: TlsAcceptor, tcp: TcpStream, behaviour: Behaviour) {
    let Ok(mut stream) = acceptor.accept(tcp).await else {
        return;
    };
    let mut codec = Connection::default();
    let mut buf = vec![0u8; 16 * 1024];
    let mut requests = 0;
    loop {
        match codec.poll() {
            Event::Request(request) => {
                requests += 1;
                let bytes = match behaviour {
                    Behaviour::Silent => return smol::future::pending().await,
                    Behaviour::CloseOnSecond if requests > 1 => return,
                    Behaviour::Huge => {
                        Bytes::from_static(b"HTTP/1.1 200 OK\r\nContent-Length: 17825792\r\n\r\n")
                    }
                    Behaviour::Echo | Behaviour::CloseOnSecond | Behaviour::AnswerThenClose => {
                        let seen = format!(
                            "{} {} host={} {}",
                            request.method(),
                            request.uri(),
                            request.headers()["host"].to_str().unwrap(),
                            String::from_utf8_lossy(request.body())
                        );
                        let response = http::Response::builder()
                            .status(200)
                            .header("content-type", "text/plain")
                            .body(Bytes::from(seen))
                            .unwrap();
                        codec.encode_response(&response)
                    }
                };
                if stream.write_all(&bytes).await.is_err() || stream.flush().await.is_err() {
                    return;
                }
                if behaviour == Behaviour::AnswerThenClose {
                    return;
                }
            }
            Event::NeedMore => match stream.read(&mut buf).await {
                Ok(0) | Err(_) => codec.feed_eof(),
                Ok(n) => codec.feed(&buf[..n], Duration::ZERO),
            },
            _ => return,
        }
    }
}

/// The TLS side a webhook's kubeconfig would give for the backend.
fn trusted() -> ClientTls {
    let pki = pki();
    ClientTls {
        ca_pem: pki.ca_pem.clone().into_bytes(),
        client_cert_pem: pki.client_cert_pem.clone().into_bytes(),
        client_key_pem: pki.client_key_pem.clone().into_bytes(),
        server_name: Some("webhook.test".into()),
        insecure_skip_verify: false,
    }
}

fn request(method: &str, url: &str, body: &str) -> http::Request<Bytes> {
    http::Request::builder()
        .method(method)
        .uri(url)
        .header("content-type", "application/json")
        .body(Bytes::from(body.to_owned()))
        .unwrap()
}

fn call(client: &Client, request: http::Request<Bytes>, tls: &Arc<ClientTls>) -> Result<String, CallError> {
    call_within(client, request, tls, Duration::from_secs(10))
}

fn call_within(
    client: &Client,
    request: http::Request<Bytes>,
    tls: &Arc<ClientTls>,
    timeout: Duration,
) -> Result<String, CallError> {
    let outbound = Outbound {
        request,
        timeout,
        tls: Some(tls.clone()),
    };
    let response = smol::block_on(client.call(outbound))?;
    assert_eq!(response.status(), 200);
    Ok(String::from_utf8(response.body().to_vec()).unwrap())
}

#[track_caller]
fn unreachable(outcome: Result<String, CallError>) -> String {
    match outcome {
        Err(CallError::Unreachable(why)) => why,
        other => panic!("expected Unreachable, got {other:?}"),
    }
}

#[test]
fn a_call_with_the_right_ca_and_client_certificate_is_answered_over_one_connection() {
    let backend = Backend::start(Behaviour::Echo);
    let client = Client::new();
    let tls = Arc::new(trusted());
    let review = r#"{"kind":"TokenReview","spec":{"token":"abc"}}"#;
    let answer = call(&client, request("POST", &backend.url("/authenticate?timeout=30s"), review), &tls).unwrap();
    assert_eq!(
        answer,
        format!("POST /authenticate?timeout=30s host={} {review}", backend.addr)
    );
    // The connection is kept: the next calls (the same ClientTls, or an equal one built
    // anew) ride on it.
    let again = call(&client, request("GET", &backend.url("/healthz"), ""), &tls).unwrap();
    assert!(again.starts_with("GET /healthz "), "{again}");
    let equal = Arc::new(trusted());
    call(&client, request("GET", &backend.url("/healthz"), ""), &equal).unwrap();
    assert_eq!(backend.accepts(), 1, "one connection for three calls");
}

#[test]
fn the_server_is_verified_against_the_given_ca_and_name() {
    let backend = Backend::start(Behaviour::Echo);
    let client = Client::new();
    let wrong_ca = Arc::new(ClientTls {
        ca_pem: pki().other_ca_pem.clone().into_bytes(),
        ..trusted()
    });
    let why = unreachable(call(&client, request("GET", &backend.url("/"), ""), &wrong_ca));
    assert!(why.starts_with("TLS handshake with 127.0.0.1:"), "{why}");
    assert!(why.contains("UnknownIssuer"), "{why}");
    // Without the name override the certificate does not cover 127.0.0.1.
    let no_name = Arc::new(ClientTls {
        server_name: None,
        ..trusted()
    });
    let why = unreachable(call(&client, request("GET", &backend.url("/"), ""), &no_name));
    assert!(why.contains("certificate not valid for name \"127.0.0.1\""), "{why}");
    // Without a client certificate the backend refuses the connection.
    let anonymous = Arc::new(ClientTls {
        client_cert_pem: Vec::new(),
        client_key_pem: Vec::new(),
        ..trusted()
    });
    let why = unreachable(call(&client, request("GET", &backend.url("/"), ""), &anonymous));
    assert!(why.contains("CertificateRequired"), "{why}");
    // Bad PEM is said so before any connection.
    let before = backend.accepts();
    let bad = Arc::new(ClientTls {
        ca_pem: b"not a certificate".to_vec(),
        ..trusted()
    });
    let why = unreachable(call(&client, request("GET", &backend.url("/"), ""), &bad));
    assert!(why.starts_with("CA certificates:"), "{why}");
    assert_eq!(backend.accepts(), before);
}

#[test]
fn insecure_skip_verify_trusts_any_server() {
    let backend = Backend::start(Behaviour::Echo);
    let client = Client::new();
    let insecure = Arc::new(ClientTls {
        ca_pem: Vec::new(),
        server_name: None,
        insecure_skip_verify: true,
        ..trusted()
    });
    let answer = call(&client, request("GET", &backend.url("/apis"), ""), &insecure).unwrap();
    assert!(answer.starts_with("GET /apis "), "{answer}");
}

#[test]
fn a_server_that_never_answers_times_out() {
    let backend = Backend::start(Behaviour::Silent);
    let client = Client::new();
    let started = Instant::now();
    let outcome = call_within(
        &client,
        request("POST", &backend.url("/authorize"), "{}"),
        &Arc::new(trusted()),
        Duration::from_millis(300),
    );
    let took = started.elapsed();
    assert_eq!(outcome, Err(CallError::TimedOut));
    assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(3), "{took:?}");
}

#[test]
fn a_broken_kept_alive_connection_is_retried_only_when_that_is_safe() {
    let backend = Backend::start(Behaviour::CloseOnSecond);
    let client = Client::new();
    let tls = Arc::new(trusted());
    let url = backend.url("/apis/authorization.k8s.io/v1/subjectaccessreviews");
    call(&client, request("GET", &url, ""), &tls).unwrap();
    // The kept connection is closed on the next request: a GET is sent again.
    call(&client, request("GET", &url, ""), &tls).unwrap();
    assert_eq!(backend.accepts(), 2);
    // A plain POST might have been acted on: its caller hears of the failure.
    let why = unreachable(call(&client, request("POST", &url, "{}"), &tls));
    assert_eq!(why, "the server closed the connection without answering");
    // A POST marked replayable (a review) is sent again on a fresh connection.
    let replayable = || {
        let mut review = request("POST", &url, r#"{"kind":"SubjectAccessReview"}"#);
        review.extensions_mut().insert(Replayable);
        review
    };
    call(&client, replayable(), &tls).unwrap();
    assert_eq!(backend.accepts(), 3);
    let answer = call(&client, replayable(), &tls).unwrap();
    assert!(answer.ends_with(r#"{"kind":"SubjectAccessReview"}"#), "{answer}");
    assert_eq!(backend.accepts(), 4);
}

#[test]
fn a_connection_the_server_closed_while_idle_is_not_used() {
    let backend = Backend::start(Behaviour::AnswerThenClose);
    let client = Client::new();
    let tls = Arc::new(trusted());
    call(&client, request("POST", &backend.url("/a"), "{}"), &tls).unwrap();
    // The server's close has arrived by now: the pooled connection is seen to be
    // closed before anything is sent on it, so even a plain POST goes through.
    std::thread::sleep(Duration::from_millis(100));
    call(&client, request("POST", &backend.url("/b"), "{}"), &tls).unwrap();
    assert_eq!(backend.accepts(), 2);
}

#[test]
fn an_oversized_answer_is_refused() {
    let backend = Backend::start(Behaviour::Huge);
    let why = unreachable(call(&Client::new(), request("GET", &backend.url("/"), ""), &Arc::new(trusted())));
    assert_eq!(why, "the server's response body exceeded 16777216 bytes");
}

#[test]
fn a_closed_port_and_a_foreign_scheme_are_unreachable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let client = Client::new();
    let tls = Arc::new(trusted());
    let why = unreachable(call(&client, request("GET", &format!("https://127.0.0.1:{port}/"), ""), &tls));
    assert!(why.starts_with(&format!("dial tcp 127.0.0.1:{port}: ")), "{why}");
    let why = unreachable(call(&client, request("GET", "ftp://127.0.0.1/x", ""), &tls));
    assert_eq!(why, r#"unsupported protocol scheme "ftp""#);
}

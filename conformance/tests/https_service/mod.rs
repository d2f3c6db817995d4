//! An HTTPS service on a loopback port for tests of the server's outbound calls
//! (webhooks, extension API servers): a CA of its own, one JSON answer per request,
//! HTTP/1.1 keep-alive; [`Stoppable`] can be stopped and started again at its address.

// Each test uses some of these.
#![allow(dead_code)]

use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;

/// Serve `answer` (path, JSON body → JSON answer) over HTTPS on a loopback port, with a
/// certificate for `names` from a CA of its own: the address, the CA's PEM, and how
/// many requests it answered. The service lives as long as the test process.
pub fn serve(names: &[&str], answer: fn(&str, &Value) -> Value) -> (String, String, Arc<AtomicUsize>) {
    let service = Stoppable::serve(names, answer);
    let found = (service.addr.clone(), service.ca_pem.clone(), service.answered.clone());
    // Never stopped: it serves until the test process ends.
    std::mem::forget(service);
    found
}

/// An HTTPS service that can stop (its listener and connections closed) and start
/// again at the same address with the same certificate; stopped when dropped.
pub struct Stoppable {
    pub addr: String,
    pub ca_pem: String,
    /// How many requests it answered, over every start.
    pub answered: Arc<AtomicUsize>,
    acceptor: tokio_rustls::TlsAcceptor,
    answer: fn(&str, &Value) -> Value,
    running: Option<(tokio::sync::oneshot::Sender<()>, std::thread::JoinHandle<()>)>,
}

impl Stoppable {
    /// Serve `answer` with a certificate for `names`, started.
    pub fn serve(names: &[&str], answer: fn(&str, &Value) -> Value) -> Stoppable {
        let (acceptor, ca_pem) = identity(names);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let answered = Arc::new(AtomicUsize::new(0));
        let mut service = Stoppable { addr, ca_pem, answered, acceptor, answer, running: None };
        service.start_on(listener);
        service
    }

    fn start_on(&mut self, listener: std::net::TcpListener) {
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let (acceptor, answer, count) = (self.acceptor.clone(), self.answer, self.answered.clone());
        let thread = std::thread::spawn(move || run(listener, acceptor, answer, count, stopped));
        self.running = Some((stop, thread));
    }

    /// Start again at the same address.
    pub fn start(&mut self) {
        assert!(self.running.is_none(), "already running");
        self.start_on(std::net::TcpListener::bind(&self.addr).unwrap());
    }

    /// Close the listener and every connection.
    pub fn stop(&mut self) {
        if let Some((stop, thread)) = self.running.take() {
            let _ = stop.send(());
            thread.join().unwrap();
        }
    }
}

impl Drop for Stoppable {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A certificate for `names` from a CA of its own: the acceptor and the CA's PEM.
fn identity(names: &[&str]) -> (tokio_rustls::TlsAcceptor, String) {
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, "webhook-ca");
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let params = rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    let config = ServerConfig::builder_with_provider(Arc::new(tokio_rustls::rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from_pem_slice(cert.pem().as_bytes()).unwrap()],
            PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap(),
        )
        .unwrap();
    (tokio_rustls::TlsAcceptor::from(Arc::new(config)), ca.pem())
}

/// Answer on `listener` until `stopped` fires; the runtime, its connections with it,
/// goes then.
fn run(
    listener: std::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    answer: fn(&str, &Value) -> Value,
    count: Arc<AtomicUsize>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    listener.set_nonblocking(true).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let accepted = tokio::select! {
                    accepted = listener.accept() => accepted,
                    _ = &mut stopped => return,
                };
                let Ok((tcp, _)) = accepted else { continue };
                let (acceptor, count) = (acceptor.clone(), count.clone());
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                    let mut buf = Vec::new();
                    loop {
                        // One request: the head, then Content-Length bytes of body.
                        let head_end = loop {
                            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                                break i + 4;
                            }
                            let mut chunk = [0u8; 8192];
                            match tls.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        };
                        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                        let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                        let length: usize = head
                            .lines()
                            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
                            .unwrap_or(0);
                        while buf.len() < head_end + length {
                            let mut chunk = [0u8; 8192];
                            match tls.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        }
                        let review: Value = serde_json::from_slice(&buf[head_end..head_end + length]).unwrap_or(Value::Null);
                        buf.drain(..head_end + length);
                        count.fetch_add(1, Ordering::SeqCst);
                        let body = answer(&path, &review).to_string();
                        let response = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if tls.write_all(response.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
    });
}


//! An HTTP/2 client (the h2 crate on tokio, over tokio-rustls) as the admin user: for
//! tests that need control no client library gives — many streams on one connection, a
//! stream that is not read, streams reset as soon as they are opened.

#![allow(dead_code)]

use crate::raw_tls;
use apiary_conformance::harness::Apiary;
use bytes::Bytes;
use h2::client::SendRequest;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::TlsConnector;

/// A client connection, and the task that drives it (its outcome: how it ended).
pub struct Connection {
    pub send: SendRequest<Bytes>,
    pub driver: tokio::task::JoinHandle<Result<(), h2::Error>>,
    authority: String,
}

/// Open a TLS connection offering only `h2`, check the server chose it, and hand it
/// to h2 with `builder`'s settings.
pub async fn connect_with(apiary: &Apiary, builder: &h2::client::Builder) -> Connection {
    let mut config = (*raw_tls::tls_config(apiary)).clone();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let authority = raw_tls::address(apiary);
    let tcp = TcpStream::connect(&authority).await.expect("connect");
    let tls = TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
        .expect("TLS handshake");
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]), "the server chose HTTP/2");
    let (send, connection) = builder.handshake(tls).await.expect("HTTP/2 handshake");
    let driver = tokio::spawn(connection);
    Connection { send, driver, authority }
}

/// Open a connection with h2's default client settings.
pub async fn connect(apiary: &Apiary) -> Connection {
    connect_with(apiary, &h2::client::Builder::new()).await
}

impl Connection {
    /// A request to `path` on this server.
    pub fn request(&self, method: &str, path: &str) -> http::Request<()> {
        http::Request::builder()
            .method(method)
            .uri(format!("https://{}{path}", self.authority))
            .body(())
            .unwrap()
    }

    /// Send a request with `body` and read the whole answer.
    pub async fn call(&mut self, method: &str, path: &str, body: Option<&[u8]>) -> Answer {
        let mut request = self.request(method, path);
        if body.is_some() {
            request
                .headers_mut()
                .insert("content-type", http::HeaderValue::from_static("application/json"));
        }
        let mut send = self.send.clone().ready().await.expect("connection ready");
        let (response, mut stream) = send.send_request(request, body.is_none()).expect("request sent");
        if let Some(body) = body {
            stream.send_data(Bytes::copy_from_slice(body), true).expect("body sent");
        }
        let response = response.await.expect("an answer");
        let (parts, recv) = response.into_parts();
        Answer { status: parts.status, headers: parts.headers, body: read_all(recv).await }
    }
}

/// A whole answer.
#[derive(Debug)]
pub struct Answer {
    pub status: http::StatusCode,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
}

/// Read a body to its end, giving its flow-control window back as it is read.
pub async fn read_all(mut body: h2::RecvStream) -> Bytes {
    let mut all = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.expect("body data");
        let _ = body.flow_control().release_capacity(chunk.len());
        all.extend_from_slice(&chunk);
    }
    Bytes::from(all)
}

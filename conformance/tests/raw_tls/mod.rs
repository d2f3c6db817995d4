//! HTTP/1.1 over TLS by hand, as the admin user: for tests that need control no client
//! library gives, such as sending half a request body and the rest later, or seeing a
//! watch's chunked stream end.

#![allow(dead_code)]

use apiary_conformance::harness::Apiary;
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_rustls::TlsConnector;

/// One TLS connection to apiary, and the bytes read from it but not yet consumed.
pub struct Raw {
    stream: TlsStream<TcpStream>,
    buf: Vec<u8>,
}

/// A response read off the wire.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&self.body));
        })
    }
}

/// The admin's client configuration: apiary's CA, the admin certificate.
pub fn tls_config(apiary: &Apiary) -> Arc<ClientConfig> {
    tls_config_presenting(apiary, "admin")
}

/// Apiary's CA, and the client certificate `<stem>.crt` (key `<stem>.key`) of its
/// cert dir.
pub fn tls_config_presenting(apiary: &Apiary, stem: &str) -> Arc<ClientConfig> {
    let pki = apiary.data_dir.join("pki");
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(pki.join("ca.crt")).expect("ca.crt") {
        roots.add(cert.expect("CA certificate")).expect("CA added");
    }
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(pki.join(format!("{stem}.crt")))
        .expect("the client certificate")
        .map(|c| c.expect("a client certificate"))
        .collect();
    let key = PrivateKeyDer::from_pem_file(pki.join(format!("{stem}.key"))).expect("the client key");
    let config = ClientConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_client_auth_cert(chain, key)
    .expect("client certificate");
    Arc::new(config)
}

/// The `host:port` of apiary's URL.
pub fn address(apiary: &Apiary) -> String {
    apiary.url.trim_start_matches("https://").to_owned()
}

/// Open a connection (TCP, then the TLS handshake).
pub async fn connect(apiary: &Apiary) -> io::Result<Raw> {
    connect_with(apiary, tls_config(apiary)).await
}

/// Open a connection with a TLS client configuration of the test's own.
pub async fn connect_with(apiary: &Apiary, config: Arc<ClientConfig>) -> io::Result<Raw> {
    let tcp = TcpStream::connect(address(apiary)).await?;
    let name = ServerName::try_from("127.0.0.1").expect("an IP is a server name");
    let stream = TlsConnector::from(config).connect(name, tcp).await?;
    Ok(Raw {
        stream,
        buf: Vec::new(),
    })
}

/// The path of the default namespace's ConfigMaps.
pub const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// A ConfigMap body named `name` with `data`.
pub fn configmap(name: &str, data: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": data,
    }))
    .expect("JSON")
}

/// A one-thread tokio runtime for a test's client side.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// A request's bytes: `Content-Length` from `body`, JSON content type when there is one.
pub fn request_bytes(method: &str, path: &str, body: Option<&[u8]>) -> Vec<u8> {
    let mut out = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n");
    if let Some(body) = body {
        out.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body.unwrap_or_default());
    bytes
}

impl Raw {
    /// The serving certificate the server presented (DER), as this connection saw it.
    pub fn server_certificate(&self) -> Option<Vec<u8>> {
        let certs = self.stream.get_ref().1.peer_certificates()?;
        certs.first().map(|c| c.as_ref().to_vec())
    }

    /// The cipher suite the handshake settled on.
    pub fn cipher_suite(&self) -> Option<tokio_rustls::rustls::CipherSuite> {
        let suite = self.stream.get_ref().1.negotiated_cipher_suite()?;
        Some(suite.suite())
    }

    pub async fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes).await?;
        self.stream.flush().await
    }

    /// Send a whole request and read its whole response.
    pub async fn call(&mut self, method: &str, path: &str, body: Option<&[u8]>) -> io::Result<Response> {
        self.send(&request_bytes(method, path, body)).await?;
        self.read_response().await
    }

    /// Read more bytes; `Ok(0)` at the end of the stream (a peer that closes without
    /// close_notify counts as ended too).
    async fn fill(&mut self) -> io::Result<usize> {
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk).await {
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
            Err(e) => Err(e),
        }
    }

    async fn line(&mut self) -> io::Result<String> {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.buf[..end]).into_owned();
                self.buf.drain(..end + 2);
                return Ok(line);
            }
            if self.fill().await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }

    async fn exactly(&mut self, n: usize) -> io::Result<Vec<u8>> {
        while self.buf.len() < n {
            if self.fill().await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(self.buf.drain(..n).collect())
    }

    /// Read a status line and headers.
    pub async fn read_head(&mut self) -> io::Result<(u16, Vec<(String, String)>)> {
        let status_line = self.line().await?;
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::other(format!("bad status line {status_line:?}")))?;
        let mut headers = Vec::new();
        loop {
            let line = self.line().await?;
            if line.is_empty() {
                return Ok((status, headers));
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
    }

    /// Read a whole response with a `Content-Length` body (or a chunked one, in full).
    pub async fn read_response(&mut self) -> io::Result<Response> {
        let (status, headers) = self.read_head().await?;
        let mut response = Response {
            status,
            headers,
            body: Vec::new(),
        };
        if response.header("transfer-encoding") == Some("chunked") {
            while let Some(chunk) = self.read_chunk().await? {
                response.body.extend_from_slice(&chunk);
            }
        } else {
            let length = response
                .header("content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            response.body = self.exactly(length).await?;
        }
        Ok(response)
    }

    /// Read one chunk of a chunked body; `None` for the terminating zero-size chunk.
    pub async fn read_chunk(&mut self) -> io::Result<Option<Vec<u8>>> {
        let size_line = self.line().await?;
        let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| io::Error::other(format!("bad chunk size {size_line:?}")))?;
        let data = self.exactly(size).await?;
        let crlf = self.exactly(2).await?;
        if crlf != b"\r\n" {
            return Err(io::Error::other("chunk not followed by CRLF"));
        }
        if size == 0 {
            return Ok(None);
        }
        Ok(Some(data))
    }

    /// Whether the server has closed the connection (read until the end, expecting no
    /// more bytes).
    pub async fn closed_without_answer(&mut self) -> bool {
        loop {
            match self.fill().await {
                Ok(0) | Err(_) => return self.buf.is_empty(),
                Ok(_) => {}
            }
        }
    }
}

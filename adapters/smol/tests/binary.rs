//! The real `apiary` binary: flags, first start (certificates, kubeconfig), TLS with the
//! admin certificate, a restart over the same data dir, and SIGTERM.

use futures_rustls::pki_types::pem::PemObject;
use futures_rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use futures_rustls::rustls::{self, ClientConfig, RootCertStore};
use futures_rustls::TlsConnector;
use smol::io::{AsyncReadExt as _, AsyncWriteExt as _};
use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const APIARY: &str = env!("CARGO_BIN_EXE_apiary");

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "apiary-test-{name}-{}-{}",
        std::process::id(),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> Output {
    Command::new(APIARY)
        .args(args)
        .output()
        .expect("run apiary")
}

/// A running apiary, killed when dropped.
struct Running {
    child: Child,
    addr: SocketAddr,
    kubeconfig: PathBuf,
    log: Arc<Mutex<String>>,
}

impl Running {
    fn start(data_dir: &Path) -> Running {
        let mut child = Command::new(APIARY)
            .args(["--secure-port", "0", "--data-dir"])
            .arg(data_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start apiary");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (ready_tx, ready_rx) = mpsc::channel();
        {
            let log = log.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    if let Some(rest) = line.split("apiary ready at https://").nth(1) {
                        let _ = ready_tx.send(rest.to_owned());
                    }
                    log.lock().unwrap().push_str(&line);
                    log.lock().unwrap().push('\n');
                }
            });
        }
        let rest = match ready_rx.recv_timeout(Duration::from_secs(60)) {
            Ok(rest) => rest,
            Err(_) => {
                let _ = child.kill();
                panic!("apiary never became ready; log:\n{}", log.lock().unwrap());
            }
        };
        // "127.0.0.1:PORT (kubeconfig: /abs/admin.kubeconfig)"
        let (addr, rest) = rest.split_once(' ').expect("address then kubeconfig");
        let kubeconfig = rest
            .strip_prefix("(kubeconfig: ")
            .and_then(|r| r.strip_suffix(')'))
            .expect("kubeconfig path in the ready line");
        Running {
            child,
            addr: addr.parse().expect("host:port"),
            kubeconfig: PathBuf::from(kubeconfig),
            log,
        }
    }

    fn terminate(mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "apiary ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client_config(pki: &Path, with_admin_cert: bool) -> Arc<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(pki.join("ca.crt")).unwrap())
        .unwrap();
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let mut config = if with_admin_cert {
        let certs = CertificateDer::pem_file_iter(pki.join("admin.crt"))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_file(pki.join("admin.key")).unwrap();
        builder.with_client_auth_cert(certs, key).unwrap()
    } else {
        builder.with_no_client_auth()
    };
    // It speaks HTTP/1.1 only; the server would choose h2 if offered.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// Send raw HTTP/1.1 over TLS and read until the server closes.
fn try_exchange(
    addr: SocketAddr,
    config: Arc<ClientConfig>,
    request: &str,
) -> std::io::Result<String> {
    smol::block_on(async {
        let tcp = smol::net::TcpStream::connect(addr).await?;
        let name = ServerName::IpAddress(addr.ip().into());
        let mut tls = TlsConnector::from(config).connect(name, tcp).await?;
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
        tls.write_all(request.as_bytes()).await?;
        tls.flush().await?;
        let mut response = Vec::new();
        let read = smol::future::or(
            async { Some(tls.read_to_end(&mut response).await) },
            async {
                smol::Timer::after(Duration::from_secs(30)).await;
                None
            },
        )
        .await;
        match read {
            Some(Ok(_)) => {}
            // A server that closes without close_notify still answered.
            Some(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {}
            Some(Err(e)) => return Err(e),
            None => panic!(
                "no response within 30s; got so far: {:?}",
                String::from_utf8_lossy(&response)
            ),
        }
        Ok(String::from_utf8_lossy(&response).into_owned())
    })
}

fn exchange(addr: SocketAddr, config: Arc<ClientConfig>, request: &str) -> String {
    try_exchange(addr, config, request).expect("TLS exchange")
}

/// A client certificate from a CA apiary does not know.
fn foreign_client_config(pki: &Path) -> Arc<ClientConfig> {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "apiary-admin");
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();

    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(pki.join("ca.crt")).unwrap())
        .unwrap();
    let mut config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_client_auth_cert(
                vec![cert.der().clone()],
                PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
            )
            .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

#[test]
fn serves_tls_with_the_admin_certificate_and_restarts_on_the_same_data_dir() {
    let data_dir = tempdir("serve");
    let pki = data_dir.join("pki");

    let first = Running::start(&data_dir);
    assert_eq!(first.addr.ip().to_string(), "127.0.0.1");
    assert_ne!(first.addr.port(), 0, "the ready line shows the real port");
    assert_eq!(first.kubeconfig, data_dir.join("admin.kubeconfig"));
    for file in [
        "ca.crt",
        "ca.key",
        "apiserver.crt",
        "apiserver.key",
        "admin.crt",
        "admin.key",
    ] {
        assert!(pki.join(file).is_file(), "{file} missing");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for file in ["ca.key", "apiserver.key", "admin.key"] {
            let mode = std::fs::metadata(pki.join(file))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{file} mode");
        }
    }
    let kubeconfig = std::fs::read_to_string(&first.kubeconfig).unwrap();
    assert!(
        kubeconfig.contains(&format!("server: \"https://{}\"", first.addr)),
        "{kubeconfig}"
    );
    assert!(kubeconfig.contains("current-context: apiary"));

    // With the admin certificate.
    let response = exchange(
        first.addr,
        client_config(&pki, true),
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert!(
        response.starts_with("HTTP/1.1 "),
        "not an HTTP response: {response:?}\nlog:\n{}",
        first.log.lock().unwrap()
    );
    assert!(
        response.to_ascii_lowercase().contains("\r\ndate: "),
        "{response:?}"
    );

    // Bootstrap ran before the ready line: the server is ready and the default
    // namespaces exist.
    let response = exchange(
        first.addr,
        client_config(&pki, true),
        "GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 200 "), "{response:?}");

    // The verified admin certificate reaches the core, which authenticates it.
    let response = exchange(
        first.addr,
        client_config(&pki, true),
        "GET /api/v1/namespaces/kube-system HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 200 "), "{response:?}");
    let response = exchange(
        first.addr,
        client_config(&pki, false),
        "GET /api/v1/namespaces/kube-system HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    // Without a certificate the client is system:anonymous, whom RBAC refuses.
    assert!(response.starts_with("HTTP/1.1 403 "), "{response:?}");

    // Two pipelined requests are answered in order on one connection.
    let response = exchange(
        first.addr,
        client_config(&pki, true),
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n\
         GET /version HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(response.matches("HTTP/1.1 ").count(), 2, "{response:?}");

    // Client certificates are optional: anyone may ask for /healthz.
    let response = exchange(
        first.addr,
        client_config(&pki, false),
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 "), "{response:?}");

    // A client certificate apiary's CA did not sign is refused as upstream refuses it:
    // the handshake completes and every request gets 401, even /healthz.
    let refused = try_exchange(
        first.addr,
        foreign_client_config(&pki),
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert!(
        matches!(&refused, Ok(r) if r.starts_with("HTTP/1.1 401 ")),
        "a foreign client certificate was not refused: {refused:?}"
    );

    let ca = std::fs::read(pki.join("ca.crt")).unwrap();
    let status = first.terminate();
    assert_eq!(status.code(), Some(0), "SIGTERM exits 0");

    // A second start reuses the CA and rewrites the kubeconfig with its own port.
    let second = Running::start(&data_dir);
    assert_eq!(std::fs::read(pki.join("ca.crt")).unwrap(), ca);
    let kubeconfig = std::fs::read_to_string(&second.kubeconfig).unwrap();
    assert!(kubeconfig.contains(&format!("server: \"https://{}\"", second.addr)));
    let response = exchange(
        second.addr,
        client_config(&pki, true),
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 "), "{response:?}");
    drop(second);
    let _ = std::fs::remove_dir_all(&data_dir);
}

#[test]
fn bad_flags_are_all_reported_and_nothing_starts() {
    let data_dir = tempdir("badflags").join("never");
    let output = run(&[
        "--secure-port=x",
        "--bogus",
        "--storage",
        "etcd9",
        "--bind-address=nowhere",
        "--data-dir",
        data_dir.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for expected in [
        "unknown flag: --bogus",
        "invalid value \"x\" for --secure-port: must be a port number",
        "invalid value \"etcd9\" for --storage: must be one of: sqlite, memory, etcd",
        "invalid value \"nowhere\" for --bind-address: must be an IP address",
    ] {
        assert!(
            stderr.contains(expected),
            "{expected:?} missing from:\n{stderr}"
        );
    }
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("error: ")).count(),
        4,
        "{stderr}"
    );
    assert!(
        !data_dir.exists(),
        "nothing is written when the flags are bad"
    );
    let _ = std::fs::remove_dir_all(data_dir.parent().unwrap());
}

#[test]
fn help_lists_the_sections_and_version_prints_the_version() {
    let output = run(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for section in [
        "Secure serving flags:",
        "Storage flags:",
        "Limits flags:",
        "Generic flags:",
        "Global flags:",
    ] {
        assert!(
            stdout.contains(section),
            "{section} missing from:\n{stdout}"
        );
    }
    for flag in [
        "--bind-address",
        "--secure-port",
        "--cert-dir",
        "--storage",
        "--data-dir",
        "--etcd-prefix",
        "--max-request-body-bytes",
        "--advertise-address",
    ] {
        assert!(stdout.contains(flag), "{flag} missing from:\n{stdout}");
    }

    let output = run(&["--version"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Kubernetes v1.33.0\n"
    );
}

#[test]
fn a_port_in_use_fails_with_exit_1() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let data_dir = tempdir("inuse");
    let output = run(&[
        "--secure-port",
        &port,
        "--data-dir",
        data_dir.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("failed to listen on 127.0.0.1:"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&data_dir);
}

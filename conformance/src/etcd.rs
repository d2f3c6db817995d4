//! A real etcd for a test: Debian's `etcd-server` binary on free loopback ports, with a
//! data directory of its own, stopped when the test ends.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Files for an etcd that serves TLS and requires client certificates.
#[derive(Clone, Debug)]
pub struct EtcdTls {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// A running single-member etcd; killed (and its data removed) when dropped.
pub struct Etcd {
    child: Option<Child>,
    client_port: u16,
    peer_port: u16,
    /// Plain-HTTP /health, whatever the client URLs serve.
    metrics_port: u16,
    tls: Option<EtcdTls>,
    data_dir: PathBuf,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

impl Etcd {
    /// Start etcd and wait until it reports itself healthy.
    pub fn start() -> Etcd {
        Self::start_with(None)
    }

    /// Start etcd serving clients over TLS, requiring a certificate signed by `tls.ca`.
    pub fn start_tls(tls: EtcdTls) -> Etcd {
        Self::start_with(Some(tls))
    }

    fn start_with(tls: Option<EtcdTls>) -> Etcd {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut etcd = Etcd {
            child: None,
            client_port: free_port(),
            peer_port: free_port(),
            metrics_port: free_port(),
            tls,
            data_dir: dir.path().join("etcd"),
            _dir: dir,
        };
        // A port found free may be taken by another test before etcd binds it: etcd
        // then exits at once, and starts again on other ports.
        for _ in 0..3 {
            if etcd.launch() {
                return etcd;
            }
            (etcd.client_port, etcd.peer_port, etcd.metrics_port) = (free_port(), free_port(), free_port());
        }
        panic!("etcd exited at start three times (its ports taken?)");
    }

    /// The client URL, for `--etcd-servers`.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.client_port)
    }

    /// Start etcd again on its ports, as it was.
    fn run(&mut self) {
        assert!(self.launch(), "etcd exited at start");
    }

    /// Start etcd and wait until it is healthy (true) or has exited (false).
    fn launch(&mut self) -> bool {
        let client = self.url();
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let mut command = Command::new("etcd");
        if let Some(tls) = &self.tls {
            command
                .arg(format!("--cert-file={}", tls.cert.display()))
                .arg(format!("--key-file={}", tls.key.display()))
                .arg(format!("--trusted-ca-file={}", tls.ca.display()))
                .arg("--client-cert-auth");
        }
        let child = command
            .arg("--name=apiary-test")
            .arg(format!(
                "--listen-metrics-urls=http://127.0.0.1:{}",
                self.metrics_port
            ))
            .arg(format!("--data-dir={}", self.data_dir.display()))
            .arg(format!("--listen-client-urls={client}"))
            .arg(format!("--advertise-client-urls={client}"))
            .arg(format!("--listen-peer-urls={peer}"))
            .arg(format!("--initial-advertise-peer-urls={peer}"))
            .arg(format!("--initial-cluster=apiary-test={peer}"))
            .arg("--log-level=error")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run etcd ({e}): install Debian's etcd-server package \
                     (.ci/run, the README's test command, does)"
                )
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.healthy() {
            if self.child.as_mut().is_some_and(|c| matches!(c.try_wait(), Ok(Some(_)))) {
                return false;
            }
            assert!(
                Instant::now() < deadline,
                "etcd did not become healthy within 30 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        true
    }

    /// Whether etcd answers its health endpoint with `"health":"true"`.
    fn healthy(&self) -> bool {
        let Ok(mut tcp) = TcpStream::connect(("127.0.0.1", self.metrics_port)) else {
            return false;
        };
        let _ = tcp.set_read_timeout(Some(Duration::from_secs(2)));
        let request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        if tcp.write_all(request.as_bytes()).is_err() {
            return false;
        }
        let mut response = String::new();
        let _ = tcp.read_to_string(&mut response);
        response.contains("\"health\":\"true\"")
    }

    /// Freeze the process (SIGSTOP): connections stay open and nothing is answered.
    pub fn pause(&self) {
        if let Some(child) = &self.child {
            crate::harness::send_signal(child.id(), "STOP");
        }
    }

    /// Thaw a paused process (SIGCONT).
    pub fn resume(&self) {
        if let Some(child) = &self.child {
            crate::harness::send_signal(child.id(), "CONT");
        }
    }

    /// Stop the process (SIGKILL); the data stays for [`Etcd::restart`].
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start again on the same ports and data.
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.stop();
    }
}

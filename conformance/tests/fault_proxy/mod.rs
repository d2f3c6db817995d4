//! A TCP proxy of the tests' own between Apiary and etcd, on loopback, that a test tells
//! to delay what it forwards, to hold it back (a partition: connections stay open and
//! nothing arrives), or to cut every connection it carries.

#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy does now; shared by its connections.
#[derive(Default)]
struct Mode {
    delay_ms: AtomicU64,
    held: AtomicBool,
    /// Bumped to cut every connection open now.
    cuts: AtomicU64,
}

/// A running proxy; it stops with its runtime.
#[derive(Clone)]
pub struct FaultProxy {
    pub port: u16,
    mode: Arc<Mode>,
}

impl FaultProxy {
    /// Listen on a free loopback port and forward every connection to `target`.
    pub async fn start(target: String) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let port = listener.local_addr().expect("bound").port();
        let mode = Arc::new(Mode::default());
        let shared = mode.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (target, mode) = (target.clone(), shared.clone());
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(&target).await {
                        carry(client, server, mode).await;
                    }
                });
            }
        });
        FaultProxy { port, mode }
    }

    /// Delay every piece forwarded by `by` (zero: none).
    pub fn delay(&self, by: Duration) {
        self.mode.delay_ms.store(by.as_millis() as u64, Ordering::SeqCst);
    }

    /// Hold everything back (a partition) or let it through again.
    pub fn hold(&self, held: bool) {
        self.mode.held.store(held, Ordering::SeqCst);
    }

    /// Cut every connection open now (new ones are carried).
    pub fn cut(&self) {
        self.mode.cuts.fetch_add(1, Ordering::SeqCst);
    }
}

/// Forward both ways until either side closes or the connection is cut.
async fn carry(client: TcpStream, server: TcpStream, mode: Arc<Mode>) {
    let born = mode.cuts.load(Ordering::SeqCst);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let up = pump(client_read, server_write, mode.clone(), born);
    let down = pump(server_read, client_write, mode, born);
    tokio::select! {
        _ = up => {}
        _ = down => {}
    }
}

async fn pump(mut from: tokio::net::tcp::OwnedReadHalf, mut to: tokio::net::tcp::OwnedWriteHalf, mode: Arc<Mode>, born: u64) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let read = tokio::time::timeout(Duration::from_millis(50), from.read(&mut buf)).await;
        if mode.cuts.load(Ordering::SeqCst) != born {
            return;
        }
        let n = match read {
            Err(_) => continue,
            Ok(Ok(0)) | Ok(Err(_)) => return,
            Ok(Ok(n)) => n,
        };
        while mode.held.load(Ordering::SeqCst) {
            if mode.cuts.load(Ordering::SeqCst) != born {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let delay = mode.delay_ms.load(Ordering::SeqCst);
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

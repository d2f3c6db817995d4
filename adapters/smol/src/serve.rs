//! Serving: bind the listener, accept TLS connections, decode requests with the core's
//! HTTP/1.1 codec and drive each request through the core's state machine against the
//! storage backend.

use crate::flags::Options;
use apiary_core::inflight::{Admission, Limiter, Limits as InflightLimits};
use crate::memory;
use crate::pki::{self, ServingNames};
use crate::tls;
use apiary_core::health::BOOTSTRAP_HOOK;
use apiary_core::http1::{Connection, Event, Limits};
use apiary_core::storage::{Storage, StorageOp};
use apiary_core::watch::WatchStream;
use apiary_core::{Config, Inputs, Server, Step, WatchRequest};
use bytes::Bytes;
use futures_rustls::TlsAcceptor;
use smol::future::{self, FutureExt as _};
use smol::io::{AsyncReadExt as _, AsyncWriteExt as _};
use smol::net::{TcpListener, TcpStream};
use smol::{Executor, Timer};
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// How long a client has to complete the TLS handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection may sit with no bytes from the client while the server waits
/// for them (kube-apiserver's IdleTimeout).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// The largest request line plus headers (Go's and kube-apiserver's MaxHeaderBytes).
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// The most bytes of watch frames written at once.
const MAX_WATCH_BATCH: usize = 256 * 1024;

/// What kube-apiserver answers when a handler panics.
const PANIC_BODY: &str = "This request caused apiserver to panic. Look in the logs for details.\n";

/// Why apiary could not start; the message says what and where.
#[derive(Debug)]
pub struct StartError(String);

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

/// Where a request ends up once its storage steps are done.
pub enum Driven {
    /// A whole response.
    Respond(http::Response<Bytes>),
    /// A watch to stream.
    Watch(WatchRequest, Box<WatchStream>),
}

/// Run a request until it answers or becomes a watch: perform each storage operation
/// the core asks for and resume it with the outcome.
pub async fn drive<S: Storage>(storage: &S, mut step: Step) -> Driven {
    loop {
        step = match step {
            Step::Respond(response) => return Driven::Respond(response),
            Step::Storage(op, pending) => pending.resume(storage.run(op).await),
            Step::Watch(request, stream) => return Driven::Watch(request, stream),
        };
    }
}

/// [`drive`], timing each storage operation for the server's
/// `etcd_request_duration_seconds`.
pub async fn drive_observed<S: Storage>(storage: &S, server: &Server, mut step: Step) -> Driven {
    loop {
        step = match step {
            Step::Respond(response) => return Driven::Respond(response),
            Step::Storage(op, pending) => {
                let started = std::time::Instant::now();
                let observed = match &op {
                    StorageOp::Compact { .. } | StorageOp::CurrentRevision => None,
                    op => Some(op.clone()),
                };
                let done = storage.run(op).await;
                if let Some(op) = observed {
                    server.storage_observed(&op, started.elapsed());
                }
                pending.resume(done)
            }
            Step::Watch(request, stream) => return Driven::Watch(request, stream),
        };
    }
}

/// The inputs of a request arriving now.
pub fn inputs(remote_addr: Option<SocketAddr>, peer_certificates: Vec<Bytes>) -> Inputs {
    let mut entropy = [0u8; 32];
    if getrandom::getrandom(&mut entropy).is_err() {
        // The OS generator does not fail on supported systems; never leave zeros.
        entropy.fill_with(|| fastrand::u8(..));
    }
    Inputs {
        now: SystemTime::now(),
        entropy,
        peer_certificates,
        remote_addr,
    }
}

fn timeout<T>(
    after: Duration,
    fut: impl std::future::Future<Output = T>,
) -> impl std::future::Future<Output = Option<T>> {
    future::or(async { Some(fut.await) }, async move {
        Timer::after(after).await;
        None
    })
}

/// A bound, ready-to-serve apiary over storage backend `S`.
pub struct Apiary<S: Storage> {
    server: Server,
    storage: Arc<S>,
    acceptor: TlsAcceptor,
    listener: TcpListener,
    limits: Limits,
    local_addr: SocketAddr,
    url: String,
    kubeconfig: PathBuf,
    /// Requests answered since the last return of free memory to the OS.
    answered: std::sync::atomic::AtomicU64,
    /// The in-flight limits every request passes before the core sees it.
    inflight: Limiter,
    /// `--etcd-compaction-interval`.
    compaction_interval: Option<Duration>,
    /// The readiness check that follows the storage backend, if it is outside.
    storage_check: Option<String>,
    /// `--etcd-prefix`: every object's key starts with it.
    storage_prefix: String,
}

/// How often an outside storage backend is probed for /readyz.
const STORAGE_PROBE_INTERVAL: Duration = Duration::from_secs(1);
/// How long a probe may take before the backend counts as down.
const STORAGE_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The readiness check of `--storage`: `etcd` for etcd, as kube-apiserver names it.
fn storage_check(options: &Options) -> Option<String> {
    (options.storage == crate::flags::StorageKind::Etcd).then(|| "etcd".to_owned())
}

impl<S: Storage> Apiary<S> {
    /// Bind the listener, load or create the certificates, write the admin kubeconfig
    /// and build the server. Nothing is served until [`Apiary::serve`].
    pub fn start(options: &Options, storage: S) -> Result<Apiary<S>, StartError> {
        let wanted = SocketAddr::new(options.bind_address, options.secure_port);
        let listener = std::net::TcpListener::bind(wanted)
            .map_err(|e| StartError(format!("failed to listen on {wanted}: {e}")))?;
        let local_addr = listener
            .local_addr()
            .map_err(|e| StartError(format!("failed to listen on {wanted}: {e}")))?;
        let listener = TcpListener::try_from(listener)
            .map_err(|e| StartError(format!("failed to listen on {wanted}: {e}")))?;

        std::fs::create_dir_all(&options.data_dir).map_err(|e| {
            StartError(format!(
                "creating --data-dir {}: {e}",
                options.data_dir.display()
            ))
        })?;
        let names = ServingNames::new(options.bind_address, options.advertise_address);
        let pki = pki::ensure(&options.cert_dir, &names, SystemTime::now())
            .map_err(|e| StartError(e.to_string()))?;
        let tls =
            tls::server_config(&pki).map_err(|e| StartError(format!("configuring TLS: {e}")))?;

        let client_addr = pki::client_address(
            options.bind_address,
            options.advertise_address,
            local_addr.port(),
        );
        let url = format!("https://{client_addr}");
        let kubeconfig = options.kubeconfig_path();
        pki::write_kubeconfig(&kubeconfig, &url, &pki).map_err(|e| StartError(e.to_string()))?;

        let advertise = options
            .advertise_address
            .or(Some(options.bind_address).filter(|ip| !ip.is_unspecified()))
            .map(|ip| SocketAddr::new(ip, local_addr.port()));
        // Fields the core adds later keep their defaults until a flag sets them.
        #[allow(clippy::needless_update)]
        let config = Config {
            storage_prefix: options.etcd_prefix.clone(),
            max_request_body_bytes: options.max_request_body_bytes,
            advertise_address: advertise,
            min_request_timeout: Duration::from_secs(options.min_request_timeout),
            storage_check: storage_check(options),
            ..Config::default()
        };
        let server = Server::new(config);
        Ok(Apiary {
            server,
            storage: Arc::new(storage),
            acceptor: TlsAcceptor::from(tls),
            listener,
            limits: Limits {
                max_header_bytes: MAX_HEADER_BYTES,
                max_body_bytes: options.max_request_body_bytes,
            },
            local_addr,
            url,
            kubeconfig,
            answered: std::sync::atomic::AtomicU64::new(0),
            inflight: Limiter::new(InflightLimits {
                max_requests_inflight: options.max_requests_inflight,
                max_mutating_requests_inflight: options.max_mutating_requests_inflight,
            }),
            compaction_interval: options.compaction_interval,
            storage_check: storage_check(options),
            storage_prefix: options.etcd_prefix.clone(),
        })
    }

    /// The address the listener is bound to (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The URL clients on this host reach the server at, as in the kubeconfig.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The admin kubeconfig written at start.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// The core server.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The storage backend.
    pub fn storage(&self) -> &Arc<S> {
        &self.storage
    }

    /// Run the requests the server makes of itself at start (the default namespaces)
    /// until each has succeeded (409: done on an earlier start), retrying failures as
    /// kube-apiserver's post-start hooks do; then mark the hook's health check.
    pub async fn bootstrap(&self) {
        let mut backoff = Duration::from_millis(100);
        loop {
            let mut failed = 0;
            for request in self.server.bootstrap_requests() {
                let (method, uri) = (request.method().clone(), request.uri().clone());
                let step = self
                    .server
                    .handle_as_system(request, inputs(None, Vec::new()));
                let response = match drive(&*self.storage, step).await {
                    Driven::Respond(response) => response,
                    Driven::Watch(..) => unreachable!("bootstrap requests are creates"),
                };
                let status = response.status();
                if status.is_success() || status == http::StatusCode::CONFLICT {
                    tracing::debug!(%method, %uri, status = status.as_u16(), "bootstrap request done");
                } else {
                    failed += 1;
                    tracing::warn!(
                        %method,
                        %uri,
                        status = status.as_u16(),
                        body = %String::from_utf8_lossy(response.body()),
                        "bootstrap request failed; retrying in {backoff:?}"
                    );
                }
            }
            if failed == 0 {
                self.server.health().set(BOOTSTRAP_HOOK, true);
                return;
            }
            Timer::after(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    }

    /// Accept connections forever, serving each on `executor`.
    pub async fn serve(self: Arc<Self>, executor: &Arc<Executor<'static>>) {
        let this = self.clone();
        executor
            .spawn(async move { this.release_memory_periodically().await })
            .detach();
        if let Some(check) = self.storage_check.clone() {
            let this = self.clone();
            executor
                .spawn(async move { this.probe_storage(&check).await })
                .detach();
        }
        if let Some(interval) = self.compaction_interval {
            let this = self.clone();
            executor
                .spawn(async move { this.compact_periodically(interval).await })
                .detach();
        }
        let this = self.clone();
        executor.spawn(async move { this.reflect().await }).detach();
        let mut backoff = Duration::from_millis(5);
        loop {
            match self.listener.accept().await {
                Ok((tcp, remote)) => {
                    backoff = Duration::from_millis(5);
                    let this = self.clone();
                    executor
                        .spawn(async move {
                            let served = AssertUnwindSafe(this.connection(tcp, remote))
                                .catch_unwind()
                                .await;
                            if served.is_err() {
                                tracing::error!(%remote, "connection handler panicked; closed the connection");
                            }
                        })
                        .detach();
                }
                Err(e) => {
                    // Out of file descriptors and the like: wait, as Go's server does.
                    tracing::warn!("accept failed: {e}; retrying in {backoff:?}");
                    Timer::after(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
            }
        }
    }

    /// Feed every resource's watch cache from one list and one backend watch of the
    /// whole key space: each change goes to its resource's cache, and every cache
    /// learns that the store has reached the change's revision, so a consistent read is
    /// served from a cache whenever the reflector has caught up, whichever resource was
    /// written last. Start over whenever the watch ends.
    async fn reflect(&self) {
        use apiary_core::storage::{StorageOp, StorageOutput, WatchStream as _};
        let caches = self.server.watch_caches();
        let cache_of = |key: &str| caches.iter().find(|cache| key.starts_with(cache.prefix()));
        let root = format!("{}/", self.storage_prefix.trim_end_matches('/'));
        let mut backoff = Duration::from_millis(100);
        loop {
            let listed = self
                .storage
                .run(StorageOp::List {
                    prefix: root.clone(),
                    revision: None,
                    start_after: None,
                    limit: None,
                })
                .await;
            if let Ok(StorageOutput::Listed(page)) = listed {
                if let Ok(mut events) = self.storage.watch(&root, page.revision).await {
                    let mut objects: Vec<Vec<_>> = vec![Vec::new(); caches.len()];
                    for kv in page.items {
                        if let Some(i) = caches.iter().position(|c| kv.key.starts_with(c.prefix()))
                        {
                            objects[i].push(kv);
                        }
                    }
                    for (cache, objects) in caches.iter().zip(objects) {
                        cache.reset_with(objects, page.revision);
                    }
                    backoff = Duration::from_millis(100);
                    while let Some(Ok(event)) = events.next().await {
                        let revision = event.revision();
                        if let Some(cache) = cache_of(event.key()) {
                            cache.apply(event);
                        }
                        for cache in caches {
                            cache.advance(revision);
                        }
                    }
                }
            }
            for cache in caches {
                cache.unsync();
            }
            tracing::debug!("the watch caches lost their backend watch; relisting in {backoff:?}");
            Timer::after(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    }

    /// Keep the storage readiness check true to whether the backend answers.
    async fn probe_storage(&self, check: &str) {
        use apiary_core::storage::StorageOp;
        let mut was = None;
        loop {
            let probe = self.storage.run(StorageOp::CurrentRevision);
            let ok = matches!(timeout(STORAGE_PROBE_TIMEOUT, probe).await, Some(Ok(_)));
            if was != Some(ok) {
                if ok {
                    tracing::info!("storage check {check} passes");
                } else {
                    tracing::warn!("storage check {check} fails: the backend does not answer");
                }
                was = Some(ok);
            }
            self.server.health().set(check, ok);
            Timer::after(STORAGE_PROBE_INTERVAL).await;
        }
    }

    /// Every `interval`, compact away the history before the revision seen at the
    /// previous tick, as kube-apiserver's compactor does: clients keep at least one
    /// interval of history to resume watches from.
    async fn compact_periodically(&self, interval: Duration) {
        let mut last = apiary_core::storage::CompactorTick::default();
        loop {
            Timer::after(interval).await;
            match self.storage.compactor_tick(last).await {
                Ok(next) => {
                    tracing::debug!(
                        compacted_before = last.revision,
                        next = next.revision,
                        "compactor tick"
                    );
                    last = next;
                }
                // Try again at the next tick, from the same point.
                Err(e) => tracing::warn!(revision = last.revision, "compaction failed: {e}"),
            }
        }
    }

    /// Every [`memory::TRIM_INTERVAL`] in which requests were answered, hand the heap
    /// pages they freed back to the OS.
    async fn release_memory_periodically(&self) {
        use std::sync::atomic::Ordering;
        loop {
            Timer::after(memory::TRIM_INTERVAL).await;
            if self.answered.swap(0, Ordering::Relaxed) > 0 {
                memory::release_free_memory();
            }
        }
    }

    async fn connection(&self, tcp: TcpStream, remote: SocketAddr) {
        let _ = tcp.set_nodelay(true);
        let stream = match timeout(HANDSHAKE_TIMEOUT, self.acceptor.accept(tcp)).await {
            Some(Ok(stream)) => stream,
            Some(Err(e)) => {
                tracing::debug!(%remote, "TLS handshake failed: {e}");
                return;
            }
            None => {
                tracing::debug!(%remote, "TLS handshake timed out");
                return;
            }
        };
        let peer_certificates: Vec<Bytes> = stream
            .get_ref()
            .1
            .peer_certificates()
            .map(|chain| {
                chain
                    .iter()
                    .map(|c| Bytes::copy_from_slice(c.as_ref()))
                    .collect()
            })
            .unwrap_or_default();
        if let Err(e) = self.exchange(stream, remote, peer_certificates).await {
            tracing::debug!(%remote, "connection ended: {e}");
        }
    }

    /// Read requests and write responses, in order, until either side closes.
    async fn exchange<T>(
        &self,
        mut stream: T,
        remote: SocketAddr,
        peer_certificates: Vec<Bytes>,
    ) -> io::Result<()>
    where
        T: smol::io::AsyncRead + smol::io::AsyncWrite + Unpin,
    {
        let mut codec = Connection::new(self.limits);
        let mut buf = vec![0u8; 16 * 1024];
        let mut eof = false;
        loop {
            match codec.poll() {
                Event::Request(request) => {
                    let path = request.uri().path().to_owned();
                    let started = std::time::Instant::now();
                    let tracked = self.server.request_started(&request);
                    // The request's in-flight place (--max-requests-inflight and
                    // --max-mutating-requests-inflight), held until its response is
                    // written and given back however it ends.
                    let _inflight;
                    let step = match self.inflight.admit_request(&request, &peer_certificates)
                    {
                        Admission::Refused(response) => Step::Respond(response),
                        Admission::Admitted(slot) => {
                            _inflight = slot;
                            self.server
                                .handle(request, inputs(Some(remote), peer_certificates.clone()))
                        }
                    };
                    let driven = drive_observed(&*self.storage, &self.server, step);
                    let mut response = match AssertUnwindSafe(driven)
                        .catch_unwind()
                        .await
                    {
                        Ok(Driven::Respond(response)) => response,
                        Ok(Driven::Watch(request, watch)) => {
                            self.answered
                                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let client = WatchClient {
                                stream: &mut stream,
                                codec: &mut codec,
                                buf: &mut buf,
                                eof: &mut eof,
                            };
                            self.server.metrics().watch_started(&tracked);
                            let pumped = self.pump_watch(client, request, watch).await;
                            self.server.metrics().watch_finished(&tracked, 200);
                            pumped?;
                            if codec.should_close() {
                                return finish(&mut stream).await;
                            }
                            continue;
                        }
                        Err(_) => {
                            tracing::error!(%remote, %path, "request handler panicked");
                            panic_response()
                        }
                    };
                    if !response.headers().contains_key(http::header::DATE) {
                        if let Ok(date) = http::HeaderValue::from_str(
                            &apiary_core::time::imf_fixdate(SystemTime::now()),
                        ) {
                            response.headers_mut().insert(http::header::DATE, date);
                        }
                    }
                    self.server.metrics().request_finished(
                        &tracked,
                        response.status().as_u16(),
                        started.elapsed(),
                    );
                    let bytes = codec.encode_response(&response);
                    stream.write_all(&bytes).await?;
                    drop((response, bytes));
                    self.answered
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if memory::built_large_documents(&path, started.elapsed()) {
                        memory::release_free_memory();
                    }
                    if codec.should_close() {
                        return finish(&mut stream).await;
                    }
                }
                Event::Continue(bytes) => {
                    stream.write_all(&bytes).await?;
                    stream.flush().await?;
                }
                Event::NeedMore => {
                    if eof {
                        // The peer is gone mid-request; nothing more will come.
                        return Ok(());
                    }
                    // Responses to pipelined requests go out together, before waiting.
                    stream.flush().await?;
                    let read = match timeout(IDLE_TIMEOUT, stream.read(&mut buf)).await {
                        Some(read) => read,
                        None => return finish(&mut stream).await,
                    };
                    match read {
                        Ok(0) => {
                            eof = true;
                            codec.feed_eof();
                        }
                        Ok(n) => codec.feed(&buf[..n]),
                        // A peer that closes without close_notify is just gone.
                        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                            eof = true;
                            codec.feed_eof();
                        }
                        Err(e) => return Err(e),
                    }
                }
                Event::Fatal(bytes) => {
                    stream.write_all(&bytes).await?;
                    return finish(&mut stream).await;
                }
                Event::Closed => return finish(&mut stream).await,
            }
        }
    }
}

/// The client side of a connection while it carries a watch.
struct WatchClient<'a, T> {
    stream: &'a mut T,
    codec: &'a mut Connection,
    buf: &'a mut Vec<u8>,
    eof: &'a mut bool,
}

/// Where a watch's events come from.
enum Source<W> {
    Cache(Arc<apiary_core::watch_cache::Subscription>),
    Backend(W),
}

/// What woke a watch up.
enum Wake {
    Event(Option<Result<apiary_core::storage::WatchEvent, apiary_core::storage::StorageError>>),
    Cached(Result<Arc<apiary_core::watch_cache::CachedEvent>, apiary_core::storage::StorageError>),
    Bookmark,
    Deadline,
    Client(io::Result<usize>),
}

impl<S: Storage> Apiary<S> {
    /// Stream a watch: the head, the initial frames, then a frame per backend event and a
    /// bookmark per interval, until the stream ends, its timeout passes or the client
    /// goes away. Bytes the client sends meanwhile are kept for the next request.
    async fn pump_watch<T>(
        &self,
        client: WatchClient<'_, T>,
        request: WatchRequest,
        mut watch: Box<WatchStream>,
    ) -> io::Result<()>
    where
        T: smol::io::AsyncRead + smol::io::AsyncWrite + Unpin,
    {
        use apiary_core::storage::WatchStream as _;
        use smol::stream::StreamExt as _;
        let WatchClient {
            stream,
            codec,
            buf,
            eof,
        } = client;
        stream
            .write_all(&codec.encode_stream_head(&watch.head()))
            .await?;
        for frame in watch.take_initial() {
            stream.write_all(&codec.encode_chunk(&frame)).await?;
        }
        // The resource's watch cache serves the watch when its window covers the
        // revision; otherwise the backend, which keeps the longer history.
        let cached = self
            .server
            .watch_cache(&request.resource_prefix)
            .and_then(|cache| cache.subscribe(&request.prefix, request.after));
        let mut events = match cached {
            Some(subscription) => Some(Source::Cache(subscription)),
            None => match self.storage.watch(&request.prefix, request.after).await {
                Ok(events) => Some(Source::Backend(events)),
                Err(e) => {
                    let frame = watch.on_error(e);
                    stream.write_all(&codec.encode_chunk(&frame)).await?;
                    None
                }
            },
        };
        stream.flush().await?;
        let mut deadline = Timer::after(watch.timeout());
        let mut bookmarks = watch.bookmark_interval().map(Timer::interval);
        while let Some(source) = events.as_mut().filter(|_| !watch.is_done()) {
            let event = async {
                match source {
                    Source::Cache(subscription) => Wake::Cached(subscription.next().await),
                    Source::Backend(backend) => Wake::Event(backend.next().await),
                }
            };
            let expired = async {
                (&mut deadline).await;
                Wake::Deadline
            };
            let bookmark = async {
                match bookmarks.as_mut() {
                    Some(timer) => {
                        timer.next().await;
                        Wake::Bookmark
                    }
                    None => future::pending().await,
                }
            };
            let closed = *eof;
            let read = async {
                if closed {
                    future::pending().await
                } else {
                    Wake::Client(stream.read(buf).await)
                }
            };
            let frame = match event.or(expired).or(bookmark).or(read).await {
                Wake::Event(Some(event)) => watch.on_event(event, SystemTime::now()),
                Wake::Cached(first) => {
                    // Write what has piled up in one go: one TLS record and one flush
                    // for a burst of events, not one per event.
                    let Some(Source::Cache(subscription)) = events.as_ref() else {
                        unreachable!("cached events come from a cache subscription")
                    };
                    let now = SystemTime::now();
                    let mut batch = Vec::new();
                    let mut next = Some(first);
                    while let Some(item) = next.take() {
                        let frame = match item {
                            Ok(event) => watch.on_cached(&event, now),
                            Err(e) => Some(watch.on_error(e)),
                        };
                        if let Some(frame) = frame {
                            batch.extend_from_slice(&codec.encode_chunk(&frame));
                        }
                        if watch.is_done() || batch.len() >= MAX_WATCH_BATCH {
                            break;
                        }
                        next = subscription.try_next();
                    }
                    if !batch.is_empty() {
                        stream.write_all(&batch).await?;
                        stream.flush().await?;
                    }
                    None
                }
                Wake::Event(None) | Wake::Deadline => break,
                Wake::Bookmark => watch.bookmark(),
                Wake::Client(Ok(0)) | Wake::Client(Err(_)) => {
                    // The client is gone; nobody is left to read the end of the stream.
                    *eof = true;
                    codec.feed_eof();
                    return Ok(());
                }
                Wake::Client(Ok(n)) => {
                    codec.feed(&buf[..n]);
                    None
                }
            };
            if let Some(frame) = frame {
                stream.write_all(&codec.encode_chunk(&frame)).await?;
                stream.flush().await?;
            }
        }
        stream.write_all(&codec.encode_stream_end()).await?;
        stream.flush().await
    }
}

/// Flush what is buffered and close: TLS close_notify, then the socket.
async fn finish<T: smol::io::AsyncWrite + Unpin>(stream: &mut T) -> io::Result<()> {
    stream.flush().await?;
    stream.close().await
}

fn panic_response() -> http::Response<Bytes> {
    http::Response::builder()
        .status(http::StatusCode::INTERNAL_SERVER_ERROR)
        .header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("X-Content-Type-Options", "nosniff")
        .body(Bytes::from_static(PANIC_BODY.as_bytes()))
        .expect("static response")
}

//! Serving: bind the listener, accept TLS connections, decode requests with the core's
//! HTTP/1.1 codec or the h2 crate (HTTP/2, chosen by ALPN) and drive each request
//! through the core's state machine against the storage backend.

mod background;
mod drive;
mod exchange;
mod http2;
pub mod lifecycle;
mod request;
mod relay_pump;
mod watch_pump;

pub use drive::{drive, drive_exchange, inputs, Driven, Streamed};
pub use exchange::HANDSHAKE_TIMEOUT;

use crate::flags::Options;
use crate::pki::{self, ServingNames};
use crate::tls::ServerTls;
use apiary_core::health::{BOOTSTRAP_HOOK, RBAC_HOOK};
use apiary_core::http1::{Limits, Timeouts};
use apiary_core::inflight::Limits as InflightLimits;
use apiary_core::lifecycle::{Event, LifecycleConfig};
use lifecycle::Lifecycle;
use apiary_core::storage::Storage;
use apiary_core::{Config, Server};
use smol::future::{self, FutureExt as _};
use smol::net::TcpListener;
use smol::{Executor, Timer};
use std::fmt;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The largest request line plus headers (Go's and kube-apiserver's MaxHeaderBytes).
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// Why apiary could not start; the message says what and where.
#[derive(Debug)]
pub struct StartError(String);

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

pub(crate) fn timeout<T>(
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
    /// The TLS configuration new connections get, reloaded when its files change.
    tls: Arc<ServerTls>,
    /// Taken by [`Apiary::serve`], dropped when the lifecycle says to stop listening.
    listener: std::sync::Mutex<Option<TcpListener>>,
    /// Start-up and graceful termination.
    lifecycle: Lifecycle,
    limits: Limits,
    /// How long a client may take to send a request, or to start one.
    timeouts: Timeouts,
    /// What HTTP/2 connections are served with.
    http2: http2::Settings,
    /// HTTP/2 connections open: their last frames are written by their own task.
    open_h2: std::sync::atomic::AtomicUsize,
    local_addr: SocketAddr,
    url: String,
    kubeconfig: PathBuf,
    /// Requests answered since the last return of free memory to the OS.
    answered: std::sync::atomic::AtomicU64,
    /// `--etcd-compaction-interval`.
    compaction_interval: Option<Duration>,
    /// The readiness check that follows the storage backend, if it is outside.
    storage_check: Option<String>,
    /// `--audit-log-path` with `--audit-policy-file`: where audit events go.
    audit_log: Option<crate::audit_log::AuditLog>,
}

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
        // With --tls-cert-file, no serving certificate is generated.
        let generate_serving = options.tls.serving_files.is_none().then_some(&names);
        let pki = pki::ensure_for(&options.cert_dir, generate_serving, SystemTime::now())
            .map_err(|e| StartError(e.to_string()))?;
        let front_proxy = crate::front_proxy::complete(&options.front_proxy, &options.cert_dir, SystemTime::now())
            .map_err(StartError)?;
        let tls_options = crate::tls::TlsOptions {
            request_header_ca: front_proxy.request_header_ca.clone(),
            ..options.tls.clone()
        };
        let tls = ServerTls::new(&tls_options, &pki).map_err(StartError)?;
        // Published for extension API servers; the TLS layer verifies against the same.
        let client_ca_pem = match &options.tls.client_ca_file {
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| StartError(format!("reading --client-ca-file {}: {e}", path.display())))?,
            None => pki.ca_cert_pem.clone(),
        };
        warn_if_admin_untrusted(&tls, &pki, &options.cert_dir);

        let client_addr = pki::client_address(
            options.bind_address,
            options.advertise_address,
            local_addr.port(),
        );
        let url = format!("https://{client_addr}");
        let kubeconfig = options.kubeconfig_path();
        let server_ca_pem = match &options.tls.serving_files {
            // What the operator serves with: the certificate and the chain after it.
            Some(files) => std::fs::read_to_string(&files.cert).map_err(|e| {
                StartError(format!("reading --tls-cert-file {}: {e}", files.cert.display()))
            })?,
            None => pki.ca_cert_pem.clone(),
        };
        pki::write_kubeconfig(&kubeconfig, &url, &server_ca_pem, &pki)
            .map_err(|e| StartError(e.to_string()))?;

        // Legacy token Secrets' ca.crt lets pods verify the serving certificate: the same
        // trust as the admin kubeconfig's.
        let service_accounts =
            crate::service_accounts::complete(&options.service_accounts, &options.cert_dir, &server_ca_pem)
                .map_err(|e| StartError(e.to_string()))?;

        let advertise = options
            .advertise_address
            .or(Some(options.bind_address).filter(|ip| !ip.is_unspecified()))
            .map(|ip| SocketAddr::new(ip, local_addr.port()));
        // Fields the core adds later keep their defaults until a flag sets them.
        #[allow(clippy::needless_update)]
        let config = Config {
            storage_prefix: options.etcd_prefix.clone(),
            service_network: options.service_network.clone(),
            max_request_body_bytes: options.max_request_body_bytes,
            advertise_address: advertise,
            min_request_timeout: Duration::from_secs(options.min_request_timeout),
            controllers: options.controllers.clone(),
            admission_plugins: options.admission_plugins.clone(),
            admission_settings: options.admission_settings.clone(),
            storage_check: storage_check(options),
            audit_policy: options.audit.as_ref().map(|a| a.policy.clone()),
            lifecycle: LifecycleConfig {
                shutdown_delay: options.shutdown_delay,
                request_timeout: options.request_timeout,
                send_retry_after: options.shutdown_send_retry_after,
            },
            client_ca_pem: Some(client_ca_pem),
            proxy_client: Some(Arc::new(front_proxy.proxy_client)),
            authenticators: apiary_core::authn::Authenticators {
                request_header: front_proxy.request_header.map(Arc::new),
                token_file: options.token_file.clone(),
                service_accounts: Some(Arc::new(service_accounts)),
                anonymous: options.anonymous_auth,
                token_webhook: options
                    .token_webhook
                    .clone()
                    .map(|config| Arc::new(apiary_core::authn::webhook::TokenWebhook::new(config))),
            },
            authorizer: apiary_core::authorization::Authorizer {
                modes: options.authorization_modes.clone(),
                webhook: options.authorization_webhook.clone(),
            },
            inflight: InflightLimits {
                max_requests_inflight: options.max_requests_inflight,
                max_mutating_requests_inflight: options.max_mutating_requests_inflight,
            },
            priority_and_fairness: options.priority_and_fairness,
            ..Config::default()
        };
        let server = Server::new(config);
        let audit_log = match &options.audit {
            Some(audit) => Some(
                crate::audit_log::AuditLog::start(audit)
                    .map_err(|e| StartError(format!("--audit-log-path: {e}")))?,
            ),
            None => None,
        };
        let lifecycle = Lifecycle::new(server.clone());
        Ok(Apiary {
            server,
            storage: Arc::new(storage),
            tls: Arc::new(tls),
            listener: std::sync::Mutex::new(Some(listener)),
            lifecycle,
            limits: Limits {
                max_header_bytes: MAX_HEADER_BYTES,
                max_body_bytes: options.max_request_body_bytes,
            },
            timeouts: Timeouts {
                request_body: options.request_timeout,
                ..Timeouts::default()
            },
            http2: http2::Settings::new(options.http2_max_streams_per_connection, options.goaway_chance),
            open_h2: std::sync::atomic::AtomicUsize::new(0),
            local_addr,
            url,
            kubeconfig,
            answered: std::sync::atomic::AtomicU64::new(0),
            compaction_interval: options.compaction_interval,
            storage_check: storage_check(options),
            audit_log,
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

    /// Write out what is still queued for the audit log (before the process exits).
    pub fn flush_audit_log(&self) {
        if let Some(log) = &self.audit_log {
            log.flush(Duration::from_secs(5));
        }
    }

    /// Wait, for `within` at most, until every HTTP/2 connection has closed: an answer
    /// counts as written once h2 has it, but its connection's task writes the frames, and
    /// after GOAWAY it closes once they are out. Before the process exits cleanly.
    pub async fn h2_connections_closed(&self, within: Duration) {
        let deadline = std::time::Instant::now() + within;
        while self.open_h2.load(std::sync::atomic::Ordering::Acquire) > 0 && std::time::Instant::now() < deadline {
            Timer::after(Duration::from_millis(5)).await;
        }
    }

    /// Start-up and graceful termination: feed it signals, await its exit code.
    pub fn lifecycle(&self) -> &Lifecycle {
        &self.lifecycle
    }

    /// Write what the server writes of itself at start (the default namespaces, the
    /// bootstrap RBAC policy) until all of it is written, retrying failures as
    /// kube-apiserver's post-start hooks do; then mark the hooks' health checks.
    pub async fn bootstrap(&self) {
        let mut backoff = Duration::from_millis(100);
        let mut bootstrap = self.server.bootstrap();
        loop {
            self.bootstrap_pass(&mut bootstrap, backoff).await;
            if bootstrap.finished() {
                self.server.health().set(BOOTSTRAP_HOOK, true);
                self.server.health().set(RBAC_HOOK, true);
                return;
            }
            Timer::after(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(5));
            bootstrap.retry();
        }
    }

    /// One pass of a bootstrap's requests, as the server itself.
    async fn bootstrap_pass(&self, bootstrap: &mut apiary_core::bootstrap::Bootstrap, retry_in: Duration) {
        while let Some(request) = bootstrap.next_request() {
            let step = self
                .server
                .handle_as_system(request, inputs(self.lifecycle.now(), None, Vec::new()));
            let response = match drive(&*self.storage, step).await {
                Driven::Respond(response) => response,
                Driven::Stream(..) | Driven::Close => unreachable!("bootstrap requests are reads and writes"),
            };
            if let Err(e) = bootstrap.answered(&response) {
                tracing::warn!("bootstrap write failed; retrying in {retry_in:?}: {e}");
            }
        }
    }

    /// Keep `extension-apiserver-authentication` as this server publishes it,
    /// looking every minute as upstream's controller does.
    async fn keep_authentication_info(&self) {
        const RESYNC: Duration = Duration::from_secs(60);
        loop {
            Timer::after(RESYNC).await;
            self.bootstrap_pass(&mut self.server.authentication_info(), RESYNC).await;
        }
    }

    /// Serve until the lifecycle closes the listener: start the background tasks, run the
    /// post-start hooks once the listener is served, and accept connections, serving
    /// each on `executor`.
    pub async fn serve(self: Arc<Self>, executor: &Arc<Executor<'static>>) {
        let Some(listener) = self
            .listener
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
        else {
            return;
        };
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
        if self.tls.reloads_files() {
            let this = self.clone();
            executor
                .spawn(async move { this.reload_certificates_periodically().await })
                .detach();
        }
        let this = self.clone();
        executor.spawn(async move { this.reflect().await }).detach();
        let this = self.clone();
        executor.spawn(async move { this.run_controllers().await }).detach();
        let this = self.clone();
        executor.spawn(async move { this.check_availability_periodically().await }).detach();
        let this = self.clone();
        executor
            .spawn(async move { this.lifecycle.run().await })
            .detach();
        let this = self.clone();
        executor
            .spawn(async move {
                this.lifecycle.post_start.wait().await;
                this.bootstrap().await;
                this.lifecycle
                    .event(Event::PostStartHookFinished(lifecycle::BOOTSTRAP.to_owned()));
                tracing::info!(
                    "apiary ready at {} (kubeconfig: {})",
                    this.url(),
                    this.kubeconfig_path().display()
                );
                this.keep_authentication_info().await;
            })
            .detach();

        self.lifecycle.event(Event::ListenerBound);
        let mut backoff = Duration::from_millis(5);
        loop {
            let stop = async {
                self.lifecycle.stop_listening.wait().await;
                None
            };
            let Some(accepted) = future::or(async { Some(listener.accept().await) }, stop).await
            else {
                break;
            };
            match accepted {
                Ok((tcp, remote)) => {
                    backoff = Duration::from_millis(5);
                    let this = self.clone();
                    let spawner = executor.clone();
                    executor
                        .spawn(async move {
                            let served = AssertUnwindSafe(this.connection(tcp, remote, &spawner))
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
        drop(listener);
        tracing::info!("stopped listening on {}", self.local_addr);
        self.lifecycle.event(Event::ListenerClosed);
    }
}

/// The admin kubeconfig carries a client certificate of apiary's own CA; with
/// `--client-ca-file` it authenticates only if that bundle trusts the CA. Say so at
/// start rather than leave a kubeconfig that is refused without a word.
fn warn_if_admin_untrusted(tls: &ServerTls, pki: &pki::Pki, cert_dir: &Path) {
    use futures_rustls::rustls::pki_types::{pem::PemObject as _, CertificateDer};
    let Ok(admin) = CertificateDer::from_pem_slice(pki.admin_cert_pem.as_bytes()) else {
        return;
    };
    let admin = bytes::Bytes::copy_from_slice(admin.as_ref());
    if let Err(e) = tls.client_ca().verify(&[admin], SystemTime::now()) {
        tracing::warn!(
            "the admin kubeconfig's client certificate does not verify against --client-ca-file \
             ({e}): it authenticates only once the bundle includes {}",
            cert_dir.join("ca.crt").display()
        );
    }
}

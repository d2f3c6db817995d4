//! The server's configuration: plain data, built by the adapter from flags.

use crate::lifecycle::LifecycleConfig;
use std::net::SocketAddr;
use std::sync::Arc;

/// Plain configuration, built by the adapter from flags.
#[derive(Clone, Debug)]
pub struct Config {
    /// Key prefix under which every object is stored (kube-apiserver's `--etcd-prefix`).
    pub storage_prefix: String,
    /// Largest request body accepted.
    pub max_request_body_bytes: usize,
    /// The address clients reach this server at, reported in discovery.
    pub advertise_address: Option<SocketAddr>,
    /// A watch without `timeoutSeconds` ends after a random time between this and twice
    /// this (kube-apiserver's `--min-request-timeout`).
    pub min_request_timeout: std::time::Duration,
    /// A readiness check for the storage backend (kube-apiserver's `etcd`), failing
    /// until the adapter marks it; `None` for backends inside the process.
    pub storage_check: Option<String>,
    /// The audit policy (kube-apiserver's `--audit-policy-file`); `None` audits nothing.
    pub audit_policy: Option<Arc<crate::audit::Policy>>,
    /// Start-up and termination: `--shutdown-delay-duration`, `--request-timeout` (also
    /// every request's deadline) and `--shutdown-send-retry-after`.
    pub lifecycle: LifecycleConfig,
    /// `--max-requests-inflight` and `--max-mutating-requests-inflight`: the limits
    /// themselves, or with priority and fairness the seats its levels share.
    pub inflight: crate::inflight::Limits,
    /// `--enable-priority-and-fairness`: requests are classified and fair-queued
    /// instead of counted against the two in-flight limits.
    pub priority_and_fairness: bool,
    /// The client CA bundle (PEM) client certificates are verified against
    /// (`--client-ca-file` or Apiary's own CA): the adapter verifies, the server
    /// publishes it in `kube-system/extension-apiserver-authentication`.
    pub client_ca_pem: Option<String>,
    /// Who is asking (`--token-auth-file`, `--requestheader-*`; client certificates
    /// always).
    pub authenticators: crate::authn::Authenticators,
    /// Who may do what (`--authorization-mode`).
    pub authorizer: crate::authorization::Authorizer,
    /// The client certificate and key the aggregator presents to extension API
    /// servers (`--proxy-client-cert-file`, `--proxy-client-key-file`), with which it
    /// vouches for the `X-Remote-*` headers it sends. `None`: it presents none.
    pub proxy_client: Option<Arc<crate::effect::ClientTls>>,
    /// The kube-controller-manager controllers Apiary runs (`--disable-controllers`).
    pub controllers: crate::controllers::enabled::Enabled,
    /// The admission plugins that run (`--enable-admission-plugins`,
    /// `--disable-admission-plugins`).
    pub admission_plugins: crate::admission::plugins::Plugins,
    /// What the admission plugins are configured with.
    pub admission_settings: crate::admission::Settings,
    /// Where Services' cluster IPs and node ports come from
    /// (`--service-cluster-ip-range`, `--service-node-port-range`).
    pub service_network: crate::service_network::ServiceNetwork,
    /// How many events one watch may have undelivered before it is ended, so that a
    /// client that stops reading holds neither memory nor other watches back (upstream
    /// ends a watcher whose buffer stays full). Not a flag: the simulation lowers it to
    /// make slow clients.
    pub watch_queue_limit: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            storage_prefix: "/registry".to_owned(),
            max_request_body_bytes: 3 << 20,
            advertise_address: None,
            min_request_timeout: std::time::Duration::from_secs(1800),
            storage_check: None,
            audit_policy: None,
            lifecycle: LifecycleConfig::default(),
            inflight: crate::inflight::Limits::default(),
            priority_and_fairness: true,
            client_ca_pem: None,
            authenticators: crate::authn::Authenticators::default(),
            authorizer: crate::authorization::Authorizer::default(),
            proxy_client: None,
            controllers: crate::controllers::enabled::Enabled::default(),
            admission_plugins: crate::admission::plugins::Plugins::default(),
            admission_settings: crate::admission::Settings::default(),
            service_network: crate::service_network::ServiceNetwork::default(),
            watch_queue_limit: crate::watch_cache::MAX_QUEUED,
        }
    }
}


//! Command-line flags, kube-apiserver style: `--flag=value` or `--flag value`, shown in
//! named sections by `--help`, then completed and validated as a whole so that every
//! problem is reported at once, before anything binds.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::time::Duration;

/// The version apiary reports, as kube-apiserver's `--version` and `/version` do.
pub const GIT_VERSION: &str = "v1.33.0";

/// Which storage backend serves the objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageKind {
    /// One sqlite file, `<data-dir>/state.db`: the default.
    Sqlite,
    /// Everything in memory; gone when the process exits.
    Memory,
    /// An etcd cluster, `--etcd-servers`.
    Etcd,
}

impl StorageKind {
    const ALL: &'static [(&'static str, StorageKind)] = &[
        ("sqlite", StorageKind::Sqlite),
        ("memory", StorageKind::Memory),
        ("etcd", StorageKind::Etcd),
    ];

    pub fn name(self) -> &'static str {
        match self {
            StorageKind::Sqlite => "sqlite",
            StorageKind::Memory => "memory",
            StorageKind::Etcd => "etcd",
        }
    }
}

/// The server's options, completed (defaults filled in, paths absolute) and valid.
#[derive(Clone, Debug)]
pub struct Options {
    /// `--bind-address`: the IP to listen on.
    pub bind_address: IpAddr,
    /// `--secure-port`: the HTTPS port; 0 picks a free one.
    pub secure_port: u16,
    /// `--advertise-address`: the IP clients reach this server at.
    pub advertise_address: Option<IpAddr>,
    /// `--cert-dir`: where the CA, serving and admin certificates live.
    pub cert_dir: PathBuf,
    /// `--http2-max-streams-per-connection`: streams an HTTP/2 client may have open on
    /// one connection; 0 is kube-apiserver's default (100).
    pub http2_max_streams_per_connection: u32,
    /// `--goaway-chance`: the chance (0 to 0.02) that an HTTP/2 request's answer tells
    /// its client to go away (GOAWAY), so that clients behind a load balancer spread
    /// over the servers again.
    pub goaway_chance: f64,
    /// `--storage`: the storage backend.
    pub storage: StorageKind,
    /// `--data-dir`: apiary's state (certificates, kubeconfig, data files).
    pub data_dir: PathBuf,
    /// `--etcd-prefix`: the key prefix every object is stored under.
    pub etcd_prefix: String,
    /// `--service-cluster-ip-range` and `--service-node-port-range`.
    pub service_network: apiary_core::service_network::ServiceNetwork,
    /// `--etcd-compaction-interval`: how often old revisions are compacted away; `None`
    /// (the flag at 0) never compacts.
    pub compaction_interval: Option<Duration>,
    /// `--etcd-servers`: the etcd members of `--storage=etcd`.
    pub etcd_servers: Vec<String>,
    /// `--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`, when any is given.
    pub etcd_tls: Option<apiary_etcd::TlsFiles>,
    /// `--sqlite-synchronous`: how durable a sqlite commit is before it is answered.
    pub sqlite_synchronous: apiary_sqlite::Synchronous,
    /// `--max-request-body-bytes`: the largest request body accepted.
    pub max_request_body_bytes: usize,
    /// `--max-requests-inflight`: read-only requests in flight at most; 0 is no limit.
    pub max_requests_inflight: usize,
    /// `--max-mutating-requests-inflight`: mutating requests in flight at most; 0 is no
    /// limit.
    pub max_mutating_requests_inflight: usize,
    /// `--enable-priority-and-fairness`: fair queuing by FlowSchemas and priority
    /// levels instead of the two in-flight limits.
    pub priority_and_fairness: bool,
    /// `--disable-controllers`: the built-in controllers that run.
    pub controllers: apiary_core::controllers::enabled::Enabled,
    /// `--enable-admission-plugins`, `--disable-admission-plugins`: the admission
    /// plugins that run.
    pub admission_plugins: apiary_core::admission::plugins::Plugins,
    /// `--admission-control-config-file`, `--default-*-toleration-seconds`: what the
    /// admission plugins are configured with.
    pub admission_settings: apiary_core::admission::Settings,
    /// `--min-request-timeout`: the shortest time, in seconds, a watch without
    /// `timeoutSeconds` runs (it runs a random time between this and twice this).
    pub min_request_timeout: u64,
    /// `--request-timeout`: how long a request that is not a watch may take before it
    /// is answered 504, and how long in-flight requests may drain on shutdown.
    pub request_timeout: Duration,
    /// `--shutdown-delay-duration`: how long the server keeps serving, with /readyz
    /// failing, after SIGTERM before it stops taking requests.
    pub shutdown_delay: Duration,
    /// `--shutdown-send-retry-after`: answer requests arriving while in-flight ones drain
    /// with 429 and Retry-After instead of refusing connections.
    pub shutdown_send_retry_after: bool,
    /// `--audit-policy-file` and `--audit-log-*`: auditing, when both a policy and a
    /// log path are given.
    pub audit: Option<crate::audit_log::AuditOptions>,
    /// `--anonymous-auth`: requests without credentials are served as anonymous.
    pub anonymous_auth: bool,
    /// `--token-auth-file`: static bearer tokens.
    pub token_file: Option<std::sync::Arc<apiary_core::authn::TokenFile>>,
    /// `--tls-cert-file`, `--tls-private-key-file`, `--client-ca-file`,
    /// `--tls-min-version`, `--tls-cipher-suites`.
    pub tls: crate::tls::TlsOptions,
    /// `--proxy-client-*` and `--requestheader-*`.
    pub front_proxy: crate::front_proxy::FrontProxyOptions,
    /// `--authorization-mode`: the authorizers, asked in order.
    pub authorization_modes: Vec<apiary_core::authorization::Mode>,
    /// `--authorization-webhook-*`: the Webhook mode's service.
    pub authorization_webhook: Option<apiary_core::authorization::webhook::WebhookAuthorizerConfig>,
    /// `--authentication-token-webhook-*`: the token webhook.
    pub token_webhook: Option<apiary_core::authn::webhook::TokenWebhookConfig>,
    /// `--service-account-*` and `--api-audiences`: ServiceAccount tokens.
    pub service_accounts: apiary_core::authn::ServiceAccountTokens,
    /// `-v`/`--v`: log verbosity, as klog counts it.
    pub verbosity: u32,
}

impl Options {
    /// The options with every default, as if no flag were given.
    pub fn defaults() -> Options {
        match parse(Vec::<OsString>::new()) {
            Ok(Command::Serve(options)) => options,
            _ => unreachable!("the defaults are valid"),
        }
    }

    /// The sqlite database of `--storage=sqlite`.
    pub fn sqlite_path(&self) -> PathBuf {
        self.data_dir.join("state.db")
    }

    /// The path of the admin kubeconfig written on every start.
    pub fn kubeconfig_path(&self) -> PathBuf {
        self.data_dir.join("admin.kubeconfig")
    }
}

/// What the command line asks for.
// Made once per process: the size of `Options` does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Command {
    /// Run the server.
    Serve(Options),
    /// Print [`help`] and exit 0.
    Help,
    /// Print [`version`] and exit 0.
    Version,
}

/// The line `--version` prints.
pub fn version() -> String {
    format!("Kubernetes {GIT_VERSION}")
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Generic,
    SecureServing,
    Storage,
    Limits,
    Authentication,
    Authorization,
    Auditing,
    Logs,
    Global,
}

impl Section {
    const ORDER: [Section; 9] = [
        Section::Generic,
        Section::SecureServing,
        Section::Storage,
        Section::Limits,
        Section::Authentication,
        Section::Authorization,
        Section::Auditing,
        Section::Logs,
        Section::Global,
    ];

    fn title(self) -> &'static str {
        match self {
            Section::Generic => "Generic flags",
            Section::SecureServing => "Secure serving flags",
            Section::Storage => "Storage flags",
            Section::Limits => "Limits flags",
            Section::Authentication => "Authentication flags",
            Section::Authorization => "Authorization flags",
            Section::Auditing => "Auditing flags",
            Section::Logs => "Logs flags",
            Section::Global => "Global flags",
        }
    }
}

struct Flag {
    name: &'static str,
    short: Option<char>,
    section: Section,
    /// The value's type as help shows it; empty for a boolean flag.
    kind: &'static str,
    default: Option<&'static str>,
    usage: &'static str,
}

impl Flag {
    fn is_bool(&self) -> bool {
        self.kind.is_empty()
    }
}

const FLAGS: &[Flag] = &[
    Flag {
        name: "advertise-address",
        short: None,
        section: Section::Generic,
        kind: "ip",
        default: None,
        usage: "The address clients are told to use: reported in discovery, covered by the \
                serving certificate and written to admin.kubeconfig. Defaults to \
                --bind-address, or loopback when that is 0.0.0.0 or ::.",
    },
    Flag {
        name: "service-cluster-ip-range",
        short: None,
        section: Section::Generic,
        kind: "string",
        default: None,
        usage: "The CIDR Services' cluster IPs are given from (the ServiceCIDR `kubernetes`); \
                two, of different IP families and comma separated, for dual-stack. The \
                `kubernetes` Service gets its first address. Defaults to 10.0.0.0/24, as \
                kube-apiserver's.",
    },
    Flag {
        name: "service-node-port-range",
        short: None,
        section: Section::Generic,
        kind: "string",
        default: Some("30000-32767"),
        usage: "The ports NodePort and LoadBalancer Services' node ports are given from, \
                both ends included (`30000-32767`, or one port).",
    },
    Flag {
        name: "bind-address",
        short: None,
        section: Section::SecureServing,
        kind: "ip",
        default: Some("127.0.0.1"),
        usage: "The address to listen on. 0.0.0.0 (every IPv4 interface) or :: (every \
                interface) makes apiary reachable from other hosts.",
    },
    Flag {
        name: "cert-dir",
        short: None,
        section: Section::SecureServing,
        kind: "string",
        default: None,
        usage: "The directory where the TLS certificates are located: a CA, a serving \
                certificate signed by it and an admin client certificate are created there on \
                first start (no serving certificate with --tls-cert-file). (default \
                <data-dir>/pki)",
    },
    // Bring-your-own PKI, kube-apiserver's flags (see crate::tls::options).
    Flag {
        name: "tls-cert-file",
        short: None,
        section: Section::SecureServing,
        kind: "string",
        default: None,
        usage: "A PEM file holding the serving certificate, followed by its intermediate and \
                CA certificates, if any. With --tls-private-key-file it is served instead of \
                the certificate apiary generates in --cert-dir, and the admin kubeconfig \
                trusts what it holds. Read again every second: a changed pair is served to \
                new connections, a bad one logged and ignored.",
    },
    Flag {
        name: "tls-private-key-file",
        short: None,
        section: Section::SecureServing,
        kind: "string",
        default: None,
        usage: "The PEM private key matching --tls-cert-file.",
    },
    Flag {
        name: "tls-min-version",
        short: None,
        section: Section::SecureServing,
        kind: "string",
        default: None,
        usage: "The lowest TLS version served. Possible values: VersionTLS12, VersionTLS13 \
                (rustls implements no older version). Defaults to VersionTLS12.",
    },
    Flag {
        name: "tls-cipher-suites",
        short: None,
        section: Section::SecureServing,
        kind: "strings",
        default: None,
        usage: "Comma-separated list of the TLS 1.2 cipher suites served, by Go's names; \
                rustls's defaults when omitted. Possible values: \
                TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, \
                TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, \
                TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, \
                TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, \
                TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256. TLS 1.3 suites are always \
                enabled; naming them changes nothing, as in kube-apiserver.",
    },
    Flag {
        name: "client-ca-file",
        short: None,
        section: Section::Authentication,
        kind: "string",
        default: None,
        usage: "A PEM bundle of one or more CA certificates. A request presenting a client \
                certificate one of them signed is authenticated as the certificate's common \
                name, in the groups its organizations name; one none of them signed gets \
                401. Replaces apiary's own CA (the admin kubeconfig then authenticates only \
                if the bundle includes <cert-dir>/ca.crt). Read again every second, as \
                --tls-cert-file.",
    },
    Flag {
        name: "secure-port",
        short: None,
        section: Section::SecureServing,
        kind: "int",
        default: Some("6443"),
        usage: "The HTTPS port. 0 picks a free port; the ready line and the kubeconfig show \
                the port chosen.",
    },
    Flag {
        name: "http2-max-streams-per-connection",
        short: None,
        section: Section::SecureServing,
        kind: "int",
        default: Some("0"),
        usage: "The limit that the server gives to clients for the maximum number of streams \
                in an HTTP/2 connection. Zero means to use kube-apiserver's default (100).",
    },
    Flag {
        name: "goaway-chance",
        short: None,
        section: Section::Generic,
        kind: "float",
        default: Some("0"),
        usage: "To prevent HTTP/2 clients from getting stuck on a single apiserver, randomly \
                close a connection (GOAWAY). The client's other in-flight requests won't be \
                affected, and the client will reconnect, likely landing on a different \
                apiserver after going through the load balancer again. This argument sets \
                the fraction of requests that will be sent a GOAWAY. Clusters with single \
                apiservers, or which don't use a load balancer, should NOT enable this. Min \
                is 0 (off), Max is .02 (1/50 requests); .001 (1/1000) is a recommended \
                starting point.",
    },
    Flag {
        name: "data-dir",
        short: None,
        section: Section::Storage,
        kind: "string",
        default: Some("./.apiary"),
        usage: "The directory holding apiary's state: certificates, admin.kubeconfig and \
                the data of file-based storage backends.",
    },
    Flag {
        name: "etcd-prefix",
        short: None,
        section: Section::Storage,
        kind: "string",
        default: Some("/registry"),
        usage: "The key prefix every object is stored under.",
    },
    Flag {
        name: "storage",
        short: None,
        section: Section::Storage,
        kind: "string",
        default: Some("sqlite"),
        usage: "The storage backend. One of: sqlite (one durable file, <data-dir>/state.db), \
                memory (everything is lost when apiary exits), etcd (an etcd cluster, \
                --etcd-servers).",
    },
    Flag {
        name: "etcd-servers",
        short: None,
        section: Section::Storage,
        kind: "strings",
        default: None,
        usage: "List of etcd servers to connect with (scheme://ip:port), comma separated. \
                Required with --storage=etcd; the next one is tried when one fails.",
    },
    Flag {
        name: "etcd-cafile",
        short: None,
        section: Section::Storage,
        kind: "string",
        default: None,
        usage: "SSL Certificate Authority file used to secure etcd communication.",
    },
    Flag {
        name: "etcd-certfile",
        short: None,
        section: Section::Storage,
        kind: "string",
        default: None,
        usage: "SSL certification file used to secure etcd communication.",
    },
    Flag {
        name: "etcd-keyfile",
        short: None,
        section: Section::Storage,
        kind: "string",
        default: None,
        usage: "SSL key file used to secure etcd communication.",
    },
    Flag {
        name: "sqlite-synchronous",
        short: None,
        section: Section::Storage,
        kind: "string",
        default: Some("full"),
        usage: "How durable a sqlite write is before it is answered. full: on disk, \
                surviving a power loss; normal: surviving a crash of apiary, but the last \
                writes may be lost with the machine's power.",
    },
    Flag {
        name: "etcd-compaction-interval",
        short: None,
        section: Section::Storage,
        kind: "duration",
        default: Some("5m0s"),
        usage: "The interval of compaction requests: each compacts away the history older \
                than the revision seen at the previous one. 0 disables compaction.",
    },
    Flag {
        name: "enable-priority-and-fairness",
        short: None,
        section: Section::Generic,
        kind: "",
        default: Some("true"),
        usage: "If true, requests are classified by FlowSchemas and queued and dispatched \
                fairly by priority level (API Priority and Fairness), the levels sharing \
                --max-requests-inflight plus --max-mutating-requests-inflight seats; if \
                false, the two in-flight limits apply as they are.",
    },
    Flag {
        name: "max-mutating-requests-inflight",
        short: None,
        section: Section::Generic,
        kind: "int",
        default: Some("200"),
        usage: "This flag limits the maximum number of mutating requests in flight, or a zero \
                value disables the limit completely. Requests over the limit are answered 429 \
                with Retry-After; watches are not counted.",
    },
    Flag {
        name: "max-request-body-bytes",
        short: None,
        section: Section::Limits,
        kind: "int",
        default: Some("3145728"),
        usage: "The largest request body, in bytes, the server accepts; larger requests are \
                rejected with 413.",
    },
    Flag {
        name: "max-requests-inflight",
        short: None,
        section: Section::Generic,
        kind: "int",
        default: Some("400"),
        usage: "This flag limits the maximum number of non-mutating requests in flight, or a \
                zero value disables the limit completely. Requests over the limit are answered \
                429 with Retry-After; watches and health checks are not counted.",
    },
    Flag {
        name: "enable-admission-plugins",
        short: None,
        section: Section::Generic,
        kind: "strings",
        default: None,
        usage: "admission plugins that should be enabled in addition to default enabled ones \
                (NamespaceLifecycle, LimitRanger, ServiceAccount, TaintNodesByCondition, \
                PodSecurity, Priority, DefaultTolerationSeconds, DefaultStorageClass, \
                StorageObjectInUseProtection, PersistentVolumeClaimResize, RuntimeClass, \
                CertificateApproval, CertificateSigning, ClusterTrustBundleAttest, \
                CertificateSubjectRestriction, DefaultIngressClass, PodTopologyLabels, \
                MutatingAdmissionPolicy, MutatingAdmissionWebhook, ValidatingAdmissionPolicy, \
                ValidatingAdmissionWebhook, ResourceQuota), by kube-apiserver v1.33's names; \
                the order does not matter. Of these Apiary carries out NamespaceLifecycle, \
                LimitRanger, ServiceAccount, TaintNodesByCondition, PodSecurity, Priority, \
                DefaultTolerationSeconds, DefaultStorageClass, StorageObjectInUseProtection, \
                RuntimeClass, CertificateApproval, CertificateSigning, \
                CertificateSubjectRestriction, DefaultIngressClass, MutatingAdmissionWebhook, \
                ValidatingAdmissionPolicy, ValidatingAdmissionWebhook and ResourceQuota; \
                the others, and the default-off plugins, are accepted and do nothing yet.",
    },
    Flag {
        name: "admission-control-config-file",
        short: None,
        section: Section::Generic,
        kind: "string",
        default: None,
        usage: "File with admission control configuration (an AdmissionConfiguration of \
                apiserver.config.k8s.io/v1). Apiary reads PodSecurity's \
                PodSecurityConfiguration: default levels and exemptions.",
    },
    Flag {
        name: "default-not-ready-toleration-seconds",
        short: None,
        section: Section::Generic,
        kind: "int",
        default: Some("300"),
        usage: "Indicates the tolerationSeconds of the toleration for notReady:NoExecute \
                that is added by default to every pod that does not already have such a toleration.",
    },
    Flag {
        name: "default-unreachable-toleration-seconds",
        short: None,
        section: Section::Generic,
        kind: "int",
        default: Some("300"),
        usage: "Indicates the tolerationSeconds of the toleration for unreachable:NoExecute \
                that is added by default to every pod that does not already have such a toleration.",
    },
    Flag {
        name: "disable-admission-plugins",
        short: None,
        section: Section::Generic,
        kind: "strings",
        default: None,
        usage: "admission plugins that should be disabled although they are in the default \
                enabled plugins list, by kube-apiserver v1.33's names.",
    },
    Flag {
        name: "disable-controllers",
        short: None,
        section: Section::Generic,
        kind: "strings",
        default: None,
        usage: "The built-in controllers not to run, comma separated, by \
                kube-controller-manager's names (or their aliases): \
                clusterrole-aggregation-controller, garbage-collector-controller, \
                namespace-controller, resourcequota-controller, \
                root-ca-certificate-publisher-controller, serviceaccount-controller. Switch off those a real kube-controller-manager \
                runs against this server; the API itself behaves the same.",
    },
    Flag {
        name: "min-request-timeout",
        short: None,
        section: Section::Generic,
        kind: "int",
        default: Some("1800"),
        usage: "How many seconds, at least, a watch without timeoutSeconds stays open: each \
                such watch ends after a random time between this and twice this, so that \
                clients do not all reconnect at once.",
    },
    Flag {
        name: "request-timeout",
        short: None,
        section: Section::Generic,
        kind: "duration",
        default: Some("1m0s"),
        usage: "How long a request may take before the server gives up on it and answers 504 \
                with a Status. Watches and other long-running requests are not bound by it \
                (see --min-request-timeout). On shutdown, in-flight requests are waited for \
                this long at most.",
    },
    Flag {
        name: "shutdown-delay-duration",
        short: None,
        section: Section::Generic,
        kind: "duration",
        default: Some("0s"),
        usage: "How long to keep serving after SIGTERM or SIGINT before graceful termination \
                begins. Meanwhile /readyz fails while /livez and /healthz pass, so that load \
                balancers take the server out of rotation before it stops taking requests.",
    },
    Flag {
        name: "shutdown-send-retry-after",
        short: None,
        section: Section::Generic,
        kind: "",
        default: None,
        usage: "When set, the listener stays open while in-flight requests drain on \
                shutdown, and every new request is answered 429 with a Retry-After header and \
                Connection: close, instead of the connection being refused.",
    },
    Flag {
        name: "anonymous-auth",
        short: None,
        section: Section::Authentication,
        kind: "",
        default: Some("true"),
        usage: "Requests without credentials act as system:anonymous (in \
                system:unauthenticated), allowed what authorization allows them (with \
                RBAC's bootstrap policy: GET /healthz, /livez, /readyz and /version). \
                With --anonymous-auth=false they get 401 on every path.",
    },
    Flag {
        name: "token-auth-file",
        short: None,
        section: Section::Authentication,
        kind: "string",
        default: None,
        usage: "A CSV file of static bearer tokens, one per line: token,user,uid and, \
                optionally, a quoted comma-separated list of groups. A request with \
                'Authorization: Bearer <token>' acts as that user; an unknown token gets 401. \
                Read once at start.",
    },
    Flag {
        name: "requestheader-client-ca-file",
        short: None,
        section: Section::Authentication,
        kind: "string",
        default: None,
        usage: "Root certificate bundle to use to verify client certificates on incoming \
                requests before trusting usernames in headers specified by \
                --requestheader-username-headers. WARNING: generally do not depend on \
                authorization being already done for incoming requests. (Apiary: without it, \
                and without --proxy-client-cert-file, the front-proxy CA Apiary generates in \
                --cert-dir, with kubeadm's values for the other --requestheader-* flags not \
                given.)",
    },
    Flag {
        name: "requestheader-allowed-names",
        short: None,
        section: Section::Authentication,
        kind: "strings",
        default: None,
        usage: "List of client certificate common names to allow to provide usernames in \
                headers specified by --requestheader-username-headers. If empty, any client \
                certificate validated by the authorities in --requestheader-client-ca-file is \
                allowed.",
    },
    Flag {
        name: "requestheader-username-headers",
        short: None,
        section: Section::Authentication,
        kind: "strings",
        default: None,
        usage: "List of request headers to inspect for usernames. X-Remote-User is common.",
    },
    Flag {
        name: "requestheader-group-headers",
        short: None,
        section: Section::Authentication,
        kind: "strings",
        default: None,
        usage: "List of request headers to inspect for groups. X-Remote-Group is suggested.",
    },
    Flag {
        name: "requestheader-extra-headers-prefix",
        short: None,
        section: Section::Authentication,
        kind: "strings",
        default: None,
        usage: "List of request header prefixes to inspect. X-Remote-Extra- is suggested.",
    },
    Flag {
        name: "proxy-client-cert-file",
        short: None,
        section: Section::Generic,
        kind: "string",
        default: None,
        usage: "Client certificate used to prove the identity of the aggregator or \
                kube-apiserver when it must call out during a request. This includes proxying \
                requests to a user api-server. It is expected that this cert includes a \
                signature from the CA in the --requestheader-client-ca-file flag. That CA is \
                published in the 'extension-apiserver-authentication' configmap in the \
                kube-system namespace. (Apiary: without it, <cert-dir>/front-proxy-client.crt, \
                generated with its CA front-proxy-ca.crt as kubeadm lays them out.)",
    },
    Flag {
        name: "proxy-client-key-file",
        short: None,
        section: Section::Generic,
        kind: "string",
        default: None,
        usage: "Private key for the client certificate used to prove the identity of the \
                aggregator or kube-apiserver when it must call out during a request. This \
                includes proxying requests to a user api-server.",
    },
    Flag {
        name: "authorization-mode",
        short: None,
        section: Section::Authorization,
        kind: "strings",
        default: Some("RBAC"),
        usage: "Ordered list of plug-ins to do authorization on the secure port: a comma list \
                of AlwaysAllow, AlwaysDeny, RBAC and Webhook. The first to allow or deny a \
                request decides; system:masters is always allowed. (kube-apiserver's default \
                is AlwaysAllow; Apiary's is RBAC. Node is not implemented yet.)",
    },
    Flag {
        name: "authorization-webhook-config-file",
        short: None,
        section: Section::Authorization,
        kind: "string",
        default: None,
        usage: "File with webhook configuration in kubeconfig format, used with \
                --authorization-mode=Webhook. The API server will query the remote service \
                to determine access on the API server's secure port.",
    },
    Flag {
        name: "authorization-webhook-version",
        short: None,
        section: Section::Authorization,
        kind: "string",
        default: Some("v1beta1"),
        usage: "The API version of the authorization.k8s.io SubjectAccessReview to send to \
                and expect from the webhook.",
    },
    Flag {
        name: "authorization-webhook-cache-authorized-ttl",
        short: None,
        section: Section::Authorization,
        kind: "duration",
        default: Some("5m0s"),
        usage: "The duration to cache 'authorized' responses from the webhook authorizer.",
    },
    Flag {
        name: "authorization-webhook-cache-unauthorized-ttl",
        short: None,
        section: Section::Authorization,
        kind: "duration",
        default: Some("30s"),
        usage: "The duration to cache 'unauthorized' responses from the webhook authorizer.",
    },
    Flag {
        name: "authentication-token-webhook-config-file",
        short: None,
        section: Section::Authentication,
        kind: "string",
        default: None,
        usage: "File with webhook configuration for token authentication in kubeconfig \
                format. The API server will query the remote service to determine \
                authentication for bearer tokens no other authenticator accepts.",
    },
    Flag {
        name: "authentication-token-webhook-version",
        short: None,
        section: Section::Authentication,
        kind: "string",
        default: Some("v1beta1"),
        usage: "The API version of the authentication.k8s.io TokenReview to send to and \
                expect from the webhook.",
    },
    Flag {
        name: "authentication-token-webhook-cache-ttl",
        short: None,
        section: Section::Authentication,
        kind: "duration",
        default: Some("2m0s"),
        usage: "The duration to cache responses from the webhook token authenticator.",
    },
    Flag {
        name: "api-audiences",
        short: None,
        section: Section::Authentication,
        kind: "strings",
        default: None,
        usage: "Identifiers of the API, comma separated. ServiceAccount tokens used against \
                the API must be meant for at least one of them, and TokenRequests that ask \
                for no audience get them. Defaults to the --service-account-issuer values.",
    },
    Flag {
        name: "service-account-extend-token-expiration",
        short: None,
        section: Section::Authentication,
        kind: "",
        default: Some("true"),
        usage: "Pod-bound tokens requested for 3607 seconds (what kubelets ask for) are \
                issued for a year, and are marked stale after the requested time.",
    },
    Flag {
        name: "service-account-issuer",
        short: None,
        section: Section::Authentication,
        kind: "stringArray",
        default: Some("https://kubernetes.default.svc.cluster.local"),
        usage: "Identifier of the ServiceAccount token issuer: the iss claim of the tokens \
                this server issues. May be repeated: tokens of every issuer given are \
                accepted, and the first one issues new tokens. The default is kubeadm's.",
    },
    Flag {
        name: "service-account-key-file",
        short: None,
        section: Section::Authentication,
        kind: "stringArray",
        default: None,
        usage: "A PEM file of public or private keys (RSA or ECDSA, or certificates) that \
                verify ServiceAccount tokens. May be repeated. Defaults to the public half \
                of the signing key.",
    },
    Flag {
        name: "service-account-max-token-expiration",
        short: None,
        section: Section::Authentication,
        kind: "duration",
        default: Some("0s"),
        usage: "The longest validity of a token issued by TokenRequest; longer requests are \
                shortened to it, with a warning. Between 1h and 2^32 seconds; 0 sets no \
                maximum.",
    },
    Flag {
        name: "service-account-signing-key-file",
        short: None,
        section: Section::Authentication,
        kind: "string",
        default: None,
        usage: "The PEM private key (RSA, or ECDSA on P-256 or P-384) that signs \
                ServiceAccount tokens. Without it, an ECDSA P-256 key is created in \
                <cert-dir>/sa.key on first start (its public half in sa.pub) and used \
                after.",
    },
    Flag {
        name: "audit-log-format",
        short: None,
        section: Section::Auditing,
        kind: "string",
        default: Some("json"),
        usage: "How each audit event is written: json, one audit.k8s.io/v1 Event object per \
                line. kube-apiserver's legacy text format is not supported.",
    },
    Flag {
        name: "audit-log-maxage",
        short: None,
        section: Section::Auditing,
        kind: "int",
        default: Some("0"),
        usage: "Rotated audit log files older than this many days (by the time in their \
                names) are deleted; 0 keeps them whatever their age.",
    },
    Flag {
        name: "audit-log-maxbackup",
        short: None,
        section: Section::Auditing,
        kind: "int",
        default: Some("0"),
        usage: "How many rotated audit log files to keep, newest first; 0 keeps them all.",
    },
    Flag {
        name: "audit-log-maxsize",
        short: None,
        section: Section::Auditing,
        kind: "int",
        default: Some("0"),
        usage: "The size in megabytes at which the audit log file is rotated: renamed with \
                the time in its name, and a new file begun. 0 means 100.",
    },
    Flag {
        name: "audit-log-path",
        short: None,
        section: Section::Auditing,
        kind: "string",
        default: None,
        usage: "The file audit events are appended to, one JSON line each ('-' for \
                standard output). Auditing is on only with both this and --audit-policy-file.",
    },
    Flag {
        name: "audit-policy-file",
        short: None,
        section: Section::Auditing,
        kind: "string",
        default: None,
        usage: "An audit.k8s.io/v1 Policy (YAML or JSON): which requests are recorded, at \
                which level and stages.",
    },
    Flag {
        name: "v",
        short: Some('v'),
        section: Section::Logs,
        kind: "int",
        default: Some("0"),
        usage: "Number for the log level verbosity: 0-2 info, 3-5 debug, 6 and more trace. \
                RUST_LOG (e.g. apiary_core=debug,info), when set, takes precedence.",
    },
    Flag {
        name: "help",
        short: Some('h'),
        section: Section::Global,
        kind: "",
        default: None,
        usage: "help for apiary",
    },
    Flag {
        name: "version",
        short: None,
        section: Section::Global,
        kind: "",
        default: None,
        usage: "Print version information and quit.",
    },
];

/// The text `--help` prints.
/// `--authorization-mode`, checked as upstream checks it: known modes, each once.
fn authorization_modes(value: &str, problems: &mut Vec<String>) -> Vec<apiary_core::authorization::Mode> {
    use apiary_core::authorization::Mode;
    let mut modes = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for name in value.split(',').map(str::trim) {
        if seen.contains(&name) {
            problems.push(format!("authorization-mode {name:?} has mode specified more than once"));
            continue;
        }
        seen.push(name);
        match Mode::parse(name) {
            Some(mode) => modes.push(mode),
            None if ["Node", "ABAC"].contains(&name) => {
                problems.push(format!("authorization-mode {name:?} is not implemented by apiary yet"))
            }
            None => problems.push(format!(
                "authorization-mode {name:?} is not a valid mode (valid: AlwaysAllow, AlwaysDeny, RBAC)"
            )),
        }
    }
    modes
}

pub fn help() -> String {
    let mut out = String::new();
    for line in wrap(
        "Apiary is a Kubernetes API server: it validates and configures data for the API \
         objects (pods, services, namespaces, custom resources and others) and serves them \
         to kubectl and every other Kubernetes client.",
        100,
    ) {
        let _ = writeln!(out, "{line}");
    }
    out.push_str("\nUsage:\n  apiary [flags]\n");
    for section in Section::ORDER {
        // Alphabetical within a section, as kube-apiserver lists them.
        let mut flags: Vec<&Flag> = FLAGS.iter().filter(|f| f.section == section).collect();
        flags.sort_by_key(|f| f.name);
        let heads: Vec<String> = flags
            .iter()
            .map(|f| {
                let short = match f.short {
                    Some(c) => format!("-{c}, "),
                    None => "    ".to_owned(),
                };
                let kind = if f.is_bool() {
                    String::new()
                } else {
                    format!(" {}", f.kind)
                };
                format!("  {short}--{}{kind}", f.name)
            })
            .collect();
        let width = heads.iter().map(String::len).max().unwrap_or(0) + 3;
        let _ = write!(out, "\n{}:\n\n", section.title());
        for (flag, head) in flags.iter().zip(heads) {
            let mut text = flag.usage.to_owned();
            if let Some(default) = flag.default {
                if flag.kind == "string" {
                    let _ = write!(text, " (default \"{default}\")");
                } else {
                    let _ = write!(text, " (default {default})");
                }
            }
            let lines = wrap(&text, 100usize.saturating_sub(width).max(40));
            for (i, line) in lines.iter().enumerate() {
                if i == 0 {
                    let _ = writeln!(out, "{head:width$}{line}");
                } else {
                    let _ = writeln!(out, "{:width$}{line}", "");
                }
            }
        }
    }
    out
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// Parse the arguments after the program name. Every problem found is returned, one
/// line each, in the order of the arguments and then of the flags.
pub fn parse<I, A>(args: I) -> Result<Command, Vec<String>>
where
    I: IntoIterator<Item = A>,
    A: Into<OsString>,
{
    let mut problems = Vec::new();
    // Last occurrence wins, as with pflag.
    let mut values: Vec<(&'static str, String)> = Vec::new();
    let mut help = false;
    let mut version = false;

    let mut args = args.into_iter().map(Into::into);
    let mut only_positional = false;
    while let Some(arg) = args.next() {
        let Some(arg) = arg.to_str().map(str::to_owned) else {
            problems.push(format!(
                "argument {:?} is not valid UTF-8",
                arg.to_string_lossy()
            ));
            continue;
        };
        if only_positional || !arg.starts_with('-') || arg == "-" {
            problems.push(format!(
                "unexpected argument {arg:?}: apiary takes no positional arguments"
            ));
            continue;
        }
        if arg == "--" {
            only_positional = true;
            continue;
        }
        // Split `--name=value`, `-n=value` and `-nvalue`.
        let (flag, inline_value, shown) = if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (long, None),
            };
            match FLAGS.iter().find(|f| f.name == name) {
                Some(flag) => (flag, value, format!("--{name}")),
                None => {
                    problems.push(format!("unknown flag: --{name}"));
                    continue;
                }
            }
        } else {
            let short_part = &arg[1..];
            let c = short_part.chars().next().expect("checked non-empty");
            let rest = &short_part[c.len_utf8()..];
            match FLAGS.iter().find(|f| f.short == Some(c)) {
                Some(flag) => {
                    let value = if let Some(v) = rest.strip_prefix('=') {
                        Some(v.to_owned())
                    } else if rest.is_empty() {
                        None
                    } else if flag.is_bool() {
                        problems.push(format!("unknown shorthand flag: {rest:?} in {arg}"));
                        continue;
                    } else {
                        Some(rest.to_owned())
                    };
                    (flag, value, format!("-{c}"))
                }
                None => {
                    problems.push(format!("unknown shorthand flag: '{c}' in {arg}"));
                    continue;
                }
            }
        };
        if flag.is_bool() {
            let on = match inline_value {
                None => true,
                Some(v) => match parse_bool(&v) {
                    Some(b) => b,
                    None => {
                        problems.push(format!(
                            "invalid value {v:?} for {shown}: must be true or false"
                        ));
                        continue;
                    }
                },
            };
            match flag.name {
                "help" => help = on,
                "version" => version = on,
                name => {
                    values.retain(|(n, _)| *n != name);
                    values.push((flag.name, on.to_string()));
                }
            }
            continue;
        }
        let value = match inline_value {
            Some(v) => v,
            None => match args.next() {
                Some(v) => match v.into_string() {
                    Ok(v) => v,
                    Err(v) => {
                        problems.push(format!(
                            "invalid value {:?} for {shown}: not valid UTF-8",
                            v.to_string_lossy()
                        ));
                        continue;
                    }
                },
                None => {
                    problems.push(format!("flag needs an argument: {shown}"));
                    continue;
                }
            },
        };
        // A repeated stringArray flag adds a value, as pflag's StringArray does.
        if flag.kind != "stringArray" {
            values.retain(|(name, _)| *name != flag.name);
        }
        values.push((flag.name, value));
    }

    if help {
        return Ok(Command::Help);
    }
    if version && problems.is_empty() {
        return Ok(Command::Version);
    }

    let get = |name: &str| -> Option<&str> {
        values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
            .or_else(|| {
                FLAGS
                    .iter()
                    .find(|f| f.name == name)
                    .and_then(|f| f.default)
            })
    };

    // Every value of a repeatable flag, or its default.
    let get_all = |name: &str| -> Vec<&str> {
        let given: Vec<&str> = values
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
            .collect();
        if !given.is_empty() {
            return given;
        }
        FLAGS
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| f.default)
            .into_iter()
            .collect()
    };

    let ip = |name: &str, problems: &mut Vec<String>| -> Option<IpAddr> {
        let value = get(name)?;
        match value.parse::<IpAddr>() {
            Ok(ip) => Some(ip),
            Err(_) => {
                problems.push(format!(
                    "invalid value {value:?} for --{name}: must be an IP address"
                ));
                None
            }
        }
    };

    let bind_address = ip("bind-address", &mut problems);
    let advertise_address = match get("advertise-address") {
        Some(_) => ip("advertise-address", &mut problems),
        None => None,
    };
    if let Some(a) = advertise_address {
        if a.is_unspecified() {
            problems.push(format!(
                "invalid value \"{a}\" for --advertise-address: must be a specific address, \
                 not unspecified"
            ));
        }
    }

    let secure_port = {
        let value = get("secure-port").unwrap_or_default();
        match value.parse::<u16>() {
            Ok(port) => Some(port),
            Err(_) => {
                problems.push(format!(
                    "invalid value {value:?} for --secure-port: must be a port number \
                     (0 to 65535; 0 picks a free port)"
                ));
                None
            }
        }
    };

    let http2_max_streams_per_connection = {
        let value = get("http2-max-streams-per-connection").unwrap_or_default();
        match value.parse::<i64>() {
            // Upstream's flag is a Go int: zero or less is the default.
            Ok(n) => Some(u32::try_from(n.max(0)).unwrap_or(u32::MAX)),
            Err(_) => {
                // pflag's words for an int it cannot parse.
                problems.push(format!(
                    "invalid argument {value:?} for \"--http2-max-streams-per-connection\" flag: \
                     strconv.ParseInt: parsing {value:?}: invalid syntax"
                ));
                None
            }
        }
    };

    let goaway_chance = {
        let value = get("goaway-chance").unwrap_or("0");
        match value.parse::<f64>() {
            // Upstream's check of the option, in its words.
            Ok(chance) if !(0.0..=0.02).contains(&chance) => {
                problems.push("--goaway-chance can not be less than 0 or greater than 0.02".to_owned());
                None
            }
            Ok(chance) => Some(chance),
            Err(_) => {
                problems.push(format!(
                    "invalid argument {value:?} for \"--goaway-chance\" flag: strconv.ParseFloat: parsing {value:?}: invalid syntax"
                ));
                None
            }
        }
    };

    let storage = {
        let value = get("storage").unwrap_or_default();
        match StorageKind::ALL.iter().find(|(name, _)| *name == value) {
            Some((_, kind)) => Some(*kind),
            None => {
                let names: Vec<&str> = StorageKind::ALL.iter().map(|(n, _)| *n).collect();
                problems.push(format!(
                    "invalid value {value:?} for --storage: must be one of: {}",
                    names.join(", ")
                ));
                None
            }
        }
    };

    let absolute = |name: &str, value: &str, problems: &mut Vec<String>| -> Option<PathBuf> {
        if value.is_empty() {
            problems.push(format!(
                "invalid value \"\" for --{name}: must not be empty"
            ));
            return None;
        }
        match std::path::absolute(value) {
            Ok(path) => Some(path),
            Err(e) => {
                problems.push(format!("invalid value {value:?} for --{name}: {e}"));
                None
            }
        }
    };
    let data_dir = absolute(
        "data-dir",
        get("data-dir").unwrap_or_default(),
        &mut problems,
    );
    let cert_dir = match get("cert-dir") {
        Some(value) => absolute("cert-dir", value, &mut problems),
        None => data_dir.as_ref().map(|d| d.join("pki")),
    };

    let etcd_prefix = {
        let value = get("etcd-prefix").unwrap_or_default();
        if !value.starts_with('/') {
            problems.push(format!(
                "invalid value {value:?} for --etcd-prefix: must start with \"/\""
            ));
            None
        } else {
            Some(value.to_owned())
        }
    };

    let service_network = {
        use apiary_core::service_network::{PortRange, ServiceNetwork, DEFAULT_CLUSTER_IP_RANGE};
        let cidrs = get("service-cluster-ip-range").unwrap_or(DEFAULT_CLUSTER_IP_RANGE);
        let ports = get("service-node-port-range").unwrap_or_default();
        let ranges = ServiceNetwork::parse_cluster_ip_ranges(cidrs)
            .map_err(|why| format!("invalid value {cidrs:?} for --service-cluster-ip-range: {why}"));
        let ports = PortRange::parse(ports)
            .map_err(|why| format!("invalid value {ports:?} for --service-node-port-range: {why}"));
        match (ranges, ports) {
            (Ok(cluster_ip_ranges), Ok(node_ports)) => Some(ServiceNetwork { cluster_ip_ranges, node_ports }),
            (ranges, ports) => {
                problems.extend(ranges.err().into_iter().chain(ports.err()));
                None
            }
        }
    };

    let etcd_servers: Vec<String> = get("etcd-servers")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    for server in &etcd_servers {
        if let Err(e) = apiary_etcd::grpc::Endpoint::parse(server) {
            problems.push(format!("invalid value for --etcd-servers: {e}"));
        }
    }
    if storage == Some(StorageKind::Etcd) && etcd_servers.is_empty() {
        problems.push("--etcd-servers must be set with --storage=etcd".to_owned());
    }
    let etcd_file = |name: &str, problems: &mut Vec<String>| match get(name) {
        Some(value) => absolute(name, value, problems),
        None => None,
    };
    let etcd_tls = {
        let ca = etcd_file("etcd-cafile", &mut problems);
        let cert = etcd_file("etcd-certfile", &mut problems);
        let key = etcd_file("etcd-keyfile", &mut problems);
        if cert.is_some() != key.is_some() {
            problems.push("--etcd-certfile and --etcd-keyfile must be given together".to_owned());
        }
        (ca.is_some() || cert.is_some() || key.is_some()).then_some(apiary_etcd::TlsFiles {
            ca,
            cert,
            key,
        })
    };

    let sqlite_synchronous = {
        let value = get("sqlite-synchronous").unwrap_or_default();
        match value.to_ascii_lowercase().as_str() {
            "full" => Some(apiary_sqlite::Synchronous::Full),
            "normal" => Some(apiary_sqlite::Synchronous::Normal),
            _ => {
                problems.push(format!(
                    "invalid value {value:?} for --sqlite-synchronous: must be one of: full, normal"
                ));
                None
            }
        }
    };

    let compaction_interval = {
        let value = get("etcd-compaction-interval").unwrap_or_default();
        match apiary_core::duration::parse_duration(value) {
            Ok(interval) => Some((!interval.is_zero()).then_some(interval)),
            Err(e) => {
                problems.push(format!(
                    "invalid value {value:?} for --etcd-compaction-interval: {e}"
                ));
                None
            }
        }
    };

    let max_request_body_bytes = {
        let value = get("max-request-body-bytes").unwrap_or_default();
        match value.parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                problems.push(format!(
                    "invalid value {value:?} for --max-request-body-bytes: must be a positive \
                     number of bytes"
                ));
                None
            }
        }
    };

    let mut inflight_limit = |flag: &str| {
        let value = get(flag).unwrap_or_default();
        match value.parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => {
                problems.push(format!(
                    "invalid value {value:?} for --{flag}: must be a non-negative integer (0 \
                     disables the limit)"
                ));
                None
            }
        }
    };
    let max_requests_inflight = inflight_limit("max-requests-inflight");
    let max_mutating_requests_inflight = inflight_limit("max-mutating-requests-inflight");

    let disabled_controllers: Vec<String> =
        get("disable-controllers").unwrap_or_default().split(',').map(|c| c.trim().to_owned()).collect();
    let controllers = {
        let names: Vec<&str> = disabled_controllers.iter().map(String::as_str).collect();
        match apiary_core::controllers::enabled::Enabled::without(&names) {
            Ok(enabled) => Some(enabled),
            Err(e) => {
                problems.push(format!("invalid value for --disable-controllers: {e}"));
                None
            }
        }
    };

    let admission_plugins = {
        let list = |flag: &str| get(flag).unwrap_or_default().split(',').map(str::to_owned).collect::<Vec<String>>();
        let (enable, disable) = (list("enable-admission-plugins"), list("disable-admission-plugins"));
        let (enable, disable): (Vec<&str>, Vec<&str>) =
            (enable.iter().map(String::as_str).collect(), disable.iter().map(String::as_str).collect());
        match apiary_core::admission::plugins::Plugins::choose(&enable, &disable) {
            Ok(plugins) => Some(plugins),
            Err(errors) => {
                problems.extend(errors);
                None
            }
        }
    };

    let admission_settings = {
        let mut settings = apiary_core::admission::Settings::default();
        for (flag, seconds) in [
            ("default-not-ready-toleration-seconds", &mut settings.not_ready_toleration_seconds),
            ("default-unreachable-toleration-seconds", &mut settings.unreachable_toleration_seconds),
        ] {
            match get(flag).unwrap_or("300").parse::<i64>() {
                Ok(n) => *seconds = n,
                Err(_) => problems.push(format!("invalid value for --{flag}: must be an integer")),
            }
        }
        match get("admission-control-config-file").filter(|p| !p.is_empty()) {
            None => Some(settings),
            Some(path) => {
                let dir = std::path::Path::new(path).parent().map(std::path::Path::to_path_buf).unwrap_or_default();
                let read_plugin = |p: &str| std::fs::read(dir.join(p)).map_err(|e| e.to_string());
                let applied = std::fs::read(path)
                    .map_err(|e| format!("failed to read admission control configuration from {path:?} [{e}]"))
                    .and_then(|text| apiary_core::admission::config_file::apply(&text, settings, read_plugin));
                match applied {
                    Ok(settings) => Some(settings),
                    Err(e) => {
                        problems.push(e);
                        None
                    }
                }
            }
        }
    };

    let min_request_timeout = {
        let value = get("min-request-timeout").unwrap_or_default();
        match value.parse::<u64>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                problems.push(format!(
                    "invalid value {value:?} for --min-request-timeout: must be a positive \
                     number of seconds"
                ));
                None
            }
        }
    };

    let mut duration = |flag: &str, zero_allowed: bool| {
        let value = get(flag).unwrap_or_default();
        match apiary_core::duration::parse_duration(value) {
            Ok(d) if zero_allowed || !d.is_zero() => Some(d),
            Ok(_) => {
                problems.push(format!(
                    "invalid value {value:?} for --{flag}: must be greater than 0"
                ));
                None
            }
            Err(e) => {
                problems.push(format!("invalid value {value:?} for --{flag}: {e}"));
                None
            }
        }
    };
    let request_timeout = duration("request-timeout", false);
    let shutdown_delay = duration("shutdown-delay-duration", true);
    let shutdown_send_retry_after = get("shutdown-send-retry-after") == Some("true");

    let audit = crate::audit_log::options_from_flags(
        crate::audit_log::Flags {
            policy_file: get("audit-policy-file"),
            path: get("audit-log-path"),
            max_size: get("audit-log-maxsize").unwrap_or_default(),
            max_backup: get("audit-log-maxbackup").unwrap_or_default(),
            max_age: get("audit-log-maxage").unwrap_or_default(),
            format: get("audit-log-format").unwrap_or_default(),
        },
        &mut problems,
    );

    let anonymous_auth = get("anonymous-auth") != Some("false");
    let priority_and_fairness = get("enable-priority-and-fairness") != Some("false");
    let token_file = get("token-auth-file").and_then(|path| {
        let read = std::fs::read_to_string(path)
            .map_err(|e| format!("reading --token-auth-file {path}: {e}"))
            .and_then(|text| apiary_core::authn::TokenFile::parse(path, &text));
        match read {
            Ok(file) => Some(std::sync::Arc::new(file)),
            Err(e) => {
                problems.push(e);
                None
            }
        }
    });

    let tls = crate::tls::options_from_flags(
        crate::tls::Flags {
            client_ca_file: get("client-ca-file"),
            cert_file: get("tls-cert-file"),
            key_file: get("tls-private-key-file"),
            min_version: get("tls-min-version"),
            cipher_suites: get("tls-cipher-suites"),
        },
        &mut problems,
    );

    let front_proxy = crate::front_proxy::from_flags(
        crate::front_proxy::Flags {
            proxy_client_cert_file: get("proxy-client-cert-file"),
            proxy_client_key_file: get("proxy-client-key-file"),
            requestheader_client_ca_file: get("requestheader-client-ca-file"),
            requestheader_allowed_names: get("requestheader-allowed-names"),
            requestheader_username_headers: get("requestheader-username-headers"),
            requestheader_group_headers: get("requestheader-group-headers"),
            requestheader_extra_headers_prefix: get("requestheader-extra-headers-prefix"),
        },
        &mut problems,
    );

    let authorization_modes = authorization_modes(get("authorization-mode").unwrap_or("RBAC"), &mut problems);
    let authorization_webhook = crate::webhooks::authorization_webhook(
        authorization_modes.contains(&apiary_core::authorization::Mode::Webhook),
        get("authorization-webhook-config-file"),
        get("authorization-webhook-version"),
        get("authorization-webhook-cache-authorized-ttl"),
        get("authorization-webhook-cache-unauthorized-ttl"),
        &mut problems,
    );
    let token_webhook = crate::webhooks::token_webhook(
        get("authentication-token-webhook-config-file"),
        get("authentication-token-webhook-version"),
        get("authentication-token-webhook-cache-ttl"),
        &mut problems,
    );
    let service_accounts = crate::service_accounts::from_flags(
        crate::service_accounts::Flags {
            issuers: get_all("service-account-issuer"),
            api_audiences: get("api-audiences"),
            key_files: get_all("service-account-key-file"),
            signing_key_file: get("service-account-signing-key-file"),
            max_expiration: get("service-account-max-token-expiration").unwrap_or_default(),
            extend_expiration: get("service-account-extend-token-expiration") != Some("false"),
        },
        &mut problems,
    );

    let verbosity = {
        let value = get("v").unwrap_or_default();
        match value.parse::<u32>() {
            Ok(n) => Some(n),
            Err(_) => {
                problems.push(format!(
                    "invalid value {value:?} for --v: must be a non-negative integer"
                ));
                None
            }
        }
    };

    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Command::Serve(Options {
        bind_address: bind_address.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        secure_port: secure_port.expect("validated"),
        advertise_address,
        cert_dir: cert_dir.expect("validated"),
        http2_max_streams_per_connection: http2_max_streams_per_connection.expect("validated"),
        goaway_chance: goaway_chance.expect("validated"),
        storage: storage.expect("validated"),
        data_dir: data_dir.expect("validated"),
        etcd_prefix: etcd_prefix.expect("validated"),
        service_network: service_network.expect("validated"),
        compaction_interval: compaction_interval.expect("validated"),
        etcd_servers,
        etcd_tls,
        sqlite_synchronous: sqlite_synchronous.expect("validated"),
        max_request_body_bytes: max_request_body_bytes.expect("validated"),
        max_requests_inflight: max_requests_inflight.expect("validated"),
        max_mutating_requests_inflight: max_mutating_requests_inflight.expect("validated"),
        priority_and_fairness,
        min_request_timeout: min_request_timeout.expect("validated"),
        controllers: controllers.expect("validated"),
        admission_plugins: admission_plugins.expect("validated"),
        admission_settings: admission_settings.expect("validated"),
        request_timeout: request_timeout.expect("validated"),
        shutdown_delay: shutdown_delay.expect("validated"),
        shutdown_send_retry_after,
        anonymous_auth,
        token_file,
        front_proxy,
        tls,
        authorization_modes,
        authorization_webhook,
        token_webhook,
        service_accounts,
        audit,
        verbosity: verbosity.expect("validated"),
    }))
}

/// What a flag check made of its flags, or every problem it found.
#[cfg(test)]
pub(crate) fn checked<T>(check: impl FnOnce(&mut Vec<String>) -> T) -> Result<T, Vec<String>> {
    let mut problems = Vec::new();
    let made = check(&mut problems);
    if problems.is_empty() {
        Ok(made)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve(args: &[&str]) -> Options {
        match parse(args.iter().copied()) {
            Ok(Command::Serve(o)) => o,
            other => panic!("expected options, got {other:?}"),
        }
    }

    fn problems(args: &[&str]) -> Vec<String> {
        match parse(args.iter().copied()) {
            Err(p) => p,
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn goaway_chance() {
        assert_eq!(serve(&[]).goaway_chance, 0.0);
        assert_eq!(serve(&["--goaway-chance=0.001"]).goaway_chance, 0.001);
        assert_eq!(problems(&["--goaway-chance=0.5"]), ["--goaway-chance can not be less than 0 or greater than 0.02"]);
        assert_eq!(problems(&["--goaway-chance=-0.01"]), ["--goaway-chance can not be less than 0 or greater than 0.02"]);
        assert_eq!(
            problems(&["--goaway-chance=often"]),
            ["invalid argument \"often\" for \"--goaway-chance\" flag: strconv.ParseFloat: parsing \"often\": invalid syntax"]
        );
    }

    #[test]
    fn http2_max_streams_per_connection() {
        assert_eq!(serve(&[]).http2_max_streams_per_connection, 0);
        assert_eq!(serve(&["--http2-max-streams-per-connection=250"]).http2_max_streams_per_connection, 250);
        // A Go int: zero or less is the default.
        assert_eq!(serve(&["--http2-max-streams-per-connection=-3"]).http2_max_streams_per_connection, 0);
        assert_eq!(
            problems(&["--http2-max-streams-per-connection=many"]),
            vec![
                "invalid argument \"many\" for \"--http2-max-streams-per-connection\" flag: \
                 strconv.ParseInt: parsing \"many\": invalid syntax"
            ]
        );
    }

    #[test]
    fn defaults() {
        let o = Options::defaults();
        assert_eq!(o.bind_address, IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(o.secure_port, 6443);
        assert_eq!(o.advertise_address, None);
        assert_eq!(o.storage, StorageKind::Sqlite);
        assert_eq!(o.sqlite_path(), o.data_dir.join("state.db"));
        assert_eq!(o.sqlite_synchronous, apiary_sqlite::Synchronous::Full);
        assert_eq!(o.compaction_interval, Some(Duration::from_secs(300)));
        assert_eq!(o.etcd_prefix, "/registry");
        assert_eq!(o.max_request_body_bytes, 3 << 20);
        assert_eq!(o.max_requests_inflight, 400);
        assert_eq!(o.max_mutating_requests_inflight, 200);
        assert!(o.data_dir.is_absolute());
        assert!(o.data_dir.ends_with(".apiary"));
        assert_eq!(o.cert_dir, o.data_dir.join("pki"));
        assert_eq!(o.verbosity, 0);
        assert_eq!(o.request_timeout, Duration::from_secs(60));
        assert_eq!(o.shutdown_delay, Duration::ZERO);
        assert!(!o.shutdown_send_retry_after);
        assert!(o.priority_and_fairness);
    }

    #[test]
    fn admission_plugins() {
        use apiary_core::admission::plugins::Plugin;
        assert!(serve(&[]).admission_plugins.runs(Plugin::NAMESPACE_LIFECYCLE));
        let o = serve(&["--disable-admission-plugins=NamespaceLifecycle,ResourceQuota", "--enable-admission-plugins=NamespaceExists"]);
        assert!(!o.admission_plugins.runs(Plugin::NAMESPACE_LIFECYCLE));
        assert_eq!(o.admission_plugins.names()[0], "NamespaceExists");
        assert_eq!(
            problems(&["--enable-admission-plugins=Magic", "--disable-admission-plugins=Magic"]),
            [
                "enable-admission-plugins plugin \"Magic\" is unknown",
                "disable-admission-plugins plugin \"Magic\" is unknown",
                "[Magic] in enable-admission-plugins and disable-admission-plugins overlapped",
            ]
        );
    }

    #[test]
    fn authorization_mode() {
        use apiary_core::authorization::Mode;
        assert_eq!(serve(&[]).authorization_modes, [Mode::Rbac]);
        assert_eq!(
            serve(&["--authorization-mode=AlwaysDeny,RBAC,AlwaysAllow"]).authorization_modes,
            [Mode::AlwaysDeny, Mode::Rbac, Mode::AlwaysAllow]
        );
        assert_eq!(
            problems(&["--authorization-mode=RBAC,RBAC,Magic,Node,Webhook"]),
            [
                "authorization-mode \"RBAC\" has mode specified more than once",
                "authorization-mode \"Magic\" is not a valid mode (valid: AlwaysAllow, AlwaysDeny, RBAC)",
                "authorization-mode \"Node\" is not implemented by apiary yet",
                "authorization-mode Webhook's authorization config file not passed",
            ]
        );
        assert_eq!(
            problems(&["--authorization-webhook-config-file=/x", "--authentication-token-webhook-version=v2"]),
            [
                "cannot specify --authorization-webhook-config-file without mode Webhook",
                "invalid value \"v2\" for --authentication-token-webhook-version: must be one of v1beta1, v1",
            ]
        );
        let dir = std::env::temp_dir().join(format!("apiary-webhook-flags-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ca.pem"), "CA").unwrap();
        let kubeconfig = dir.join("authz.kubeconfig");
        std::fs::write(&kubeconfig, "clusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:9443/authz', certificate-authority: ca.pem}\n").unwrap();
        let kubeconfig = kubeconfig.to_str().unwrap();
        let o = serve(&[
            "--authorization-mode=RBAC,Webhook",
            &format!("--authorization-webhook-config-file={kubeconfig}"),
            "--authorization-webhook-version=v1",
            "--authorization-webhook-cache-authorized-ttl=1m",
            &format!("--authentication-token-webhook-config-file={kubeconfig}"),
        ]);
        let authz = o.authorization_webhook.expect("the webhook");
        assert_eq!(authz.webhook.url, "https://127.0.0.1:9443/authz");
        assert_eq!(authz.webhook.tls.ca_pem, b"CA", "a file named relative to the kubeconfig");
        assert_eq!(authz.version, apiary_core::webhook::Version::V1);
        assert_eq!(authz.authorized_ttl, std::time::Duration::from_secs(60));
        assert_eq!(authz.unauthorized_ttl, std::time::Duration::from_secs(30));
        assert_eq!(o.token_webhook.expect("the token webhook").cache_ttl, std::time::Duration::from_secs(120));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn authentication_flags() {
        assert!(serve(&[]).anonymous_auth);
        assert!(serve(&["--anonymous-auth"]).anonymous_auth);
        assert!(!serve(&["--anonymous-auth=false"]).anonymous_auth);
        assert!(!serve(&["--anonymous-auth=0"]).anonymous_auth);
        assert!(serve(&[]).token_file.is_none());
        let missing = problems(&["--token-auth-file=/nonexistent/tokens.csv"]);
        assert_eq!(missing.len(), 1);
        assert!(missing[0].starts_with("reading --token-auth-file /nonexistent/tokens.csv: "), "{missing:?}");
    }

    #[test]
    fn secure_serving_flags() {
        let o = serve(&[]);
        assert!(o.tls.serving_files.is_none() && o.tls.client_ca_file.is_none());
        let o = serve(&[
            "--client-ca-file=/pki/clients.pem",
            "--tls-cert-file",
            "/pki/tls.crt",
            "--tls-private-key-file=/pki/tls.key",
            "--tls-min-version=VersionTLS13",
            "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        ]);
        assert_eq!(o.tls.client_ca_file, Some(PathBuf::from("/pki/clients.pem")));
        assert_eq!(
            o.tls.serving_files.map(|f| (f.cert, f.key)),
            Some((PathBuf::from("/pki/tls.crt"), PathBuf::from("/pki/tls.key")))
        );
        assert_eq!(o.tls.min_version, crate::tls::MinVersion::Tls13);
        assert_eq!(o.tls.cipher_suites.map(|s| s.len()), Some(1 + 3));
        // Reported with every other problem at once.
        assert_eq!(
            problems(&[
                "--tls-cert-file=/pki/tls.crt",
                "--tls-min-version=VersionTLS11",
                "--tls-cipher-suites=TLS_NOPE",
                "--secure-port=x",
            ]),
            [
                "invalid value \"x\" for --secure-port: must be a port number (0 to 65535; 0 \
                 picks a free port)",
                "missing filename for serving cert: --tls-cert-file and --tls-private-key-file \
                 must be given together",
                "invalid value \"VersionTLS11\" for --tls-min-version: apiary serves TLS 1.2 \
                 and 1.3 only (rustls implements no older version); use VersionTLS12 or \
                 VersionTLS13",
                "invalid value for --tls-cipher-suites: Cipher suite TLS_NOPE not supported or \
                 doesn't exist",
            ]
        );
        let text = help();
        let serving = text.find("Secure serving flags:").unwrap();
        let authentication = text.find("Authentication flags:").unwrap();
        let cert = text.find("--tls-cert-file string").unwrap();
        let ca = text.find("--client-ca-file string").unwrap();
        assert!(serving < cert && cert < authentication && authentication < ca);
    }

    #[test]
    fn service_account_flags() {
        let defaults = serve(&[]).service_accounts;
        assert_eq!(defaults.issuers, ["https://kubernetes.default.svc.cluster.local"]);
        assert_eq!(defaults.api_audiences, defaults.issuers);
        assert!(defaults.keys.is_empty() && defaults.signing_key.is_none(), "made whole at start");
        assert_eq!((defaults.max_expiration, defaults.extend_expiration), (None, true));
        // Repeated issuers add up, as pflag's StringArray does; other flags' last wins.
        let o = serve(&[
            "--service-account-issuer=https://a",
            "--service-account-issuer",
            "https://b",
            "--api-audiences=x,y",
            "--service-account-max-token-expiration=24h",
            "--service-account-extend-token-expiration=false",
        ])
        .service_accounts;
        assert_eq!(o.issuers, ["https://a", "https://b"]);
        assert_eq!(o.api_audiences, ["x", "y"]);
        assert_eq!(o.max_expiration, Some(Duration::from_secs(86_400)));
        assert!(!o.extend_expiration);
        assert_eq!(
            problems(&["--service-account-max-token-expiration=59m"]),
            ["the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"]
        );
        assert!(help().contains("--service-account-issuer stringArray"));
    }

    #[test]
    fn service_network_flags() {
        let default = serve(&[]).service_network;
        assert_eq!(default.cluster_ip_ranges[0].to_string(), "10.0.0.0/24", "upstream's default");
        assert_eq!(default.node_ports.to_string(), "30000-32767");
        let o = serve(&["--service-cluster-ip-range=10.96.0.0/16,fd00::/108", "--service-node-port-range=31000-31010"]);
        assert_eq!(o.service_network.cluster_ip_ranges.len(), 2);
        assert_eq!(o.service_network.node_ports.to_string(), "31000-31010");
        assert_eq!(
            problems(&["--service-cluster-ip-range=nope", "--service-node-port-range=2-1"]),
            [
                "invalid value \"nope\" for --service-cluster-ip-range: invalid CIDR address: nope",
                "invalid value \"2-1\" for --service-node-port-range: end port is less than start port: 2-1",
            ]
        );
    }

    #[test]
    fn lifecycle_flags() {
        let o = serve(&[
            "--request-timeout=2s",
            "--shutdown-delay-duration",
            "1m30s",
            "--shutdown-send-retry-after",
        ]);
        assert_eq!(o.request_timeout, Duration::from_secs(2));
        assert_eq!(o.shutdown_delay, Duration::from_secs(90));
        assert!(o.shutdown_send_retry_after);
        assert!(!serve(&["--shutdown-send-retry-after=false"]).shutdown_send_retry_after);
        assert!(!serve(&["--enable-priority-and-fairness=false"]).priority_and_fairness);
        assert_eq!(
            problems(&["--request-timeout=0", "--shutdown-delay-duration=soon"]),
            [
                "invalid value \"0\" for --request-timeout: must be greater than 0",
                "invalid value \"soon\" for --shutdown-delay-duration: invalid duration \"soon\"",
            ]
        );
    }

    #[test]
    fn both_value_forms() {
        let o = serve(&[
            "--secure-port=0",
            "--bind-address",
            "::1",
            "--data-dir=/tmp/x",
            "--etcd-prefix",
            "/kube",
            "--advertise-address=10.0.0.1",
            "-v",
            "4",
            "--max-request-body-bytes=10",
        ]);
        assert_eq!(o.secure_port, 0);
        assert_eq!(o.bind_address, "::1".parse::<IpAddr>().unwrap());
        assert_eq!(o.data_dir, PathBuf::from("/tmp/x"));
        assert_eq!(o.cert_dir, PathBuf::from("/tmp/x/pki"));
        assert_eq!(o.etcd_prefix, "/kube");
        assert_eq!(o.advertise_address, Some("10.0.0.1".parse().unwrap()));
        assert_eq!(o.verbosity, 4);
        assert_eq!(o.max_request_body_bytes, 10);
        assert_eq!(serve(&["-v=2"]).verbosity, 2);
        assert_eq!(serve(&["-v3"]).verbosity, 3);
        assert_eq!(serve(&["--v=5"]).verbosity, 5);
        assert_eq!(serve(&["--cert-dir", "/c"]).cert_dir, PathBuf::from("/c"));
        assert_eq!(serve(&["--storage=memory"]).storage, StorageKind::Memory);
        let etcd = serve(&[
            "--storage=etcd",
            "--etcd-servers=http://127.0.0.1:2379, https://10.0.0.2:2379",
            "--etcd-cafile=/ca.pem",
        ]);
        assert_eq!(etcd.storage, StorageKind::Etcd);
        assert_eq!(
            etcd.etcd_servers,
            ["http://127.0.0.1:2379", "https://10.0.0.2:2379"]
        );
        assert_eq!(
            etcd.etcd_tls.map(|t| t.ca),
            Some(Some(PathBuf::from("/ca.pem")))
        );
        assert_eq!(
            serve(&["--sqlite-synchronous=NORMAL"]).sqlite_synchronous,
            apiary_sqlite::Synchronous::Normal
        );
        assert_eq!(
            serve(&["--etcd-compaction-interval=1m30s"]).compaction_interval,
            Some(Duration::from_secs(90))
        );
        assert_eq!(
            serve(&["--etcd-compaction-interval=0"]).compaction_interval,
            None
        );
    }

    #[test]
    fn last_occurrence_wins() {
        assert_eq!(
            serve(&["--secure-port=1", "--secure-port=2"]).secure_port,
            2
        );
    }

    #[test]
    fn every_problem_at_once() {
        let p = problems(&[
            "--secure-port=x",
            "--bogus",
            "--storage=etcd3",
            "--bind-address=nope",
            "extra",
            "--max-request-body-bytes=-1",
            "-q",
            "--sqlite-synchronous=off",
            "--etcd-compaction-interval=5",
        ]);
        assert_eq!(
            p,
            vec![
                "unknown flag: --bogus",
                "unexpected argument \"extra\": apiary takes no positional arguments",
                "unknown shorthand flag: 'q' in -q",
                "invalid value \"nope\" for --bind-address: must be an IP address",
                "invalid value \"x\" for --secure-port: must be a port number (0 to 65535; 0 \
                 picks a free port)",
                "invalid value \"etcd3\" for --storage: must be one of: sqlite, memory, etcd",
                "invalid value \"off\" for --sqlite-synchronous: must be one of: full, normal",
                "invalid value \"5\" for --etcd-compaction-interval: missing unit in duration \
                 \"5\"",
                "invalid value \"-1\" for --max-request-body-bytes: must be a positive number \
                 of bytes",
            ]
        );
        assert_eq!(
            problems(&["--secure-port"]),
            vec!["flag needs an argument: --secure-port"]
        );
        assert_eq!(
            problems(&["--secure-port=70000"]).len(),
            1,
            "out of range ports are rejected"
        );
        assert_eq!(
            problems(&["--storage=etcd", "--etcd-certfile=/c.pem"]),
            vec![
                "--etcd-servers must be set with --storage=etcd",
                "--etcd-certfile and --etcd-keyfile must be given together",
            ]
        );
        assert_eq!(problems(&["--etcd-servers=etcd:2379"]).len(), 1);
        assert_eq!(
            problems(&["--etcd-prefix=registry"]),
            vec!["invalid value \"registry\" for --etcd-prefix: must start with \"/\""]
        );
    }

    #[test]
    fn inflight_limits() {
        let o = serve(&[
            "--max-requests-inflight=0",
            "--max-mutating-requests-inflight",
            "7",
        ]);
        assert_eq!(o.max_requests_inflight, 0);
        assert_eq!(o.max_mutating_requests_inflight, 7);
        assert_eq!(
            problems(&[
                "--max-requests-inflight=-1",
                "--max-mutating-requests-inflight=-5",
                "--secure-port=x",
            ]),
            vec![
                "invalid value \"x\" for --secure-port: must be a port number (0 to 65535; 0 \
                 picks a free port)",
                "invalid value \"-1\" for --max-requests-inflight: must be a non-negative \
                 integer (0 disables the limit)",
                "invalid value \"-5\" for --max-mutating-requests-inflight: must be a \
                 non-negative integer (0 disables the limit)",
            ]
        );
        assert_eq!(problems(&["--max-requests-inflight=many"]).len(), 1);
        let text = help();
        let mutating = text.find("--max-mutating-requests-inflight int").unwrap();
        let body = text.find("--max-request-body-bytes").unwrap();
        let reads = text.find("--max-requests-inflight int").unwrap();
        let min = text.find("--min-request-timeout").unwrap();
        assert!(mutating < reads && reads < min, "sorted in Generic flags");
        assert!(body > min, "--max-request-body-bytes is in Limits flags, after Generic");
    }

    #[test]
    fn help_and_version() {
        assert!(matches!(parse(["--help"]), Ok(Command::Help)));
        assert!(matches!(parse(["-h"]), Ok(Command::Help)));
        assert!(matches!(parse(["--bogus", "-h"]), Ok(Command::Help)));
        assert!(matches!(parse(["--version"]), Ok(Command::Version)));
        assert!(matches!(parse(["--version=false"]), Ok(Command::Serve(_))));
        assert_eq!(version(), "Kubernetes v1.33.0");
        let text = help();
        for section in [
            "Generic flags:",
            "Secure serving flags:",
            "Storage flags:",
            "Limits flags:",
            "Logs flags:",
            "Global flags:",
        ] {
            assert!(text.contains(section), "{section} missing from\n{text}");
        }
        for flag in FLAGS {
            assert!(text.contains(&format!("--{}", flag.name)));
        }
        assert!(text.contains("--secure-port int"));
        // Wrapped where the column width puts it.
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains("(default 6443)"));
        assert!(text.contains("-v, --v int"));
    }
}

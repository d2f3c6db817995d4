//! Bring-your-own PKI on the real binary: `--tls-cert-file`, `--tls-private-key-file`
//! and `--client-ca-file` from a CA the test makes, driven with kubectl 1.33 and 1.27;
//! then the files replaced on disk as Kubernetes replaces a mounted Secret (a symlink
//! swapped atomically). New connections see the new serving certificate and the new
//! client CA; connections already open stay open (a running `kubectl get --watch`
//! keeps receiving events, a raw connection keeps being answered). A file that turns
//! bad is logged and the last good one kept. `--tls-min-version` and
//! `--tls-cipher-suites` hold against rustls clients; bad values stop apiary.

mod raw_tls;

use apiary_conformance::harness::{apiary_command, kubectl_command, ok, Apiary};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, SanType,
};
use raw_tls::{connect_with, runtime};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use tokio_rustls::rustls::crypto::ring::{self, cipher_suite};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{
    version, ClientConfig, RootCertStore, SupportedCipherSuite, SupportedProtocolVersion,
};

/// How long apiary may take to notice a file change (it reads them every second).
const RELOAD_WAIT: Duration = Duration::from_secs(20);

struct Authority {
    cert: rcgen::Certificate,
    key: KeyPair,
}

impl Authority {
    fn new(name: &str) -> Authority {
        let mut params = CertificateParams::default();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().expect("CA key");
        let cert = params.self_signed(&key).expect("CA certificate");
        Authority { cert, key }
    }

    fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A certificate and key this CA signs.
    fn sign(&self, mut params: CertificateParams) -> Pair {
        let key = KeyPair::generate().expect("leaf key");
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let cert = params.signed_by(&key, &self.cert, &self.key).expect("leaf certificate");
        Pair {
            cert: cert.pem(),
            key: key.serialize_pem(),
            der: cert.der().to_vec(),
        }
    }

    /// A serving certificate for 127.0.0.1 and localhost.
    fn serving(&self) -> Pair {
        let mut params = CertificateParams::new(vec!["localhost".to_owned()]).expect("names");
        params
            .subject_alt_names
            .push(SanType::IpAddress("127.0.0.1".parse().expect("an IP")));
        params.distinguished_name.push(DnType::CommonName, "apiary");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.sign(params)
    }

    /// A client certificate for `user` in `group`.
    fn client(&self, user: &str, group: &str) -> Pair {
        let mut params = CertificateParams::default();
        params.distinguished_name.push(DnType::OrganizationName, group);
        params.distinguished_name.push(DnType::CommonName, user);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.sign(params)
    }
}

struct Pair {
    cert: String,
    key: String,
    der: Vec<u8>,
}

/// A directory laid out as the kubelet mounts a Secret: each file a symlink into
/// `..data`, itself a symlink to a timestamped directory, swapped by one rename.
struct Mount {
    dir: PathBuf,
    version: std::cell::Cell<u32>,
}

impl Mount {
    fn new(dir: &Path, files: &[(&str, &str)]) -> Mount {
        std::fs::create_dir_all(dir).expect("mount dir");
        let mount = Mount {
            dir: dir.to_path_buf(),
            version: std::cell::Cell::new(0),
        };
        mount.publish(files);
        for (name, _) in files {
            std::os::unix::fs::symlink(Path::new("..data").join(name), dir.join(name))
                .expect("file symlink");
        }
        mount
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// Write a new version of every file, then point `..data` at it atomically.
    fn publish(&self, files: &[(&str, &str)]) {
        let version = self.version.get() + 1;
        self.version.set(version);
        let versioned = format!("..v{version}");
        std::fs::create_dir(self.dir.join(&versioned)).expect("version dir");
        for (name, contents) in files {
            std::fs::write(self.dir.join(&versioned).join(name), contents).expect("file");
        }
        let next = self.dir.join("..data_tmp");
        std::os::unix::fs::symlink(&versioned, &next).expect("..data_tmp");
        std::fs::rename(&next, self.dir.join("..data")).expect("..data swapped");
    }
}

/// Write `contents` to `dir/name`; its path.
fn file(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("file written");
    path
}

/// A kubeconfig for `url` trusting `server_ca` and presenting `client`.
fn kubeconfig(dir: &Path, name: &str, url: &str, server_ca: &str, client: &Pair) -> PathBuf {
    let ca = file(dir, &format!("{name}-server-ca.crt"), server_ca);
    let cert = file(dir, &format!("{name}.crt"), &client.cert);
    let key = file(dir, &format!("{name}.key"), &client.key);
    file(
        dir,
        &format!("{name}.kubeconfig"),
        &format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {url}\n    \
             certificate-authority: {}\nusers:\n- name: {name}\n  user:\n    client-certificate: {}\n    \
             client-key: {}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: {name}\n\
             current-context: c\n",
            ca.display(),
            cert.display(),
            key.display()
        ),
    )
}

/// A rustls client trusting `cas`, presenting `client` if any, limited to `versions`
/// and, if given, `suites`.
fn client_config(
    cas: &[&str],
    client: Option<&Pair>,
    versions: &[&'static SupportedProtocolVersion],
    suites: Option<Vec<SupportedCipherSuite>>,
) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for pem in cas {
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            roots.add(cert.expect("CA")).expect("CA added");
        }
    }
    let mut provider = ring::default_provider();
    if let Some(suites) = suites {
        provider.cipher_suites = suites;
    }
    let builder = ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(versions)
        .expect("versions")
        .with_root_certificates(roots);
    let config = match client {
        Some(pair) => {
            let chain = vec![CertificateDer::from(pair.der.clone())];
            let key = PrivateKeyDer::from_pem_slice(pair.key.as_bytes()).expect("key");
            builder.with_client_auth_cert(chain, key).expect("client cert")
        }
        None => builder.with_no_client_auth(),
    };
    Arc::new(config)
}

/// What kubectl says of a 401 (followed by the Status message or client-go's own).
const LOGGED_IN: &str = "error: You must be logged in to the server";

const BOTH: &[&SupportedProtocolVersion] = &[&version::TLS13, &version::TLS12];

/// Poll `check` every 50 ms until it holds or `within` passes.
fn eventually(within: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !check() {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A running `kubectl get --watch`, stopped when dropped.
struct Watching {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Watching {
    fn start(kubeconfig: &Path) -> Watching {
        let mut child = kubectl_command("1.33", kubeconfig)
            .args(["get", "configmaps", "-n", "default", "--watch", "-o", "name"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("kubectl get --watch starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Watching { child, lines }
    }

    /// Wait for the watch to print `line`.
    fn sees(&self, line: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(got) if got == line => return,
                Ok(_) => continue,
                Err(e) => panic!("the watch did not print {line}: {e}"),
            }
        }
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `kubectl get namespaces` as `kubeconfig`; Ok(stdout) or Err(stderr).
fn get_namespaces(version: &str, kubeconfig: &Path) -> Result<String, String> {
    let out = kubectl_command(version, kubeconfig)
        .args(["get", "namespaces", "-o", "name"])
        .output()
        .expect("kubectl runs");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn byo_certificates_are_served_and_replaced_on_disk_without_dropping_connections() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ca_a = Authority::new("ca-a");
    let serving_a = ca_a.serving();
    let alice = ca_a.client("alice", "system:masters");
    let mount = Mount::new(
        &dir.path().join("tls"),
        &[
            ("tls.crt", &format!("{}{}", serving_a.cert, ca_a.pem())),
            ("tls.key", &serving_a.key),
            ("client-ca.crt", &ca_a.pem()),
        ],
    );
    let apiary = Apiary::start_with(&[
        "--tls-cert-file",
        &mount.path("tls.crt"),
        "--tls-private-key-file",
        &mount.path("tls.key"),
        "--client-ca-file",
        &mount.path("client-ca.crt"),
    ]);
    let url = apiary.url.clone();
    let alice_kc = kubeconfig(dir.path(), "alice", &url, &ca_a.pem(), &alice);
    for v in ["1.33", "1.27"] {
        let served = get_namespaces(v, &alice_kc).unwrap_or_else(|e| panic!("{v}: {e}"));
        assert!(served.contains("namespace/default"), "{v}: {served}");
        // The admin kubeconfig trusts the served chain, but its client certificate is
        // of apiary's own CA, which the bundle does not hold: 401, as documented.
        let admin = get_namespaces(v, &apiary.kubeconfig).expect_err("admin refused");
        assert!(admin.contains(LOGGED_IN), "{v}: {admin}");
    }
    assert!(apiary.wait_for_log("does not verify against --client-ca-file", RELOAD_WAIT));
    // Pods verify the serving certificate with a legacy token Secret's ca.crt: what was
    // served at start, as the admin kubeconfig trusts it.
    let k = |args: &[&str]| ok(&kubectl_command("1.33", &alice_kc).args(args).output().expect("kubectl runs"));
    k(&["create", "serviceaccount", "robot"]);
    let secret = file(
        dir.path(),
        "robot-token.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: robot-token\n  annotations:\n    \
         kubernetes.io/service-account.name: robot\ntype: kubernetes.io/service-account-token\n",
    );
    k(&["create", "-f", &secret.display().to_string()]);
    let ca_crt = k(&[
        "get",
        "secret",
        "robot-token",
        "-o",
        "go-template={{index .data \"ca.crt\" | base64decode}}",
    ]);
    assert_eq!(ca_crt, format!("{}{}", serving_a.cert, ca_a.pem()));

    // Connections opened before the files change: a watch and a raw connection.
    let watch = Watching::start(&alice_kc);
    ok(&kubectl_command("1.33", &alice_kc)
        .args(["create", "configmap", "before", "--from-literal=k=v"])
        .output()
        .expect("kubectl runs"));
    watch.sees("configmap/before");
    let rt = runtime();
    let alice_over_a = client_config(&[&ca_a.pem()], Some(&alice), BOTH, None);
    let mut open = rt
        .block_on(connect_with(&apiary, alice_over_a.clone()))
        .expect("connected");
    let first = rt
        .block_on(open.call("GET", raw_tls::CONFIGMAPS, None))
        .expect("answered");
    assert_eq!(first.status, 200);

    // Rotate: a new CA signs the serving certificate, and the bundle trusts both CAs.
    let ca_b = Authority::new("ca-b");
    let serving_b = ca_b.serving();
    let bob = ca_b.client("bob", "system:masters");
    let both = format!("{}{}", ca_a.pem(), ca_b.pem());
    mount.publish(&[
        ("tls.crt", &format!("{}{}", serving_b.cert, ca_b.pem())),
        ("tls.key", &serving_b.key),
        ("client-ca.crt", &both),
    ]);
    let anyone = client_config(&[&ca_a.pem(), &ca_b.pem()], None, BOTH, None);
    let served_now = || {
        rt.block_on(connect_with(&apiary, anyone.clone()))
            .expect("connected")
            .server_certificate()
            .expect("a serving certificate")
    };
    eventually(RELOAD_WAIT, "the new serving certificate", || {
        served_now() == serving_b.der
    });
    // The open connection goes on, as it was accepted: same certificate, same user.
    let second = rt
        .block_on(open.call("GET", raw_tls::CONFIGMAPS, None))
        .expect("the open connection still answers");
    assert_eq!(second.status, 200);
    assert_eq!(open.server_certificate(), Some(serving_a.der.clone()));
    let bob_kc = kubeconfig(dir.path(), "bob", &url, &ca_b.pem(), &bob);
    for v in ["1.33", "1.27"] {
        assert!(get_namespaces(v, &bob_kc).is_ok(), "{v}");
    }

    // The bundle drops the old CA: alice's certificate is refused on new connections
    // and on the open one too (each request is authenticated against the bundle of
    // its moment), while the connection itself stays up.
    mount.publish(&[
        ("tls.crt", &format!("{}{}", serving_b.cert, ca_b.pem())),
        ("tls.key", &serving_b.key),
        ("client-ca.crt", &ca_b.pem()),
    ]);
    let alice_over_b = client_config(&[&ca_b.pem()], Some(&alice), BOTH, None);
    eventually(RELOAD_WAIT, "alice refused", || {
        let mut conn = rt.block_on(connect_with(&apiary, alice_over_b.clone())).expect("connected");
        rt.block_on(conn.call("GET", raw_tls::CONFIGMAPS, None)).expect("answered").status == 401
    });
    let third = rt
        .block_on(open.call("GET", raw_tls::CONFIGMAPS, None))
        .expect("the open connection still answers");
    assert_eq!(third.status, 401);
    assert_eq!(third.json()["reason"], "Unauthorized");
    let alice_kc_b = kubeconfig(dir.path(), "alice-b", &url, &ca_b.pem(), &alice);
    for v in ["1.33", "1.27"] {
        let refused = get_namespaces(v, &alice_kc_b).expect_err("alice refused");
        assert!(refused.contains(LOGGED_IN), "{v}: {refused}");
        assert!(get_namespaces(v, &bob_kc).is_ok(), "{v}");
    }
    // The watch opened before both changes still streams.
    ok(&kubectl_command("1.33", &bob_kc)
        .args(["create", "configmap", "after", "--from-literal=k=v"])
        .output()
        .expect("kubectl runs"));
    watch.sees("configmap/after");
    drop(watch);

    // A serving certificate that does not match its key: logged, and the last good one
    // served on.
    mount.publish(&[
        ("tls.crt", &serving_a.cert),
        ("tls.key", &serving_b.key),
        ("client-ca.crt", &ca_b.pem()),
    ]);
    assert!(
        apiary.wait_for_log("does not match the certificate in --tls-cert-file", RELOAD_WAIT),
        "the bad pair is logged"
    );
    assert!(apiary.wait_for_log("keeping the serving certificate", Duration::ZERO));
    assert_eq!(served_now(), serving_b.der);
    assert!(get_namespaces("1.33", &bob_kc).is_ok());
}

#[test]
fn tls_min_version_13_refuses_a_client_that_speaks_only_tls_12() {
    let apiary = Apiary::start_with(&["--tls-min-version=VersionTLS13"]);
    let ca = std::fs::read_to_string(apiary.data_dir.join("pki/ca.crt")).expect("ca.crt");
    let rt = runtime();
    let tls12 = client_config(&[&ca], None, &[&version::TLS12], None);
    let refused = rt.block_on(connect_with(&apiary, tls12));
    assert!(refused.is_err(), "a TLS 1.2 handshake succeeded");
    let tls13 = client_config(&[&ca], None, &[&version::TLS13], None);
    let mut conn = rt.block_on(connect_with(&apiary, tls13)).expect("TLS 1.3 connects");
    let version = rt.block_on(conn.call("GET", "/version", None)).expect("answered");
    assert_eq!(version.status, 200);
    assert!(apiary.kubectl("1.33", &["version"]).status.success());
}

#[test]
fn tls_cipher_suites_limit_tls_12_to_the_suites_named() {
    // The generated serving key is ECDSA.
    let apiary = Apiary::start_with(&[
        "--tls-cipher-suites",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,TLS_AES_128_GCM_SHA256",
    ]);
    let ca = std::fs::read_to_string(apiary.data_dir.join("pki/ca.crt")).expect("ca.crt");
    let rt = runtime();
    let offering = |suite: SupportedCipherSuite| {
        client_config(&[&ca], None, &[&version::TLS12], Some(vec![suite]))
    };
    let refused = rt.block_on(connect_with(
        &apiary,
        offering(cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256),
    ));
    assert!(refused.is_err(), "a suite not named was negotiated");
    let conn = rt
        .block_on(connect_with(
            &apiary,
            offering(cipher_suite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256),
        ))
        .expect("the named suite connects");
    assert_eq!(
        conn.cipher_suite(),
        Some(tokio_rustls::rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256)
    );
    // TLS 1.3 is not limited by the list.
    let tls13 = client_config(&[&ca], None, &[&version::TLS13], None);
    assert!(rt.block_on(connect_with(&apiary, tls13)).is_ok());
    for v in ["1.33", "1.27"] {
        assert!(apiary.kubectl(v, &["get", "namespaces"]).status.success(), "{v}");
    }
}

#[test]
fn bad_secure_serving_flags_stop_apiary_with_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("missing.pem").display().to_string();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_BOGUS"],
            "Cipher suite TLS_BOGUS not supported or doesn't exist",
        ),
        (
            &["--tls-cipher-suites=TLS_RSA_WITH_AES_128_CBC_SHA"],
            "cipher suite TLS_RSA_WITH_AES_128_CBC_SHA is not supported by apiary",
        ),
        (&["--tls-min-version=VersionTLS10"], "rustls implements no older version"),
        (
            &["--tls-cert-file", "/etc/tls.crt"],
            "missing filename for serving cert: --tls-cert-file and --tls-private-key-file",
        ),
        (&["--client-ca-file", &missing], &format!("reading {missing}")),
    ];
    for (args, expected) in cases {
        let output = apiary_command(dir.path(), args)
            .stdin(Stdio::null())
            .output()
            .expect("apiary runs");
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

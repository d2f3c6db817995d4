//! The certificates apiary serves with, created on first start in the cert dir and
//! reused after: a CA (`ca.crt`, `ca.key`), a serving certificate signed by it
//! (`apiserver.crt`, `apiserver.key`) and an admin client certificate (`admin.crt`,
//! `admin.key`: CN apiary-admin, O system:masters). And the admin kubeconfig that
//! carries them to kubectl.
//!
//! On a later start every certificate is checked against the CA, the clock and the
//! names it must cover; one that fails is made again with the same CA key, so that a
//! new `--bind-address` or an expired leaf never needs a hand-deleted file.
//!
//! With `--tls-cert-file` no serving certificate is made (see [`ensure_for`]); the CA
//! and the admin certificate are made all the same, for the admin kubeconfig.

use futures_rustls::rustls::pki_types::pem::PemObject;
use futures_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType, SerialNumber,
};
use std::fmt;
use std::fs;
use std::io::{self, Write as _};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use time::OffsetDateTime;

const CA_COMMON_NAME: &str = "apiary-ca";
const SERVING_COMMON_NAME: &str = "apiary";
/// The admin user's name; its certificate's organization makes it a cluster admin.
pub const ADMIN_USER: &str = "apiary-admin";
const ADMIN_GROUP: &str = "system:masters";

const CA_LIFETIME: Duration = Duration::from_secs(10 * 365 * 86_400);
const LEAF_LIFETIME: Duration = Duration::from_secs(365 * 86_400);
/// A leaf that expires within this long is renewed on start.
const RENEW_BEFORE: Duration = Duration::from_secs(7 * 86_400);
/// Certificates start being valid a little before they are made, for skewed clocks.
const BACKDATE: Duration = Duration::from_secs(3600);

/// A problem with the certificates; the message names the file involved.
#[derive(Debug)]
pub struct PkiError(String);

impl fmt::Display for PkiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PkiError {}

fn io_error(what: &str, path: &Path, e: io::Error) -> PkiError {
    PkiError(format!("{what} {}: {e}", path.display()))
}

fn rcgen_error(what: &str, e: rcgen::Error) -> PkiError {
    PkiError(format!("{what}: {e}"))
}

/// The names the serving certificate must be valid for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServingNames {
    pub ips: Vec<IpAddr>,
    pub dns: Vec<String>,
}

impl ServingNames {
    /// Loopback (127.0.0.1, ::1, localhost), the in-cluster service names, and the bind
    /// and advertise addresses when they are specific.
    pub fn new(bind: IpAddr, advertise: Option<IpAddr>) -> ServingNames {
        let mut ips = vec![
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(Ipv6Addr::LOCALHOST),
        ];
        for ip in [Some(bind), advertise].into_iter().flatten() {
            if !ip.is_unspecified() && !ips.contains(&ip) {
                ips.push(ip);
            }
        }
        let dns = [
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        ]
        .map(str::to_owned)
        .to_vec();
        ServingNames { ips, dns }
    }
}

/// The certificates and keys a running apiary uses.
pub struct Pki {
    pub ca_cert: CertificateDer<'static>,
    pub ca_cert_pem: String,
    /// The generated serving certificate and its key; `None` when `--tls-cert-file`
    /// serves instead.
    pub serving: Option<(CertificateDer<'static>, PrivateKeyDer<'static>)>,
    pub admin_cert_pem: String,
    pub admin_key_pem: String,
}

impl fmt::Debug for Pki {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pki").finish_non_exhaustive()
    }
}

struct Files {
    cert: PathBuf,
    key: PathBuf,
}

impl Files {
    fn new(dir: &Path, stem: &str) -> Files {
        Files {
            cert: dir.join(format!("{stem}.crt")),
            key: dir.join(format!("{stem}.key")),
        }
    }

    fn exist(&self) -> bool {
        self.cert.is_file() && self.key.is_file()
    }

    fn read(&self) -> Result<(String, String), PkiError> {
        let cert =
            fs::read_to_string(&self.cert).map_err(|e| io_error("reading", &self.cert, e))?;
        let key = fs::read_to_string(&self.key).map_err(|e| io_error("reading", &self.key, e))?;
        Ok((cert, key))
    }

    fn write(&self, cert_pem: &str, key_pem: &str) -> Result<(), PkiError> {
        write_file(&self.key, key_pem.as_bytes(), 0o600)?;
        write_file(&self.cert, cert_pem.as_bytes(), 0o644)
    }
}

/// Write `contents` to `path` through a temporary file and a rename, so a crash never
/// leaves half a file; the file gets `mode` (on Unix) from its creation on.
pub fn write_file(path: &Path, contents: &[u8], mode: u32) -> Result<(), PkiError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let _ = fs::remove_file(&tmp);
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let result = options
        .open(&tmp)
        .and_then(|mut f| f.write_all(contents).and_then(|()| f.sync_all()))
        .and_then(|()| fs::rename(&tmp, path));
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(io_error("writing", path, e));
    }
    Ok(())
}

fn offset_time(t: SystemTime) -> OffsetDateTime {
    let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    OffsetDateTime::from_unix_timestamp(secs as i64).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

fn random_serial() -> Result<SerialNumber, PkiError> {
    let mut bytes = [0u8; 16];
    getrandom::getrandom(&mut bytes).map_err(|e| PkiError(format!("reading entropy: {e}")))?;
    // Positive and of full length when DER-encoded.
    bytes[0] = (bytes[0] & 0x7f) | 0x40;
    Ok(SerialNumber::from_slice(&bytes))
}

pub(crate) fn name(common_name: &str, organization: Option<&str>) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    if let Some(o) = organization {
        dn.push(DnType::OrganizationName, o);
    }
    dn.push(DnType::CommonName, common_name);
    dn
}

/// The CA's parameters. Signing needs only its name and key identifier, both of which
/// this rebuilds exactly from the key, so a CA made on an earlier start signs again.
fn ca_params(common_name: &str, now: SystemTime) -> Result<CertificateParams, PkiError> {
    let mut params = CertificateParams::default();
    params.distinguished_name = name(common_name, None);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.not_before = offset_time(now - BACKDATE);
    params.not_after = offset_time(now + CA_LIFETIME);
    params.serial_number = Some(random_serial()?);
    Ok(params)
}

pub(crate) fn leaf_params(
    now: SystemTime,
    dn: DistinguishedName,
    usage: ExtendedKeyUsagePurpose,
    sans: Vec<SanType>,
) -> Result<CertificateParams, PkiError> {
    let mut params = CertificateParams::default();
    params.distinguished_name = dn;
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![usage];
    params.subject_alt_names = sans;
    params.use_authority_key_identifier_extension = true;
    params.not_before = offset_time(now - BACKDATE);
    params.not_after = offset_time(now + LEAF_LIFETIME);
    params.serial_number = Some(random_serial()?);
    Ok(params)
}

/// What a leaf certificate is for.
#[derive(Clone, Copy)]
pub(crate) enum Usage {
    Serving,
    Client,
}

/// Why an existing leaf cannot be used as it is; `None` when it can.
fn leaf_problem(
    cert: &CertificateDer<'_>,
    ca: &CertificateDer<'_>,
    usage: Usage,
    names: &[ServerName<'_>],
    now: SystemTime,
) -> Option<String> {
    let anchor = match webpki::anchor_from_trusted_cert(ca) {
        Ok(anchor) => anchor,
        Err(e) => return Some(format!("the CA certificate is unusable ({e})")),
    };
    let leaf = match webpki::EndEntityCert::try_from(cert) {
        Ok(leaf) => leaf,
        Err(e) => return Some(format!("it does not parse ({e})")),
    };
    let eku = match usage {
        Usage::Serving => webpki::KeyUsage::server_auth(),
        Usage::Client => webpki::KeyUsage::client_auth(),
    };
    for at in [now, now + RENEW_BEFORE] {
        let at = UnixTime::since_unix_epoch(at.duration_since(UNIX_EPOCH).unwrap_or_default());
        if let Err(e) = leaf.verify_for_usage(
            webpki::ALL_VERIFICATION_ALGS,
            std::slice::from_ref(&anchor),
            &[],
            at,
            eku,
            None,
            None,
        ) {
            return Some(match e {
                webpki::Error::CertExpired { .. } => "it expires within a week".to_owned(),
                e => format!("it does not verify against the CA ({e})"),
            });
        }
    }
    for name in names {
        if leaf.verify_is_valid_for_subject_name(name).is_err() {
            return Some(format!("it does not cover {}", name.to_str()));
        }
    }
    None
}

fn parse_cert(pem: &str, path: &Path) -> Result<CertificateDer<'static>, PkiError> {
    CertificateDer::from_pem_slice(pem.as_bytes())
        .map_err(|e| PkiError(format!("reading {}: no certificate ({e})", path.display())))
}

fn parse_key(pem: &str, path: &Path) -> Result<KeyPair, PkiError> {
    KeyPair::from_pem(pem).map_err(|e| {
        PkiError(format!(
            "reading {}: not a private key ({e})",
            path.display()
        ))
    })
}

/// A CA in the cert dir (`<stem>.crt`, `<stem>.key`), loaded or made, and what signs
/// with it.
pub(crate) struct Authority {
    pub cert: CertificateDer<'static>,
    pub cert_pem: String,
    key: KeyPair,
    issuer: rcgen::Certificate,
    /// Made on this start: every leaf it signs is made again too.
    fresh: bool,
}

impl Authority {
    /// The CA `<stem>` of `cert_dir`, made (named `common_name`) when it is missing.
    pub(crate) fn ensure(cert_dir: &Path, stem: &str, common_name: &str, now: SystemTime) -> Result<Authority, PkiError> {
        let files = Files::new(cert_dir, stem);
        let (cert_pem, key, fresh) = if files.exist() {
            let (cert_pem, key_pem) = files.read()?;
            (cert_pem, parse_key(&key_pem, &files.key)?, false)
        } else {
            let key = KeyPair::generate().map_err(|e| rcgen_error("generating a CA key", e))?;
            let cert = ca_params(common_name, now)?
                .self_signed(&key)
                .map_err(|e| rcgen_error("creating a CA certificate", e))?;
            files.write(&cert.pem(), &key.serialize_pem())?;
            tracing::info!(path = %files.cert.display(), "created a CA");
            (cert.pem(), key, true)
        };
        let cert = parse_cert(&cert_pem, &files.cert)?;
        let issuer = ca_params(common_name, now)?
            .self_signed(&key)
            .map_err(|e| rcgen_error("loading a CA", e))?;
        Ok(Authority { cert, cert_pem, key, issuer, fresh })
    }

    /// The leaf `<stem>` of `cert_dir` this CA signed: reused if it is still good,
    /// else made again from `make`'s parameters. The certificate, its PEM and its
    /// key's PEM.
    pub(crate) fn leaf(
        &self,
        cert_dir: &Path,
        stem: &str,
        usage: Usage,
        server_names: &[ServerName<'_>],
        make: &dyn Fn() -> Result<CertificateParams, PkiError>,
        now: SystemTime,
    ) -> Result<(CertificateDer<'static>, String, String), PkiError> {
        let files = Files::new(cert_dir, stem);
        if !self.fresh && files.exist() {
            let (cert_pem, key_pem) = files.read()?;
            let cert = parse_cert(&cert_pem, &files.cert)?;
            match leaf_problem(&cert, &self.cert, usage, server_names, now) {
                None => return Ok((cert, cert_pem, key_pem)),
                Some(why) => tracing::info!(
                    path = %files.cert.display(),
                    "renewing the certificate: {why}"
                ),
            }
        }
        let what = format!("creating {}", files.cert.display());
        let key = KeyPair::generate().map_err(|e| rcgen_error(&what, e))?;
        let signed = make()?
            .signed_by(&key, &self.issuer, &self.key)
            .map_err(|e| rcgen_error(&what, e))?;
        let (cert_pem, key_pem) = (signed.pem(), key.serialize_pem());
        let cert = parse_cert(&cert_pem, &files.cert)?;
        if let Some(why) = leaf_problem(&cert, &self.cert, usage, server_names, now) {
            return Err(PkiError(format!(
                "the CA in {} cannot sign a usable certificate ({why}); does the CA key belong \
                 to its certificate? Remove both to start a new CA",
                cert_dir.display()
            )));
        }
        files.write(&cert_pem, &key_pem)?;
        if !self.fresh {
            tracing::info!(path = %files.cert.display(), "created a certificate");
        }
        Ok((cert, cert_pem, key_pem))
    }
}

/// Load the certificates from `cert_dir`, creating or renewing what is missing, expired
/// or does not cover `names`.
pub fn ensure(cert_dir: &Path, names: &ServingNames, now: SystemTime) -> Result<Pki, PkiError> {
    ensure_for(cert_dir, Some(names), now)
}

/// [`ensure`], with a serving certificate only when `serving` names what it must cover.
pub fn ensure_for(
    cert_dir: &Path,
    serving: Option<&ServingNames>,
    now: SystemTime,
) -> Result<Pki, PkiError> {
    if !cert_dir.is_dir() {
        fs::create_dir_all(cert_dir).map_err(|e| io_error("creating", cert_dir, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(cert_dir, fs::Permissions::from_mode(0o700))
                .map_err(|e| io_error("restricting", cert_dir, e))?;
        }
    }

    let ca = Authority::ensure(cert_dir, "ca", CA_COMMON_NAME, now)?;
    let leaf = |stem: &str,
                usage: Usage,
                server_names: &[ServerName<'_>],
                make: &dyn Fn() -> Result<CertificateParams, PkiError>| {
        ca.leaf(cert_dir, stem, usage, server_names, make, now)
    };

    let serving = match serving {
        Some(names) => {
            let server_names: Vec<ServerName<'static>> = names
                .ips
                .iter()
                .map(|ip| ServerName::IpAddress((*ip).into()))
                .chain(
                    names
                        .dns
                        .iter()
                        .filter_map(|d| ServerName::try_from(d.clone()).ok()),
                )
                .collect();
            let (serving_cert, _, serving_key_pem) =
                leaf("apiserver", Usage::Serving, &server_names, &|| {
                    let mut sans: Vec<SanType> =
                        names.ips.iter().map(|ip| SanType::IpAddress(*ip)).collect();
                    for dns in &names.dns {
                        let dns = dns
                            .clone()
                            .try_into()
                            .map_err(|e| rcgen_error("a serving certificate name", e))?;
                        sans.push(SanType::DnsName(dns));
                    }
                    leaf_params(
                        now,
                        name(SERVING_COMMON_NAME, None),
                        ExtendedKeyUsagePurpose::ServerAuth,
                        sans,
                    )
                })?;
            let serving_key = PrivateKeyDer::from_pem_slice(serving_key_pem.as_bytes())
                .map_err(|e| PkiError(format!("reading apiserver.key: {e}")))?;
            Some((serving_cert, serving_key))
        }
        None => None,
    };

    let (_, admin_cert_pem, admin_key_pem) = leaf("admin", Usage::Client, &[], &|| {
        leaf_params(
            now,
            name(ADMIN_USER, Some(ADMIN_GROUP)),
            ExtendedKeyUsagePurpose::ClientAuth,
            Vec::new(),
        )
    })?;

    Ok(Pki {
        ca_cert: ca.cert,
        ca_cert_pem: ca.cert_pem,
        serving,
        admin_cert_pem,
        admin_key_pem,
    })
}

/// The address clients on this host reach a server bound to `bind` at.
pub fn client_address(bind: IpAddr, advertise: Option<IpAddr>, port: u16) -> SocketAddr {
    let ip = if !bind.is_unspecified() {
        bind
    } else if let Some(ip) = advertise {
        ip
    } else if bind.is_ipv4() {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        IpAddr::V6(Ipv6Addr::LOCALHOST)
    };
    SocketAddr::new(ip, port)
}

/// The admin kubeconfig: cluster "apiary" at `server`, trusted by `server_ca_pem` (the
/// generated CA, or the chain of `--tls-cert-file`), user "apiary-admin", context
/// "apiary", current.
pub fn kubeconfig(server: &str, server_ca_pem: &str, pki: &Pki) -> String {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: apiary\n\
         \x20 cluster:\n\
         \x20   certificate-authority-data: {ca}\n\
         \x20   server: \"{server}\"\n\
         users:\n\
         - name: {ADMIN_USER}\n\
         \x20 user:\n\
         \x20   client-certificate-data: {cert}\n\
         \x20   client-key-data: {key}\n\
         contexts:\n\
         - name: apiary\n\
         \x20 context:\n\
         \x20   cluster: apiary\n\
         \x20   user: {ADMIN_USER}\n\
         current-context: apiary\n\
         preferences: {{}}\n",
        ca = b64(server_ca_pem),
        cert = b64(&pki.admin_cert_pem),
        key = b64(&pki.admin_key_pem),
    )
}

/// Write the admin kubeconfig (it holds the admin key: mode 0600).
pub fn write_kubeconfig(
    path: &Path,
    server: &str,
    server_ca_pem: &str,
    pki: &Pki,
) -> Result<(), PkiError> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| io_error("creating", dir, e))?;
    }
    write_file(path, kubeconfig(server, server_ca_pem, pki).as_bytes(), 0o600)
}

// ServiceAccount token signing key.

/// Where the default ServiceAccount signing key lives in the cert dir, as kubeadm names
/// it (the public half beside it in `sa.pub`).
pub const SERVICE_ACCOUNT_KEY: &str = "sa.key";
const SERVICE_ACCOUNT_PUBLIC_KEY: &str = "sa.pub";

/// The key that signs ServiceAccount tokens when `--service-account-signing-key-file` is
/// not given: `<cert_dir>/sa.key`, an ECDSA P-256 key (PKCS#8) made on first start and
/// read on every start after, so tokens outlive a restart.
pub fn ensure_service_account_key(cert_dir: &Path) -> Result<apiary_core::authn::keys::SigningKey, PkiError> {
    use apiary_core::authn::keys::parse_private_key;
    let path = cert_dir.join(SERVICE_ACCOUNT_KEY);
    if path.is_file() {
        let text = fs::read_to_string(&path).map_err(|e| io_error("reading", &path, e))?;
        return parse_private_key(&text).map_err(|e| PkiError(format!("{}: {e}", path.display())));
    }
    fs::create_dir_all(cert_dir).map_err(|e| io_error("creating", cert_dir, e))?;
    let pair = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
        .map_err(|e| rcgen_error("generating the ServiceAccount signing key", e))?;
    let pem = pair.serialize_pem();
    let key = parse_private_key(&pem).map_err(|e| PkiError(format!("the generated ServiceAccount key: {e}")))?;
    write_file(&cert_dir.join(SERVICE_ACCOUNT_PUBLIC_KEY), key.public_key().to_pem().as_bytes(), 0o644)?;
    write_file(&path, pem.as_bytes(), 0o600)?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(86_400);

    fn tempdir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "apiary-pki-{name}-{}-{}",
            std::process::id(),
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(bind: &str) -> ServingNames {
        ServingNames::new(bind.parse().unwrap(), None)
    }

    impl Pki {
        fn serving_cert(&self) -> &CertificateDer<'static> {
            &self.serving.as_ref().expect("a generated serving certificate").0
        }
    }

    #[test]
    fn without_serving_names_only_the_ca_and_admin_are_made() {
        let dir = tempdir("no-serving");
        let pki = ensure_for(&dir, None, SystemTime::now()).unwrap();
        assert!(pki.serving.is_none());
        assert!(dir.join("ca.crt").is_file() && dir.join("admin.crt").is_file());
        assert!(!dir.join("apiserver.crt").exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn creates_then_reuses() {
        let dir = tempdir("reuse").join("pki");
        let now = SystemTime::now();
        let first = ensure(&dir, &names("127.0.0.1"), now).unwrap();
        for f in [
            "ca.crt",
            "ca.key",
            "apiserver.crt",
            "apiserver.key",
            "admin.crt",
            "admin.key",
        ] {
            assert!(dir.join(f).is_file(), "{f} missing");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for f in ["ca.key", "apiserver.key", "admin.key"] {
                let mode = fs::metadata(dir.join(f)).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o600, "{f}");
            }
        }
        let second = ensure(&dir, &names("127.0.0.1"), now).unwrap();
        assert_eq!(first.ca_cert, second.ca_cert);
        assert_eq!(first.serving_cert(), second.serving_cert());
        assert_eq!(first.admin_cert_pem, second.admin_cert_pem);
        let _ = fs::remove_dir_all(dir.parent().unwrap());
    }

    #[test]
    fn renews_only_the_serving_cert_for_a_new_address() {
        let dir = tempdir("renew");
        let now = SystemTime::now();
        let first = ensure(&dir, &names("127.0.0.1"), now).unwrap();
        let second = ensure(&dir, &names("10.1.2.3"), now).unwrap();
        assert_eq!(first.ca_cert, second.ca_cert);
        assert_ne!(first.serving_cert(), second.serving_cert());
        assert_eq!(first.admin_cert_pem, second.admin_cert_pem);
        let ip = ServerName::IpAddress("10.1.2.3".parse::<IpAddr>().unwrap().into());
        assert_eq!(
            leaf_problem(
                second.serving_cert(),
                &second.ca_cert,
                Usage::Serving,
                &[ip],
                now
            ),
            None
        );
        // Near expiry, both leaves are renewed with the same CA.
        let later = now + LEAF_LIFETIME - DAY;
        let third = ensure(&dir, &names("10.1.2.3"), later).unwrap();
        assert_eq!(first.ca_cert, third.ca_cert);
        assert_ne!(second.serving_cert(), third.serving_cert());
        assert_ne!(second.admin_cert_pem, third.admin_cert_pem);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn admin_cert_is_a_client_cert_of_the_ca() {
        let dir = tempdir("admin");
        let now = SystemTime::now();
        let pki = ensure(&dir, &names("127.0.0.1"), now).unwrap();
        let admin = parse_cert(&pki.admin_cert_pem, Path::new("admin.crt")).unwrap();
        assert_eq!(
            leaf_problem(&admin, &pki.ca_cert, Usage::Client, &[], now),
            None
        );
        assert!(leaf_problem(&admin, &pki.ca_cert, Usage::Serving, &[], now).is_some());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn kubeconfig_has_the_cluster_user_and_context() {
        let dir = tempdir("kubeconfig");
        let pki = ensure(&dir, &names("127.0.0.1"), SystemTime::now()).unwrap();
        let path = dir.join("admin.kubeconfig");
        write_kubeconfig(&path, "https://127.0.0.1:1234", &pki.ca_cert_pem, &pki).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("server: \"https://127.0.0.1:1234\""));
        assert!(text.contains("certificate-authority-data: "));
        assert!(text.contains("client-certificate-data: "));
        assert!(text.contains("client-key-data: "));
        assert!(text.contains("current-context: apiary"));
        assert!(text.contains("- name: apiary-admin"));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn client_address_prefers_a_specific_bind() {
        let l4 = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let any4 = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
        let any6 = IpAddr::V6(Ipv6Addr::UNSPECIFIED);
        let adv: IpAddr = "10.0.0.1".parse().unwrap();
        assert_eq!(client_address(l4, Some(adv), 1).ip(), l4);
        assert_eq!(client_address(any4, Some(adv), 1).ip(), adv);
        assert_eq!(client_address(any4, None, 1).ip(), l4);
        assert_eq!(client_address(any6, None, 1).to_string(), "[::1]:1");
    }
}

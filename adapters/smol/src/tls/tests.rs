//! Reloading, tick by tick: what a changed, unchanged or bad file does to the
//! configuration new connections get.

use super::*;
use bytes::Bytes;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

fn ca(name: &str) -> Ca {
    let mut params = CertificateParams::default();
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().unwrap();
    Ca {
        cert: params.self_signed(&key).unwrap(),
        key,
    }
}

/// A leaf signed by `ca`: (certificate PEM, key PEM, certificate DER).
fn leaf(ca: &Ca, name: &str) -> (String, String, Bytes) {
    let mut params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    params.distinguished_name.push(DnType::CommonName, name);
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca.cert, &ca.key).unwrap();
    (cert.pem(), key.serialize_pem(), Bytes::copy_from_slice(cert.der()))
}

/// A fresh directory under the system's temp dir.
pub(super) fn tempdir(name: &str) -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("apiary-tls-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Replace `path` whole, as an operator's `mv` does.
fn replace(path: &Path, contents: &str) {
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, contents).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn served(tls: &ServerTls) -> CertificateDer<'static> {
    tls.sources.lock().unwrap().serving.value.cert[0].clone()
}

fn trusted(tls: &ServerTls, client: &Bytes) -> bool {
    tls.client_ca().verify(std::slice::from_ref(client), SystemTime::now()).is_ok()
}

struct Setup {
    dir: PathBuf,
    options: TlsOptions,
    pki: Pki,
}

impl Setup {
    fn new(name: &str) -> Setup {
        let dir = tempdir(name);
        let pki = crate::pki::ensure_for(&dir.join("pki"), None, SystemTime::now()).unwrap();
        let options = TlsOptions {
            serving_files: Some(ServingFiles {
                cert: dir.join("tls.crt"),
                key: dir.join("tls.key"),
            }),
            client_ca_file: Some(dir.join("clients.pem")),
            ..TlsOptions::default()
        };
        Setup { dir, options, pki }
    }

    fn write_pair(&self, cert: &str, key: &str) {
        let files = self.options.serving_files.as_ref().unwrap();
        replace(&files.cert, cert);
        replace(&files.key, key);
    }

    fn write_cas(&self, bundle: &str) {
        replace(self.options.client_ca_file.as_ref().unwrap(), bundle);
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn a_changed_pair_or_bundle_is_swapped_in_and_a_bad_one_keeps_the_last_good() {
    let s = Setup::new("reload");
    let (ca1, ca2) = (ca("one"), ca("two"));
    let (cert1, key1, serving1) = leaf(&ca1, "apiary");
    let (_, _, client1) = leaf(&ca1, "alice");
    let (cert2, key2, serving2) = leaf(&ca2, "apiary");
    let (_, _, client2) = leaf(&ca2, "bob");
    s.write_pair(&format!("{cert1}{}", ca1.cert.pem()), &key1);
    s.write_cas(&ca1.cert.pem());
    let tls = ServerTls::new(&s.options, &s.pki).unwrap();
    assert!(tls.reloads_files());
    assert_eq!(served(&tls).as_ref(), serving1.as_ref());
    assert!(trusted(&tls, &client1) && !trusted(&tls, &client2));

    // Nothing changed: the same configuration.
    let before = tls.current();
    assert!(!tls.reload());
    assert!(Arc::ptr_eq(&before.config, &tls.current().config));

    // A new pair and a bundle of both CAs.
    s.write_pair(&cert2, &key2);
    s.write_cas(&format!("{}{}", ca1.cert.pem(), ca2.cert.pem()));
    assert!(tls.reload());
    assert!(!Arc::ptr_eq(&before.config, &tls.current().config));
    assert_eq!(served(&tls).as_ref(), serving2.as_ref());
    assert!(trusted(&tls, &client1) && trusted(&tls, &client2));
    // The configuration taken before still serves what it served: connections
    // accepted with it are not disturbed.
    assert!(before.client_ca.verify(std::slice::from_ref(&client1), SystemTime::now()).is_ok());
    assert!(before.client_ca.verify(std::slice::from_ref(&client2), SystemTime::now()).is_err());

    // Half-written: the old key beside a new certificate. Kept out, and so is an
    // empty bundle.
    s.write_pair(&cert1, &key2);
    s.write_cas("");
    assert!(!tls.reload());
    assert_eq!(served(&tls).as_ref(), serving2.as_ref());
    assert!(trusted(&tls, &client1) && trusted(&tls, &client2));
    // Reported once: the same bad content is not parsed again.
    assert!(!tls.reload());

    // The key catches up, the bundle is rewritten: both taken.
    s.write_pair(&cert1, &key1);
    s.write_cas(&ca2.cert.pem());
    assert!(tls.reload());
    assert_eq!(served(&tls).as_ref(), serving1.as_ref());
    assert!(!trusted(&tls, &client1) && trusted(&tls, &client2));
}

#[test]
fn files_that_cannot_be_used_at_start_are_errors_that_name_them() {
    let s = Setup::new("start");
    let ca1 = ca("one");
    let (cert1, key1, _) = leaf(&ca1, "apiary");
    let (_, key2, _) = leaf(&ca1, "other");
    let error = |s: &Setup| ServerTls::new(&s.options, &s.pki).err().unwrap();

    assert!(error(&s).starts_with(&format!("reading {}", s.dir.join("tls.crt").display())));
    s.write_pair(&cert1, &key2);
    s.write_cas(&ca1.cert.pem());
    assert_eq!(
        error(&s),
        format!(
            "the private key in --tls-private-key-file {} does not match the certificate in \
             --tls-cert-file {}",
            s.dir.join("tls.key").display(),
            s.dir.join("tls.crt").display()
        )
    );
    s.write_pair("not a certificate", &key1);
    assert!(error(&s).contains("no PEM certificate in the file"), "{}", error(&s));
    s.write_pair(&cert1, &key1);
    s.write_cas("junk\n");
    assert!(error(&s).starts_with("error loading CA bundle"), "{}", error(&s));
    s.write_cas(&ca1.cert.pem());
    assert!(ServerTls::new(&s.options, &s.pki).is_ok());
}

#[test]
fn without_files_apiarys_own_ca_verifies_clients_and_nothing_reloads() {
    let dir = tempdir("own");
    let names = crate::pki::ServingNames::new("127.0.0.1".parse().unwrap(), None);
    let pki = crate::pki::ensure(&dir, &names, SystemTime::now()).unwrap();
    let tls = ServerTls::new(&TlsOptions::default(), &pki).unwrap();
    assert!(!tls.reloads_files() && !tls.reload());
    let admin = CertificateDer::from_pem_slice(pki.admin_cert_pem.as_bytes()).unwrap();
    assert!(trusted(&tls, &Bytes::copy_from_slice(admin.as_ref())));
    let stranger = leaf(&ca("stranger"), "mallory").2;
    assert!(!trusted(&tls, &stranger));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_connections_verdict_is_reused_until_the_bundle_changes() {
    let (ca1, ca2) = (ca("one"), ca("two"));
    let bundle1 = Arc::new(ClientCa::from_pem(ca1.cert.pem().as_bytes(), "one").unwrap());
    let bundle2 = Arc::new(ClientCa::from_pem(ca2.cert.pem().as_bytes(), "two").unwrap());
    let (_, _, alice) = leaf(&ca1, "alice");
    let mut peer = PeerChain::new(vec![alice.clone()]);
    let fetches = std::cell::Cell::new(0);
    let mut ask = |bundle: &Arc<ClientCa>| {
        peer.for_request(bundle.generation(), || {
            fetches.set(fetches.get() + 1);
            bundle.clone()
        })
    };
    assert_eq!(ask(&bundle1), (vec![alice.clone()], false));
    assert_eq!(ask(&bundle1), (vec![alice.clone()], false));
    assert_eq!(fetches.get(), 1, "the second request reused the verdict");
    assert_eq!(ask(&bundle2), (Vec::new(), true));
    assert_eq!(fetches.get(), 2, "a new bundle is asked for");
    // No certificate: nothing to verify, nothing rejected.
    let mut none = PeerChain::new(Vec::new());
    assert_eq!(none.for_request(bundle1.generation(), || unreachable!()), (Vec::new(), false));
}

//! The keys ServiceAccount tokens are signed and verified with, read from PEM as
//! kube-apiserver reads `--service-account-signing-key-file` (upstream's
//! `keyutil.ParsePrivateKeyPEM`: `RSA PRIVATE KEY`, `PRIVATE KEY`, `EC PRIVATE KEY`) and
//! `--service-account-key-file` (`keyutil.ParsePublicKeysPEM`: public keys, certificates'
//! public keys, and the public half of private keys; blocks of other kinds are skipped).
//! Apiary also takes PKCS#1 `RSA PUBLIC KEY` blocks and PKCS#8 ECDSA keys in key files.
//!
//! RSA keys of 2048 to 8192 bits and ECDSA keys on P-256 and P-384 are supported (ring
//! has no P-521). Each key is known by upstream's key id: the unpadded base64url of the
//! SHA-256 of its DER SubjectPublicKeyInfo (`keyIDFromPublicKey`).

use super::der::{self, BIT_STRING, CONTEXT_0, CONTEXT_1, INTEGER, NULL, OCTET_STRING, OID, SEQUENCE};
use super::pem;
use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair as _, RsaKeyPair};
use std::fmt;
use std::sync::Arc;

const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const OID_P384: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x22];
const OID_P521: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x23];

/// Why a key file was refused, in upstream's words where it has them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyError(pub String);

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KeyError {}

fn error(message: impl Into<String>) -> KeyError {
    KeyError(message.into())
}

/// The elliptic curves apiary signs and verifies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Curve {
    P256,
    P384,
}

impl Curve {
    fn of_oid(oid: &[u8]) -> Result<Curve, KeyError> {
        match oid {
            OID_P256 => Ok(Curve::P256),
            OID_P384 => Ok(Curve::P384),
            OID_P521 => Err(error("ECDSA keys on P-521 are not supported (P-256 and P-384 are)")),
            _ => Err(error("unknown elliptic curve")),
        }
    }

    fn oid(self) -> &'static [u8] {
        match self {
            Curve::P256 => OID_P256,
            Curve::P384 => OID_P384,
        }
    }

    /// The length of a scalar, and of each coordinate of a point.
    fn size(self) -> usize {
        match self {
            Curve::P256 => 32,
            Curve::P384 => 48,
        }
    }
}

/// What a public key is.
#[derive(Clone, PartialEq, Eq)]
enum PublicKind {
    /// The DER `RSAPublicKey` (PKCS#1), as ring verifies with it.
    Rsa(Vec<u8>),
    /// The uncompressed point.
    Ec(Curve, Vec<u8>),
}

/// A key that verifies tokens.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    kind: PublicKind,
    key_id: String,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            PublicKind::Rsa(_) => "RSA".to_owned(),
            PublicKind::Ec(curve, _) => format!("ECDSA {curve:?}"),
        };
        f.debug_struct("PublicKey").field("kind", &kind).field("key_id", &self.key_id).finish()
    }
}

impl PublicKey {
    fn new(kind: PublicKind) -> PublicKey {
        let spki = spki(&kind);
        let digest = ring::digest::digest(&ring::digest::SHA256, &spki);
        let key_id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref());
        PublicKey { kind, key_id }
    }

    /// Upstream's key id: what a token's `kid` header names.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The key as a `PUBLIC KEY` PEM block (SubjectPublicKeyInfo).
    pub fn to_pem(&self) -> String {
        pem::encode("PUBLIC KEY", &spki(&self.kind))
    }

    /// Whether this key verifies `alg` (a JWS algorithm name), and how.
    pub(super) fn verifier(&self, alg: &str) -> Option<(&'static dyn signature::VerificationAlgorithm, &[u8])> {
        let algorithm: &'static dyn signature::VerificationAlgorithm = match (&self.kind, alg) {
            (PublicKind::Rsa(_), "RS256") => &signature::RSA_PKCS1_2048_8192_SHA256,
            (PublicKind::Rsa(_), "RS384") => &signature::RSA_PKCS1_2048_8192_SHA384,
            (PublicKind::Rsa(_), "RS512") => &signature::RSA_PKCS1_2048_8192_SHA512,
            (PublicKind::Rsa(_), "PS256") => &signature::RSA_PSS_2048_8192_SHA256,
            (PublicKind::Rsa(_), "PS384") => &signature::RSA_PSS_2048_8192_SHA384,
            (PublicKind::Rsa(_), "PS512") => &signature::RSA_PSS_2048_8192_SHA512,
            // The algorithm must name the key's own curve, as go-jose checks.
            (PublicKind::Ec(Curve::P256, _), "ES256") => &signature::ECDSA_P256_SHA256_FIXED,
            (PublicKind::Ec(Curve::P384, _), "ES384") => &signature::ECDSA_P384_SHA384_FIXED,
            _ => return None,
        };
        let bytes = match &self.kind {
            PublicKind::Rsa(der) => der.as_slice(),
            PublicKind::Ec(_, point) => point.as_slice(),
        };
        Some((algorithm, bytes))
    }
}

/// The DER SubjectPublicKeyInfo of a key, as Go's `x509.MarshalPKIXPublicKey` writes it.
fn spki(kind: &PublicKind) -> Vec<u8> {
    let (algorithm, key) = match kind {
        PublicKind::Rsa(der) => ([der::write(OID, OID_RSA), der::write(NULL, &[])].concat(), der.as_slice()),
        PublicKind::Ec(curve, point) => (
            [der::write(OID, OID_EC), der::write(OID, curve.oid())].concat(),
            point.as_slice(),
        ),
    };
    let bits = [&[0u8][..], key].concat();
    der::write(SEQUENCE, &[der::write(SEQUENCE, &algorithm), der::write(BIT_STRING, &bits)].concat())
}

/// A private key's signing half.
enum Pair {
    Rsa(RsaKeyPair),
    Ec(EcdsaKeyPair),
}

/// The key tokens are signed with (`--service-account-signing-key-file`).
#[derive(Clone)]
pub struct SigningKey {
    pair: Arc<Pair>,
    public: PublicKey,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key material.
        f.debug_struct("SigningKey")
            .field("algorithm", &self.algorithm())
            .field("key_id", &self.public.key_id)
            .finish()
    }
}

impl SigningKey {
    /// The public half, which verifies what this key signs.
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// The JWS algorithm of this key's signatures: RS256 for RSA (the only one upstream
    /// signs with), ES256 or ES384 by curve.
    pub fn algorithm(&self) -> &'static str {
        match (&*self.pair, &self.public.kind) {
            (Pair::Rsa(_), _) => "RS256",
            (Pair::Ec(_), PublicKind::Ec(Curve::P384, _)) => "ES384",
            (Pair::Ec(_), _) => "ES256",
        }
    }

    /// The signature of `message`.
    ///
    /// RSA PKCS#1 v1.5 signatures are deterministic. An ECDSA signature takes a random
    /// nonce (ring mixes the OS generator with the key and message), so its bytes differ
    /// from run to run; every decision the server makes stays deterministic, since none
    /// depends on a signature's bytes, only on whether it verifies.
    pub(super) fn sign(&self, message: &[u8]) -> Vec<u8> {
        let rng = SystemRandom::new();
        match &*self.pair {
            Pair::Rsa(pair) => {
                let mut out = vec![0; pair.public().modulus_len()];
                pair.sign(&signature::RSA_PKCS1_SHA256, &rng, message, &mut out)
                    .expect("RSA signing with a valid key and a buffer of the modulus' size");
                out
            }
            Pair::Ec(pair) => pair
                .sign(&rng, message)
                .expect("ECDSA signing with a valid key")
                .as_ref()
                .to_vec(),
        }
    }
}

/// The first private key in `text`, as upstream's `keyutil.ParsePrivateKeyPEM` finds it.
pub fn parse_private_key(text: &str) -> Result<SigningKey, KeyError> {
    let mut last = None;
    for block in pem::blocks(text) {
        let parsed = match block.label.as_str() {
            _ if block.has_headers => Err(error("encrypted private keys are not supported")),
            "RSA PRIVATE KEY" => rsa_private(&block.der),
            "PRIVATE KEY" => pkcs8_private(&block.der),
            "EC PRIVATE KEY" => sec1_private(&block.der, None),
            _ => continue,
        };
        match parsed {
            Ok(key) => return Ok(key),
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(KeyError(why)) => error(format!("data does not contain a valid RSA or ECDSA private key: {why}")),
        None => error("data does not contain a valid RSA or ECDSA private key"),
    })
}

/// Every public key in `text`, as upstream's `keyutil.ParsePublicKeysPEM` reads a
/// `--service-account-key-file`: public keys, certificates, and private keys for their
/// public half.
pub fn parse_public_keys(text: &str) -> Result<Vec<PublicKey>, KeyError> {
    let mut keys = Vec::new();
    for block in pem::blocks(text) {
        let key = match block.label.as_str() {
            "PUBLIC KEY" => spki_public(&block.der),
            "RSA PUBLIC KEY" => rsa_public(&block.der),
            "CERTIFICATE" => certificate_public(&block.der),
            "RSA PRIVATE KEY" | "PRIVATE KEY" | "EC PRIVATE KEY" if !block.has_headers => {
                parse_private_key(&pem::encode(&block.label, &block.der)).map(|k| k.public)
            }
            // Other blocks ("EC PARAMETERS") are tolerated, as upstream does.
            _ => continue,
        };
        // A block that does not parse is skipped, as upstream tries each parser in turn.
        if let Ok(key) = key {
            keys.push(key);
        }
    }
    if keys.is_empty() {
        return Err(error("data does not contain any valid RSA or ECDSA public keys"));
    }
    Ok(keys)
}

/// An RSA private key (PKCS#1).
fn rsa_private(der: &[u8]) -> Result<SigningKey, KeyError> {
    let pair = RsaKeyPair::from_der(der).map_err(|e| error(format!("RSA private key: {e}")))?;
    let public = PublicKey::new(PublicKind::Rsa(pair.public().as_ref().to_vec()));
    Ok(SigningKey {
        pair: Arc::new(Pair::Rsa(pair)),
        public,
    })
}

/// A PKCS#8 private key: RSA or ECDSA.
fn pkcs8_private(der: &[u8]) -> Result<SigningKey, KeyError> {
    let malformed = || error("malformed PKCS#8 private key");
    let (info, _) = der::expect(der, SEQUENCE).ok_or_else(malformed)?;
    let (_version, rest) = der::expect(info, INTEGER).ok_or_else(malformed)?;
    let (algorithm, rest) = der::expect(rest, SEQUENCE).ok_or_else(malformed)?;
    let (key, _) = der::expect(rest, OCTET_STRING).ok_or_else(malformed)?;
    let (oid, params) = der::expect(algorithm, OID).ok_or_else(malformed)?;
    match oid {
        OID_RSA => rsa_private(key),
        OID_EC => {
            let (curve, _) = der::expect(params, OID).ok_or_else(malformed)?;
            sec1_private(key, Some(Curve::of_oid(curve)?))
        }
        _ => Err(error("PKCS#8 key of an algorithm other than RSA or ECDSA")),
    }
}

/// A SEC 1 ECPrivateKey; `curve` is the curve a PKCS#8 wrapper named, when it did.
fn sec1_private(der: &[u8], curve: Option<Curve>) -> Result<SigningKey, KeyError> {
    let malformed = || error("malformed EC private key");
    let (key, _) = der::expect(der, SEQUENCE).ok_or_else(malformed)?;
    let (_version, rest) = der::expect(key, INTEGER).ok_or_else(malformed)?;
    let (private, mut rest) = der::expect(rest, OCTET_STRING).ok_or_else(malformed)?;
    let mut curve = curve;
    let mut public = None;
    while let Some((tag, body, after)) = der::tlv(rest) {
        match tag {
            CONTEXT_0 => curve = Some(Curve::of_oid(der::expect(body, OID).ok_or_else(malformed)?.0)?),
            CONTEXT_1 => public = Some(bit_string(body).ok_or_else(malformed)?),
            _ => {}
        }
        rest = after;
    }
    let curve = curve.ok_or_else(|| error("EC private key names no curve"))?;
    let public = public.ok_or_else(|| error("EC private keys without their public key are not supported"))?;
    // The scalar is fixed-length; some writers drop its leading zeros.
    if private.len() > curve.size() {
        return Err(malformed());
    }
    let mut scalar = vec![0; curve.size() - private.len()];
    scalar.extend_from_slice(private);
    let algorithm = match curve {
        Curve::P256 => &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
        Curve::P384 => &signature::ECDSA_P384_SHA384_FIXED_SIGNING,
    };
    let pair = EcdsaKeyPair::from_private_key_and_public_key(algorithm, &scalar, public, &SystemRandom::new())
        .map_err(|e| error(format!("EC private key: {e}")))?;
    let public = PublicKey::new(PublicKind::Ec(curve, pair.public_key().as_ref().to_vec()));
    Ok(SigningKey {
        pair: Arc::new(Pair::Ec(pair)),
        public,
    })
}

/// The contents of a BIT STRING with no unused bits.
fn bit_string(der: &[u8]) -> Option<&[u8]> {
    let (bits, _) = der::expect(der, BIT_STRING)?;
    match bits.split_first()? {
        (0, key) => Some(key),
        _ => None,
    }
}

/// A SubjectPublicKeyInfo.
fn spki_public(der: &[u8]) -> Result<PublicKey, KeyError> {
    let malformed = || error("malformed public key");
    let (info, _) = der::expect(der, SEQUENCE).ok_or_else(malformed)?;
    let (algorithm, rest) = der::expect(info, SEQUENCE).ok_or_else(malformed)?;
    let key = bit_string(rest).ok_or_else(malformed)?;
    let (oid, params) = der::expect(algorithm, OID).ok_or_else(malformed)?;
    match oid {
        OID_RSA => rsa_public(key),
        OID_EC => {
            let (curve, _) = der::expect(params, OID).ok_or_else(malformed)?;
            let curve = Curve::of_oid(curve)?;
            // Uncompressed points only, as Go's parser takes them.
            if key.len() != 1 + 2 * curve.size() || key[0] != 0x04 {
                return Err(error("malformed EC public key"));
            }
            Ok(PublicKey::new(PublicKind::Ec(curve, key.to_vec())))
        }
        _ => Err(error("public key of an algorithm other than RSA or ECDSA")),
    }
}

/// An RSAPublicKey (PKCS#1): two positive integers, the modulus of 2048 to 8192 bits.
fn rsa_public(der: &[u8]) -> Result<PublicKey, KeyError> {
    let malformed = || error("malformed RSA public key");
    let (key, _) = der::expect(der, SEQUENCE).ok_or_else(malformed)?;
    let (modulus, after) = der::expect(key, INTEGER).ok_or_else(malformed)?;
    let (exponent, after) = der::expect(after, INTEGER).ok_or_else(malformed)?;
    let (modulus, exponent) = (magnitude(modulus), magnitude(exponent));
    if !after.is_empty() || modulus.is_empty() || exponent.is_empty() {
        return Err(malformed());
    }
    let bits = modulus.len() * 8 - modulus[0].leading_zeros() as usize;
    if !(2048..=8192).contains(&bits) {
        return Err(error(format!("RSA keys of 2048 to 8192 bits are supported, not {bits}")));
    }
    // Encoded again minimally, so the key id is that of the SPKI Go writes for the key.
    let integer = |magnitude: &[u8]| {
        let pad = if magnitude[0] & 0x80 != 0 { &[0u8][..] } else { &[] };
        der::write(INTEGER, &[pad, magnitude].concat())
    };
    let pkcs1 = der::write(SEQUENCE, &[integer(modulus), integer(exponent)].concat());
    Ok(PublicKey::new(PublicKind::Rsa(pkcs1)))
}

/// A DER INTEGER's contents without leading zero bytes.
fn magnitude(integer: &[u8]) -> &[u8] {
    let zeros = integer.iter().take_while(|b| **b == 0).count();
    &integer[zeros..]
}

/// The public key of a DER certificate.
fn certificate_public(der: &[u8]) -> Result<PublicKey, KeyError> {
    let malformed = || error("malformed certificate");
    let (cert, _) = der::expect(der, SEQUENCE).ok_or_else(malformed)?;
    let (tbs, _) = der::expect(cert, SEQUENCE).ok_or_else(malformed)?;
    let mut fields = tbs;
    if fields.first() == Some(&CONTEXT_0) {
        fields = der::tlv(fields).ok_or_else(malformed)?.2;
    }
    // serialNumber, signature, issuer, validity, subject, then the key.
    for _ in 0..5 {
        fields = der::tlv(fields).ok_or_else(malformed)?.2;
    }
    let (tag, _, rest) = der::tlv(fields).ok_or_else(malformed)?;
    if tag != SEQUENCE {
        return Err(malformed());
    }
    spki_public(&fields[..fields.len() - rest.len()])
}

#[cfg(test)]
pub(crate) mod tests;

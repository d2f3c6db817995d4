//! Compact JWS (RFC 7515) as ServiceAccount tokens use it: `header.payload.signature`,
//! each part unpadded base64url. Read as go-jose reads them for kube-apiserver: the
//! header's `alg` must be one the key verifies (RS256/384/512 and PS256/384/512 for RSA
//! keys, ES256 or ES384 for an ECDSA key on that curve), so `none`, HMAC and anything
//! else never verify; a `crit` header is refused.

use super::keys::{PublicKey, SigningKey};
use base64::Engine as _;
use serde_json::Value;
use std::fmt;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Why a token is not a verified JWS. Never shown to the client (who gets 401).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JwtError {
    /// Not three base64url parts, or a header that is not a JSON object.
    Malformed,
    /// A header this reader does not take (`crit`).
    UnsupportedHeader,
    /// The key does not verify this algorithm (`none`, `HS256`, or another key type).
    UnsupportedAlgorithm(String),
    /// The signature does not verify.
    BadSignature,
}

impl fmt::Display for JwtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JwtError::Malformed => f.write_str("malformed token"),
            JwtError::UnsupportedHeader => f.write_str("unsupported critical header"),
            JwtError::UnsupportedAlgorithm(alg) => write!(f, "unexpected signature algorithm {alg:?}"),
            JwtError::BadSignature => f.write_str("invalid signature"),
        }
    }
}

/// A parsed, not yet verified token.
#[derive(Clone, Debug)]
pub struct Token<'a> {
    /// `header.payload`: what the signature covers.
    signing_input: &'a str,
    alg: String,
    kid: Option<String>,
    payload: Vec<u8>,
    signature: Vec<u8>,
}

/// One base64url part; go-jose also takes trailing padding.
fn decode_part(part: &str) -> Result<Vec<u8>, JwtError> {
    B64.decode(part.trim_end_matches('=')).map_err(|_| JwtError::Malformed)
}

/// Split and decode a compact JWS.
pub fn parse(token: &str) -> Result<Token<'_>, JwtError> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwtError::Malformed);
    };
    let header: Value = serde_json::from_slice(&decode_part(header)?).map_err(|_| JwtError::Malformed)?;
    let header = header.as_object().ok_or(JwtError::Malformed)?;
    if header.contains_key("crit") {
        return Err(JwtError::UnsupportedHeader);
    }
    let text = |name: &str| match header.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(JwtError::Malformed),
    };
    let alg = text("alg")?.unwrap_or_default();
    let kid = text("kid")?.filter(|k| !k.is_empty());
    Ok(Token {
        signing_input: &token[..token.rfind('.').expect("three parts")],
        alg,
        kid,
        payload: decode_part(payload)?,
        signature: decode_part(signature)?,
    })
}

impl Token<'_> {
    /// The `kid` header: which key signed it, if the token says.
    pub fn key_id(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// The `alg` header.
    pub fn algorithm(&self) -> &str {
        &self.alg
    }

    /// The claims, unverified until [`Token::verify`] says otherwise.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// Whether `key` signed this token.
    pub fn verify(&self, key: &PublicKey) -> Result<(), JwtError> {
        let (algorithm, public) = key
            .verifier(&self.alg)
            .ok_or_else(|| JwtError::UnsupportedAlgorithm(self.alg.clone()))?;
        ring::signature::UnparsedPublicKey::new(algorithm, public)
            .verify(self.signing_input.as_bytes(), &self.signature)
            .map_err(|_| JwtError::BadSignature)
    }
}

/// The `iss` claim of a token, read without verifying anything: which authenticator the
/// token is for (upstream's `hasCorrectIssuer`). `None` when it is not a compact JWS
/// with a JSON payload.
pub fn unverified_issuer(token: &str) -> Option<String> {
    if token.trim_start().starts_with('{') {
        return None;
    }
    let mut parts = token.split('.');
    let (Some(_), Some(payload), Some(_), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return None;
    };
    let payload: Value = serde_json::from_slice(&B64.decode(payload).ok()?).ok()?;
    match payload.get("iss") {
        Some(Value::String(issuer)) => Some(issuer.clone()),
        _ => None,
    }
}

/// A compact JWS of `claims`, signed with `key` and naming it in `kid`, as upstream's
/// token generator writes one (header `{"alg":…,"kid":…}`, claims with sorted keys).
pub fn sign(key: &SigningKey, claims: &Value) -> String {
    let header = serde_json::json!({ "alg": key.algorithm(), "kid": key.public_key().key_id() });
    let mut token = format!(
        "{}.{}",
        B64.encode(header.to_string()),
        B64.encode(claims.to_string())
    );
    let signature = key.sign(token.as_bytes());
    token.push('.');
    token.push_str(&B64.encode(signature));
    token
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authn::keys::tests::fixture;
    use crate::authn::keys::{parse_private_key, parse_public_keys};
    use serde_json::json;

    fn claims() -> Value {
        json!({ "iss": "https://issuer", "sub": "system:serviceaccount:ns:sa", "exp": 2_000_000_000 })
    }

    #[test]
    fn signed_tokens_verify_with_their_key_only() {
        for file in ["rsa-pkcs1.key", "ec-p256-sec1.key", "ec-p384-sec1.key"] {
            let key = parse_private_key(fixture(file)).unwrap();
            let token = sign(&key, &claims());
            let parsed = parse(&token).unwrap();
            assert_eq!(parsed.key_id(), Some(key.public_key().key_id()));
            assert_eq!(parsed.algorithm(), key.algorithm());
            assert_eq!(serde_json::from_slice::<Value>(parsed.payload()).unwrap(), claims());
            assert_eq!(parsed.verify(key.public_key()), Ok(()), "{file}");
            assert_eq!(unverified_issuer(&token).as_deref(), Some("https://issuer"));
            for other in ["rsa.pub", "ec-p256.pub", "ec-p384.pub"] {
                let other = &parse_public_keys(fixture(other)).unwrap()[0];
                if other != key.public_key() {
                    assert!(parsed.verify(other).is_err(), "{file} verified by {other:?}");
                }
            }
        }
    }

    #[test]
    fn tampered_and_unsigned_tokens_do_not_verify() {
        let key = parse_private_key(fixture("ec-p256-sec1.key")).unwrap();
        let token = sign(&key, &claims());
        let (head, rest) = token.split_once('.').unwrap();
        let (_, signature) = rest.split_once('.').unwrap();
        // Another payload under the same signature.
        let forged = format!("{head}.{}.{signature}", B64.encode(json!({"iss": "https://issuer", "sub": "system:admin"}).to_string()));
        assert_eq!(parse(&forged).unwrap().verify(key.public_key()), Err(JwtError::BadSignature));
        // alg none, with or without a signature.
        let none = B64.encode(r#"{"alg":"none"}"#);
        for unsigned in [format!("{none}.{}.", B64.encode(claims().to_string())), format!("{none}.{}.{signature}", B64.encode(claims().to_string()))] {
            assert_eq!(parse(&unsigned).unwrap().verify(key.public_key()), Err(JwtError::UnsupportedAlgorithm("none".into())));
        }
        // HMAC keyed with the public key (the classic confusion) is no algorithm of a key.
        let hs = format!("{}.{}.{signature}", B64.encode(r#"{"alg":"HS256"}"#), B64.encode(claims().to_string()));
        assert!(matches!(parse(&hs).unwrap().verify(key.public_key()), Err(JwtError::UnsupportedAlgorithm(_))));
        // ES384 claimed for a P-256 key.
        let es384 = format!("{}.{}", B64.encode(r#"{"alg":"ES384"}"#), rest);
        assert!(matches!(parse(&es384).unwrap().verify(key.public_key()), Err(JwtError::UnsupportedAlgorithm(_))));
    }

    #[test]
    fn malformed_tokens_are_refused() {
        for bad in ["", "a.b", "a.b.c.d", "!!.e30.", "e30.e30.!!", "W10.e30.", "eyJhbGciOjF9.e30."] {
            assert_eq!(parse(bad).unwrap_err(), JwtError::Malformed, "{bad:?}");
        }
        let crit = format!("{}.e30.", B64.encode(r#"{"alg":"ES256","crit":["exp"]}"#));
        assert_eq!(parse(&crit).unwrap_err(), JwtError::UnsupportedHeader);
        assert_eq!(unverified_issuer("{\"iss\":\"x\"}"), None);
        assert_eq!(unverified_issuer("a.b"), None);
        // Padding is tolerated, as go-jose tolerates it.
        assert!(parse("e30=.e30=.").is_ok());
    }
}

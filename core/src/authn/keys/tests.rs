use super::*;

/// A key file of `testdata/`.
pub(crate) fn fixture(name: &str) -> &'static str {
    match name {
        "rsa-pkcs1.key" => include_str!("testdata/rsa-pkcs1.key"),
        "rsa-pkcs8.key" => include_str!("testdata/rsa-pkcs8.key"),
        "rsa.pub" => include_str!("testdata/rsa.pub"),
        "rsa-pkcs1.pub" => include_str!("testdata/rsa-pkcs1.pub"),
        "rsa-1024.key" => include_str!("testdata/rsa-1024.key"),
        "ec-p256-sec1.key" => include_str!("testdata/ec-p256-sec1.key"),
        "ec-p256-pkcs8.key" => include_str!("testdata/ec-p256-pkcs8.key"),
        "ec-p256.pub" => include_str!("testdata/ec-p256.pub"),
        "ec-p256.crt" => include_str!("testdata/ec-p256.crt"),
        "ec-p384-sec1.key" => include_str!("testdata/ec-p384-sec1.key"),
        "ec-p384.pub" => include_str!("testdata/ec-p384.pub"),
        "ec-p521-sec1.key" => include_str!("testdata/ec-p521-sec1.key"),
        other => panic!("no fixture {other}"),
    }
}

const RSA_KID: &str = "2_e2YVJHy61nHQVkBDat93rTU5B7B_4DVRgA-x1EqQ0";
const P256_KID: &str = "EtBWoHgaNZ12T9JHSojh9YHuJqbe88Dw6jWjCJYQUV8";
const P384_KID: &str = "zJBvFJ1dyjicVQVPwlYJXZHqrMqyZe-BVDJAIlclOUc";

#[test]
fn private_keys_of_every_encoding_have_upstreams_key_id() {
    for (file, kid, alg) in [
        ("rsa-pkcs1.key", RSA_KID, "RS256"),
        ("rsa-pkcs8.key", RSA_KID, "RS256"),
        ("ec-p256-sec1.key", P256_KID, "ES256"),
        ("ec-p256-pkcs8.key", P256_KID, "ES256"),
        ("ec-p384-sec1.key", P384_KID, "ES384"),
    ] {
        let key = parse_private_key(fixture(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!((key.public_key().key_id(), key.algorithm()), (kid, alg), "{file}");
    }
}

#[test]
fn public_keys_come_from_keys_certificates_and_private_keys() {
    for (file, kid) in [
        ("rsa.pub", RSA_KID),
        ("rsa-pkcs1.pub", RSA_KID),
        ("rsa-pkcs1.key", RSA_KID),
        ("ec-p256.pub", P256_KID),
        ("ec-p256.crt", P256_KID),
        ("ec-p256-pkcs8.key", P256_KID),
        ("ec-p384.pub", P384_KID),
    ] {
        let keys = parse_public_keys(fixture(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(keys.len(), 1, "{file}");
        assert_eq!(keys[0].key_id(), kid, "{file}");
    }
    // Several blocks in one file, with others between them.
    let both = format!("{}\n-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n{}", fixture("rsa.pub"), fixture("ec-p256.pub"));
    let keys = parse_public_keys(&both).unwrap();
    assert_eq!(keys.iter().map(PublicKey::key_id).collect::<Vec<_>>(), [RSA_KID, P256_KID]);
    // What a key prints as a public key reads back as the same key.
    let key = parse_private_key(fixture("ec-p256-sec1.key")).unwrap();
    assert_eq!(parse_public_keys(&key.public_key().to_pem()).unwrap(), [key.public_key().clone()]);
}

#[test]
fn unusable_keys_are_refused_with_a_reason() {
    let private = |text: &str| parse_private_key(text).unwrap_err().to_string();
    assert_eq!(private("nothing"), "data does not contain a valid RSA or ECDSA private key");
    assert_eq!(private(fixture("rsa.pub")), "data does not contain a valid RSA or ECDSA private key");
    assert!(private(fixture("ec-p521-sec1.key")).contains("P-521 are not supported"), "{}", private(fixture("ec-p521-sec1.key")));
    assert!(private(fixture("rsa-1024.key")).contains("RSA private key"));
    let encrypted = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\nAQID\n-----END RSA PRIVATE KEY-----\n";
    assert!(private(encrypted).contains("encrypted private keys are not supported"));
    assert_eq!(
        parse_public_keys("-----BEGIN PUBLIC KEY-----\nAQID\n-----END PUBLIC KEY-----\n").unwrap_err().to_string(),
        "data does not contain any valid RSA or ECDSA public keys"
    );
}

//! The PEM certificate request a CertificateSigningRequest carries, checked as far as
//! its shape: one PEM block of type `CERTIFICATE REQUEST` whose body is base64 of a
//! DER SEQUENCE of the request info (a SEQUENCE), the signature algorithm (a
//! SEQUENCE) and the signature (a BIT STRING), nothing after it. Upstream parses the
//! whole request and verifies its signature; the signature is not checked here.

use base64::Engine;

/// Why `pem` (the decoded `spec.request` bytes) is not a certificate request, in
/// upstream's words where they are known.
pub fn check_request(pem: &[u8]) -> Result<(), String> {
    let der = pem_block(pem, "CERTIFICATE REQUEST").ok_or("PEM block type must be CERTIFICATE REQUEST")?;
    der_request(&der)
}

/// The body of the first PEM block in `text`, if it is of `kind` and its base64 reads.
fn pem_block(text: &[u8], kind: &str) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(text).ok()?;
    let begin = text.find("-----BEGIN ")?;
    let rest = &text[begin + "-----BEGIN ".len()..];
    let (found, rest) = rest.split_once("-----")?;
    if found != kind {
        return None;
    }
    let (body, _) = rest.split_once(&format!("-----END {kind}-----"))?;
    let body: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(body).ok()
}

const SEQUENCE: u8 = 0x30;
const BIT_STRING: u8 = 0x03;

fn der_request(der: &[u8]) -> Result<(), String> {
    let (tag, body, rest) = tlv(der)?;
    if tag != SEQUENCE {
        return Err("asn1: structure error: tags don't match".into());
    }
    if !rest.is_empty() {
        return Err("asn1: syntax error: trailing data".into());
    }
    let mut inner = body;
    for want in [SEQUENCE, SEQUENCE, BIT_STRING] {
        let (tag, _, rest) = tlv(inner)?;
        if tag != want {
            return Err("asn1: structure error: tags don't match".into());
        }
        inner = rest;
    }
    Ok(())
}

/// One DER element: its tag, contents and what follows it.
fn tlv(data: &[u8]) -> Result<(u8, &[u8], &[u8]), String> {
    let truncated = || "asn1: syntax error: data truncated".to_owned();
    let (&tag, data) = data.split_first().ok_or_else(truncated)?;
    let (&first, mut data) = data.split_first().ok_or_else(truncated)?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || data.len() < n {
            return Err(truncated());
        }
        let len = data[..n].iter().fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        data = &data[n..];
        len
    };
    if data.len() < len {
        return Err(truncated());
    }
    Ok((tag, &data[..len], &data[len..]))
}

#[cfg(test)]
mod tests {
    use super::check_request;

    #[test]
    fn only_a_certificate_request_block_passes() {
        assert_eq!(check_request(b"not a csr").unwrap_err(), "PEM block type must be CERTIFICATE REQUEST");
        let cert = b"-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n";
        assert!(check_request(cert).is_err());
        // SEQUENCE { SEQUENCE {}, SEQUENCE {}, BIT STRING {0} }
        let ok = b"-----BEGIN CERTIFICATE REQUEST-----\nMAgwADAAAwIAAA==\n-----END CERTIFICATE REQUEST-----\n";
        assert_eq!(check_request(ok), Ok(()));
        let short = b"-----BEGIN CERTIFICATE REQUEST-----\nMAkwAA==\n-----END CERTIFICATE REQUEST-----\n";
        assert!(check_request(short).is_err());
    }
}

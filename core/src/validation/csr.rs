//! The PEM certificate request a CertificateSigningRequest carries, checked as far as
//! its shape: one PEM block of type `CERTIFICATE REQUEST` whose body is base64 of a
//! DER SEQUENCE of the request info (a SEQUENCE), the signature algorithm (a
//! SEQUENCE) and the signature (a BIT STRING), nothing after it. The block is the one
//! Go's `pem.Decode` finds (text before it and blocks that do not read are skipped, not
//! refused). Upstream parses the whole request and verifies its signature; the
//! signature is not checked here.

use base64::alphabet;
use base64::engine::{GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

/// Why `pem` (the decoded `spec.request` bytes) is not a certificate request, in
/// upstream's words where they are known.
pub fn check_request(pem: &[u8]) -> Result<(), String> {
    let der = pem_block(pem, "CERTIFICATE REQUEST").ok_or("PEM block type must be CERTIFICATE REQUEST")?;
    der_request(&der)
}

/// The DER of the certificate request in `pem`, when there is one.
pub fn request_der(pem: &[u8]) -> Option<Vec<u8>> {
    pem_block(pem, "CERTIFICATE REQUEST")
}

/// The body of the first PEM block in `text`, if it is of `kind`: the first block Go's
/// `pem.Decode` finds, which skips any text before it and any block that does not read
/// (a BEGIN line not at a line's start or not ending in five dashes, no matching END
/// line, or a body whose base64 does not read) and goes on to the next one.
fn pem_block(text: &[u8], kind: &str) -> Option<Vec<u8>> {
    let (found, body) = pem_decode(text)?;
    (found == kind.as_bytes()).then_some(body)
}

/// Go's `encoding/pem.Decode`: the type and bytes of the first well-formed block.
fn pem_decode(data: &[u8]) -> Option<(&[u8], Vec<u8>)> {
    const START: &[u8] = b"\n-----BEGIN ";
    const END: &[u8] = b"\n-----END ";
    const DASHES: &[u8] = b"-----";
    let mut rest = data;
    // Where the next END line starts in `data`, once looked for: each BEGIN line reuses
    // it, so that many BEGIN lines before one END cost one search, not one each.
    let mut next_end: Option<usize> = None;
    loop {
        rest = if rest.starts_with(&START[1..]) {
            &rest[START.len() - 1..]
        } else {
            let at = find(rest, START)?;
            &rest[at + START.len()..]
        };
        let (type_line, after) = line(rest);
        rest = after;
        let Some(kind) = type_line.strip_suffix(DASHES) else { continue };
        // Header lines (`Key: value`) come before the body.
        let mut headers = false;
        loop {
            if rest.is_empty() {
                return None;
            }
            let (l, next) = line(rest);
            if !l.contains(&b':') {
                break;
            }
            headers = true;
            rest = next;
        }
        let (end, trailer) = if !headers && rest.starts_with(&END[1..]) {
            (0, END.len() - 1)
        } else {
            let offset = data.len() - rest.len();
            let at = match next_end {
                Some(end) if end >= offset => end - offset,
                _ => {
                    // No END line left: no later block can read either.
                    let at = find(rest, END)?;
                    next_end = Some(offset + at);
                    at
                }
            };
            (at, at + END.len())
        };
        // Dashes are not base64: a body with another BEGIN line in it cannot read.
        if rest[..end].contains(&b'-') {
            continue;
        }
        let trailer = &rest[trailer..];
        let Some(end_line) = trailer.strip_prefix(kind).and_then(|t| t.strip_prefix(DASHES)) else { continue };
        if !line(end_line).0.is_empty() {
            continue;
        }
        let body: Vec<u8> = rest[..end].iter().copied().filter(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n')).collect();
        match GO_STD_ENCODING.decode(body) {
            Ok(bytes) => return Some((kind, bytes)),
            Err(_) => continue,
        }
    }
}

/// Go's `base64.StdEncoding`: padded, and bits after the last byte need not be zero.
const GO_STD_ENCODING: GeneralPurpose =
    GeneralPurpose::new(&alphabet::STANDARD, GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true));

/// Go's `pem.getLine`: the line up to `\n` without trailing spaces, tabs and `\r`, and
/// what follows it.
fn line(data: &[u8]) -> (&[u8], &[u8]) {
    let (l, rest) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &data[data.len()..]),
    };
    let keep = l.iter().rposition(|b| !matches!(b, b' ' | b'\t' | b'\r')).map_or(0, |i| i + 1);
    (&l[..keep], rest)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
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

    #[test]
    fn many_begin_lines_cost_one_pass() {
        let block = "-----BEGIN CERTIFICATE REQUEST-----\nMAgwADAAAwIAAA==\n-----END CERTIFICATE REQUEST-----\n";
        let noise = "-----BEGIN X-----\n".repeat(200_000);
        // 3.6 MB of BEGIN lines: read once per line, this would not finish.
        assert!(check_request(noise.as_bytes()).is_err());
        assert_eq!(check_request(format!("{noise}{block}").as_bytes()), Ok(()));
    }

    #[test]
    fn the_first_block_that_reads_counts_as_gos_pem_decode_finds_it() {
        let block = "-----BEGIN CERTIFICATE REQUEST-----\nMAgwADAAAwIAAA==\n-----END CERTIFICATE REQUEST-----\n";
        // A BEGIN that is not at a line's start is text before the block.
        assert_eq!(check_request(format!("x-----BEGIN A\n{block}").as_bytes()), Ok(()));
        // A block whose base64 does not read, or that does not end, is skipped.
        let broken = "-----BEGIN CERTIFICATE REQUEST-----\n!!\n-----END CERTIFICATE REQUEST-----\n";
        assert_eq!(check_request(format!("{broken}{block}").as_bytes()), Ok(()));
        assert_eq!(check_request(format!("-----BEGIN X-----\nMAA=\n{block}").as_bytes()), Ok(()));
        // Headers, CRLF line ends, spaces and tabs in the body.
        let crlf = "-----BEGIN CERTIFICATE REQUEST-----\r\nProc-Type: 4,x\r\n\r\nMAgw ADAA\tAwIAAA==\r\n-----END CERTIFICATE REQUEST-----  \r\n";
        assert_eq!(check_request(crlf.as_bytes()), Ok(()));
        // The first block that reads is another type; text after the END line; a
        // whitespace the base64 reader does not skip.
        let cert = "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n";
        assert!(check_request(format!("{cert}{block}").as_bytes()).is_err());
        let trailing = "-----BEGIN CERTIFICATE REQUEST-----\nMAgwADAAAwIAAA==\n-----END CERTIFICATE REQUEST----- x\n";
        assert!(check_request(trailing.as_bytes()).is_err());
        let feed = "-----BEGIN CERTIFICATE REQUEST-----\nMAgwADAA\x0cAwIAAA==\n-----END CERTIFICATE REQUEST-----\n";
        assert!(check_request(feed.as_bytes()).is_err());
        // Bits after the last byte need not be zero (`MAgwADAAAwIAAB==`), but padding is due.
        let bits = "-----BEGIN CERTIFICATE REQUEST-----\nMAgwADAAAwIAAB==\n-----END CERTIFICATE REQUEST-----\n";
        assert_eq!(check_request(bits.as_bytes()), Ok(()));
        let unpadded = "-----BEGIN CERTIFICATE REQUEST-----\nMAgwADAAAwIAAA\n-----END CERTIFICATE REQUEST-----\n";
        assert!(check_request(unpadded.as_bytes()).is_err());
    }
}

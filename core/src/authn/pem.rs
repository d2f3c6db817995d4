//! PEM blocks (RFC 7468) as Go's `encoding/pem` finds them in a key or certificate file:
//! `-----BEGIN <label>-----`, optional `Name: value` headers, base64 lines, and the
//! matching `-----END <label>-----`. Text around and between blocks is ignored, and so is
//! a block that does not decode, as Go skips it to look for the next.

use base64::Engine as _;

/// One decoded block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// `PRIVATE KEY`, `PUBLIC KEY`, `CERTIFICATE`, …
    pub label: String,
    /// Whether it had headers: `Proc-Type: 4,ENCRYPTED` marks an encrypted key.
    pub has_headers: bool,
    /// The DER between the lines.
    pub der: Vec<u8>,
}

/// Every block of `text` that decodes, in order.
pub fn blocks(text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut lines = text.lines().map(|l| l.trim_end_matches([' ', '\t', '\r']));
    while let Some(line) = lines.next() {
        let Some(label) = line
            .strip_prefix("-----BEGIN ")
            .and_then(|rest| rest.strip_suffix("-----"))
        else {
            continue;
        };
        let end = format!("-----END {label}-----");
        let (mut body, mut has_headers, mut closed) = (String::new(), false, false);
        for line in lines.by_ref() {
            if line == end {
                closed = true;
                break;
            }
            if body.is_empty() && line.contains(':') {
                has_headers = true;
                continue;
            }
            body.extend(line.chars().filter(|c| !c.is_ascii_whitespace()));
        }
        if !closed {
            break;
        }
        if let Ok(der) = base64::engine::general_purpose::STANDARD.decode(&body) {
            found.push(Block {
                label: label.to_owned(),
                has_headers,
                der,
            });
        }
    }
    found
}

/// `der` as a PEM block labelled `label`, 64 base64 characters a line.
pub fn encode(label: &str, der: &[u8]) -> String {
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in body.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_found_between_other_text() {
        let text = format!(
            "comment\n{}junk\n{}",
            encode("PUBLIC KEY", &[1, 2, 3]),
            encode("CERTIFICATE", &[0; 100]).replace('\n', "\r\n")
        );
        let found = blocks(&text);
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].label.as_str(), found[0].der.as_slice()), ("PUBLIC KEY", &[1u8, 2, 3][..]));
        assert_eq!((found[1].label.as_str(), found[1].der.len()), ("CERTIFICATE", 100));
        assert!(!found[0].has_headers);
    }

    #[test]
    fn broken_blocks_are_skipped_and_headers_noticed() {
        assert!(blocks("-----BEGIN X-----\n!!!!\n-----END X-----\n").is_empty());
        assert!(blocks("-----BEGIN X-----\nAQID\n").is_empty(), "no end line");
        assert!(blocks("-----BEGIN X-----\nAQID\n-----END Y-----\n").is_empty());
        let encrypted = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAQID\n-----END RSA PRIVATE KEY-----\n";
        assert!(blocks(encrypted)[0].has_headers);
    }
}

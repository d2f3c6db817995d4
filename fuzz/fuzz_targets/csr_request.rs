//! CertificateSigningRequests' request checker (`apiary_core::validation::csr::check_request`,
//! the PEM block type, base64 and DER shape of `spec.request`) and the kind's create and
//! update checks (`CertificateSigningRequests`' `validate_create`, `validate_update`,
//! `validate_status_update`, `validate_approval_update`). The first byte picks the mode:
//!
//! - 0: the rest is the decoded `spec.request`: `check_request` never panics and its
//!   error is words; as a CSR with a good signer and usages, `validate_create` finds an
//!   error exactly when `check_request` does, and only at `spec.request`.
//! - 1: the rest builds a well-formed request: a DER SEQUENCE of a SEQUENCE, a SEQUENCE
//!   and a BIT STRING of arbitrary contents, PEM-wrapped at a chosen line width (LF or
//!   CRLF) after any lines without an END line (Go's `pem.Decode` skips them, and any
//!   block they start cannot read) and before anything. It is accepted, and the CSR
//!   carrying it has no error; cut short by a byte, or with its block typed otherwise,
//!   it is refused.
//! - anything else: the rest is a whole CSR (JSON) decoded as the kind: never panics;
//!   every error names a field, prints and builds a Status; a CSR that passes its create
//!   checks passes every update to itself.

#![no_main]

use apiary_core::negotiation::Format;
use apiary_core::registry::Registry;
use apiary_core::rest::object::Object;
use apiary_core::schema::{decode, FieldValidation};
use apiary_core::status::ApiError;
use apiary_core::validation::csr::check_request;
use apiary_core::validation::FieldError;
use base64::Engine;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

fn checked(errors: &[FieldError]) {
    for e in errors {
        assert!(!e.field.is_empty(), "{e}");
        assert!(!e.to_string().is_empty());
    }
    let _ = ApiError::invalid("certificates.k8s.io", "CertificateSigningRequest", "x", errors.to_vec());
}

/// A CSR asking for `request` with a good signer and usages.
fn csr_of(request: &[u8]) -> Object {
    let value = json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "x"},
        "spec": {"request": B64.encode(request), "signerName": "example.com/signer", "usages": ["client auth"]},
    });
    serde_json::from_value(value).expect("an object")
}

/// One DER element, its length in the shortest form.
fn der(tag: u8, contents: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = contents.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len.to_be_bytes().into_iter().skip_while(|b| *b == 0).collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(contents);
    out
}

fn pem(kind: &str, der: &[u8], width: usize, eol: &str, before: &[u8], after: &[u8]) -> Vec<u8> {
    let body = B64.encode(der);
    let mut text = before.to_vec();
    text.extend(format!("-----BEGIN {kind}-----{eol}").bytes());
    for line in body.as_bytes().chunks(width) {
        text.extend(line);
        text.extend(eol.bytes());
    }
    text.extend(format!("-----END {kind}-----{eol}").bytes());
    text.extend(after);
    text
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let registry = Registry::builtin();
    let r = registry.lookup("certificates.k8s.io", "v1", "certificatesigningrequests").expect("the kind is served");
    match mode {
        0 => {
            let verdict = check_request(rest);
            if let Err(why) = &verdict {
                assert!(!why.is_empty());
            }
            let errs = r.strategy.validate_create(&csr_of(rest));
            checked(&errs);
            assert!(errs.iter().all(|e| e.field == "spec.request"), "{errs:?}");
            assert_eq!(errs.is_empty(), verdict.is_ok(), "{errs:?} for {verdict:?}");
        }
        1 => {
            // width, line ending, three content lengths, then the contents and the text around.
            let [w, eol, a, b, c, tail @ ..] = rest else { return };
            let (a, b, c) = (usize::from(*a), usize::from(*b), usize::from(*c));
            if tail.len() < a + b + c {
                return;
            }
            let (info, tail) = tail.split_at(a);
            let (algorithm, tail) = tail.split_at(b);
            let (signature, tail) = tail.split_at(c);
            // Any bytes before the block's line but an END line; anything after it.
            let (before, after) = match tail.iter().position(|b| *b == b'\n') {
                Some(i) => (&tail[..=i], &tail[i + 1..]),
                None => (&tail[..0], tail),
            };
            if before.windows(9).any(|w| w == b"-----END ") {
                return;
            }
            let width = usize::from(*w % 76) + 1;
            let eol = if eol % 2 == 0 { "\n" } else { "\r\n" };
            let mut contents = der(0x30, info);
            contents.extend(der(0x30, algorithm));
            contents.extend(der(0x03, signature));
            let request = der(0x30, &contents);
            let good = pem("CERTIFICATE REQUEST", &request, width, eol, before, after);
            assert_eq!(check_request(&good), Ok(()), "{:?}", String::from_utf8_lossy(&good));
            let errs = r.strategy.validate_create(&csr_of(&good));
            assert!(errs.is_empty(), "{errs:?}");
            let short = pem("CERTIFICATE REQUEST", &request[..request.len() - 1], width, eol, before, after);
            assert!(check_request(&short).is_err(), "{:?}", String::from_utf8_lossy(&short));
            let other = pem("CERTIFICATE", &request, width, eol, before, after);
            assert!(check_request(&other).is_err(), "{:?}", String::from_utf8_lossy(&other));
        }
        _ => {
            let gvk = ("certificates.k8s.io", "v1", r.kind.as_str());
            let Ok(decoded) = decode(Format::Json, rest, gvk, FieldValidation::Ignore) else { return };
            let mut new = decoded.object;
            r.strategy.decoded(&mut new);
            let created = r.strategy.validate_create(&new);
            checked(&created);
            for errs in [
                r.strategy.validate_update(&new, &new),
                r.strategy.validate_status_update(&new, &new),
                r.strategy.validate_approval_update(&new, &new),
            ] {
                checked(&errs);
                if created.is_empty() {
                    assert!(errs.is_empty(), "valid, but not as an update to itself: {errs:?}");
                }
            }
        }
    }
});

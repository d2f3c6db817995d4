//! The adapter's client certificate checks over any bytes: a `--client-ca-file` bundle
//! (`apiary_smol::tls::ClientCa::from_pem`) and a chain a client presents, verified
//! against it as each request does (`PeerChain::for_request`). Never panics; a chain
//! is handed to the core exactly when it verifies, and rejected exactly when it does
//! not; an empty chain is neither.
//!
//! Input: a byte choosing the bundle (even: the fuzz CA below; odd: a bundle from the
//! input, its length in the next two bytes, big-endian), then the chain's DER
//! certificates, each after its length in two bytes. A seed that verifies: `00`, then
//! the length and DER of a client certificate the fuzz CA signed.

#![no_main]

use apiary_smol::tls::{ClientCa, PeerChain};
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

/// A throwaway P-256 CA made for this target (its key is not kept).
const FUZZ_CA: &str = "-----BEGIN CERTIFICATE-----
MIIBezCCASGgAwIBAgIUd/GWnz/MJ191q1QaA8k72g5camUwCgYIKoZIzj0EAwIw
EjEQMA4GA1UEAwwHZnV6ei1jYTAgFw0yNjExMjQxMDU4NTBaGA8yMTI2MTAzMTEw
NTg1MFowEjEQMA4GA1UEAwwHZnV6ei1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEH
A0IABAIprt23NNmUU8gaKQun4G37y+pFHY4VMuC9kpXkfU0QGnbwtUAIbzOcKPcL
o7F1HXB2yQrV2dIwf/USMpW696WjUzBRMB0GA1UdDgQWBBR1x0r90/KqS46HdNQv
CqDgk0yLnzAfBgNVHSMEGDAWgBR1x0r90/KqS46HdNQvCqDgk0yLnzAPBgNVHRMB
Af8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIHIwBhtN3qjpa9QZAyMtgHD9CPA7
npMqDdWKTYY6blg3AiEAijzKKY4VezUVPf4mdaj7pGPiw9EXVD5LdhILY6vsE8g=
-----END CERTIFICATE-----
";

/// The next length-prefixed piece of `input`, or what is left if it is shorter.
fn piece<'a>(input: &mut &'a [u8]) -> &'a [u8] {
    let len = match input {
        [hi, lo, ..] => usize::from(*hi) << 8 | usize::from(*lo),
        _ => {
            *input = &[];
            return &[];
        }
    };
    let rest = &input[2..];
    let (taken, left) = rest.split_at(len.min(rest.len()));
    *input = left;
    taken
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, mut input)) = data.split_first() else {
        return;
    };
    let bundle = if choice % 2 == 0 {
        FUZZ_CA.as_bytes()
    } else {
        piece(&mut input)
    };
    let Ok(ca) = ClientCa::from_pem(bundle, "fuzz.pem") else {
        return;
    };
    assert!(ca.len() > 0, "a bundle that loads holds a CA");
    let ca = Arc::new(ca);
    let mut chain = Vec::new();
    while !input.is_empty() && chain.len() < 8 {
        chain.push(Bytes::copy_from_slice(piece(&mut input)));
    }
    let trusted = ca.verify(&chain, std::time::SystemTime::now()).is_ok();
    let mut peer = PeerChain::new(chain.clone());
    let (handed, rejected) = peer.for_request(ca.generation(), || ca.clone());
    if chain.is_empty() {
        assert!(handed.is_empty() && !rejected);
    } else if trusted {
        assert!(handed == chain && !rejected);
    } else {
        assert!(handed.is_empty() && rejected);
    }
});

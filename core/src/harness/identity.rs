//! Who the harness's clients are: the leaf certificate a TLS adapter would hand over
//! once verified, reduced to what the core reads of it (the subject's CN and O).

use bytes::Bytes;

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const OID: u8 = 0x06;
const UTF8_STRING: u8 = 0x0c;
const OID_CN: &[u8] = &[0x55, 0x04, 0x03];
const OID_O: &[u8] = &[0x55, 0x04, 0x0a];

fn der(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    match body.len() {
        n if n < 0x80 => out.push(n as u8),
        n if n < 0x100 => out.extend([0x81, n as u8]),
        n => out.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    out.extend_from_slice(body);
    out
}

fn attribute(oid: &[u8], value: &str) -> Vec<u8> {
    der(
        SET,
        &der(SEQUENCE, &[der(OID, oid), der(UTF8_STRING, value.as_bytes())].concat()),
    )
}

/// The certificate chain of user `name` in `groups`: a certificate whose subject says
/// so, unsigned (the harness stands where TLS has already verified the chain).
pub fn client_certificate(name: &str, groups: &[&str]) -> Vec<Bytes> {
    let mut subject = Vec::new();
    for group in groups {
        subject.extend(attribute(OID_O, group));
    }
    subject.extend(attribute(OID_CN, name));
    let empty_sequence = der(SEQUENCE, &[]);
    let tbs = der(
        SEQUENCE,
        &[
            der(0xa0, &der(0x02, &[2])), // version 3
            der(0x02, &[1]),             // serial
            empty_sequence.clone(),      // signature algorithm
            der(SEQUENCE, &[]),          // issuer
            empty_sequence,              // validity
            der(SEQUENCE, &subject),
        ]
        .concat(),
    );
    vec![Bytes::from(der(SEQUENCE, &tbs))]
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_core_reads_the_user_it_names() {
        let chain = super::client_certificate("alice", &["system:masters", "dev"]);
        let user = crate::authn::authenticate(&chain);
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, ["system:masters", "dev", "system:authenticated"]);
    }
}

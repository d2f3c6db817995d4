//! Just enough DER to read the subject of an X.509 certificate that TLS already
//! verified: its common name and organizations.

use super::der::{expect, tlv, CONTEXT_0, OID, SEQUENCE, SET};

/// The parts of a certificate subject that name a Kubernetes user.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subject {
    pub common_name: Option<String>,
    pub organizations: Vec<String>,
}

const OID_CN: &[u8] = &[0x55, 0x04, 0x03];
const OID_O: &[u8] = &[0x55, 0x04, 0x0a];

/// Read the subject of a DER certificate; `None` when it does not parse.
pub fn subject_of(der: &[u8]) -> Option<Subject> {
    let (cert, _) = expect(der, SEQUENCE)?;
    let (tbs, _) = expect(cert, SEQUENCE)?;
    let mut fields = tbs;
    // [0] EXPLICIT version, present in v2/v3 certificates.
    if fields.first() == Some(&CONTEXT_0) {
        fields = tlv(fields)?.2;
    }
    // serialNumber, signature, issuer, validity, then subject.
    for _ in 0..4 {
        fields = tlv(fields)?.2;
    }
    name_of(fields)
}

/// Read the subject of a DER PKCS#10 certificate request; `None` when it does not
/// parse.
pub fn request_subject_of(der: &[u8]) -> Option<Subject> {
    let (request, _) = expect(der, SEQUENCE)?;
    let (info, _) = expect(request, SEQUENCE)?;
    // version, then subject.
    name_of(tlv(info)?.2)
}

/// The Name at the start of `fields`.
fn name_of(fields: &[u8]) -> Option<Subject> {
    let (mut names, _) = expect(fields, SEQUENCE)?;
    let mut subject = Subject::default();
    while !names.is_empty() {
        let (mut rdn, rest) = expect(names, SET)?;
        names = rest;
        while !rdn.is_empty() {
            let (attr, rest) = expect(rdn, SEQUENCE)?;
            rdn = rest;
            let (oid, value) = expect(attr, OID)?;
            let (tag, text, _) = tlv(value)?;
            let text = match tag {
                // UTF8String, PrintableString, T61String, IA5String
                0x0c | 0x13 | 0x14 | 0x16 => String::from_utf8_lossy(text).into_owned(),
                _ => continue,
            };
            if oid == OID_CN {
                subject.common_name = Some(text);
            } else if oid == OID_O {
                subject.organizations.push(text);
            }
        }
    }
    Some(subject)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::authn::der::write as der;

    fn attr(oid: &[u8], value: &str) -> Vec<u8> {
        der(SET, &der(SEQUENCE, &[der(OID, oid), der(0x0c, value.as_bytes())].concat()))
    }

    #[test]
    fn reads_cn_and_organizations() {
        let subject = der(
            SEQUENCE,
            &[attr(OID_O, "system:masters"), attr(OID_O, "dev"), attr(OID_CN, "apiary-admin")].concat(),
        );
        let tbs = der(
            SEQUENCE,
            &[
                der(0xa0, &der(0x02, &[2])),
                der(0x02, &[1]),
                der(SEQUENCE, &[]),
                der(SEQUENCE, &[]),
                der(SEQUENCE, &[]),
                subject,
            ]
            .concat(),
        );
        let cert = der(SEQUENCE, &[tbs, der(SEQUENCE, &[]), der(0x03, &[0])].concat());
        let got = subject_of(&cert).unwrap();
        assert_eq!(got.common_name.as_deref(), Some("apiary-admin"));
        assert_eq!(got.organizations, vec!["system:masters", "dev"]);
    }

    #[test]
    fn garbage_is_none() {
        assert_eq!(subject_of(&[]), None);
        assert_eq!(subject_of(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), None);
        assert_eq!(subject_of(&[0x30, 0x02, 0x30, 0x00]), None);
    }
}

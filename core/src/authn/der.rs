//! Just enough DER for what authentication reads and writes: a TLV split off the front
//! of a byte string, and one written out. Certificates, keys and key ids are built from
//! these two moves.

pub(super) const INTEGER: u8 = 0x02;
pub(super) const BIT_STRING: u8 = 0x03;
pub(super) const OCTET_STRING: u8 = 0x04;
pub(super) const NULL: u8 = 0x05;
pub(super) const OID: u8 = 0x06;
pub(super) const SEQUENCE: u8 = 0x30;
pub(super) const SET: u8 = 0x31;
/// `[0]` and `[1]`, constructed and explicit: the optional fields of certificates and
/// SEC 1 keys.
pub(super) const CONTEXT_0: u8 = 0xa0;
pub(super) const CONTEXT_1: u8 = 0xa1;

/// Split one TLV off the front of `input`: (tag, contents, rest).
pub(super) fn tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    if tag & 0x1f == 0x1f {
        return None; // multi-byte tags never appear where we look
    }
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |acc, &b| (acc << 8) | b as usize);
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// Split off a TLV that must have tag `want`: (contents, rest).
pub(super) fn expect(input: &[u8], want: u8) -> Option<(&[u8], &[u8])> {
    let (tag, body, rest) = tlv(input)?;
    (tag == want).then_some((body, rest))
}

/// One TLV with definite, minimal length.
pub(super) fn write(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 6);
    out.push(tag);
    let len = body.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_tlvs_read_back() {
        for len in [0usize, 1, 127, 128, 255, 256, 70_000] {
            let body = vec![7u8; len];
            let der = write(SEQUENCE, &body);
            let (tag, read, rest) = tlv(&der).unwrap();
            assert_eq!((tag, read.len(), rest.len()), (SEQUENCE, len, 0));
        }
        assert_eq!(write(NULL, &[]), [0x05, 0x00]);
        assert_eq!(&write(OCTET_STRING, &[0; 200])[..3], &[0x04, 0x81, 200]);
    }

    #[test]
    fn truncated_or_odd_input_is_none() {
        assert_eq!(tlv(&[]), None);
        assert_eq!(tlv(&[0x30]), None);
        assert_eq!(tlv(&[0x30, 0x05, 1]), None);
        assert_eq!(tlv(&[0x1f, 0x00]), None, "multi-byte tag");
        assert_eq!(tlv(&[0x30, 0x80]), None, "indefinite length");
        assert_eq!(expect(&[0x02, 0x00], SEQUENCE), None);
    }
}

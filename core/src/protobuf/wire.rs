//! The protobuf wire format, read without trusting it: every length is checked against
//! what is left, varints stop at ten bytes, nothing is allocated from a declared size.

use super::DecodeError;

pub(super) const VARINT: u8 = 0;
pub(super) const FIXED64: u8 = 1;
pub(super) const LEN: u8 = 2;
pub(super) const FIXED32: u8 = 5;

pub(super) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub(super) fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for (i, &b) in self.buf.iter().enumerate() {
            if i == 10 {
                return Err(DecodeError::VarintOverflow);
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                self.buf = &self.buf[i + 1..];
                return Ok(value);
            }
        }
        if self.buf.len() >= 10 {
            Err(DecodeError::VarintOverflow)
        } else {
            Err(DecodeError::Truncated)
        }
    }

    /// The next field's number and wire type.
    pub(super) fn tag(&mut self) -> Result<(u32, u8), DecodeError> {
        let key = self.varint()?;
        let num = key >> 3;
        // Go reads the number as an int32 and rejects what is not positive.
        if num == 0 || num > i32::MAX as u64 {
            return Err(DecodeError::InvalidTag);
        }
        Ok((num as u32, (key & 7) as u8))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.buf.len() {
            return Err(DecodeError::Truncated);
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    pub(super) fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.varint()?;
        if len > self.buf.len() as u64 {
            return Err(DecodeError::Truncated);
        }
        self.take(len as usize)
    }

    pub(super) fn fixed64(&mut self) -> Result<u64, DecodeError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ]))
    }

    /// Skips a value of an unknown field.
    pub(super) fn skip(&mut self, wire: u8) -> Result<(), DecodeError> {
        match wire {
            VARINT => self.varint().map(drop),
            FIXED64 => self.take(8).map(drop),
            LEN => self.bytes().map(drop),
            FIXED32 => self.take(4).map(drop),
            // Groups (3, 4) are proto2 relics no Kubernetes encoder writes; 6 and 7 do not exist.
            other => Err(DecodeError::UnsupportedWireType(other)),
        }
    }
}

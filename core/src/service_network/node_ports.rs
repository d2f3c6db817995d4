//! NodePorts: the range `--service-node-port-range` allows, and the record in storage
//! of which of them are taken (upstream keeps a bitmap in a RangeAllocation at
//! `/registry/ranges/servicenodeports`; ours is the same idea in our own layout).
//!
//! The record is only ever replaced by compare-and-swap on its revision, so two
//! servers (or a server and itself after a crash) never hand out one port twice.

use base64::Engine as _;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::fmt;

/// A range of ports, both ends included (`30000-32767`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRange {
    pub base: u16,
    pub size: u16,
}

impl PortRange {
    /// Parse `min-max`, or one port (`30000`, a range of one), as upstream's flag does.
    pub fn parse(text: &str) -> Result<PortRange, String> {
        let bad = || format!("unable to parse port range: {text}");
        let number = |s: &str| -> Result<u16, String> {
            let s = s.trim();
            if s.is_empty() || s.len() > 5 || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            s.parse::<u16>().map_err(|_| bad())
        };
        let (low, high) = match text.trim().split_once('-') {
            Some((low, high)) => (number(low)?, number(high)?),
            None => {
                let port = number(text)?;
                (port, port)
            }
        };
        if high < low {
            return Err(format!("end port is less than start port: {text}"));
        }
        Ok(PortRange { base: low, size: high - low + 1 })
    }

    pub fn last(&self) -> u16 {
        self.base + (self.size - 1)
    }

    pub fn contains(&self, port: i64) -> bool {
        port >= i64::from(self.base) && port <= i64::from(self.last())
    }
}

impl Default for PortRange {
    /// Upstream's default: `30000-32767`.
    fn default() -> Self {
        PortRange { base: 30000, size: 2768 }
    }
}

impl fmt::Display for PortRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.base, self.last())
    }
}

/// The ports taken, as stored: `range` is the range the bitmap `data` counts from
/// (bit `i` of byte `i / 8`, lowest bit first: port `base + i`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TakenPorts {
    pub ports: BTreeSet<u16>,
}

impl TakenPorts {
    /// Read a stored record. Ports it names outside `range` are kept as taken (the
    /// flag may have changed; they stay someone's until released).
    pub fn parse(bytes: &[u8]) -> Result<TakenPorts, String> {
        let record: Value = serde_json::from_slice(bytes).map_err(|e| format!("node port record: {e}"))?;
        let range = record.get("range").and_then(Value::as_str).ok_or("node port record: no range")?;
        let range = PortRange::parse(range)?;
        let data = record.get("data").and_then(Value::as_str).unwrap_or("");
        let bitmap = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| format!("node port record: {e}"))?;
        let mut ports = BTreeSet::new();
        for (i, byte) in bitmap.iter().enumerate() {
            for bit in 0..8 {
                if byte & (1 << bit) == 0 {
                    continue;
                }
                let offset = i * 8 + bit;
                if offset >= usize::from(range.size) {
                    return Err("node port record: a port past its range".into());
                }
                ports.insert(range.base + offset as u16);
            }
        }
        Ok(TakenPorts { ports })
    }

    /// The record to store, counted from `range` (widened to hold every port taken).
    pub fn to_bytes(&self, range: PortRange) -> Vec<u8> {
        let low = self.ports.first().map_or(range.base, |p| (*p).min(range.base));
        let high = self.ports.last().map_or(range.last(), |p| (*p).max(range.last()));
        let span = PortRange { base: low, size: high - low + 1 };
        let mut bitmap = vec![0u8; usize::from(span.size).div_ceil(8)];
        for port in &self.ports {
            let offset = usize::from(port - span.base);
            bitmap[offset / 8] |= 1 << (offset % 8);
        }
        while bitmap.last() == Some(&0) {
            bitmap.pop();
        }
        let record = json!({
            "kind": "RangeAllocation",
            "apiVersion": "v1",
            "metadata": {},
            "range": span.to_string(),
            "data": base64::engine::general_purpose::STANDARD.encode(bitmap),
        });
        serde_json::to_vec(&record).expect("JSON values serialize")
    }

    /// A free port of `range`, looking from `start` (an offset into it) upwards.
    pub fn free(&self, range: PortRange, start: u16) -> Option<u16> {
        (0..range.size)
            .map(|i| range.base + ((u32::from(start) + u32::from(i)) % u32::from(range.size)) as u16)
            .find(|p| !self.ports.contains(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_as_the_flag_takes_them() {
        assert_eq!(PortRange::parse("30000-32767").unwrap(), PortRange::default());
        assert_eq!(PortRange::parse("30000").unwrap().to_string(), "30000-30000");
        assert!(PortRange::parse("32767-30000").is_err());
        assert!(PortRange::parse("a-b").is_err());
        assert!(PortRange::parse("0-70000").is_err());
        assert!(PortRange::default().contains(32767));
        assert!(!PortRange::default().contains(80));
    }

    #[test]
    fn the_record_round_trips_and_keeps_ports_outside_the_range() {
        let mut taken = TakenPorts::default();
        taken.ports.extend([30000, 30007, 32767, 80]);
        let bytes = taken.to_bytes(PortRange::default());
        assert_eq!(TakenPorts::parse(&bytes).unwrap(), taken);
        assert_eq!(taken.free(PortRange::parse("30000-30001").unwrap(), 0), Some(30001));
        assert_eq!(taken.free(PortRange::parse("30000-30000").unwrap(), 0), None);
        assert!(TakenPorts::parse(b"{\"range\":\"1-2\",\"data\":\"/w==\"}").is_err());
        assert!(TakenPorts::parse(b"[]").is_err());
    }
}

//! IP ranges as `--service-cluster-ip-range` and ServiceCIDRs write them (`10.96.0.0/16`,
//! `fd00::/108`), and the addresses a Service may be given from one.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An IP family, named as a Service's `ipFamilies` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    IPv4,
    IPv6,
}

impl Family {
    pub fn of(ip: &IpAddr) -> Family {
        match ip {
            IpAddr::V4(_) => Family::IPv4,
            IpAddr::V6(_) => Family::IPv6,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Family::IPv4 => "IPv4",
            Family::IPv6 => "IPv6",
        }
    }

    pub fn parse(name: &str) -> Option<Family> {
        match name {
            "IPv4" => Some(Family::IPv4),
            "IPv6" => Some(Family::IPv6),
            _ => None,
        }
    }
}

/// A network: its first address and prefix length, the host bits zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parse `a.b.c.d/n` or `x::y/n`. Host bits set in the address are cleared, as
    /// upstream's sloppy parser does for the flag (the parser object validation uses).
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let parsed = crate::validation::network::Cidr::parse(text).ok_or_else(|| format!("invalid CIDR address: {text}"))?;
        let family = if parsed.width == 32 { Family::IPv4 } else { Family::IPv6 };
        Ok(Cidr { network: from_u128(family, parsed.bits), prefix: parsed.prefix })
    }

    fn bits_of(ip: &IpAddr) -> u8 {
        match ip {
            IpAddr::V4(_) => 32,
            IpAddr::V6(_) => 128,
        }
    }

    pub fn family(&self) -> Family {
        Family::of(&self.network)
    }

    pub fn contains(&self, ip: &IpAddr) -> bool {
        Family::of(ip) == self.family()
            && to_u128(ip) & mask(Self::bits_of(ip), self.prefix) == to_u128(&self.network)
    }

    /// How many addresses a Service may be given: all but the network address, and
    /// for IPv4 the broadcast address. Counted up to 2^64 (more is never scanned).
    pub fn usable(&self) -> u64 {
        let host_bits = u32::from(Self::bits_of(&self.network) - self.prefix);
        let all: u128 = if host_bits >= 64 { 1 << 64 } else { 1u128 << host_bits };
        let reserved = match self.family() {
            Family::IPv4 if all > 2 => 2,
            Family::IPv4 => all,
            Family::IPv6 if all > 1 => 1,
            Family::IPv6 => all,
        };
        u64::try_from(all - reserved).unwrap_or(u64::MAX)
    }

    /// The `n`th usable address (from 0: the address after the network's).
    pub fn nth(&self, n: u64) -> Option<IpAddr> {
        (n < self.usable()).then(|| from_u128(self.family(), to_u128(&self.network) + 1 + u128::from(n)))
    }

    /// Which usable address `ip` is, when it is one of this range's.
    pub fn index_of(&self, ip: &IpAddr) -> Option<u64> {
        if !self.contains(ip) {
            return None;
        }
        let offset = to_u128(ip).checked_sub(to_u128(&self.network) + 1)?;
        u64::try_from(offset).ok().filter(|n| *n < self.usable())
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// An IP address as upstream's sloppy parser takes it (dotted quads may carry leading
/// zeros, read as decimal): the one parser object validation uses too.
pub use crate::validation::network::sloppy_addr as parse_ip;

/// The network bits of a `bits`-wide address with a `prefix`-long network part.
fn mask(bits: u8, prefix: u8) -> u128 {
    if prefix == 0 {
        return 0;
    }
    let all = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
    all & !((1u128 << (bits - prefix)) - 1)
}

fn to_u128(ip: &IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(*v4)),
        IpAddr::V6(v6) => u128::from(*v6),
    }
}

fn from_u128(family: Family, n: u128) -> IpAddr {
    match family {
        Family::IPv4 => IpAddr::V4(Ipv4Addr::from(n as u32)),
        Family::IPv6 => IpAddr::V6(Ipv6Addr::from(n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_count_as_upstream_reserves() {
        let v4 = Cidr::parse("10.96.0.0/16").unwrap();
        assert_eq!(v4.to_string(), "10.96.0.0/16");
        assert_eq!(v4.usable(), 65534);
        assert_eq!(v4.nth(0), Some("10.96.0.1".parse().unwrap()));
        assert_eq!(v4.index_of(&"10.96.255.254".parse().unwrap()), Some(65533));
        assert_eq!(v4.index_of(&"10.96.255.255".parse().unwrap()), None, "broadcast");
        assert_eq!(v4.index_of(&"10.96.0.0".parse().unwrap()), None, "network");
        assert!(!v4.contains(&"192.168.0.10".parse().unwrap()));
        assert_eq!(Cidr::parse("10.96.7.9/16").unwrap().to_string(), "10.96.0.0/16");
        let v6 = Cidr::parse("fd00::/108").unwrap();
        assert_eq!(v6.usable(), (1 << 20) - 1);
        assert_eq!(v6.nth(0), Some("fd00::1".parse().unwrap()));
        assert_eq!(Cidr::parse("::/0").unwrap().usable(), u64::MAX);
        assert_eq!(Cidr::parse("0.0.0.0/0").unwrap().usable(), (1 << 32) - 2);
        for bad in ["10.96.0.0", "10.96.0.0/33", "10.96.0/16", "x/8", "10.96.0.0/", "fd00::/129", "1.2.3.4/+1"] {
            assert!(Cidr::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn addresses_parse_sloppily_as_upstream() {
        assert_eq!(parse_ip("010.096.000.001"), Some("10.96.0.1".parse().unwrap()));
        assert_eq!(parse_ip("abc"), None);
        assert_eq!(parse_ip("1.2.3.256"), None);
        assert_eq!(parse_ip("1.2.3"), None);
        assert_eq!(parse_ip("::ffff:1.2.3.4").map(|ip| Family::of(&ip)), Some(Family::IPv6));
    }
}

//! Addresses and ports in objects, as upstream's `IsValidCIDR*`, `IsValidPortNum` and
//! `IsValidPortName` read them.

use std::net::IpAddr;

/// The message of an address range that is not one.
pub const CIDR_INVALID: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// The message of an address that is not one, in a field older than the strict rules.
pub const IP_INVALID: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

/// The protocols a port may speak.
pub const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

/// A range of addresses: its network as bits (IPv4 in the low 32), its width and prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    pub bits: u128,
    pub width: u8,
    pub prefix: u8,
}

impl Cidr {
    /// `a.b.c.d/n` or `x::y/n` (Go's `ParseCIDR`; IPv4 parts with leading zeros too, as
    /// its sloppy form reads them for fields older than the strict rules).
    pub fn parse(text: &str) -> Option<Cidr> {
        let (addr, prefix) = text.split_once('/')?;
        let prefix: u8 = (!prefix.is_empty() && prefix.len() <= 3 && prefix.bytes().all(|b| b.is_ascii_digit()))
            .then(|| prefix.parse().ok())??;
        let (bits, width) = match sloppy_addr(addr)? {
            IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
            IpAddr::V6(v6) => (u128::from(v6), 128),
        };
        if prefix > width {
            return None;
        }
        let mask = if prefix == 0 { 0 } else { (!0u128 << (width - prefix)) & width_mask(width) };
        Some(Cidr { bits: bits & mask, width, prefix })
    }

    /// Whether `other` is a strictly smaller range inside this one.
    pub fn strictly_contains(&self, other: &Cidr) -> bool {
        if self.width != other.width || other.prefix <= self.prefix {
            return false;
        }
        let mask = if self.prefix == 0 { 0 } else { (!0u128 << (self.width - self.prefix)) & width_mask(self.width) };
        other.bits & mask == self.bits
    }
}

fn width_mask(width: u8) -> u128 {
    if width == 128 { !0 } else { (1u128 << width) - 1 }
}

/// An address as Go's `ParseIPSloppy` reads it (IPv4 parts may have leading zeros).
pub fn sloppy_addr(text: &str) -> Option<IpAddr> {
    if let Ok(addr) = text.parse() {
        return Some(addr);
    }
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() != 4 || !parts.iter().all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let octets: Vec<u8> = parts.iter().map(|p| p.parse::<u16>().ok().filter(|n| *n <= 255).map(|n| n as u8)).collect::<Option<_>>()?;
    Some(IpAddr::from([octets[0], octets[1], octets[2], octets[3]]))
}

/// Problems with an address a Service's endpoints may name (upstream's
/// `ValidateNonSpecialIP`): an address, and none of the ranges meant for the node
/// itself, where traffic sent to an endpoint would never leave it.
pub fn endpoint_ip(text: &str) -> Vec<String> {
    let Some(ip) = sloppy_addr(text) else {
        return vec!["must be a valid IP address".to_owned()];
    };
    // Go reads an IPv4-mapped IPv6 address as the IPv4 one.
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    let mut errs = Vec::new();
    if ip.is_unspecified() {
        errs.push(format!("may not be unspecified ({text})"));
    }
    if ip.is_loopback() {
        errs.push("may not be in the loopback range (127.0.0.0/8, ::1/128)".to_owned());
    }
    let (link_local, link_local_multicast) = match ip {
        IpAddr::V4(v4) => (v4.is_link_local(), v4.octets()[..3] == [224, 0, 0]),
        IpAddr::V6(v6) => {
            let s = v6.segments()[0];
            (s & 0xffc0 == 0xfe80, s & 0xff0f == 0xff02)
        }
    };
    if link_local {
        errs.push("may not be in the link-local range (169.254.0.0/16, fe80::/10)".to_owned());
    }
    if link_local_multicast {
        errs.push("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)".to_owned());
    }
    errs
}

/// Problems with `port` as a port number.
pub fn port_number(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".to_owned()]
    }
}

/// Problems with `name` as a port's name (an IANA service name).
pub fn port_name(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > 15 {
        errs.push("must be no more than 15 characters".to_owned());
    }
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_owned());
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".to_owned());
    }
    if name.contains("--") {
        errs.push("must not contain consecutive hyphens".to_owned());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errs.push("must not begin or end with a hyphen".to_owned());
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_read_like_gos() {
        assert!(Cidr::parse("10.0.0.0/33").is_none());
        assert!(Cidr::parse("not-a-cidr").is_none());
        let eight = Cidr::parse("10.0.0.0/8").unwrap();
        assert!(eight.strictly_contains(&Cidr::parse("10.1.0.0/16").unwrap()));
        assert!(!eight.strictly_contains(&Cidr::parse("11.0.0.0/8").unwrap()));
        assert!(!eight.strictly_contains(&Cidr::parse("10.0.0.0/8").unwrap()));
        assert!(Cidr::parse("2001:db8::/64").unwrap().strictly_contains(&Cidr::parse("2001:db8::/96").unwrap()));
        assert!(Cidr::parse("010.0.0.0/8").is_some());
        assert!(Cidr::parse("0.0.0.0/0").unwrap().strictly_contains(&Cidr::parse("1.2.3.4/32").unwrap()));
    }

    #[test]
    fn endpoint_addresses_leave_the_node() {
        assert!(endpoint_ip("10.1.2.3").is_empty());
        assert_eq!(endpoint_ip("x"), ["must be a valid IP address"]);
        assert_eq!(endpoint_ip("::1"), ["may not be in the loopback range (127.0.0.0/8, ::1/128)"]);
        assert_eq!(endpoint_ip("fe80::1").len(), 1);
        assert_eq!(endpoint_ip("224.0.0.5").len(), 1);
        assert_eq!(endpoint_ip("ff02::1").len(), 1);
        assert_eq!(endpoint_ip("0.0.0.0"), ["may not be unspecified (0.0.0.0)"]);
    }

    #[test]
    fn port_names() {
        assert!(port_name("http").is_empty());
        assert_eq!(port_name("80"), ["must contain at least one letter (a-z)"]);
        assert_eq!(port_name("a--b"), ["must not contain consecutive hyphens"]);
    }
}

//! Kubernetes' IP and CIDR libraries: `ip()`, `isIP()`, `ip.isCanonical()`,
//! `cidr()`, `isCIDR()` and the tests on addresses and networks. Parsing is as
//! strict as Go's `net/netip` (no leading zeros, no zones, no IPv4-mapped IPv6).

use super::Library;
use super::standard::go_quote;
use crate::cel::types::Type as Ty;
use crate::cel::value::Value;
use std::fmt;
use std::net::IpAddr;
use std::rc::Rc;

/// A network: an address (as written, not masked) and a prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    pub addr: IpAddr,
    pub bits: u8,
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

fn to_bits(ip: IpAddr) -> (u128, u8) {
    match ip {
        IpAddr::V4(v4) => (u32::from(v4) as u128, 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    }
}

fn from_bits(v: u128, width: u8) -> IpAddr {
    if width == 32 {
        IpAddr::V4((v as u32).into())
    } else {
        IpAddr::V6(v.into())
    }
}

impl Cidr {
    fn masked(&self) -> Cidr {
        let (v, width) = to_bits(self.addr);
        let host_bits = (width - self.bits) as u32;
        let mask = if host_bits >= 128 { 0 } else { u128::MAX << host_bits };
        let v = v & mask & if width == 32 { u32::MAX as u128 } else { u128::MAX };
        Cidr {
            addr: from_bits(v, width),
            bits: self.bits,
        }
    }

    fn contains(&self, ip: IpAddr) -> bool {
        if self.addr.is_ipv4() != ip.is_ipv4() {
            return false;
        }
        let other = Cidr { addr: ip, bits: self.bits };
        self.masked().addr == other.masked().addr
    }

    fn contains_cidr(&self, other: &Cidr) -> bool {
        self.bits <= other.bits && self.contains(other.addr)
    }
}

fn parse_addr(raw: &str) -> Result<IpAddr, String> {
    if raw.contains('%') {
        return Err(format!("IP address {} with zone value is not allowed", go_quote(raw)));
    }
    let addr: IpAddr = raw.parse().map_err(|_| {
        format!(
            "IP Address {} parse error during conversion from string: ParseAddr({}): unable to parse IP",
            go_quote(raw),
            go_quote(raw)
        )
    })?;
    if let IpAddr::V6(v6) = addr {
        if v6.to_ipv4_mapped().is_some() {
            return Err(format!("IPv4-mapped IPv6 address {} is not allowed", go_quote(raw)));
        }
    }
    Ok(addr)
}

fn parse_cidr(raw: &str) -> Result<Cidr, String> {
    let fail = |why: &str| {
        Err(format!(
            "network address parse error during conversion from string: netip.ParsePrefix({}): {why}",
            go_quote(raw)
        ))
    };
    let Some((addr, bits)) = raw.rsplit_once('/') else {
        return fail("no '/'");
    };
    if addr.contains('%') {
        return fail("IPv6 zones cannot be present in a prefix");
    }
    let Ok(ip) = addr.parse::<IpAddr>() else {
        return fail(&format!("ParseAddr({}): unable to parse IP", go_quote(addr)));
    };
    let width = if ip.is_ipv4() { 32 } else { 128 };
    let valid_bits = !bits.is_empty() && bits.bytes().all(|b| b.is_ascii_digit()) && (bits == "0" || !bits.starts_with('0'));
    let Some(bits) = bits.parse::<u8>().ok().filter(|b| valid_bits && *b <= width) else {
        return fail("bad bits after slash");
    };
    if let IpAddr::V6(v6) = ip {
        if v6.to_ipv4_mapped().is_some() {
            return Err(format!("IPv4-mapped IPv6 address {} is not allowed", go_quote(raw)));
        }
    }
    Ok(Cidr { addr: ip, bits })
}

fn is_loopback(ip: IpAddr) -> bool {
    ip.is_loopback()
}

fn is_link_local_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[0] == 169 && v4.octets()[1] == 254,
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

fn is_link_local_multicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[0] == 224 && v4.octets()[1] == 0 && v4.octets()[2] == 0,
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

fn is_global_unicast(ip: IpAddr) -> bool {
    let broadcast = matches!(ip, IpAddr::V4(v4) if v4.is_broadcast());
    !broadcast && !ip.is_unspecified() && !ip.is_loopback() && !ip.is_multicast() && !is_link_local_unicast(ip)
}

pub(super) fn register(lib: &mut Library) {
    use Ty::*;
    let ip = || Ty::opaque("net.IP");
    let cidr = || Ty::opaque("net.CIDR");
    lib.global("ip", "string_to_ip", vec![String], ip(), |v| match &v[0] {
        Value::String(s) => parse_addr(s).map(Value::Ip).unwrap_or_else(Value::error),
        _ => Value::no_such_overload(),
    });
    lib.global("isIP", "is_ip", vec![String], Bool, |v| match &v[0] {
        Value::String(s) => Value::Bool(parse_addr(s).is_ok()),
        _ => Value::no_such_overload(),
    });
    lib.global("ip.isCanonical", "ip_is_canonical", vec![String], Bool, |v| match &v[0] {
        Value::String(s) => match parse_addr(s) {
            Ok(a) => Value::Bool(a.to_string() == **s),
            Err(e) => Value::error(e),
        },
        _ => Value::no_such_overload(),
    });
    lib.global("string", "ip_to_string", vec![ip()], String, |v| match &v[0] {
        Value::Ip(a) => Value::string(a.to_string()),
        _ => Value::no_such_overload(),
    });
    lib.member("family", "ip_family", vec![ip()], Int, |v| with_ip(v, |a| Value::Int(if a.is_ipv4() { 4 } else { 6 })));
    lib.member("isUnspecified", "ip_is_unspecified", vec![ip()], Bool, |v| with_ip(v, |a| Value::Bool(a.is_unspecified())));
    lib.member("isLoopback", "ip_is_loopback", vec![ip()], Bool, |v| with_ip(v, |a| Value::Bool(is_loopback(a))));
    lib.member("isLinkLocalMulticast", "ip_is_link_local_multicast", vec![ip()], Bool, |v| {
        with_ip(v, |a| Value::Bool(is_link_local_multicast(a)))
    });
    lib.member("isLinkLocalUnicast", "ip_is_link_local_unicast", vec![ip()], Bool, |v| {
        with_ip(v, |a| Value::Bool(is_link_local_unicast(a)))
    });
    lib.member("isGlobalUnicast", "ip_is_global_unicast", vec![ip()], Bool, |v| {
        with_ip(v, |a| Value::Bool(is_global_unicast(a)))
    });

    lib.global("cidr", "string_to_cidr", vec![String], cidr(), |v| match &v[0] {
        Value::String(s) => parse_cidr(s).map(|c| Value::Cidr(Rc::new(c))).unwrap_or_else(Value::error),
        _ => Value::no_such_overload(),
    });
    lib.global("isCIDR", "is_cidr", vec![String], Bool, |v| match &v[0] {
        Value::String(s) => Value::Bool(parse_cidr(s).is_ok()),
        _ => Value::no_such_overload(),
    });
    lib.global("string", "cidr_to_string", vec![cidr()], String, |v| match &v[0] {
        Value::Cidr(c) => Value::string(c.to_string()),
        _ => Value::no_such_overload(),
    });
    lib.member("containsIP", "cidr_contains_ip_string", vec![cidr(), String], Bool, |v| match (&v[0], &v[1]) {
        (Value::Cidr(c), Value::String(s)) => match parse_addr(s) {
            Ok(a) => Value::Bool(c.contains(a)),
            Err(e) => Value::error(e),
        },
        _ => Value::no_such_overload(),
    });
    lib.member("containsIP", "cidr_contains_ip_ip", vec![cidr(), ip()], Bool, |v| match (&v[0], &v[1]) {
        (Value::Cidr(c), Value::Ip(a)) => Value::Bool(c.contains(*a)),
        _ => Value::no_such_overload(),
    });
    lib.member("containsCIDR", "cidr_contains_cidr_string", vec![cidr(), String], Bool, |v| match (&v[0], &v[1]) {
        (Value::Cidr(c), Value::String(s)) => match parse_cidr(s) {
            Ok(o) => Value::Bool(c.contains_cidr(&o)),
            Err(e) => Value::error(e),
        },
        _ => Value::no_such_overload(),
    });
    lib.member("containsCIDR", "cidr_contains_cidr", vec![cidr(), cidr()], Bool, |v| match (&v[0], &v[1]) {
        (Value::Cidr(c), Value::Cidr(o)) => Value::Bool(c.contains_cidr(o)),
        _ => Value::no_such_overload(),
    });
    lib.member("ip", "cidr_ip", vec![cidr()], ip(), |v| match &v[0] {
        Value::Cidr(c) => Value::Ip(c.addr),
        _ => Value::no_such_overload(),
    });
    lib.member("prefixLength", "cidr_prefix_length", vec![cidr()], Int, |v| match &v[0] {
        Value::Cidr(c) => Value::Int(c.bits as i64),
        _ => Value::no_such_overload(),
    });
    lib.member("masked", "cidr_masked", vec![cidr()], cidr(), |v| match &v[0] {
        Value::Cidr(c) => Value::Cidr(Rc::new(c.masked())),
        _ => Value::no_such_overload(),
    });
}

fn with_ip<'a>(v: &[Value<'a>], f: fn(IpAddr) -> Value<'a>) -> Value<'a> {
    match &v[0] {
        Value::Ip(a) => f(*a),
        _ => Value::no_such_overload(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_is_strict() {
        assert!(parse_addr("192.168.0.1").is_ok());
        assert!(parse_addr("192.168.00.1").is_err());
        assert!(parse_addr("::ffff:1.2.3.4").unwrap_err().contains("IPv4-mapped"));
        assert!(parse_addr("fe80::1%eth0").unwrap_err().contains("zone"));
        let c = parse_cidr("192.168.0.1/24").unwrap();
        assert_eq!(c.to_string(), "192.168.0.1/24");
        assert_eq!(c.masked().to_string(), "192.168.0.0/24");
        assert!(c.contains("192.168.0.200".parse().unwrap()));
        assert!(!c.contains("192.168.1.1".parse().unwrap()));
        assert!(c.contains_cidr(&parse_cidr("192.168.0.0/25").unwrap()));
        assert!(!c.contains_cidr(&parse_cidr("192.168.0.0/23").unwrap()));
        assert!(parse_cidr("1.2.3.4/33").is_err());
        assert!(parse_cidr("::/0").unwrap().contains("2001:db8::1".parse().unwrap()));
    }
}

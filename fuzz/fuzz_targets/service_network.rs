//! The parsers of Service allocation: `--service-cluster-ip-range`, CIDRs and IP
//! addresses, `--service-node-port-range`, and the node port record read back from
//! storage. Never panics; what parses prints back to what parses the same; a range
//! holds exactly the addresses it numbers; the record round-trips.
#![no_main]

use apiary_core::service_network::cidr::parse_ip;
use apiary_core::service_network::{Cidr, PortRange, ServiceNetwork, TakenPorts};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    if pick % 2 == 1 {
        if let Ok(taken) = TakenPorts::parse(rest) {
            let range = PortRange::default();
            assert_eq!(TakenPorts::parse(&taken.to_bytes(range)).unwrap(), taken);
            if let Some(free) = taken.free(range, u16::from(pick)) {
                assert!(range.contains(i64::from(free)) && !taken.ports.contains(&free));
            }
        }
        return;
    }
    let Ok(text) = std::str::from_utf8(rest) else { return };
    if let Ok(ranges) = ServiceNetwork::parse_cluster_ip_ranges(text) {
        assert!(!ranges.is_empty() && ranges.len() <= 2);
    }
    if let Ok(cidr) = Cidr::parse(text) {
        assert_eq!(Cidr::parse(&cidr.to_string()), Ok(cidr));
        let n = u64::from(pick).min(cidr.usable().saturating_sub(1));
        if let Some(ip) = cidr.nth(n) {
            assert_eq!(cidr.index_of(&ip), Some(n));
        }
    }
    if let Some(ip) = parse_ip(text) {
        assert_eq!(parse_ip(&ip.to_string()), Some(ip));
    }
    if let Ok(range) = PortRange::parse(text) {
        assert_eq!(PortRange::parse(&range.to_string()), Ok(range));
        assert!(range.contains(i64::from(range.base)) && range.contains(i64::from(range.last())));
    }
});

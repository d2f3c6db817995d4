//! The addresses and ports Services are given: `--service-cluster-ip-range` (one
//! range, or one per family for dual-stack) and `--service-node-port-range`, as
//! plain configuration data with their parsers.

pub mod cidr;
pub mod node_ports;

pub use cidr::{Cidr, Family};
pub use node_ports::{PortRange, TakenPorts};

/// The ranges Services draw from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceNetwork {
    /// The primary range first; a second one, of the other family, makes the cluster
    /// dual-stack.
    pub cluster_ip_ranges: Vec<Cidr>,
    pub node_ports: PortRange,
}

/// Upstream's range when `--service-cluster-ip-range` is not given.
pub const DEFAULT_CLUSTER_IP_RANGE: &str = "10.0.0.0/24";

impl Default for ServiceNetwork {
    fn default() -> Self {
        ServiceNetwork {
            cluster_ip_ranges: vec![Cidr::parse(DEFAULT_CLUSTER_IP_RANGE).expect("a valid range")],
            node_ports: PortRange::default(),
        }
    }
}

impl ServiceNetwork {
    /// Parse `--service-cluster-ip-range`: one CIDR, or two of different families
    /// separated by a comma.
    pub fn parse_cluster_ip_ranges(text: &str) -> Result<Vec<Cidr>, String> {
        let ranges = text.split(',').map(|c| Cidr::parse(c.trim())).collect::<Result<Vec<_>, _>>()?;
        match ranges.as_slice() {
            [_] => Ok(ranges),
            [a, b] if a.family() != b.family() => Ok(ranges),
            [_, _] => Err("--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family".into()),
            _ => Err("--service-cluster-ip-range may not have more than two CIDRs".into()),
        }
    }

    /// The families configured, primary first.
    pub fn families(&self) -> Vec<Family> {
        self.cluster_ip_ranges.iter().map(Cidr::family).collect()
    }

    pub fn dual_stack(&self) -> bool {
        self.cluster_ip_ranges.len() > 1
    }

    pub fn range_of(&self, family: Family) -> Option<&Cidr> {
        self.cluster_ip_ranges.iter().find(|c| c.family() == family)
    }

    /// The address of the `kubernetes` Service: the primary range's first.
    pub fn api_service_ip(&self) -> Option<std::net::IpAddr> {
        self.cluster_ip_ranges.first().and_then(|c| c.nth(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_takes_one_range_or_one_per_family() {
        assert_eq!(ServiceNetwork::parse_cluster_ip_ranges("10.96.0.0/16").unwrap().len(), 1);
        let dual = ServiceNetwork::parse_cluster_ip_ranges("10.96.0.0/16,fd00::/108").unwrap();
        assert_eq!(dual[1].family(), Family::IPv6);
        assert!(ServiceNetwork::parse_cluster_ip_ranges("10.96.0.0/16,10.97.0.0/16").is_err());
        assert!(ServiceNetwork::parse_cluster_ip_ranges("10.96.0.0/16,fd00::/108,fd01::/108").is_err());
        assert!(ServiceNetwork::parse_cluster_ip_ranges("").is_err());
        assert_eq!(ServiceNetwork::default().api_service_ip(), Some("10.0.0.1".parse().unwrap()));
    }
}

//! EndpointSlices (discovery.k8s.io/v1). Defaults: a port without a name is named
//! `""`, and without a protocol is TCP.

use super::defaults::{objects, or_insert, tcp_ports};
use super::Strategy;
use crate::rest::object::Object;
use serde_json::json;

pub struct EndpointSlices;

impl Strategy for EndpointSlices {
    fn name(&self) -> &'static str {
        "endpointslices"
    }

    /// Upstream's strategy starts the generation at 1 and counts spec changes.
    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        for port in objects(obj, "ports") {
            or_insert(port, "name", || json!(""));
        }
        tcp_ports(obj, "ports");
    }
}

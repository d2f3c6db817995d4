//! Choosing aggregated discovery from the `Accept` header, as kube-apiserver does.
//!
//! kube parses `Accept` into media ranges, orders them by quality (a stable sort that
//! also moves ranges without wildcards forward), and takes the first range that names a
//! media type it can write *and* whose `g`/`v`/`as` parameters ask for
//! `apidiscovery.k8s.io` `v2` or `v2beta1` `APIGroupDiscoveryList`. Ranges without
//! those parameters (a plain `application/json`) do not stop the search: they are
//! simply not aggregated requests. When no range asks for aggregation, the plain
//! discovery document is served.
//!
//! Apiary writes discovery as JSON only, so only `application/json`, `application/*`
//! and `*/*` ranges can select aggregation here; a protobuf or YAML range is skipped
//! and the search goes on, as it would in kube for a type it cannot write.

use crate::negotiation::{parse_accept, MediaRange};

/// Which version of the aggregated discovery API a client asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggregatedVersion {
    /// `apidiscovery.k8s.io/v2` (kubectl 1.30 and later).
    V2,
    /// `apidiscovery.k8s.io/v2beta1` (kubectl 1.26 to 1.29).
    V2Beta1,
}

/// The `Content-Type` of an aggregated `apidiscovery.k8s.io/v2` response.
pub const AGGREGATED_V2_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// The `Content-Type` of an aggregated `apidiscovery.k8s.io/v2beta1` response.
pub const AGGREGATED_V2BETA1_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

impl AggregatedVersion {
    /// The `apiVersion` of the document: `apidiscovery.k8s.io/v2`.
    pub fn api_version(self) -> &'static str {
        match self {
            AggregatedVersion::V2 => "apidiscovery.k8s.io/v2",
            AggregatedVersion::V2Beta1 => "apidiscovery.k8s.io/v2beta1",
        }
    }

    /// The `Content-Type` of the response, naming the version served.
    pub fn content_type(self) -> &'static str {
        match self {
            AggregatedVersion::V2 => AGGREGATED_V2_CONTENT_TYPE,
            AggregatedVersion::V2Beta1 => AGGREGATED_V2BETA1_CONTENT_TYPE,
        }
    }
}

/// The aggregated discovery version an `Accept` header asks for, or `None` when the
/// plain discovery document should be served.
pub fn negotiate_aggregated(accept: &str) -> Option<AggregatedVersion> {
    parse_accept(accept)
        .iter()
        .filter(|range| writes_json(range))
        .find_map(aggregated_version)
}

/// Whether the range admits `application/json`, the only type discovery is written in.
fn writes_json(range: &MediaRange<'_>) -> bool {
    (range.kind == "application" && (range.subtype == "json" || range.subtype == "*"))
        || (range.kind == "*" && range.subtype == "*")
}

/// The aggregated version a range's parameters ask for, if the range is acceptable for
/// the aggregated discovery endpoint at all.
fn aggregated_version(range: &MediaRange<'_>) -> Option<AggregatedVersion> {
    let (mut group, mut version, mut kind) = (None, None, None);
    for &(key, value) in &range.params {
        match key {
            "g" => group = Some(value),
            "v" => version = Some(value),
            "as" => kind = Some(value),
            // The discovery endpoints only allow the watch stream schema and never a
            // server version; either makes the range unacceptable.
            "stream" if !value.is_empty() && value != "watch" => return None,
            "sv" if !value.is_empty() => return None,
            _ => {}
        }
    }
    if group.unwrap_or("") != "apidiscovery.k8s.io" || kind.unwrap_or("") != "APIGroupDiscoveryList"
    {
        return None;
    }
    match version.unwrap_or("") {
        "v2" => Some(AggregatedVersion::V2),
        "v2beta1" => Some(AggregatedVersion::V2Beta1),
        _ => None,
    }
}

//! Non-resource paths: health checks, /version, the OpenAPI documents, and the discovery
//! documents.

use crate::discovery;
use crate::negotiation::{self, Output};
use crate::query::Query;
use crate::registry::Registry;
use crate::rest::{encoded, error_response};
use crate::shared::Shared;
use crate::status::ApiError;
use bytes::Bytes;
use http::Method;

#[allow(clippy::too_many_arguments)]
pub(crate) fn handle(
    shared: &Shared,
    method: &Method,
    path: &str,
    query: &Query,
    accept: Option<&str>,
    headers: &http::HeaderMap,
    now: std::time::SystemTime,
) -> http::Response<Bytes> {
    // /openapi/v2 and /openapi/v3[/...]: exact paths (no trailing-slash trimming), any method.
    let registry = shared.registry();
    // The index names the extension servers' documents too.
    let remote = if path == "/openapi/v3" { crate::aggregation::openapi::remote_index(shared) } else { Default::default() };
    if let Some(response) = shared.openapi.serve(&registry, method, path, query, headers, now, &remote) {
        return response;
    }
    let path = if path.len() > 1 { path.trim_end_matches('/') } else { path };
    for endpoint in ["healthz", "livez", "readyz"] {
        if let Some(rest) = path.strip_prefix('/').and_then(|p| p.strip_prefix(endpoint)) {
            if rest.is_empty() || rest.starts_with('/') {
                let exclude: Vec<&str> = query.get("exclude").into_iter().collect();
                return shared
                    .health
                    .answer(endpoint, rest.trim_start_matches('/'), query.flag("verbose"), &exclude);
            }
        }
    }
    if *method != Method::GET && *method != Method::HEAD {
        return error_response(&ApiError::no_such_path(), Output::JSON);
    }
    // An Accept that asks only for aggregated discovery is acceptable at /api and /apis.
    let aggregated = matches!(path, "/api" | "/apis") && accept.and_then(discovery::negotiate_aggregated).is_some();
    let output = match negotiation::negotiate_output(accept, query.flag("pretty"), negotiation::Offer::TEXT) {
        Ok(o) => o,
        Err(_) if aggregated => Output::JSON,
        Err(e) => return error_response(&e, Output::JSON),
    };
    if path == "/metrics" {
        let mut text = shared.metrics.render(&shared.storage_objects());
        if let Some(control) = &shared.flowcontrol {
            crate::metrics::flowcontrol::render(&mut text, control);
        }
        return http::Response::builder()
            .status(200)
            .header(http::header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)
            .body(Bytes::from(text))
            .expect("valid response");
    }
    if path == "/version" {
        return encoded(Output { pretty: true, ..output }, 200, &crate::version::info());
    }
    match discovery(shared, &registry, path, accept, output) {
        Some(response) => response,
        None => error_response(&ApiError::no_such_path(), output),
    }
}

/// The discovery documents: /api, /apis (plain or aggregated), /apis/<group>, and the
/// resource lists of each group-version.
fn discovery(
    shared: &Shared,
    registry: &Registry,
    path: &str,
    accept: Option<&str>,
    output: Output,
) -> Option<http::Response<Bytes>> {
    let aggregated = accept.and_then(discovery::negotiate_aggregated);
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let doc = match (parts.as_slice(), aggregated) {
        (["api"], Some(v)) => return Some(aggregated_response(&discovery::aggregated_api(registry, v), v)),
        (["apis"], Some(v)) => return Some(aggregated_response(&crate::aggregation::discovery::aggregated_apis(shared, registry, v), v)),
        (["api"], None) => to_value(&discovery::api_versions(shared.config.advertise_address)),
        (["apis"], _) => to_value(&discovery::group_list(crate::aggregation::discovery::groups(shared, registry))),
        (["api", version], _) => to_value(&discovery::api_resource_list(registry, "", version)?),
        (["apis", group], _) => to_value(&discovery::group_of(crate::aggregation::discovery::groups(shared, registry), group)?),
        (["apis", group, version], _) => to_value(&discovery::api_resource_list(registry, group, version)?),
        _ => return None,
    };
    Some(encoded(output, 200, &doc))
}

fn to_value(doc: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(doc).expect("discovery documents serialize")
}

fn aggregated_response(doc: &impl serde::Serialize, version: discovery::AggregatedVersion) -> http::Response<Bytes> {
    http::Response::builder()
        .status(200)
        .header(http::header::CONTENT_TYPE, version.content_type())
        .header(http::header::VARY, "Accept")
        .body(Bytes::from(serde_json::to_vec(doc).expect("discovery documents serialize")))
        .expect("valid response")
}

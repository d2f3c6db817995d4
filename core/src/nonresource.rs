//! Non-resource paths: health checks, /version, and the discovery documents.

use crate::negotiation::{self, Output};
use crate::query::Query;
use crate::rest::{encoded, error_response};
use crate::server::Shared;
use crate::status::ApiError;
use bytes::Bytes;
use http::Method;

pub(crate) fn handle(shared: &Shared, method: &Method, path: &str, query: &Query, accept: Option<&str>) -> http::Response<Bytes> {
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
    let output = match negotiation::negotiate_output(accept, query.flag("pretty"), false) {
        Ok(o) => o,
        Err(e) => return error_response(&e, Output::JSON),
    };
    if path == "/version" {
        return encoded(Output { pretty: true, ..output }, 200, &crate::version::info());
    }
    match discovery(shared, path, accept, output) {
        Some(response) => response,
        None => error_response(&ApiError::no_such_path(), output),
    }
}

fn discovery(_shared: &Shared, _path: &str, _accept: Option<&str>, _output: Output) -> Option<http::Response<Bytes>> {
    None
}

//! Routing along kube-apiserver's delegation chain: the aggregator first (group
//! versions served by another API server), then the built-in resources, then custom
//! resources, then not found. Paths that name no resource (health, version, discovery,
//! OpenAPI, metrics) are served by the server itself.

use crate::aggregation::Backend;
use crate::registry::{Registry, Resource};
use crate::request_info::RequestInfo;
use std::sync::Arc;

/// Where a request goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// A group version an extension API server serves: proxy the request there.
    Aggregated(Backend),
    /// A resource of the registry, built in or custom: the entry the request keeps
    /// whatever joins or leaves the registry meanwhile.
    Resource(Arc<Resource>),
    /// Health, version, discovery, OpenAPI, metrics.
    NonResource,
    /// Nothing serves it.
    NotFound,
}

/// The route of a request; `backend` is the extension server of its group version, if
/// an APIService names one.
pub fn route(info: &RequestInfo, backend: Option<Backend>, registry: &Registry) -> Route {
    if let Some(backend) = backend {
        return Route::Aggregated(backend);
    }
    if !info.is_resource_request {
        return Route::NonResource;
    }
    match registry.lookup_shared(&info.api_group, &info.api_version, &info.resource) {
        Some(resource) => Route::Resource(resource.clone()),
        None => Route::NotFound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route_of(path: &str, backend: Option<Backend>) -> Route {
        let info = crate::request_info::resolve(&http::Method::GET, path, None);
        route(&info, backend, &Registry::builtin())
    }

    #[test]
    fn the_aggregator_comes_first_then_resources_then_not_found() {
        let metrics = Backend {
            name: "v1beta1.metrics.k8s.io".into(),
            namespace: "kube-system".into(),
            service: "metrics-server".into(),
            port: 443,
            ca_pem: Vec::new(),
            insecure_skip_tls_verify: true,
            available: true,
        };
        assert_eq!(route_of("/apis/metrics.k8s.io/v1beta1/nodes", Some(metrics.clone())), Route::Aggregated(metrics));
        assert_eq!(route_of("/apis/metrics.k8s.io/v1", None), Route::NonResource);
        assert!(matches!(route_of("/api/v1/namespaces/a/pods", None), Route::Resource(_)));
        assert_eq!(route_of("/apis/example.com/v1/widgets", None), Route::NotFound);
        assert_eq!(route_of("/healthz", None), Route::NonResource);
    }
}

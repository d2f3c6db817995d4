//! Routing along kube-apiserver's delegation chain: the aggregator first (group
//! versions served by another API server), then the built-in resources, then custom
//! resources, then not found. Paths that name no resource (health, version, discovery,
//! OpenAPI, metrics) are served by the server itself.

use crate::config::AggregatedApi;
use crate::registry::{Registry, Resource};
use crate::request_info::RequestInfo;
use std::sync::Arc;

/// Where a request goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// A group version another server serves: proxy the request there.
    Aggregated(AggregatedApi),
    /// A resource of the registry, built in or custom: the entry the request keeps
    /// whatever joins or leaves the registry meanwhile.
    Resource(Arc<Resource>),
    /// Health, version, discovery, OpenAPI, metrics.
    NonResource,
    /// Nothing serves it.
    NotFound,
}

/// The route of a request.
pub fn route(info: &RequestInfo, aggregated: &[AggregatedApi], registry: &Registry) -> Route {
    if let Some(api) = aggregated_api(&info.path, aggregated) {
        return Route::Aggregated(api.clone());
    }
    if !info.is_resource_request {
        return Route::NonResource;
    }
    match registry.lookup_shared(&info.api_group, &info.api_version, &info.resource) {
        Some(resource) => Route::Resource(resource.clone()),
        None => Route::NotFound,
    }
}

/// The aggregated API serving `path` (`/apis/<group>/<version>` and below).
fn aggregated_api<'a>(path: &str, aggregated: &'a [AggregatedApi]) -> Option<&'a AggregatedApi> {
    let mut parts = path.strip_prefix("/apis/")?.split('/');
    let (group, version) = (parts.next()?, parts.next()?);
    aggregated
        .iter()
        .find(|api| api.group == group && api.version == version)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route_of(method: http::Method, path: &str, aggregated: &[AggregatedApi]) -> Route {
        let info = crate::request_info::resolve(&method, path, None);
        route(&info, aggregated, &Registry::builtin())
    }

    #[test]
    fn the_aggregator_comes_first_then_resources_then_not_found() {
        let metrics = AggregatedApi {
            group: "metrics.k8s.io".into(),
            version: "v1beta1".into(),
            url: "https://127.0.0.1:4443".into(),
        };
        let apis = std::slice::from_ref(&metrics);
        let get = http::Method::GET;
        assert_eq!(route_of(get.clone(), "/apis/metrics.k8s.io/v1beta1/nodes", apis), Route::Aggregated(metrics.clone()));
        assert_eq!(route_of(get.clone(), "/apis/metrics.k8s.io/v1beta1", apis), Route::Aggregated(metrics.clone()));
        assert_eq!(route_of(get.clone(), "/apis/metrics.k8s.io/v1", apis), Route::NonResource);
        assert!(matches!(route_of(get.clone(), "/api/v1/namespaces/a/pods", apis), Route::Resource(_)));
        assert_eq!(route_of(get.clone(), "/apis/example.com/v1/widgets", apis), Route::NotFound);
        assert_eq!(route_of(get, "/healthz", apis), Route::NonResource);
    }
}

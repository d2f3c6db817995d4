//! A webhook's `clientConfig`, as CRD conversion and admission webhooks name their
//! server: a `url` called as written, or a `service` resolved to one of its endpoints
//! (as kube-apiserver does with `--enable-aggregator-routing`: Apiary has no kube-proxy
//! to reach a cluster IP) whose certificate is checked against
//! `<service>.<namespace>.svc`; `caBundle` the roots to trust.

use crate::effect::ClientTls;
use base64::Engine;
use serde_json::Value;
use std::sync::Arc;

/// A Service's endpoint for a port, as the caller finds it in the watch caches.
pub trait Endpoints {
    /// `host:port` of an endpoint of Service `namespace/name` behind its port `port`.
    fn resolve(&self, namespace: &str, name: &str, port: i64) -> Result<String, String>;
}

/// Where a webhook is, and how to trust it.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    target: Target,
    pub tls: Arc<ClientTls>,
}

#[derive(Clone, Debug)]
enum Target {
    Url(String),
    Service { namespace: String, name: String, port: i64, path: String },
}

impl ClientConfig {
    /// Read from a `clientConfig`; `None` when it names neither a URL nor a Service.
    pub fn of(config: &Value) -> Option<ClientConfig> {
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        let target = match (config.get("url").filter(|u| !u.is_null()), config.get("service").filter(|s| !s.is_null())) {
            (Some(url), _) => Target::Url(url.as_str().unwrap_or("").to_owned()),
            (None, Some(service)) => Target::Service {
                namespace: text(service, "namespace"),
                name: text(service, "name"),
                port: service.get("port").and_then(Value::as_i64).unwrap_or(443),
                path: text(service, "path"),
            },
            (None, None) => return None,
        };
        let ca_pem = base64::engine::general_purpose::STANDARD.decode(text(config, "caBundle")).unwrap_or_default();
        let server_name = match &target {
            Target::Service { namespace, name, .. } => Some(format!("{name}.{namespace}.svc")),
            Target::Url(_) => None,
        };
        let tls = Arc::new(ClientTls { ca_pem, server_name, ..ClientTls::default() });
        Some(ClientConfig { target, tls })
    }

    /// The URL to call now.
    pub fn url(&self, endpoints: &dyn Endpoints) -> Result<String, String> {
        match &self.target {
            Target::Url(url) => Ok(url.clone()),
            Target::Service { namespace, name, port, path } => {
                let at = endpoints.resolve(namespace, name, *port)?;
                Ok(format!("https://{at}{path}"))
            }
        }
    }
}

//! Where a CRD's conversion webhook is and how it is asked: `spec.conversion.webhook`
//! read once when the CRD joins the registry. A `url` is called as written; a
//! `service` is resolved to one of its endpoints, as kube-apiserver does with
//! `--enable-aggregator-routing` (Apiary has no kube-proxy to reach a cluster IP), and
//! its certificate checked against `<service>.<namespace>.svc`.

use super::conversion_review::{self, Conversion};
use crate::effect::{ClientTls, Outbound};
use base64::Engine;
use serde_json::Value;
use std::sync::Arc;

/// A CRD's conversion webhook, as the strategy of one of its versions holds it.
#[derive(Debug)]
pub struct ConversionWebhook {
    target: Target,
    tls: Arc<ClientTls>,
    /// The ConversionReview versions the webhook accepts, in its order.
    review_versions: Vec<String>,
    /// The apiVersion this resource serves, and the one storage keeps.
    pub served: String,
    pub stored: String,
}

#[derive(Debug)]
enum Target {
    Url(String),
    Service { namespace: String, name: String, port: i64, path: String },
}

/// A Service's endpoint for a port, as the caller finds it in the watch caches.
pub trait Endpoints {
    /// `host:port` of an endpoint of Service `namespace/name` behind its port `port`.
    fn resolve(&self, namespace: &str, name: &str, port: i64) -> Result<String, String>;
}

impl ConversionWebhook {
    /// The webhook of a CRD whose `spec.conversion.strategy` is `Webhook`, for its
    /// version `served` (`group/version`) stored as `stored`.
    pub fn of(conversion: &Value, served: String, stored: String) -> Option<ConversionWebhook> {
        if conversion.get("strategy").and_then(Value::as_str) != Some("Webhook") {
            return None;
        }
        let webhook = conversion.get("webhook")?;
        let config = webhook.get("clientConfig")?;
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        let target = match (config.get("url"), config.get("service")) {
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
        let review_versions = webhook
            .get("conversionReviewVersions")
            .and_then(Value::as_array)
            .map(|vs| vs.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let tls = Arc::new(ClientTls { ca_pem, server_name, ..ClientTls::default() });
        Some(ConversionWebhook { target, tls, review_versions, served, stored })
    }

    /// Start converting `input` (an object or a list) to `desired`: done already, or
    /// the call to make and the review to read its answer with.
    pub fn convert(
        &self,
        input: Value,
        desired: &str,
        uid: &str,
        endpoints: &dyn Endpoints,
    ) -> Result<Result<Value, (conversion_review::Review, Outbound)>, String> {
        match conversion_review::convert(input, desired, &self.review_versions, uid)? {
            Conversion::Done(value) => Ok(Ok(value)),
            Conversion::Send(review, body) => {
                let url = self.url(endpoints).map_err(|e| format!("conversion webhook for {} failed: {e}", review.of()))?;
                let hook = crate::webhook::Webhook { url, tls: self.tls.clone(), token: None };
                Ok(Err((review, hook.post(body))))
            }
        }
    }

    /// The URL to call now.
    fn url(&self, endpoints: &dyn Endpoints) -> Result<String, String> {
        match &self.target {
            Target::Url(url) => Ok(url.clone()),
            Target::Service { namespace, name, port, path } => {
                let at = endpoints.resolve(namespace, name, *port)?;
                Ok(format!("https://{at}{path}"))
            }
        }
    }
}

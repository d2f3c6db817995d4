//! Where a CRD's conversion webhook is and how it is asked: `spec.conversion.webhook`
//! read once when the CRD joins the registry. A `url` is called as written; a
//! `service` is resolved to one of its endpoints, as kube-apiserver does with
//! `--enable-aggregator-routing` (Apiary has no kube-proxy to reach a cluster IP), and
//! its certificate checked against `<service>.<namespace>.svc`.

use super::conversion_review::{self, Conversion};
pub use crate::webhook::client_config::Endpoints;
use crate::effect::Outbound;
use crate::webhook::client_config::ClientConfig;
use serde_json::Value;

/// A CRD's conversion webhook, as the strategy of one of its versions holds it.
#[derive(Debug)]
pub struct ConversionWebhook {
    client: ClientConfig,
    /// The ConversionReview versions the webhook accepts, in its order.
    review_versions: Vec<String>,
    /// The apiVersion this resource serves, and the one storage keeps.
    pub served: String,
    pub stored: String,
}

impl ConversionWebhook {
    /// The webhook of a CRD whose `spec.conversion.strategy` is `Webhook`, for its
    /// version `served` (`group/version`) stored as `stored`.
    pub fn of(conversion: &Value, served: String, stored: String) -> Option<ConversionWebhook> {
        if conversion.get("strategy").and_then(Value::as_str) != Some("Webhook") {
            return None;
        }
        let webhook = conversion.get("webhook")?;
        let client = ClientConfig::of(webhook.get("clientConfig")?)?;
        let review_versions = webhook
            .get("conversionReviewVersions")
            .and_then(Value::as_array)
            .map(|vs| vs.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        Some(ConversionWebhook { client, review_versions, served, stored })
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
                let url = self.client.url(endpoints).map_err(|e| format!("conversion webhook for {} failed: {e}", review.of()))?;
                let hook = crate::webhook::Webhook { url, tls: self.client.tls.clone(), token: None };
                Ok(Err((review, hook.post(body))))
            }
        }
    }
}

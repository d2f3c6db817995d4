//! Webhooks kube-apiserver asks for decisions: the token authenticator
//! (`--authentication-token-webhook-config-file`, TokenReview) and the authorizer
//! (`--authorization-webhook-config-file`, SubjectAccessReview). Each is a remote
//! service named by a kubeconfig file, asked with one POST per uncached question
//! through the chain's outbound-call effect, its answers kept for a while.

pub mod cache;
pub mod client_config;
pub mod kubeconfig;

use crate::effect::{ClientTls, Outbound};
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;

/// How long a webhook may take to answer (upstream's default request timeout for
/// webhook clients is 30 s).
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Where a webhook is and how to reach it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Webhook {
    /// `https://host:port/path`.
    pub url: String,
    pub tls: Arc<ClientTls>,
    /// A bearer token the kubeconfig's user presents.
    pub token: Option<String>,
}

impl Webhook {
    /// A POST of `body` (JSON) to the webhook.
    pub fn post(&self, body: Vec<u8>) -> Outbound {
        let mut request = http::Request::post(&self.url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, */*");
        if let Some(token) = &self.token {
            request = request.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let mut request = request
            .body(Bytes::from(body))
            .unwrap_or_else(|_| http::Request::new(Bytes::new()));
        // A review changes nothing: sending it twice is harmless.
        request.extensions_mut().insert(crate::effect::Replayable);
        Outbound {
            request,
            timeout: TIMEOUT,
            tls: Some(self.tls.clone()),
        }
    }
}

/// The review API version a webhook speaks (`--…-webhook-version`; upstream's
/// default is v1beta1 for both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Version {
    #[default]
    V1beta1,
    V1,
}

impl Version {
    pub fn parse(value: &str) -> Option<Version> {
        match value {
            "v1beta1" => Some(Version::V1beta1),
            "v1" => Some(Version::V1),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1beta1 => "v1beta1",
            Version::V1 => "v1",
        }
    }
}

/// The JSON body of a 2xx answer, or why there is none.
pub fn answer_body(outcome: crate::effect::CallOutcome) -> Result<serde_json::Value, String> {
    let response = outcome.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!(
            "the webhook answered {}: {}",
            response.status().as_u16(),
            String::from_utf8_lossy(response.body()).chars().take(200).collect::<String>()
        ));
    }
    serde_json::from_slice(response.body()).map_err(|e| format!("the webhook's answer is not JSON: {e}"))
}

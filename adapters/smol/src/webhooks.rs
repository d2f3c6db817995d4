//! The webhook flags: `--authentication-token-webhook-*` and
//! `--authorization-webhook-*`, read as kube-apiserver reads them. The kubeconfig
//! files are read here (with the files they name, relative to the kubeconfig's
//! directory) and parsed by the core.

use apiary_core::authn::webhook::TokenWebhookConfig;
use apiary_core::authorization::webhook::WebhookAuthorizerConfig;
use apiary_core::webhook::{kubeconfig, Version, Webhook};
use std::path::Path;
use std::time::Duration;

/// The webhook named by the kubeconfig at `path`, for `--{flag}`.
fn read_kubeconfig(flag: &str, path: &str) -> Result<Webhook, String> {
    let yaml = std::fs::read(path).map_err(|e| format!("reading --{flag} {path}: {e}"))?;
    let base = Path::new(path).parent().unwrap_or(Path::new("."));
    let read = |file: &str| -> Result<Vec<u8>, String> {
        let file = base.join(file);
        std::fs::read(&file).map_err(|e| format!("reading {}: {e}", file.display()))
    };
    kubeconfig::parse(&yaml, &read).map_err(|e| format!("--{flag} {path}: {e}"))
}

fn version(flag: &str, value: Option<&str>, problems: &mut Vec<String>) -> Version {
    let value = value.unwrap_or("v1beta1");
    Version::parse(value).unwrap_or_else(|| {
        problems.push(format!("invalid value {value:?} for --{flag}: must be one of v1beta1, v1"));
        Version::V1beta1
    })
}

fn ttl(flag: &str, value: Option<&str>, default: Duration, problems: &mut Vec<String>) -> Duration {
    match value.map(apiary_core::duration::parse_duration) {
        None => default,
        Some(Ok(d)) => d,
        Some(Err(e)) => {
            problems.push(format!("invalid value {:?} for --{flag}: {e}", value.unwrap_or_default()));
            default
        }
    }
}

/// `--authentication-token-webhook-config-file`, `-version` and `-cache-ttl`.
pub fn token_webhook(
    config_file: Option<&str>,
    version_flag: Option<&str>,
    cache_ttl: Option<&str>,
    problems: &mut Vec<String>,
) -> Option<TokenWebhookConfig> {
    let version = version("authentication-token-webhook-version", version_flag, problems);
    let cache_ttl = ttl("authentication-token-webhook-cache-ttl", cache_ttl, Duration::from_secs(120), problems);
    let flag = "authentication-token-webhook-config-file";
    let webhook = read_kubeconfig(flag, config_file?).map_err(|e| problems.push(e)).ok()?;
    Some(TokenWebhookConfig {
        webhook,
        version,
        cache_ttl,
    })
}

/// `--authorization-webhook-*`, checked against `--authorization-mode` as upstream
/// checks them.
pub fn authorization_webhook(
    webhook_mode: bool,
    config_file: Option<&str>,
    version_flag: Option<&str>,
    authorized_ttl: Option<&str>,
    unauthorized_ttl: Option<&str>,
    problems: &mut Vec<String>,
) -> Option<WebhookAuthorizerConfig> {
    let version = version("authorization-webhook-version", version_flag, problems);
    let authorized_ttl = ttl("authorization-webhook-cache-authorized-ttl", authorized_ttl, Duration::from_secs(300), problems);
    let unauthorized_ttl = ttl("authorization-webhook-cache-unauthorized-ttl", unauthorized_ttl, Duration::from_secs(30), problems);
    let flag = "authorization-webhook-config-file";
    match (webhook_mode, config_file) {
        (true, None) => {
            problems.push("authorization-mode Webhook's authorization config file not passed".to_owned());
            None
        }
        (false, Some(_)) => {
            problems.push("cannot specify --authorization-webhook-config-file without mode Webhook".to_owned());
            None
        }
        (false, None) => None,
        (true, Some(path)) => {
            let webhook = read_kubeconfig(flag, path).map_err(|e| problems.push(e)).ok()?;
            Some(WebhookAuthorizerConfig {
                webhook,
                version,
                authorized_ttl,
                unauthorized_ttl,
            })
        }
    }
}

//! `spec.conversion` of a CRD: `None`, or `Webhook` with a client config (a URL or a
//! Service) and the ConversionReview versions it understands. Errors name the fields of
//! upstream's internal form (`spec.conversion.webhookClientConfig`,
//! `spec.conversion.conversionReviewVersions`).

use super::internal::{list, present, text};
use super::validation::{enum_string, Options};
use crate::validation::names::{dns1035_label, dns1123_subdomain};
use crate::validation::{go_json, FieldError, FieldPath};
use serde_json::Value;

/// The ConversionReview versions this server (and the one before it) understands.
const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// Upstream's `validateCustomResourceConversion`.
pub(super) fn validate(conversion: Option<&Value>, opts: &Options, path: &FieldPath) -> Vec<FieldError> {
    let Some(conversion) = conversion else {
        return Vec::new();
    };
    let c = Some(conversion);
    let strategy = text(c, "strategy");
    let mut errors = enum_string(&path.child("strategy"), strategy, &["None", "Webhook"]);
    let webhook = present(c, "webhook");
    let client_config = present(webhook, "clientConfig");
    let review_versions = present(webhook, "conversionReviewVersions");
    let config_path = path.child("webhookClientConfig");
    let versions_path = path.child("conversionReviewVersions");
    if strategy == "Webhook" {
        match client_config {
            None => errors.push(FieldError::required(config_path.as_str(), "required when strategy is set to Webhook")),
            Some(cc) => {
                let url = present(Some(cc), "url");
                let service = present(Some(cc), "service");
                match (url, service) {
                    (Some(url), None) => errors.extend(webhook_url(&config_path.child("url"), url.as_str().unwrap_or(""))),
                    (None, Some(service)) => errors.extend(webhook_service(&config_path.child("service"), service)),
                    _ => errors.push(FieldError::required(config_path.as_str(), "exactly one of url or service is required")),
                }
                let ca_bundle = text(Some(cc), "caBundle");
                if !ca_bundle.is_empty() && !opts.allow_invalid_ca_bundle {
                    errors.extend(ca_bundle_errors(&config_path.child("caBundle"), ca_bundle));
                }
            }
        }
        errors.extend(review_versions_errors(review_versions, opts.require_recognized_review_version, &versions_path));
    } else {
        if client_config.is_some() {
            errors.push(FieldError::forbidden(config_path.as_str(), "should not be set when strategy is not set to Webhook"));
        }
        if !list(webhook, "conversionReviewVersions").is_empty() {
            errors.push(FieldError::forbidden(versions_path.as_str(), "should not be set when strategy is not set to Webhook"));
        }
    }
    errors
}

/// Whether the versions name one this server understands (or none at all).
pub(super) fn recognized_or_empty(conversion: Option<&Value>) -> bool {
    let versions = list(present(conversion, "webhook"), "conversionReviewVersions");
    versions.is_empty() || versions.iter().any(|v| REVIEW_VERSIONS.contains(&v.as_str().unwrap_or("")))
}

fn review_versions_errors(versions: Option<&Value>, require_recognized: bool, path: &FieldPath) -> Vec<FieldError> {
    let list = versions.and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    if list.is_empty() {
        return vec![FieldError::required(path.as_str(), "")];
    }
    let mut errors = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, v) in list.iter().enumerate() {
        let v = v.as_str().unwrap_or("");
        if seen.contains(&v) {
            errors.push(FieldError::invalid(path.index(i).as_str(), v, "duplicate version"));
            continue;
        }
        seen.push(v);
        for problem in dns1035_label(v) {
            errors.push(FieldError::invalid(path.index(i).as_str(), v, problem));
        }
    }
    if require_recognized && !seen.iter().any(|v| REVIEW_VERSIONS.contains(v)) {
        errors.push(FieldError::invalid_unquoted(
            path.as_str(),
            &go_json(versions.unwrap_or(&Value::Null)),
            &format!("must include at least one of {}", REVIEW_VERSIONS.join(", ")),
        ));
    }
    errors
}

const URL_FORM: &str = "; desired format: https://host[/path]";

/// Upstream's `ValidateWebhookURL` (HTTPS required).
pub(crate) fn webhook_url(path: &FieldPath, raw: &str) -> Vec<FieldError> {
    let url = match Url::parse(raw) {
        Ok(url) => url,
        Err(reason) => {
            return vec![FieldError::required(
                path.as_str(),
                format!("url must be a valid URL: parse {}: {reason}{URL_FORM}", crate::schema::go_quote(raw)),
            )]
        }
    };
    let mut errors = Vec::new();
    let p = path.as_str();
    if url.scheme != "https" {
        errors.push(FieldError::invalid(p, url.scheme, format!("'https' is the only allowed URL scheme{URL_FORM}")));
    }
    if url.host.is_empty() {
        errors.push(FieldError::invalid(p, url.host, format!("host must be specified{URL_FORM}")));
    }
    if let Some(user) = url.user {
        errors.push(FieldError::invalid(p, user, "user information is not permitted in the URL"));
    }
    if !url.fragment.is_empty() {
        errors.push(FieldError::invalid(p, url.fragment, "fragments are not permitted in the URL"));
    }
    if !url.query.is_empty() {
        errors.push(FieldError::invalid(p, url.query, "query parameters are not permitted in the URL"));
    }
    errors
}

/// Upstream's `ValidateWebhookService`.
pub(crate) fn webhook_service(path: &FieldPath, service: &Value) -> Vec<FieldError> {
    let s = Some(service);
    let mut errors = Vec::new();
    if text(s, "name").is_empty() {
        errors.push(FieldError::required(path.child("name").as_str(), "service name is required"));
    }
    if text(s, "namespace").is_empty() {
        errors.push(FieldError::required(path.child("namespace").as_str(), "service namespace is required"));
    }
    let port = present(s, "port").and_then(Value::as_i64).unwrap_or(0);
    if !(1..=65535).contains(&port) {
        errors.push(FieldError::invalid_unquoted(
            path.child("port").as_str(),
            &port.to_string(),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = present(s, "path").and_then(Value::as_str) else {
        return errors;
    };
    let path_field = path.child("path");
    if url_path.is_empty() || url_path == "/" {
        return errors;
    }
    if url_path == "//" {
        errors.push(FieldError::invalid(path_field.as_str(), url_path, "segment[0] may not be empty"));
        return errors;
    }
    if !url_path.starts_with('/') {
        errors.push(FieldError::invalid(path_field.as_str(), url_path, "must start with a '/'"));
    }
    let mut rest = url_path.get(1..).unwrap_or("");
    rest = rest.strip_suffix('/').unwrap_or(rest);
    for (i, step) in rest.split('/').enumerate() {
        if step.is_empty() {
            errors.push(FieldError::invalid(path_field.as_str(), url_path, format!("segment[{i}] may not be empty")));
            continue;
        }
        for problem in dns1123_subdomain(step) {
            errors.push(FieldError::invalid(path_field.as_str(), url_path, format!("segment[{i}]: {problem}")));
        }
    }
    errors
}

/// A CA bundle must hold PEM certificates (as client-go's TLS config reads it; the
/// certificates' DER is not parsed here).
pub(super) fn ca_bundle_errors(path: &FieldPath, base64: &str) -> Vec<FieldError> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD.decode(base64).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let reason = if !text.contains("-----BEGIN ") {
        Some("unable to parse bytes as PEM block")
    } else if !text.contains("-----BEGIN CERTIFICATE-----") {
        Some("no valid certificate authority data seen")
    } else {
        None
    };
    reason
        .map(|r| FieldError::invalid(path.as_str(), base64, format!("unable to load root certificates: {r}")))
        .into_iter()
        .collect()
}

/// The parts of a URL upstream's checks look at, split as Go's `url.Parse` splits them.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Url<'a> {
    pub scheme: &'a str,
    pub user: Option<&'a str>,
    pub host: &'a str,
    pub query: &'a str,
    pub fragment: &'a str,
}

impl<'a> Url<'a> {
    /// Split `raw`; Go's reason when it does not parse.
    pub(crate) fn parse(raw: &'a str) -> Result<Url<'a>, String> {
        if raw.chars().any(|c| (c as u32) < 0x20 || c == '\u{7f}') {
            return Err("net/url: invalid control character in URL".to_owned());
        }
        let (rest, fragment) = raw.split_once('#').unwrap_or((raw, ""));
        let (scheme, rest) = match rest.find(':') {
            Some(0) => return Err("missing protocol scheme".to_owned()),
            Some(i) if rest[..i].chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && rest.as_bytes()[0].is_ascii_alphabetic() =>
            {
                (&rest[..i], &rest[i + 1..])
            }
            _ => ("", rest),
        };
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (mut user, mut host) = (None, "");
        if let Some(after) = rest.strip_prefix("//") {
            let authority = &after[..after.find('/').unwrap_or(after.len())];
            let (u, h) = match authority.rfind('@') {
                Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
                None => (None, authority),
            };
            user = u;
            host = h;
            if let Some((_, port)) = h.rsplit_once(':').filter(|_| !h.ends_with(']')) {
                if !port.chars().all(|c| c.is_ascii_digit()) {
                    return Err(format!("invalid port {} after host", crate::schema::go_quote(&format!(":{port}"))));
                }
            }
        }
        Ok(Url { scheme, user, host, query, fragment })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_as_go_splits_them() {
        let url = Url::parse("https://user@example.com:8443/convert?x=1#frag").unwrap();
        assert_eq!(url, Url { scheme: "https", user: Some("user"), host: "example.com:8443", query: "x=1", fragment: "frag" });
        assert_eq!(Url::parse("://x").unwrap_err(), "missing protocol scheme");
        let errors: Vec<String> = webhook_url(&FieldPath::new("url"), "http://example.com").iter().map(|e| e.to_string()).collect();
        assert_eq!(errors, [r#"url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]"#]);
    }

    #[test]
    fn service_paths_are_checked_segment_by_segment() {
        let errors = webhook_service(&FieldPath::new("s"), &serde_json::json!({"name": "n", "namespace": "ns", "port": 443, "path": "/a//B"}));
        let texts: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert_eq!(texts[0], r#"s.path: Invalid value: "/a//B": segment[1] may not be empty"#);
    }
}

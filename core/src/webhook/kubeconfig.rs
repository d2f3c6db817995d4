//! A webhook's kubeconfig file, read as upstream reads it for webhooks: the current
//! context's cluster (`server`, `certificate-authority[-data]`,
//! `insecure-skip-tls-verify`, `tls-server-name`) and user (`client-certificate[-data]`,
//! `client-key[-data]`, `token`, `tokenFile`); with no current context, the first
//! cluster and user. Files it names are read through `read`, relative to the
//! kubeconfig's directory as upstream resolves them.

use super::Webhook;
use crate::effect::ClientTls;
use base64::Engine;
use serde::Deserialize;
use std::sync::Arc;

#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
struct Kubeconfig {
    #[serde(default)]
    clusters: Vec<NamedCluster>,
    #[serde(default)]
    users: Vec<NamedUser>,
    #[serde(default)]
    contexts: Vec<NamedContext>,
    #[serde(default)]
    current_context: String,
}

#[derive(Deserialize)]
struct NamedCluster {
    #[serde(default)]
    name: String,
    cluster: Option<Cluster>,
}

#[derive(Deserialize)]
struct NamedUser {
    #[serde(default)]
    name: String,
    user: Option<User>,
}

#[derive(Deserialize)]
struct NamedContext {
    #[serde(default)]
    name: String,
    context: Option<Context>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(rename_all = "kebab-case")]
struct Cluster {
    #[serde(default)]
    server: String,
    #[serde(default)]
    certificate_authority: String,
    #[serde(default)]
    certificate_authority_data: String,
    #[serde(default)]
    insecure_skip_tls_verify: bool,
    #[serde(default)]
    tls_server_name: String,
}

#[derive(Deserialize, Default, Clone)]
#[serde(rename_all = "kebab-case")]
struct User {
    #[serde(default)]
    client_certificate: String,
    #[serde(default)]
    client_certificate_data: String,
    #[serde(default)]
    client_key: String,
    #[serde(default)]
    client_key_data: String,
    #[serde(default)]
    token: String,
    #[serde(default, rename = "tokenFile")]
    token_file: String,
}

#[derive(Deserialize, Default, Clone)]
struct Context {
    #[serde(default)]
    cluster: String,
    #[serde(default)]
    user: String,
}

/// Inline base64 data, or the named file's bytes.
fn data_or_file(data: &str, file: &str, read: &dyn Fn(&str) -> Result<Vec<u8>, String>) -> Result<Vec<u8>, String> {
    if !data.is_empty() {
        return base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|e| format!("invalid base64 data: {e}"));
    }
    if file.is_empty() {
        return Ok(Vec::new());
    }
    read(file)
}

/// The webhook a kubeconfig names.
pub fn parse(yaml: &[u8], read: &dyn Fn(&str) -> Result<Vec<u8>, String>) -> Result<Webhook, String> {
    let config: Kubeconfig = serde_yaml::from_slice(yaml).map_err(|e| format!("invalid kubeconfig: {e}"))?;
    let context = config
        .contexts
        .iter()
        .find(|c| c.name == config.current_context)
        .or(config.contexts.first())
        .and_then(|c| c.context.clone());
    let (cluster, user) = match context {
        Some(c) => (
            config.clusters.iter().find(|n| n.name == c.cluster).and_then(|n| n.cluster.clone()),
            config.users.iter().find(|n| n.name == c.user).and_then(|n| n.user.clone()),
        ),
        None => (
            config.clusters.first().and_then(|n| n.cluster.clone()),
            config.users.first().and_then(|n| n.user.clone()),
        ),
    };
    let cluster = cluster.ok_or("invalid configuration: no cluster in the kubeconfig")?;
    let user = user.unwrap_or_default();
    let url: http::Uri = cluster
        .server
        .parse()
        .map_err(|_| format!("invalid configuration: the server URL {:?} does not parse", cluster.server))?;
    if url.scheme_str() != Some("https") {
        return Err(format!("invalid configuration: the webhook server {:?} must be https", cluster.server));
    }
    let token = if !user.token.is_empty() {
        Some(user.token.clone())
    } else if !user.token_file.is_empty() {
        let bytes = read(&user.token_file)?;
        Some(String::from_utf8_lossy(&bytes).trim().to_owned())
    } else {
        None
    };
    let tls = ClientTls {
        ca_pem: data_or_file(&cluster.certificate_authority_data, &cluster.certificate_authority, read)?,
        client_cert_pem: data_or_file(&user.client_certificate_data, &user.client_certificate, read)?,
        client_key_pem: data_or_file(&user.client_key_data, &user.client_key, read)?,
        server_name: (!cluster.tls_server_name.is_empty()).then(|| cluster.tls_server_name.clone()),
        insecure_skip_verify: cluster.insecure_skip_tls_verify,
    };
    if tls.client_cert_pem.is_empty() != tls.client_key_pem.is_empty() {
        return Err("invalid configuration: a client certificate needs its key, and a key its certificate".into());
    }
    Ok(Webhook {
        url: cluster.server,
        tls: Arc::new(tls),
        token,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(name: &str) -> Result<Vec<u8>, String> {
        match name {
            "/etc/ca.pem" => Ok(b"CA".to_vec()),
            "/etc/token" => Ok(b"s3cret\n".to_vec()),
            other => Err(format!("open {other}: no such file")),
        }
    }

    #[test]
    fn the_current_context_names_the_cluster_and_user() {
        let yaml = br#"
apiVersion: v1
kind: Config
clusters:
- name: other
  cluster: {server: "https://other:1"}
- name: authn
  cluster:
    server: https://authn.example:8443/review
    certificate-authority: /etc/ca.pem
    tls-server-name: authn.internal
users:
- name: apiserver
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
    tokenFile: /etc/token
contexts:
- name: webhook
  context: {cluster: authn, user: apiserver}
current-context: webhook
"#;
        let w = parse(yaml, &files).unwrap();
        assert_eq!(w.url, "https://authn.example:8443/review");
        assert_eq!(w.tls.ca_pem, b"CA");
        assert_eq!(w.tls.client_cert_pem, b"CERT");
        assert_eq!(w.tls.client_key_pem, b"KEY");
        assert_eq!(w.tls.server_name.as_deref(), Some("authn.internal"));
        assert_eq!(w.token.as_deref(), Some("s3cret"));
    }

    #[test]
    fn bad_configurations_say_what_is_wrong() {
        assert!(parse(b"clusters: []", &files).unwrap_err().contains("no cluster"));
        let plain = b"clusters:\n- name: a\n  cluster: {server: 'http://a'}\n";
        assert!(parse(plain, &files).unwrap_err().contains("must be https"));
        let missing = b"clusters:\n- name: a\n  cluster: {server: 'https://a', certificate-authority: /nope}\n";
        assert_eq!(parse(missing, &files).unwrap_err(), "open /nope: no such file");
        assert!(parse(b"{[", &files).unwrap_err().starts_with("invalid kubeconfig"));
    }
}

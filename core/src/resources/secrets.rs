//! Secrets (core/v1): Type and Data columns; selectable by type; a
//! `kubernetes.io/service-account-token` Secret must name its ServiceAccount, and gets
//! its token, `ca.crt` and `namespace` when created, as upstream's token controller
//! fills them in (upstream does it just after the create, Apiary as part of it).

use super::columns::{Columns, count_at, str_at, Column};
use super::Strategy;
use crate::authn::ServiceAccountTokens;
use crate::rest::object::{meta_mut, meta_str, Object};
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME, NAMESPACE};
use crate::validation::config_data::{self, MAX_DATA_BYTES};
use crate::validation::FieldError;
use base64::Engine as _;
use serde_json::{json, Map, Value};

pub const RESOURCE: &str = "secrets";

/// The type of Secrets that hold a legacy ServiceAccount token.
pub const SERVICE_ACCOUNT_TOKEN: &str = "kubernetes.io/service-account-token";
/// The annotations naming the ServiceAccount of a token Secret.
pub const SERVICE_ACCOUNT_NAME: &str = "kubernetes.io/service-account.name";
pub const SERVICE_ACCOUNT_UID: &str = "kubernetes.io/service-account.uid";
/// The data keys of a token Secret.
pub const TOKEN_KEY: &str = "token";
const CA_KEY: &str = "ca.crt";
const NAMESPACE_KEY: &str = "namespace";
/// A label that marks a legacy token as no longer accepted.
pub const LEGACY_TOKEN_INVALID_SINCE: &str = "kubernetes.io/legacy-token-invalid-since";

pub struct Secrets;

impl Strategy for Secrets {
    fn name(&self) -> &'static str {
        RESOURCE
    }

    /// Type Opaque when none is given; `stringData` is written into `data` (its values
    /// win over `data`'s for the same key) and dropped, as upstream's v1 conversion
    /// does as it decodes.
    fn default(&self, obj: &mut Object) {
        super::defaults::or_insert_str(obj, "type", "Opaque");
        let Some(Value::Object(strings)) = obj.remove("stringData") else {
            return;
        };
        if strings.is_empty() {
            return;
        }
        if let Some(data) = super::defaults::object_or_new(obj, "data") {
            for (key, value) in strings {
                let text = value.as_str().unwrap_or_default();
                let encoded = base64::engine::general_purpose::STANDARD.encode(text);
                data.insert(key, Value::String(encoded));
            }
        }
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }

    fn decoded(&self, obj: &mut Object) {
        merge_string_data(obj);
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let (new_type, old_type) = (new.get("type").unwrap_or(&Value::Null), old.get("type").unwrap_or(&Value::Null));
        let mut errs = Vec::new();
        if new_type != old_type {
            errs.push(FieldError::immutable("type", new_type));
        }
        errs.extend(config_data::frozen(new, old, &["data"]));
        errs.extend(validate(new));
        errs
    }

    fn create_reads(&self, new: &Object) -> Option<(&'static str, &'static str, String)> {
        use super::serviceaccounts::{GROUP, RESOURCE};
        let name = service_account_of(new)?;
        Some((GROUP, RESOURCE, name.to_owned()))
    }

    fn complete_for_create(&self, new: &mut Object, read: Option<&Object>, tokens: Option<&ServiceAccountTokens>) {
        // Without its ServiceAccount (upstream's controller would delete the Secret) or
        // a key to sign with, the Secret stays as sent.
        if let (Some(account), Some(tokens)) = (read, tokens) {
            fill_token(new, account, tokens);
        }
    }
}

/// The ServiceAccount a token Secret names, when it is one.
fn service_account_of(secret: &Object) -> Option<&str> {
    if secret.get("type").and_then(Value::as_str) != Some(SERVICE_ACCOUNT_TOKEN) {
        return None;
    }
    annotation(secret, SERVICE_ACCOUNT_NAME).filter(|n| !n.is_empty())
}

fn annotation<'a>(object: &'a Object, key: &str) -> Option<&'a str> {
    object.get("metadata")?.get("annotations")?.get(key)?.as_str()
}

/// What upstream's decoding of a v1 Secret does: `stringData` is written into `data`
/// (base64, winning over a key `data` has) and goes; a type left empty is `Opaque`.
fn merge_string_data(secret: &mut Object) {
    if let Some(Value::Object(strings)) = secret.remove("stringData") {
        let data = secret.entry("data").or_insert_with(|| json!({}));
        if !data.is_object() {
            *data = json!({});
        }
        let data = data.as_object_mut().expect("an object");
        for (key, value) in strings {
            let text = value.as_str().unwrap_or_default();
            data.insert(key, Value::String(base64::engine::general_purpose::STANDARD.encode(text)));
        }
    }
    if secret.get("type").and_then(Value::as_str).unwrap_or("").is_empty() {
        secret.insert("type".into(), json!(OPAQUE));
    }
}

const OPAQUE: &str = "Opaque";

/// Upstream's ValidateSecret: keys that can be file names, at most 1 MiB in all, and
/// the keys each well-known type needs.
fn validate(secret: &Object) -> Vec<FieldError> {
    let mut errs = config_data::keys(secret, "data");
    if config_data::size(secret, "data", true) > MAX_DATA_BYTES {
        errs.push(FieldError::too_long("data", MAX_DATA_BYTES));
    }
    let has = |key: &str| secret.get("data").and_then(|d| d.get(key)).is_some_and(|v| !v.is_null());
    let required = |key: &str| FieldError::required(&format!("data[{key}]"), "");
    match secret.get("type").and_then(Value::as_str).unwrap_or("") {
        SERVICE_ACCOUNT_TOKEN => {
            if annotation(secret, SERVICE_ACCOUNT_NAME).unwrap_or("").is_empty() {
                errs.push(FieldError::required(&format!("metadata.annotations[{SERVICE_ACCOUNT_NAME}]"), ""));
            }
        }
        "kubernetes.io/dockercfg" => errs.extend(docker_config(secret, ".dockercfg")),
        "kubernetes.io/dockerconfigjson" => errs.extend(docker_config(secret, ".dockerconfigjson")),
        "kubernetes.io/basic-auth" => {
            // Either may be empty, but one of them must be there.
            if !has("username") && !has("password") {
                errs.extend([required("username"), required("password")]);
            }
        }
        "kubernetes.io/ssh-auth" => {
            if data(secret, "ssh-privatekey").unwrap_or_default().is_empty() {
                errs.push(required("ssh-privatekey"));
            }
        }
        "kubernetes.io/tls" => {
            errs.extend(["tls.crt", "tls.key"].into_iter().filter(|k| !has(k)).map(required));
        }
        _ => {}
    }
    errs
}

/// A docker configuration Secret holds `key`, and it is a JSON object.
fn docker_config(secret: &Object, key: &str) -> Vec<FieldError> {
    let field = format!("data[{key}]");
    let Some(bytes) = data(secret, key).or_else(|| secret.get("data")?.get(key).map(|_| Vec::new())) else {
        return vec![FieldError::required(&field, "")];
    };
    match crate::validation::go_json_error::as_object(&bytes) {
        Some(why) => vec![FieldError::invalid(&field, "<secret contents redacted>", why)],
        None => Vec::new(),
    }
}

/// The bytes of `key` in a Secret's `data`, when it is there and decodes.
pub fn data(secret: &Object, key: &str) -> Option<Vec<u8>> {
    let encoded = secret.get("data")?.get(key)?.as_str()?;
    base64::engine::general_purpose::STANDARD.decode(encoded).ok()
}

/// What upstream's token controller writes into a token Secret for `account`: a token
/// unless it has one, the CA bundle, the namespace unless set, and the ServiceAccount's
/// name and uid as annotations. A Secret whose uid annotation names another
/// ServiceAccount of that name is not this one's.
fn fill_token(secret: &mut Object, account: &Object, tokens: &ServiceAccountTokens) {
    let (namespace, name, uid) = (meta_str(account, "namespace"), meta_str(account, "name"), meta_str(account, "uid"));
    if annotation(secret, SERVICE_ACCOUNT_UID).is_some_and(|given| !given.is_empty() && given != uid) {
        return;
    }
    let needs_token = data(secret, TOKEN_KEY).unwrap_or_default().is_empty();
    let token = match needs_token {
        true => match tokens.issue_legacy((namespace, name, uid), meta_str(secret, "name")) {
            Some(token) => Some(token),
            None => return,
        },
        false => None,
    };
    let needs_namespace = data(secret, NAMESPACE_KEY).unwrap_or_default().is_empty();
    let encode = |bytes: &[u8]| Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
    let data = secret.entry("data").or_insert_with(|| json!({}));
    if !data.is_object() {
        *data = json!({});
    }
    let data = data.as_object_mut().expect("an object");
    if let Some(ca) = tokens.root_ca.as_deref().filter(|ca| !ca.is_empty()) {
        data.insert(CA_KEY.into(), encode(ca.as_bytes()));
    }
    if needs_namespace {
        data.insert(NAMESPACE_KEY.into(), encode(namespace.as_bytes()));
    }
    if let Some(token) = token {
        data.insert(TOKEN_KEY.into(), encode(token.as_bytes()));
    }
    let meta = meta_mut(secret);
    let annotations = meta.entry("annotations").or_insert_with(|| Value::Object(Map::new()));
    if !annotations.is_object() {
        *annotations = Value::Object(Map::new());
    }
    let annotations = annotations.as_object_mut().expect("an object");
    annotations.insert(SERVICE_ACCOUNT_NAME.into(), json!(name));
    annotations.insert(SERVICE_ACCOUNT_UID.into(), json!(uid));
}

const COLUMNS: &[Column] = &[
    Column { name: "Type", kind: "string", description: "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types", format: "", priority: 0, cell: |o| str_at(o, &["type"]) },
    Column { name: "Data", kind: "string", description: "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4", format: "", priority: 0, cell: |o| count_at(o, &["data"]) },
];

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[("type", "type"), NAMESPACE, NAME],
};

//! Secrets (core/v1): Type and Data columns; selectable by type; a
//! `kubernetes.io/service-account-token` Secret must name its ServiceAccount, and gets
//! its token, `ca.crt` and `namespace` when created, as upstream's token controller
//! fills them in (upstream does it just after the create, Apiary as part of it).

use super::columns::{Columns, count_at, str_at, Column};
use super::Strategy;
use crate::authn::ServiceAccountTokens;
use crate::rest::object::{meta_mut, meta_str, Object};
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME, NAMESPACE};
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

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
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

/// Upstream's ValidateSecret, as far as Apiary checks Secrets: a token Secret names its
/// ServiceAccount.
fn validate(secret: &Object) -> Vec<FieldError> {
    let token_secret = secret.get("type").and_then(Value::as_str) == Some(SERVICE_ACCOUNT_TOKEN);
    if token_secret && annotation(secret, SERVICE_ACCOUNT_NAME).unwrap_or("").is_empty() {
        let field = format!("metadata.annotations[{SERVICE_ACCOUNT_NAME}]");
        return vec![FieldError::required(&field, "")];
    }
    Vec::new()
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
    Column {
        name: "Type",
        kind: "string",
        description: "The type of the secret",
        cell: |o| str_at(o, &["type"]),
    },
    Column {
        name: "Data",
        kind: "string",
        description: "Number of data entries",
        cell: |o| count_at(o, &["data"]),
    },
];

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[("type", "type"), NAMESPACE, NAME],
};

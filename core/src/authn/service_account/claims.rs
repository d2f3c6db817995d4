//! The claims of ServiceAccount tokens: read from a verified token as go-jose and
//! upstream's claim types read them (a field of the wrong JSON type refuses the token;
//! `null` is an absent field), and written for new tokens as upstream writes them (its
//! claims go through a JSON map, so their keys come out sorted, as serde_json's do).

use serde_json::{json, Map, Value};

/// The issuer of legacy, Secret-held tokens.
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";

/// The registered claims of a token, and the rest of its payload.
#[derive(Clone, Debug, Default)]
pub(super) struct Claims {
    pub issuer: String,
    pub subject: String,
    /// `aud`: a string or a list of them.
    pub audiences: Vec<String>,
    /// `exp`, `nbf`, `iat`: seconds since the epoch (fractions dropped, as go-jose does).
    pub expiry: Option<i64>,
    pub not_before: Option<i64>,
    pub issued_at: Option<i64>,
    /// `jti`.
    pub id: String,
    payload: Map<String, Value>,
}

impl Claims {
    pub fn parse(payload: &[u8]) -> Result<Claims, String> {
        let Ok(Value::Object(payload)) = serde_json::from_slice::<Value>(payload) else {
            return Err("the claims are not a JSON object".to_owned());
        };
        let audiences = match payload.get("aud") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(one)) => vec![one.clone()],
            Some(Value::Array(many)) => many
                .iter()
                .map(|a| a.as_str().map(str::to_owned).ok_or("aud is not a list of strings"))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("aud is neither a string nor a list of strings".to_owned()),
        };
        Ok(Claims {
            issuer: text(&payload, "iss")?,
            subject: text(&payload, "sub")?,
            audiences,
            expiry: date(&payload, "exp")?,
            not_before: date(&payload, "nbf")?,
            issued_at: date(&payload, "iat")?,
            id: text(&payload, "jti")?,
            payload,
        })
    }

    /// The `kubernetes.io` claim of a bound token.
    pub fn bound(&self) -> Result<Private, String> {
        let claim = match self.payload.get("kubernetes.io") {
            None | Some(Value::Null) => return Ok(Private::default()),
            Some(Value::Object(claim)) => claim,
            Some(_) => return Err("the kubernetes.io claim is not an object".to_owned()),
        };
        Ok(Private {
            namespace: text(claim, "namespace")?,
            service_account: reference(claim, "serviceaccount")?.unwrap_or_default(),
            pod: reference(claim, "pod")?,
            secret: reference(claim, "secret")?,
            node: reference(claim, "node")?,
        })
    }

    /// The `kubernetes.io/serviceaccount/…` claims of a legacy token: namespace,
    /// ServiceAccount name and uid, Secret name.
    pub fn legacy(&self) -> Result<[String; 4], String> {
        Ok([
            text(&self.payload, LEGACY_NAMESPACE)?,
            text(&self.payload, LEGACY_ACCOUNT_NAME)?,
            text(&self.payload, LEGACY_ACCOUNT_UID)?,
            text(&self.payload, LEGACY_SECRET_NAME)?,
        ])
    }
}

const LEGACY_NAMESPACE: &str = "kubernetes.io/serviceaccount/namespace";
const LEGACY_ACCOUNT_NAME: &str = "kubernetes.io/serviceaccount/service-account.name";
const LEGACY_ACCOUNT_UID: &str = "kubernetes.io/serviceaccount/service-account.uid";
const LEGACY_SECRET_NAME: &str = "kubernetes.io/serviceaccount/secret.name";

/// A string claim: `""` when absent or null.
fn text(claims: &Map<String, Value>, name: &str) -> Result<String, String> {
    match claims.get(name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("{name} is not a string")),
    }
}

/// A NumericDate claim.
fn date(claims: &Map<String, Value>, name: &str) -> Result<Option<i64>, String> {
    match claims.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_i64().or_else(|| n.as_f64().map(|f| f as i64))),
        Some(_) => Err(format!("{name} is not a number")),
    }
}

/// A `{name, uid}` reference of the `kubernetes.io` claim.
fn reference(claim: &Map<String, Value>, name: &str) -> Result<Option<Ref>, String> {
    match claim.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(r)) => Ok(Some(Ref {
            name: text(r, "name")?,
            uid: text(r, "uid")?,
        })),
        Some(_) => Err(format!("kubernetes.io.{name} is not an object")),
    }
}

/// An object a bound token names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Ref {
    pub name: String,
    pub uid: String,
}

/// The `kubernetes.io` claim.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Private {
    pub namespace: String,
    pub service_account: Ref,
    pub pod: Option<Ref>,
    pub secret: Option<Ref>,
    pub node: Option<Ref>,
}

/// The kinds of object a token may be bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundKind {
    Pod,
    Secret,
    Node,
}

impl BoundKind {
    fn claim(self) -> &'static str {
        match self {
            BoundKind::Pod => "pod",
            BoundKind::Secret => "secret",
            BoundKind::Node => "node",
        }
    }
}

/// The object a new token is bound to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    pub kind: BoundKind,
    pub name: String,
    pub uid: String,
}

/// What a TokenRequest's token says.
#[derive(Clone, Debug)]
pub struct Issue<'a> {
    /// The ServiceAccount: namespace, name, uid.
    pub namespace: &'a str,
    pub name: &'a str,
    pub uid: &'a str,
    pub bound: Option<Bound>,
    /// The node of a pod the token is bound to: name, and uid when the node exists.
    pub pod_node: Option<(String, String)>,
    pub audiences: &'a [String],
    /// Seconds since the epoch.
    pub now: i64,
    pub expiration_seconds: i64,
    /// Seconds after `now` past which the token is stale (extended tokens).
    pub warn_after: Option<i64>,
    /// `jti`: a fresh UUID.
    pub id: String,
}

/// `{name, uid}` as upstream writes a reference (each left out when empty).
fn written_ref(name: &str, uid: &str) -> Value {
    let mut r = Map::new();
    if !name.is_empty() {
        r.insert("name".into(), json!(name));
    }
    if !uid.is_empty() {
        r.insert("uid".into(), json!(uid));
    }
    Value::Object(r)
}

impl Issue<'_> {
    /// The claims of the token, issued by `issuer`.
    pub(super) fn claims(&self, issuer: &str) -> Value {
        let mut private = Map::new();
        if !self.namespace.is_empty() {
            private.insert("namespace".into(), json!(self.namespace));
        }
        private.insert("serviceaccount".into(), written_ref(self.name, self.uid));
        if let Some(bound) = &self.bound {
            private.insert(bound.kind.claim().into(), written_ref(&bound.name, &bound.uid));
        }
        if let Some((name, uid)) = &self.pod_node {
            private.insert("node".into(), written_ref(name, uid));
        }
        if let Some(after) = self.warn_after {
            private.insert("warnafter".into(), json!(self.now + after));
        }
        let mut claims = json!({
            "aud": self.audiences,
            "exp": self.now + self.expiration_seconds,
            "iat": self.now,
            "iss": issuer,
            "kubernetes.io": private,
            "nbf": self.now,
            "sub": super::username(self.namespace, self.name),
        });
        if !self.id.is_empty() {
            claims["jti"] = json!(self.id);
        }
        claims
    }
}

/// The claims of a legacy token: the ServiceAccount (namespace, name, uid) and the
/// Secret holding the token.
pub(super) fn legacy((namespace, name, uid): (&str, &str, &str), secret: &str) -> Value {
    json!({
        "iss": LEGACY_ISSUER,
        LEGACY_NAMESPACE: namespace,
        LEGACY_SECRET_NAME: secret,
        LEGACY_ACCOUNT_NAME: name,
        LEGACY_ACCOUNT_UID: uid,
        "sub": super::username(namespace, name),
    })
}

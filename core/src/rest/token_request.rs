//! The `token` subresource of ServiceAccounts: `POST .../serviceaccounts/{name}/token`
//! with an `authentication.k8s.io/v1` TokenRequest, answered 201 with the request and
//! its token in `status`, as kube-apiserver's TokenREST serves it. Nothing is stored.
//!
//! In upstream's order:
//!
//! 1. A name or namespace in the body must be the URL's (422).
//! 2. The ServiceAccount must exist (404).
//! 3. No audiences means the API audiences; no `expirationSeconds` means an hour; less
//!    than ten minutes or more than 2^32 seconds is 422.
//! 4. A `boundObjectRef` must name a Pod (running as this ServiceAccount), a Secret or a
//!    Node of API group core that exists (404), and the uid it gives, if any (409); the
//!    token of a pod also names the pod's node.
//! 5. `--service-account-max-token-expiration` shortens the request, with a warning; a
//!    pod-bound token asked for the kubelet's 3607 seconds, for the API audiences only,
//!    lives a year with `--service-account-extend-token-expiration` (its claims say
//!    when it turns stale).

use super::object::{self, meta_str, Object};
use super::scope::Scope;
use crate::authn::service_account::{
    Bound, BoundKind, Issue, ServiceAccountTokens, EXTENDED_EXPIRATION_SECONDS, WARN_ONLY_EXPIRATION_SECONDS,
};
use crate::effect::Step;
use crate::request_info::RequestInfo;
use crate::resources::{nodes, pods, secrets};
use crate::status::ApiError;
use crate::storage::{self, StorageOp, StorageOutput};
use crate::validation::FieldError;
use serde_json::{json, Value};
use std::sync::Arc;

const GROUP: &str = "authentication.k8s.io";
const KIND: &str = "TokenRequest";
/// What a request without `expirationSeconds` gets (upstream's defaulting).
const DEFAULT_EXPIRATION_SECONDS: i64 = 60 * 60;
const MIN_EXPIRATION_SECONDS: i64 = 10 * 60;
const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;

/// Serve `serviceaccounts/{name}/token`: only create.
pub(super) fn handle(info: &RequestInfo, scope: Scope) -> Step {
    if info.verb != "create" {
        let e = ApiError::method_not_supported("", "serviceaccounts/token", &info.verb);
        return scope.fail(e);
    }
    let Some(tokens) = scope.shared.config.authenticators.service_accounts.clone().filter(|t| t.signing_key.is_some()) else {
        // Upstream serves no token subresource without a signing key.
        return scope.fail(ApiError::no_such_path());
    };
    if let Err(e) = super::dry_run::write_options(&scope, "CreateOptions") {
        return scope.fail(e);
    }
    let (request, warnings) = match scope.decode_body("CreateOptions") {
        Ok(decoded) => decoded,
        Err(e) => return scope.fail(e),
    };
    super::response::warned(create(scope, tokens, request), warnings)
}

/// The object a request binds its token to, as sent.
#[derive(Clone, Debug, Default)]
struct BoundRef {
    api_version: String,
    kind: String,
    name: String,
    uid: String,
}

/// A request that passed the checks of its body, on its way to a token.
#[derive(Debug)]
struct Asked {
    /// The TokenRequest as it will be answered (status still empty).
    request: Object,
    tokens: Arc<ServiceAccountTokens>,
    audiences: Vec<String>,
    expiration_seconds: i64,
    bound: Option<BoundRef>,
    /// The ServiceAccount's namespace, name and uid.
    account: (String, String, String),
}

fn create(scope: Scope, tokens: Arc<ServiceAccountTokens>, mut request: Object) -> Step {
    let namespace = scope.namespace.clone().unwrap_or_default();
    let mismatch = |field: &str, given: &str, what: &str| {
        let e = FieldError::invalid(&format!("metadata.{field}"), given, format!("must match the service account {what} if specified"));
        ApiError::invalid(GROUP, KIND, &scope.name, vec![e])
    };
    let (given_name, given_namespace) = (meta_str(&request, "name"), meta_str(&request, "namespace"));
    if !given_name.is_empty() && given_name != scope.name {
        return scope.fail(mismatch("name", given_name, "name"));
    }
    if !given_namespace.is_empty() && given_namespace != namespace {
        return scope.fail(mismatch("namespace", given_namespace, "namespace"));
    }
    scope.with_current(move |scope, current| {
        let account = match object::from_storage(&current) {
            Ok(account) => account,
            Err(e) => return scope.fail(ApiError::internal(e)),
        };
        let spec = request.get("spec").and_then(Value::as_object).cloned().unwrap_or_default();
        let mut audiences = object::strings(spec.get("audiences"));
        if audiences.is_empty() {
            audiences = tokens.api_audiences.clone();
        }
        let expiration_seconds = spec
            .get("expirationSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
        let text = |r: &serde_json::Map<String, Value>, f: &str| r.get(f).and_then(Value::as_str).unwrap_or("").to_owned();
        let bound = spec.get("boundObjectRef").and_then(Value::as_object).map(|r| BoundRef {
            api_version: text(r, "apiVersion"),
            kind: text(r, "kind"),
            name: text(r, "name"),
            uid: text(r, "uid"),
        });

        // The request as it is answered: system fields of the body dropped, the
        // defaults filled in, a fresh status.
        let meta = object::meta_mut(&mut request);
        for system in ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "resourceVersion"] {
            meta.remove(system);
        }
        meta.insert("name".into(), json!(scope.name));
        meta.insert("namespace".into(), json!(namespace));
        meta.insert("creationTimestamp".into(), json!(object::rfc3339(scope.inputs.now)));
        request.remove("status");

        let mut errors = Vec::new();
        let invalid = |detail: &str| FieldError::invalid_unquoted("spec.expirationSeconds", &expiration_seconds.to_string(), detail);
        if expiration_seconds < MIN_EXPIRATION_SECONDS {
            errors.push(invalid("may not specify a duration less than 10 minutes"));
        }
        if expiration_seconds > MAX_EXPIRATION_SECONDS {
            errors.push(invalid("may not specify a duration larger than 2^32 seconds"));
        }
        if !errors.is_empty() {
            return scope.fail(ApiError::invalid(GROUP, KIND, "", errors));
        }
        let asked = Asked {
            request,
            tokens,
            audiences,
            expiration_seconds,
            bound,
            account: (namespace, meta_str(&account, "name").to_owned(), meta_str(&account, "uid").to_owned()),
        };
        find_bound(scope, asked)
    })
}

/// A version and a kind as Go's `schema.FromAPIVersionAndKind` reads them: the group,
/// and the kind's `String()` for messages.
fn group_and_name(api_version: &str, kind: &str) -> (String, String) {
    let (group, version) = match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [version] => ("", *version),
        [group, version] => (*group, *version),
        _ => ("", ""),
    };
    (group.to_owned(), format!("{group}/{version}, Kind={kind}"))
}

/// Look up what the token is bound to, then issue it.
fn find_bound(scope: Scope, asked: Asked) -> Step {
    let Some(reference) = asked.bound.clone() else {
        return issue(scope, asked, None, None);
    };
    let (group, gvk) = group_and_name(&reference.api_version, &reference.kind);
    let (kind, plural) = match (group.as_str(), reference.kind.as_str()) {
        ("", "Pod") => (BoundKind::Pod, pods::RESOURCE),
        ("", "Node") => (BoundKind::Node, nodes::RESOURCE),
        ("", "Secret") => (BoundKind::Secret, secrets::RESOURCE),
        _ => return scope.fail(ApiError::bad_request(format!("cannot bind token to object of type {gvk}"))),
    };
    if reference.name.is_empty() {
        return scope.fail(ApiError::bad_request("Name parameter required."));
    }
    let namespace = (kind != BoundKind::Node).then(|| asked.account.0.clone());
    let name = reference.name.clone();
    read(scope, plural, namespace.as_deref(), &name, move |scope, found| {
        let Some(found) = found else {
            let e = ApiError::not_found("", plural, &reference.name);
            return scope.fail(e);
        };
        let uid = meta_str(&found, "uid").to_owned();
        let node_name = match kind {
            BoundKind::Pod => {
                let runs_as = found.get("spec").and_then(|s| s.get("serviceAccountName")).and_then(Value::as_str);
                if runs_as != Some(asked.account.1.as_str()) {
                    return scope.fail(ApiError::bad_request(format!(
                        "cannot bind token for serviceaccount {:?} to pod running with different serviceaccount name.",
                        asked.account.1
                    )));
                }
                found.get("spec").and_then(|s| s.get("nodeName")).and_then(Value::as_str).unwrap_or("").to_owned()
            }
            _ => String::new(),
        };
        if !reference.uid.is_empty() && reference.uid != uid {
            let why = format!(
                "the UID in the bound object reference ({}) does not match the UID in record. The object might have been deleted and then recreated",
                reference.uid
            );
            return scope.fail(ApiError::conflict(&group, &reference.kind, &reference.name, &why));
        }
        let bound = Bound {
            kind,
            name: reference.name.clone(),
            uid,
        };
        if node_name.is_empty() {
            return issue(scope, asked, Some(bound), None);
        }
        // The pod's node: its uid too when it exists, its name alone when not.
        let node = node_name.clone();
        read(scope, nodes::RESOURCE, None, &node, move |scope, node| {
            let uid = node.map(|n| meta_str(&n, "uid").to_owned()).unwrap_or_default();
            issue(scope, asked, Some(bound), Some((node_name, uid)))
        })
    })
}

/// Read a core/v1 object: from its watch cache when that holds it, else from storage.
fn read(
    scope: Scope,
    plural: &'static str,
    namespace: Option<&str>,
    name: &str,
    next: impl FnOnce(Scope, Option<Object>) -> Step + Send + 'static,
) -> Step {
    let key = storage::object_key(&scope.shared.config.storage_prefix, "", plural, namespace, name);
    if let Some(Some(kv)) = scope.cached(&key) {
        return match object::from_storage(&kv) {
            Ok(found) => next(scope, Some(found)),
            Err(e) => scope.fail(ApiError::internal(e)),
        };
    }
    let name = name.to_owned();
    scope.then(StorageOp::Get { key }, move |scope, done| match done {
        Ok(StorageOutput::Got { kv: None, .. }) => next(scope, None),
        Ok(StorageOutput::Got { kv: Some(kv), .. }) => match object::from_storage(&kv) {
            Ok(found) => next(scope, Some(found)),
            Err(e) => scope.fail(ApiError::internal(e)),
        },
        other => scope.fail_storage(&name, other),
    })
}

/// Sign the token and answer the request with it.
fn issue(scope: Scope, asked: Asked, bound: Option<Bound>, pod_node: Option<(String, String)>) -> Step {
    let Asked {
        mut request,
        tokens,
        audiences,
        mut expiration_seconds,
        account: (namespace, name, uid),
        ..
    } = asked;
    let mut warnings = Vec::new();
    if let Some(max) = tokens.max_expiration.map(|m| m.as_secs() as i64).filter(|m| *m > 0) {
        if expiration_seconds > max {
            warnings.push(format!("requested expiration of {expiration_seconds} seconds shortened to {max} seconds"));
            expiration_seconds = max;
        }
    }
    // The kubelet's tokens live a year, turning stale after the hour they asked for.
    let pod_bound = bound.as_ref().is_some_and(|b| b.kind == BoundKind::Pod);
    let for_this_server = audiences.iter().all(|a| tokens.api_audiences.contains(a));
    let (lifetime, warn_after) = match tokens.extend_expiration
        && pod_bound
        && expiration_seconds == WARN_ONLY_EXPIRATION_SECONDS
        && for_this_server
    {
        true => (EXTENDED_EXPIRATION_SECONDS, Some(expiration_seconds)),
        false => (expiration_seconds, None),
    };
    let now = crate::time::unix_seconds(scope.inputs.now);
    let id_bytes: [u8; 16] = scope.inputs.entropy[..16].try_into().expect("16 bytes");
    let issued = tokens.issue(&Issue {
        namespace: &namespace,
        name: &name,
        uid: &uid,
        bound,
        pod_node,
        audiences: &audiences,
        now,
        expiration_seconds: lifetime,
        warn_after,
        id: object::uuid_v4(&id_bytes),
    });
    let Some(token) = issued else {
        return scope.fail(ApiError::internal("failed to generate token: no signing key"));
    };
    let spec = request.entry("spec").or_insert_with(|| json!({}));
    spec["audiences"] = json!(audiences);
    spec["expirationSeconds"] = json!(expiration_seconds);
    if spec.get("boundObjectRef").is_none() {
        spec["boundObjectRef"] = Value::Null;
    }
    let expires = scope.inputs.now + std::time::Duration::from_secs(expiration_seconds as u64);
    request.insert(
        "status".into(),
        json!({ "token": token, "expirationTimestamp": object::rfc3339(expires) }),
    );
    super::response::warned(scope.respond(201, &Value::Object(request)), warnings)
}

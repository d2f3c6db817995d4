//! What makes a verified token valid: upstream's bound validator (`pkg/serviceaccount`
//! `claims.go`) and legacy validator (`legacy.go`), checking the claims against the
//! objects the server holds.

use super::claims::{Claims, Ref};
use super::{Account, LiveObjects, NotKnown};
use crate::resources::{nodes, pods, secrets, serviceaccounts};
use crate::rest::object::{meta_str, parse_rfc3339, Object};
use crate::validation::names::{dns1123_label, dns1123_subdomain};
use serde_json::Value;
use std::time::SystemTime;

/// go-jose's default leeway: times are checked a minute either way, and an object
/// deleted less than a minute ago still counts.
const LEEWAY_SECONDS: i128 = 60;

const NANOS: i128 = 1_000_000_000;

/// Nanoseconds since the epoch.
fn nanos(t: SystemTime) -> i128 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// Why an object a token names no longer backs it.
fn look(live: &dyn LiveObjects, plural: &str, namespace: &str, name: &str) -> Result<Object, String> {
    match live.get(plural, namespace, name) {
        Ok(Some(object)) => Ok(object),
        Ok(None) => Err(format!("{plural} \"{name}\" not found")),
        Err(NotKnown) => Err(format!("{plural} are not known yet")),
    }
}

/// Whether `object` was marked for deletion before `before` (nanoseconds).
fn deleted_before(object: &Object, before: i128) -> bool {
    match meta_str(object, "deletionTimestamp") {
        "" => false,
        at => parse_rfc3339(at).is_none_or(|secs| (secs as i128) * NANOS < before),
    }
}

/// A bound token: its times, then the ServiceAccount and the object it is bound to.
pub(super) fn bound(claims: &Claims, now: SystemTime, live: &dyn LiveObjects) -> Result<Account, String> {
    let private = claims.bound()?;
    let now = nanos(now);
    let leeway = LEEWAY_SECONDS * NANOS;
    let at = |secs: i64| secs as i128 * NANOS;
    if claims.not_before.is_some_and(|nbf| now + leeway < at(nbf)) {
        return Err("service account token is not valid yet".into());
    }
    if claims.expiry.is_some_and(|exp| now - leeway > at(exp)) {
        return Err("service account token has expired".into());
    }
    if claims.issued_at.is_some_and(|iat| now + leeway < at(iat)) {
        return Err("service account token is issued in the future".into());
    }

    let invalid_if_deleted_before = now - leeway;
    let namespace = private.namespace.as_str();
    let account = &private.service_account;
    let service_account = look(live, serviceaccounts::RESOURCE, namespace, &account.name)?;
    let uid = meta_str(&service_account, "uid");
    if uid != account.uid {
        return Err(format!("service account UID ({uid}) does not match claim ({})", account.uid));
    }
    if deleted_before(&service_account, invalid_if_deleted_before) {
        return Err(format!("service account {namespace}/{} has been deleted", account.name));
    }
    let still_there = |plural: &str, namespace: &str, reference: &Ref| -> Result<(), String> {
        let invalidated = || "service account token has been invalidated".to_owned();
        let object = look(live, plural, namespace, &reference.name).map_err(|_| invalidated())?;
        let uid = meta_str(&object, "uid");
        if uid != reference.uid {
            return Err(format!("{plural} UID ({uid}) does not match service account {plural} ref claim ({})", reference.uid));
        }
        if deleted_before(&object, invalid_if_deleted_before) {
            return Err(invalidated());
        }
        Ok(())
    };
    if let Some(secret) = &private.secret {
        still_there(secrets::RESOURCE, namespace, secret)?;
    }
    let mut bound = Account {
        namespace: namespace.to_owned(),
        name: account.name.clone(),
        uid: account.uid.clone(),
        credential_id: if claims.id.is_empty() { String::new() } else { format!("JTI={}", claims.id) },
        ..Account::default()
    };
    if let Some(pod) = &private.pod {
        still_there(pods::RESOURCE, namespace, pod)?;
        bound.pod = Some((pod.name.clone(), pod.uid.clone()));
    }
    if let Some(node) = &private.node {
        // A pod-bound token carries its pod's node for information; a token bound to
        // the node itself needs the node.
        if private.pod.is_none() {
            still_there(nodes::RESOURCE, "", node)?;
        }
        bound.node = Some((node.name.clone(), node.uid.clone()));
    }
    Ok(bound)
}

/// Whether two byte strings are equal, in a time that does not tell where they differ
/// (upstream compares tokens with `subtle.ConstantTimeCompare`).
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |differ, (x, y)| differ | (x ^ y)) == 0
}

/// The parts of `system:serviceaccount:<namespace>:<name>`, when both are valid names.
fn split_username(subject: &str) -> Option<(&str, &str)> {
    let (namespace, name) = subject.strip_prefix("system:serviceaccount:")?.split_once(':')?;
    (dns1123_label(namespace).is_empty() && dns1123_subdomain(name).is_empty()).then_some((namespace, name))
}

/// A legacy token: its claims whole, the Secret still holding it, the ServiceAccount
/// still there with its uid.
pub(super) fn legacy(token: &str, claims: &Claims, live: &dyn LiveObjects) -> Result<Account, String> {
    let [namespace, name, uid, secret_name] = claims.legacy()?;
    for (value, missing) in [
        (&claims.subject, "sub claim is missing"),
        (&namespace, "namespace claim is missing"),
        (&secret_name, "secretName claim is missing"),
        (&name, "serviceAccountName claim is missing"),
        (&uid, "serviceAccountUID claim is missing"),
    ] {
        if value.is_empty() {
            return Err(missing.to_owned());
        }
    }
    if split_username(&claims.subject) != Some((namespace.as_str(), name.as_str())) {
        return Err("sub claim is invalid".to_owned());
    }

    let invalidated = || "Token has been invalidated".to_owned();
    let secret = look(live, secrets::RESOURCE, &namespace, &secret_name).map_err(|_| invalidated())?;
    if !meta_str(&secret, "deletionTimestamp").is_empty() {
        return Err(invalidated());
    }
    let held = secrets::data(&secret, secrets::TOKEN_KEY).unwrap_or_default();
    if !same_bytes(&held, token.as_bytes()) {
        return Err("Token does not match server's copy".to_owned());
    }
    let account = look(live, serviceaccounts::RESOURCE, &namespace, &name)?;
    if !meta_str(&account, "deletionTimestamp").is_empty() {
        return Err(format!("ServiceAccount {namespace}/{name} has been deleted"));
    }
    let actual = meta_str(&account, "uid");
    if actual != uid {
        return Err(format!("ServiceAccount UID ({actual}) does not match claim ({uid})"));
    }
    let invalid_since = secret
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(|l| l.get(secrets::LEGACY_TOKEN_INVALID_SINCE))
        .and_then(Value::as_str)
        .unwrap_or("");
    if !invalid_since.is_empty() {
        return Err(format!(
            "the token in secret {namespace}/{secret_name} for service account {namespace}/{name} has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '{}' label from the secret to temporarily allow use of this token",
            secrets::LEGACY_TOKEN_INVALID_SINCE
        ));
    }
    Ok(Account {
        namespace,
        name,
        uid,
        ..Account::default()
    })
}


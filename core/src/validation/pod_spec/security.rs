//! Security contexts, pod and container: user and group ids, and privileged
//! containers, which this server refuses as kube-apiserver does without
//! `--allow-privileged`.

use crate::validation::value::{int, invalid_int, list};
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;

/// Apiary has no `--allow-privileged` flag: it behaves as kube-apiserver started
/// without it, the default.
const ALLOW_PRIVILEGED: bool = false;

/// Upstream's `IsValidUserID` and `IsValidGroupID`.
fn id_errors(id: i64) -> Vec<String> {
    if (0..=i64::from(i32::MAX)).contains(&id) {
        Vec::new()
    } else {
        vec!["must be between 0 and 2147483647, inclusive".to_owned()]
    }
}

fn ids(context: &Value, path: &FieldPath, fields: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in fields {
        if let Some(id) = int(context, field) {
            errs.extend(id_errors(id).into_iter().map(|m| invalid_int(&path.child(field), id, &m)));
        }
    }
    errs
}

pub(super) fn validate_pod_security_context(context: Option<&Value>, path: &FieldPath) -> Vec<FieldError> {
    let Some(context) = context.filter(|c| !c.is_null()) else { return Vec::new() };
    let mut errs = ids(context, path, &["fsGroup", "runAsUser", "runAsGroup"]);
    for (i, gid) in list(context, "supplementalGroups").iter().enumerate() {
        let gid = gid.as_i64().unwrap_or(0);
        let at = path.child("supplementalGroups").index(i);
        errs.extend(id_errors(gid).into_iter().map(|m| invalid_int(&at, gid, &m)));
    }
    errs
}

pub(super) fn validate_security_context(context: Option<&Value>, path: &FieldPath) -> Vec<FieldError> {
    let Some(context) = context.filter(|c| !c.is_null()) else { return Vec::new() };
    let mut errs = Vec::new();
    if context.get("privileged") == Some(&Value::Bool(true)) && !ALLOW_PRIVILEGED {
        errs.push(FieldError::forbidden(path.child("privileged").as_str(), "disallowed by cluster policy"));
    }
    errs.extend(ids(context, path, &["runAsUser", "runAsGroup"]));
    errs
}

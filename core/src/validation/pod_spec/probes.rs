//! Probes and lifecycle hooks: one handler each, thresholds, and what each kind of
//! probe may set.

use super::port_number_or_name;
use crate::validation::value::{int, invalid_int, list, non_negative, present, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Liveness,
    Readiness,
    Startup,
}

/// The handlers a probe may use, in upstream's order.
const PROBE_HANDLERS: &[&str] = &["exec", "httpGet", "tcpSocket", "grpc"];
/// The handlers a lifecycle hook may use.
const HOOK_HANDLERS: &[&str] = &["exec", "httpGet", "tcpSocket", "sleep"];

/// Probe thresholds that defaulting fills when absent.
const DEFAULTS: &[(&str, i64)] =
    &[("initialDelaySeconds", 0), ("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)];

pub(super) fn validate_probe(probe: Option<&Value>, grace: Option<i64>, path: &FieldPath, kind: Kind) -> Vec<FieldError> {
    let Some(probe) = probe.filter(|p| !p.is_null()) else { return Vec::new() };
    let mut errs = handler(probe, PROBE_HANDLERS, grace, path);
    for (field, default) in DEFAULTS {
        errs.extend(non_negative(&path.child(field), Some(int(probe, field).unwrap_or(*default))));
    }
    if let Some(seconds) = int(probe, "terminationGracePeriodSeconds").filter(|s| *s <= 0) {
        errs.push(invalid_int(&path.child("terminationGracePeriodSeconds"), seconds, "must be greater than 0"));
    }
    let success = int(probe, "successThreshold").unwrap_or(1);
    match kind {
        Kind::Liveness | Kind::Startup if success != 1 => {
            errs.push(invalid_int(&path.child("successThreshold"), success, "must be 1"));
        }
        Kind::Readiness => {
            if let Some(seconds) = int(probe, "terminationGracePeriodSeconds") {
                errs.push(invalid_int(&path.child("terminationGracePeriodSeconds"), seconds, "must not be set for readinessProbes"));
            }
        }
        _ => {}
    }
    errs
}

pub(super) fn validate_lifecycle(lifecycle: Option<&Value>, grace: Option<i64>, path: &FieldPath) -> Vec<FieldError> {
    let Some(lifecycle) = lifecycle.filter(|l| !l.is_null()) else { return Vec::new() };
    let mut errs = Vec::new();
    for hook in ["postStart", "preStop"] {
        if let Some(h) = lifecycle.get(hook).filter(|h| !h.is_null()) {
            errs.extend(handler(h, HOOK_HANDLERS, grace, &path.child(hook)));
        }
    }
    errs
}

fn handler(h: &Value, allowed: &[&str], grace: Option<i64>, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut found = false;
    for kind in allowed {
        if !present(h, kind) {
            continue;
        }
        let at = path.child(kind);
        if found {
            errs.push(FieldError::forbidden(at.as_str(), "may not specify more than 1 handler type"));
            continue;
        }
        found = true;
        let action = &h[*kind];
        match *kind {
            "exec" if list(action, "command").is_empty() => errs.push(FieldError::required(at.child("command").as_str(), "")),
            "httpGet" => {
                errs.extend(port_number_or_name(action.get("port"), &at.child("port")));
                match text(action, "scheme") {
                    "" | "HTTP" | "HTTPS" => {}
                    other => errs.push(FieldError::not_supported(at.child("scheme").as_str(), other, &["HTTP", "HTTPS"])),
                }
            }
            "tcpSocket" => errs.extend(port_number_or_name(action.get("port"), &at.child("port"))),
            "grpc" => {
                let port = Value::from(int(action, "port").unwrap_or(0));
                errs.extend(port_number_or_name(Some(&port), &at.child("port")));
            }
            "sleep" => {
                // Defaulting gives a pod 30 s to stop; a sleep may not outlast it.
                let grace = grace.unwrap_or(30);
                let seconds = int(action, "seconds").unwrap_or(0);
                if seconds < 0 || seconds > grace {
                    let detail = format!("must be non-negative and less than terminationGracePeriodSeconds ({grace})");
                    errs.push(invalid_int(&at, seconds, &detail));
                }
            }
            _ => {}
        }
    }
    if !found {
        errs.push(FieldError::required(path.as_str(), "must specify a handler type"));
    }
    errs
}

//! /healthz, /livez and /readyz: named checks, `?verbose`, per-check paths and
//! `?exclude=`, worded as kube-apiserver words them.

use bytes::Bytes;
use std::sync::atomic::{AtomicBool, Ordering};

/// One named check and whether it passes.
pub struct Check {
    pub name: String,
    ok: AtomicBool,
    /// Whether /livez and /healthz include it (readyz includes every check).
    pub liveness: bool,
}

impl Check {
    pub fn ok(&self) -> bool {
        self.ok.load(Ordering::Acquire)
    }
}

/// The server's checks. The adapter flips them as the server comes up.
pub struct HealthChecks {
    checks: Vec<Check>,
}

/// The post-start hook that creates the default namespaces.
pub const BOOTSTRAP_HOOK: &str = "poststarthook/apiary-bootstrap-namespaces";
/// The post-start hook that reconciles the bootstrap RBAC policy (upstream's name).
pub const RBAC_HOOK: &str = "poststarthook/rbac/bootstrap-roles";
/// Readiness: every watch cache has been filled from storage once.
pub const INFORMER_SYNC: &str = "informer-sync";
/// Readiness: fails from the moment shutdown begins, so that load balancers stop sending
/// requests while the server drains.
pub const SHUTDOWN: &str = "shutdown";

fn check(name: &str, ok: bool, liveness: bool) -> Check {
    Check {
        name: name.to_owned(),
        ok: AtomicBool::new(ok),
        liveness,
    }
}

impl Default for HealthChecks {
    fn default() -> Self {
        Self::with_readiness(None)
    }
}

impl HealthChecks {
    /// The server's checks, in upstream's order: ping and log; `storage`, if given (an
    /// external backend's, like upstream's `etcd`: it takes the server out of rotation
    /// without restarting it, so readiness only); the watch caches' sync; the post-start
    /// hooks; and shutdown. Only ping, log and the hooks count for /livez and /healthz.
    pub fn with_readiness(storage: Option<&str>) -> Self {
        let mut checks = vec![check("ping", true, true), check("log", true, true)];
        checks.extend(storage.map(|name| check(name, false, false)));
        checks.push(check(INFORMER_SYNC, false, false));
        checks.push(check(BOOTSTRAP_HOOK, false, true));
        checks.push(check(RBAC_HOOK, false, true));
        checks.push(check(SHUTDOWN, true, false));
        HealthChecks { checks }
    }

    /// Whether the check `name` passes (`None`: there is none).
    pub fn passes(&self, name: &str) -> Option<bool> {
        self.checks.iter().find(|c| c.name == name).map(Check::ok)
    }

    /// Mark a check as passing (or failing).
    pub fn set(&self, name: &str, ok: bool) {
        if let Some(c) = self.checks.iter().find(|c| c.name == name) {
            c.ok.store(ok, Ordering::Release);
        }
    }

    /// Answer a health endpoint: `endpoint` is healthz, livez or readyz and `rest` the
    /// path after it (a single check's name, or empty for all).
    pub fn answer(&self, endpoint: &str, rest: &str, verbose: bool, exclude: &[&str]) -> http::Response<Bytes> {
        let readiness = endpoint == "readyz";
        let included = || {
            self.checks
                .iter()
                .filter(move |c| (readiness || c.liveness) && !exclude.contains(&c.name.as_str()))
        };
        if !rest.is_empty() {
            return match included().find(|c| c.name == rest) {
                Some(c) if c.ok() => text(200, "ok".to_owned()),
                Some(c) => text(500, format!("internal server error: {} failed\n", c.name)),
                None => text(404, "404 page not found\n".to_owned()),
            };
        }
        let healthy = included().all(Check::ok);
        if healthy && !verbose {
            return text(200, "ok".to_owned());
        }
        let mut out = String::new();
        for c in included() {
            if c.ok() {
                out.push_str(&format!("[+]{} ok\n", c.name));
            } else {
                out.push_str(&format!("[-]{} failed: reason withheld\n", c.name));
            }
        }
        for ex in exclude {
            out.push_str(&format!("[+]{ex} excluded: ok\n"));
        }
        let (code, verdict) = if healthy { (200, "passed") } else { (500, "failed") };
        out.push_str(&format!("{endpoint} check {verdict}\n"));
        text(code, out)
    }
}

fn text(code: u16, body: String) -> http::Response<Bytes> {
    http::Response::builder()
        .status(code)
        .header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("X-Content-Type-Options", "nosniff")
        .body(Bytes::from(body))
        .expect("valid response")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(r: &http::Response<Bytes>) -> &str {
        std::str::from_utf8(r.body()).unwrap()
    }

    #[test]
    fn not_ready_until_bootstrapped() {
        let h = HealthChecks::default();
        let r = h.answer("readyz", "", false, &[]);
        assert_eq!(r.status(), 500);
        assert!(body(&r).contains("[-]poststarthook/apiary-bootstrap-namespaces failed: reason withheld"));
        assert!(body(&r).ends_with("readyz check failed\n"));
        h.set(BOOTSTRAP_HOOK, true);
        h.set(RBAC_HOOK, true);
        let r = h.answer("readyz", "", false, &[]);
        assert_eq!(r.status(), 500, "the watch caches have not synced");
        h.set(INFORMER_SYNC, true);
        let r = h.answer("readyz", "", false, &[]);
        assert_eq!((r.status().as_u16(), body(&r)), (200, "ok"));
        let r = h.answer("livez", "", true, &[]);
        assert_eq!(
            body(&r),
            "[+]ping ok\n[+]log ok\n[+]poststarthook/apiary-bootstrap-namespaces ok\n\
             [+]poststarthook/rbac/bootstrap-roles ok\nlivez check passed\n"
        );
    }

    #[test]
    fn single_checks_and_exclusions() {
        let h = HealthChecks::default();
        assert_eq!(h.answer("readyz", "ping", false, &[]).status(), 200);
        assert_eq!(h.answer("readyz", "nope", false, &[]).status(), 404);
        h.set(INFORMER_SYNC, true);
        let r = h.answer("readyz", "", true, &[BOOTSTRAP_HOOK, RBAC_HOOK]);
        assert_eq!(r.status(), 200);
        assert!(body(&r).contains("excluded: ok"));
    }

    #[test]
    fn shutdown_fails_readiness_only() {
        let h = HealthChecks::with_readiness(Some("etcd"));
        for name in ["etcd", INFORMER_SYNC, BOOTSTRAP_HOOK, RBAC_HOOK] {
            h.set(name, true);
        }
        assert_eq!(h.answer("readyz", "", false, &[]).status(), 200);
        h.set(SHUTDOWN, false);
        let r = h.answer("readyz", "", true, &[]);
        assert_eq!(r.status(), 500);
        assert_eq!(
            body(&r),
            "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]informer-sync ok\n\
             [+]poststarthook/apiary-bootstrap-namespaces ok\n\
             [+]poststarthook/rbac/bootstrap-roles ok\n\
             [-]shutdown failed: reason withheld\nreadyz check failed\n"
        );
        assert_eq!(h.answer("readyz", "shutdown", false, &[]).status(), 500);
        assert_eq!(h.answer("livez", "", false, &[]).status(), 200);
        assert_eq!(h.answer("healthz", "", false, &[]).status(), 200);
    }
}

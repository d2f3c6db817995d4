//! The health endpoints of a started server, through kubectl: /readyz lists upstream's
//! checks in upstream's order (the watch caches' sync, the post-start hook, shutdown),
//! each check has its own path, and /livez and /healthz leave out the readiness-only
//! ones.

use apiary_conformance::harness::{ok, Apiary};

#[test]
fn readyz_livez_and_healthz_list_their_checks() {
    let apiary = Apiary::start();
    let raw = |path: &str| ok(&apiary.kubectl("1.33", &["get", "--raw", path]));
    assert_eq!(
        raw("/readyz?verbose"),
        "[+]ping ok\n[+]log ok\n[+]informer-sync ok\n\
         [+]poststarthook/apiary-bootstrap-namespaces ok\n[+]poststarthook/rbac/bootstrap-roles ok\n\
         [+]shutdown ok\nreadyz check passed\n"
    );
    assert_eq!(
        raw("/livez?verbose"),
        "[+]ping ok\n[+]log ok\n[+]poststarthook/apiary-bootstrap-namespaces ok\n\
         [+]poststarthook/rbac/bootstrap-roles ok\nlivez check passed\n"
    );
    for path in [
        "/healthz/poststarthook/apiary-bootstrap-namespaces",
        "/livez/poststarthook/apiary-bootstrap-namespaces",
        "/readyz/poststarthook/rbac/bootstrap-roles",
        "/readyz/informer-sync",
        "/readyz/shutdown",
    ] {
        assert_eq!(raw(path), "ok", "{path}");
    }
    // Readiness-only checks are not liveness checks.
    let out = apiary.kubectl("1.33", &["get", "--raw", "/livez/shutdown"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("NotFound"), "{out:?}");
}

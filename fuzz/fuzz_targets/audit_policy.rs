//! Audit policy files (`--audit-policy-file`), as the server reads them at start-up:
//! never panic; a policy that loads evaluates any request to one level.
#![no_main]

use apiary_core::audit::{Attributes, Policy, Stage};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(policy) = Policy::parse(data) else { return };
    let groups = vec!["system:authenticated".to_owned()];
    for (resource_request, path) in [(true, "/api/v1/namespaces/default/secrets/s"), (false, "/healthz")] {
        let request = Attributes {
            user: "alice",
            groups: &groups,
            verb: "get",
            resource_request,
            namespace: "default",
            group: "",
            resource: "secrets",
            subresource: "",
            name: "s",
            path,
        };
        let config = policy.evaluate(&request);
        let _ = config.records(Stage::ResponseComplete);
    }
});

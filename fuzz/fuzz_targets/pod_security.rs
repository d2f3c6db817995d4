#![no_main]
//! The Pod Security Standards checks (`apiary_core::admission::pod_security`) over any
//! JSON pod: its `metadata` and `spec` when it has them, else the whole input as the
//! spec. At every version from v1.0 to v1.34 and latest: never panics; privileged
//! allows everything; what restricted allows baseline allows too (except Windows
//! pods, which upstream too lets through restricted's capability and seccomp checks
//! from v1.25 while baseline still reads those fields); the same pod gives the same
//! violations twice. The admission decision over the pod and over a Deployment
//! templating it never panics, never refuses the Deployment, and refuses the pod
//! exactly when its enforce level finds a violation.

use apiary_core::admission::pod_security::{
    admit, evaluate, forbidden_detail, Configuration, Level, LevelVersion, Request, Version,
};
use apiary_core::admission::Operation;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else { return };
    let (metadata, spec) = match (input.get("metadata"), input.get("spec")) {
        (None, None) => (Value::Null, input.clone()),
        (m, s) => (m.cloned().unwrap_or(Value::Null), s.cloned().unwrap_or(Value::Null)),
    };
    let windows = spec.pointer("/os/name").and_then(Value::as_str) == Some("windows");
    let versions = (0..=34).map(Version::V1).chain([Version::Latest]);
    for version in versions {
        let at = |level| evaluate(LevelVersion::new(level, version), &metadata, &spec);
        assert!(at(Level::Privileged).is_empty());
        let baseline = at(Level::Baseline);
        let restricted = at(Level::Restricted);
        if restricted.is_empty() && !windows {
            assert!(baseline.is_empty(), "restricted {version} allows what baseline refuses: {baseline:?}");
        }
        assert_eq!(baseline, at(Level::Baseline));
        assert_eq!(restricted, at(Level::Restricted));
        let _ = forbidden_detail(&restricted);
    }

    let pod = json!({"metadata": metadata, "spec": spec});
    let deployment = json!({"metadata": {"name": "d"}, "spec": {"template": pod}});
    let config = Configuration::default();
    for level in ["privileged", "baseline", "restricted"] {
        let labels: Map<String, Value> = [
            ("pod-security.kubernetes.io/enforce".to_owned(), json!(level)),
            ("pod-security.kubernetes.io/audit".to_owned(), json!("restricted")),
        ]
        .into_iter()
        .collect();
        let request = |group, resource, object| Request {
            operation: Operation::Create,
            group,
            resource,
            subresource: "",
            namespace: "ns",
            name: "n",
            username: "u",
            object,
            old_object: None,
        };
        let enforced = Level::parse(level).unwrap();
        let expect_refusal = !evaluate(LevelVersion::new(enforced, Version::Latest), &metadata, &spec).is_empty();
        let decision = admit(&config, &labels, &request("", "pods", &pod));
        assert_eq!(decision.refusal.is_some(), expect_refusal);
        let decision = admit(&config, &labels, &request("apps", "deployments", &deployment));
        assert!(decision.refusal.is_none());
    }
});

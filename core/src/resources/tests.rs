use super::certificatesigningrequests::CertificateSigningRequests;
use super::Strategy;
use crate::registry::Registry;
use crate::selection::table::{FieldLabels, SelectableFields};

fn builtin(labels: FieldLabels<'_>) -> &'static SelectableFields {
    match labels {
        FieldLabels::Builtin(fields) => fields,
        FieldLabels::Declared(_) => panic!("a built-in kind declares no fields"),
    }
}

fn fields(group: &str, version: &str, plural: &str) -> &'static SelectableFields {
    let registry = Registry::builtin();
    let r = registry
        .lookup(group, version, plural)
        .unwrap_or_else(|| panic!("{group}/{version}/{plural}"));
    builtin(r.strategy.selectable_fields())
}

#[test]
fn every_kind_is_selectable_by_name() {
    for r in Registry::builtin().resources() {
        let fields = builtin(r.strategy.selectable_fields());
        assert!(fields.fields.iter().any(|(f, _)| *f == "metadata.name"), "{}", r.plural);
    }
}

#[test]
fn conversions_and_rejections_per_resource() {
    let pods = fields("", "v1", "pods");
    assert_eq!(pods.convert("spec.host"), Ok("spec.nodeName"));
    assert_eq!(pods.convert("status.podIPs"), Ok("status.podIPs"));
    assert_eq!(pods.convert("spec.foo").unwrap_err(), "field label not supported: spec.foo");
    let cm = fields("", "v1", "configmaps");
    assert_eq!(cm.convert("metadata.namespace"), Ok("metadata.namespace"));
    assert_eq!(
        cm.convert("spec.foo").unwrap_err(),
        r#""spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace""#
    );
    let rs = fields("apps", "v1", "replicasets");
    assert!(rs.convert("status.replicas").unwrap_err().contains("is not a known field selector"));
    let rc = fields("", "v1", "replicationcontrollers");
    assert_eq!(rc.convert("status.replicas"), Ok("status.replicas"));
    assert_eq!(
        fields("batch", "v1", "jobs").convert("spec.x").unwrap_err(),
        r#"field label "spec.x" not supported for Job"#
    );
    let no_namespace = [
        fields("", "v1", "nodes"),
        fields("", "v1", "namespaces"),
        builtin(CertificateSigningRequests.selectable_fields()),
    ];
    for f in no_namespace {
        let e = f.convert("metadata.namespace").unwrap_err();
        assert_eq!(e, "field label not supported: metadata.namespace");
    }
    let ev = fields("events.k8s.io", "v1", "events");
    assert_eq!(ev.convert("regarding.name"), Ok("involvedObject.name"));
    assert_eq!(ev.convert("reportingController"), Ok("reportingComponent"));
    assert!(ev.convert("involvedObject.name").is_err());
    assert!(fields("", "v1", "events").convert("regarding.name").is_err());
    let svc = fields("", "v1", "services");
    assert_eq!(svc.convert("spec.type"), Ok("spec.type"));
    assert_eq!(fields("", "v1", "secrets").convert("type"), Ok("type"));
}

#[test]
fn strategies_compare_by_name() {
    let registry = Registry::builtin();
    let pods = registry.lookup("", "v1", "pods").unwrap();
    let deployments = registry.lookup("apps", "v1", "deployments").unwrap();
    assert_ne!(pods.strategy, deployments.strategy);
    assert_eq!(format!("{:?}", pods.strategy), "Strategy(pods)");
}

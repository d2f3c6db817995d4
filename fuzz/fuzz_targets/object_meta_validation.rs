#![no_main]
//! Metadata and kind validation of built-in objects (`apiary_core::validation::object_meta`
//! and the strategies' `validate_create`/`validate_update`): the first byte picks a kind
//! (ConfigMap, Secret and the other kinds whose rules Apiary has, CronJob's schedule
//! parser among them), the rest is one or two
//! JSON documents split by a zero byte (the object, and the stored one it updates),
//! decoded as that kind, as upstream's decoding makes it (a Secret's `stringData`), then
//! checked. Never panics; every error names a field and builds a Status; an object that
//! passes its create checks passes an update to itself, and again after a round trip
//! through JSON.

use apiary_core::negotiation::Format;
use apiary_core::registry::Registry;
use apiary_core::rest::object::Object;
use apiary_core::schema::{decode, FieldValidation};
use apiary_core::status::ApiError;
use apiary_core::validation::{names, object_meta, FieldError};
use libfuzzer_sys::fuzz_target;

const KINDS: &[(&str, &str, &str)] = &[
    ("", "v1", "configmaps"),
    ("", "v1", "secrets"),
    ("", "v1", "namespaces"),
    ("", "v1", "serviceaccounts"),
    ("rbac.authorization.k8s.io", "v1", "roles"),
    ("rbac.authorization.k8s.io", "v1", "clusterroles"),
    ("rbac.authorization.k8s.io", "v1", "rolebindings"),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
    ("scheduling.k8s.io", "v1", "priorityclasses"),
    ("storage.k8s.io", "v1", "storageclasses"),
    ("coordination.k8s.io", "v1", "leases"),
    ("", "v1", "events"),
    ("events.k8s.io", "v1", "events"),
    ("batch", "v1", "cronjobs"),
    ("policy", "v1", "poddisruptionbudgets"),
    ("networking.k8s.io", "v1", "networkpolicies"),
    ("networking.k8s.io", "v1", "ingresses"),
    ("autoscaling", "v1", "horizontalpodautoscalers"),
    ("autoscaling", "v2", "horizontalpodautoscalers"),
    ("", "v1", "nodes"),
    ("", "v1", "persistentvolumeclaims"),
];

fn checked(errors: &[FieldError], kind: &str) {
    for e in errors {
        assert!(!e.field.is_empty(), "{e}");
        let _ = e.to_string();
    }
    let _ = ApiError::invalid("", kind, "x", errors.to_vec());
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let (group, version, plural) = KINDS[pick as usize % KINDS.len()];
    let registry = Registry::builtin();
    let Some(r) = registry.lookup(group, version, plural) else { return };
    let gvk = (group, version, r.kind.as_str());
    let mut docs = rest.splitn(2, |b| *b == 0);
    let read = |bytes: &[u8]| -> Option<Object> {
        let mut obj = decode(Format::Json, bytes, gvk, FieldValidation::Ignore).ok()?.object;
        r.strategy.decoded(&mut obj);
        Some(obj)
    };
    let Some(new) = docs.next().and_then(read) else { return };
    let old = docs.next().and_then(read);
    let meta = |o: &Object, f: &str| o.get("metadata").and_then(|m| m.get(f)).and_then(|v| v.as_str()).unwrap_or("").to_owned();
    let namespace = r.namespaced.then(|| "default".to_owned());
    let create = |o: &Object| {
        let mut errs = names::validate_object_meta(r.name_rule, &meta(o, "name"), &meta(o, "generateName"), namespace.as_deref(), r.namespaced);
        errs.extend(object_meta::validate(o, r.strategy.meta_rules()));
        errs.extend(r.strategy.validate_create(o));
        errs
    };
    let created = create(&new);
    checked(&created, &r.kind);
    if created.is_empty() {
        let to_itself = r.strategy.validate_update(&new, &new);
        assert!(to_itself.is_empty(), "valid, but not as an update to itself: {to_itself:?}");
        let again = read(&serde_json::to_vec(&new).unwrap()).expect("what was decoded decodes again");
        assert!(create(&again).is_empty(), "valid, but not after a round trip: {again:?}");
    }
    if let Some(old) = old {
        checked(&r.strategy.validate_update(&new, &old), &r.kind);
    }
});

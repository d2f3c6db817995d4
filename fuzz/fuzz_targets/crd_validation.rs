#![no_main]
//! A CustomResourceDefinition's checks (`apiary_core::resources::customresourcedefinitions`):
//! any JSON body decoded as a CRD goes through the kind's defaults and create checks,
//! then, established, is updated to itself and has its status written. Never panics;
//! every error names a field and builds a Status; a CRD that was created passes the
//! update to itself.

use apiary_core::negotiation::Format;
use apiary_core::resources::customresourcedefinitions::CustomResourceDefinitions;
use apiary_core::resources::Strategy;
use apiary_core::schema::{decode, FieldValidation};
use apiary_core::status::ApiError;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

const CRD: (&str, &str, &str) = ("apiextensions.k8s.io", "v1", "CustomResourceDefinition");

fuzz_target!(|data: &[u8]| {
    let Ok(decoded) = decode(Format::Json, data, CRD, FieldValidation::Ignore) else {
        return;
    };
    let strategy = CustomResourceDefinitions;
    let mut crd = decoded.object;
    strategy.default(&mut crd);
    strategy.prepare_for_create(&mut crd, true);
    let created = strategy.validate_create(&crd);
    for e in &created {
        assert!(!e.field.is_empty(), "{e}");
    }
    let _ = ApiError::invalid("apiextensions.k8s.io", "CustomResourceDefinition", "x", created.clone());

    let mut old = crd.clone();
    old["status"]["conditions"] = json!([{"type": "Established", "status": "True"}]);
    let mut new = crd.clone();
    strategy.default(&mut new);
    strategy.prepare_for_update(&mut new, &old, true);
    let updated = strategy.validate_update(&new, &old);
    if created.is_empty() {
        assert!(updated.is_empty(), "created, but not updated to itself: {updated:?}");
    }
    let _ = strategy.validate_status_update(&old, &old);
});

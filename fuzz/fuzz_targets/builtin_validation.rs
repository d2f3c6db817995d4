//! The validation of the kinds with rules of their own outside pods and services
//! (PersistentVolumes and their sources, Endpoints, EndpointSlices, LimitRanges,
//! ResourceQuotas, ControllerRevisions) over any JSON: the object defaulted, checked
//! as a create, as an update against itself and a minimal object both ways, and as a
//! status write, never panics, and every error names a field and prints.
#![no_main]

use apiary_core::resources::{
    controllerrevisions::ControllerRevisions, endpoints::Endpoints, endpointslices::EndpointSlices, limitranges::LimitRanges,
    persistentvolumes::PersistentVolumes, resourcequotas::ResourceQuotas, Strategy,
};
use apiary_core::validation::FieldError;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};

fn check(errors: Vec<FieldError>) {
    for e in errors {
        assert!(!e.to_string().is_empty());
        assert!(!e.kind.cause_type().is_empty());
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else { return };
    let object = match value {
        Value::Object(m) => m,
        other => Map::from_iter([("spec".to_owned(), other)]),
    };
    let minimal = Map::from_iter([("metadata".to_owned(), json!({"name": "x"}))]);
    let strategies: [&dyn Strategy; 6] = [&PersistentVolumes, &Endpoints, &EndpointSlices, &LimitRanges, &ResourceQuotas, &ControllerRevisions];
    for strategy in strategies {
        let mut defaulted = object.clone();
        strategy.default(&mut defaulted);
        for candidate in [&object, &defaulted] {
            check(strategy.validate_create(candidate));
            check(strategy.validate_update(candidate, candidate));
            check(strategy.validate_update(candidate, &minimal));
            check(strategy.validate_update(&minimal, candidate));
            check(strategy.validate_status_update(candidate, &minimal));
        }
    }
});

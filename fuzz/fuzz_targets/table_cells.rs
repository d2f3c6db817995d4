//! Table cells (`kubectl get`'s server-side printing) of every built-in kind over any
//! object: each kind's printer columns (`apiary_core::rest::table::row_of`, the layout
//! and cells a Table shows) over any JSON, at any of a few clocks. Never panics; a row
//! has a cell per column (one more for a kind whose Age cell its columns do not
//! declare, as upstream's IPAddress printer has it); every cell is a string, a number
//! or a boolean; the same object gives the same row twice; the columns do not depend
//! on the object.
//!
//! Input: a byte, then JSON. The object is printed as the kind its `apiVersion` and
//! `kind` name, when the registry has it, else as the kind the byte picks (and given
//! that kind's `apiVersion`, which a kind served in two versions reads); the byte's low
//! two bits pick the clock. Seeds: the objects of `core/tests/upstream/tables/`
//! (`python3 seeds/table_cells.py` writes them into `corpus/table_cells`).
#![no_main]

use apiary_core::registry::Registry;
use apiary_core::resources::Columns;
use apiary_core::rest::table::row_of;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::builtin)
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, json)) = data.split_first() else { return };
    let Ok(Value::Object(mut obj)) = serde_json::from_slice::<Value>(json) else { return };
    let registry = registry();
    let named = {
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        registry.lookup_kind(group, version, kind)
    };
    let resource = match named {
        Some(r) => r,
        None => {
            let all = registry.resources();
            let r = &all[(pick as usize >> 2) % all.len()];
            obj.insert("apiVersion".into(), json!(r.api_version()));
            obj.insert("kind".into(), json!(r.kind));
            r
        }
    };
    let now = match pick & 3 {
        0 => UNIX_EPOCH,
        // When the recordings were made.
        1 => UNIX_EPOCH + Duration::from_secs(1_795_500_000),
        2 => UNIX_EPOCH - Duration::from_secs(86_400),
        _ => UNIX_EPOCH + Duration::from_secs(253_402_300_799),
    };
    let columns = resource.strategy.columns();
    let (definitions, cells) = row_of(columns, &obj, now);
    let undeclared = usize::from(matches!(columns, Columns::AgeUndeclared(_)));
    assert_eq!(cells.len(), definitions.len() + undeclared, "{}: cells {cells:?}", resource.plural);
    for cell in &cells {
        assert!(matches!(cell, Value::String(_) | Value::Number(_) | Value::Bool(_)), "{}: cell {cell}", resource.plural);
    }
    let (again_definitions, again) = row_of(columns, &obj, now);
    assert_eq!((&again_definitions, &again), (&definitions, &cells), "{}: not the same row twice", resource.plural);
    let (empty_definitions, _) = row_of(columns, &serde_json::Map::new(), SystemTime::UNIX_EPOCH);
    assert_eq!(empty_definitions, definitions, "{}: columns depend on the object", resource.plural);
});

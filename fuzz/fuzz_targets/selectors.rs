//! The label- and field-selector parsers over any text: they never panic, what parses
//! prints back to itself, and a parsed selection matches any object without panicking.
//!
//! Input: the label selector, then (after the first 0x01 byte, if any) the field
//! selector; both also run through `Selection::parse` for a few resources whose field
//! tables differ.

#![no_main]

use apiary_core::registry::{Registry, Resource};
use apiary_core::selection::{FieldSelector, LabelSelector, Selection};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

fn resources() -> &'static [Resource] {
    static RESOURCES: OnceLock<Vec<Resource>> = OnceLock::new();
    RESOURCES.get_or_init(|| {
        let registry = Registry::builtin();
        [
            ("", "v1", "pods"),
            ("", "v1", "configmaps"),
            ("", "v1", "nodes"),
            ("events.k8s.io", "v1", "events"),
        ]
        .iter()
        .filter_map(|(g, v, p)| registry.lookup(g, v, p).cloned())
        .collect()
    })
}

fn sorted(mut s: FieldSelector) -> Vec<(String, bool, String)> {
    let mut terms: Vec<_> = s
        .terms
        .drain(..)
        .map(|t| {
            (
                t.field,
                t.operator == apiary_core::selection::FieldOperator::Equals,
                t.value,
            )
        })
        .collect();
    terms.sort();
    terms
}

fuzz_target!(|data: &[u8]| {
    let (labels, fields) = match data.iter().position(|&b| b == 1) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let labels = String::from_utf8_lossy(labels);
    let fields = String::from_utf8_lossy(fields);

    // An object whose labels and fields come from the input too.
    let mut label_map = Map::new();
    for word in labels.split([',', ' ', '=']).filter(|w| !w.is_empty()) {
        label_map.insert(word.to_owned(), Value::String(word.to_owned()));
    }
    let obj = json!({
        "metadata": {"name": &*fields, "namespace": "default", "labels": label_map},
        "spec": {"nodeName": &*labels, "hostNetwork": true, "unschedulable": "yes"},
        "status": {"podIPs": [&*fields], "replicas": "3"},
        "regarding": {"kind": &*fields},
    });
    let obj = obj.as_object().unwrap();

    if let Ok(selector) = LabelSelector::parse(&labels) {
        let printed = selector.to_string();
        let again = LabelSelector::parse(&printed)
            .unwrap_or_else(|e| panic!("{labels:?} printed as {printed:?}, which fails: {e}"));
        assert_eq!(again, selector, "{labels:?} printed as {printed:?}");
        let map = obj["metadata"]["labels"].as_object().unwrap();
        let _ = selector.matches(|k| map.get(k).and_then(Value::as_str));
    }
    if let Ok(selector) = FieldSelector::parse(&fields) {
        let printed = selector.to_string();
        let again = FieldSelector::parse(&printed)
            .unwrap_or_else(|e| panic!("{fields:?} printed as {printed:?}, which fails: {e}"));
        assert_eq!(
            sorted(again),
            sorted(selector),
            "{fields:?} printed as {printed:?}"
        );
    }
    for r in resources() {
        match Selection::parse(r, Some(&labels), Some(&fields)) {
            Ok(s) => {
                let _ = s.matches(obj);
                let _ = s.exact_name();
                if s.is_everything() {
                    assert!(s.matches(&Map::new()) && s.matches(obj));
                }
            }
            Err(e) => {
                assert_eq!((e.code, e.reason), (400, "BadRequest"));
                assert!(!e.message.is_empty());
            }
        }
    }
});

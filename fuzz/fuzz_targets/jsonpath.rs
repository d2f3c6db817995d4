//! JSONPath templates (`apiary_core::jsonpath`) over any text and any JSON, as the CRD
//! printer columns and selectable fields use them: parsing never panics and fails with
//! a message; evaluation, strict or missing keys allowed, never panics, stays within
//! its bounds and gives the same results twice; every result prints; a printer column
//! of each type over the path gives a cell of that type or null, and a selectable field
//! over it a value.
//!
//! Input: the template, then (after the first 0x00 byte, if any) the data as JSON; data
//! that does not parse is replaced by a small object.

#![no_main]

use apiary_core::jsonpath::JsonPath;
use apiary_core::resources::customresources::PrinterColumns;
use apiary_core::selection::table::{DeclaredFields, FieldLabels};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use std::time::{Duration, UNIX_EPOCH};

fuzz_target!(|data: &[u8]| {
    let (template, doc) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let template = String::from_utf8_lossy(template);
    let doc: Value = serde_json::from_slice(doc).unwrap_or_else(|_| {
        json!({"metadata": {"name": "n", "creationTimestamp": "2026-11-24T06:08:36Z"},
               "spec": {"a": [1, 2.5, "x", null, true, {"b": "c"}], "s": "text"}})
    });

    match JsonPath::parse(&template) {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok(path) => {
            for allow_missing_keys in [false, true] {
                let found = path.find(&doc, allow_missing_keys);
                assert_eq!(found, path.find(&doc, allow_missing_keys), "deterministic");
                match &found {
                    Ok(parts) => parts.iter().flatten().for_each(|item| {
                        let _ = (item.text(), item.sprint());
                    }),
                    Err(e) => assert!(!e.to_string().is_empty()),
                }
                let _ = path.execute(&doc, allow_missing_keys);
            }
            let first = path.find(&doc, true).ok().and_then(|p| p.first().and_then(|r| r.first()).copied());
            assert_eq!(path.first(&doc), first);
        }
    }

    // The template as a CRD's column path and selectable field.
    let Value::Object(object) = &doc else { return };
    let kinds = ["integer", "number", "boolean", "string", "date", "other"];
    let columns: Vec<Value> = kinds.iter().map(|k| json!({"name": k, "type": k, "jsonPath": &*template})).collect();
    let printer = PrinterColumns::of(&json!({"additionalPrinterColumns": columns}));
    let now = UNIX_EPOCH + Duration::from_secs(1_795_500_516);
    for (cell, kind) in printer.cells(object, now).zip(kinds) {
        let fits = match kind {
            "integer" => cell.is_i64(),
            "number" => cell.is_number(),
            "boolean" => cell.is_boolean(),
            "string" | "date" => cell.is_string(),
            _ => false,
        };
        assert!(cell.is_null() || fits, "{kind}: {cell}");
    }
    let fields = DeclaredFields::new(true, [&*template]);
    let name = template.strip_prefix('.').unwrap_or(&template);
    if let Ok(attribute) = FieldLabels::Declared(&fields).convert(name) {
        let _ = attribute.value(object);
    }
});

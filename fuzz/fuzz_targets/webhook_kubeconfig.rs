//! A webhook's kubeconfig over any bytes: never panics; what parses names an https
//! server, and parsing is deterministic.

#![no_main]

use apiary_core::webhook::kubeconfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let read = |name: &str| -> Result<Vec<u8>, String> {
        if name.len() % 2 == 0 {
            Ok(name.as_bytes().to_vec())
        } else {
            Err(format!("open {name}: no such file"))
        }
    };
    let first = kubeconfig::parse(data, &read);
    if let Ok(webhook) = &first {
        assert!(webhook.url.to_ascii_lowercase().starts_with("https:"), "{}", webhook.url);
    }
    assert_eq!(first, kubeconfig::parse(data, &read));
});

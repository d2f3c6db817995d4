//! Arbitrary requests through the whole server: the HTTP/1.1 codec, the request chain
//! and the handlers, over the memory store on the harness's fake clock. The first byte
//! picks the client (admin, a plain user, anonymous) and the storage latency; the rest
//! is split on `\0` into connections. Never a panic; every answer well-formed HTTP/1.1;
//! every stored object valid JSON.

#![no_main]

use apiary_core::harness::{parse_responses, Harness, SyncStorage};
use apiary_core::storage::{StorageOp, StorageOutput};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use libfuzzer_sys::fuzz_target;
use std::time::Duration;

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, rest)) = data.split_first() else {
        return;
    };
    let h = Harness::new(Config::default(), MemoryStore::new());
    match knobs % 3 {
        0 => {}
        1 => h.act_as(Some("dev"), &["developers"]),
        _ => h.act_as(None, &[]),
    }
    h.set_storage_latency(Duration::from_millis(u64::from(knobs / 3) * 500));
    for connection in rest.split(|b| *b == 0).take(8) {
        let out = h.send(connection);
        if let Err(e) = parse_responses(&out) {
            panic!("not HTTP/1.1 ({e}): {:?}", String::from_utf8_lossy(&out));
        }
    }
    let Ok(StorageOutput::Listed(page)) = h.store.run_now(StorageOp::list_latest("/registry/".into())) else {
        panic!("the store lists");
    };
    for kv in page.items {
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(&kv.value) {
            panic!("{} is not JSON: {e}", kv.key);
        }
    }
});

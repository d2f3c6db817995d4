//! LIST of 10,000 ConfigMaps of about 1 KiB each (stored JSON) in one namespace, through
//! the core alone: no sockets, no TLS, the memory backend answering storage steps
//! inline. There is no watch cache yet, so every LIST reads the memory store; the same
//! figures will measure the cache once it serves lists.
//!
//! Prints, as medians over several rounds:
//! - the time to produce the whole response body of one unpaged LIST (and of one with
//!   `resourceVersion=0`, which a watch cache would serve), with the part spent in the
//!   storage step, and the body's size;
//! - the time to page through all of them with `limit=500` (following `continue`);
//! - the memory store's resident cost per object: the growth of this process's RSS
//!   (VmRSS in /proc/self/status) over creating the objects, as a ratio of the total
//!   JSON bytes stored (the issue's target for the cache is ≤ 2×), through the core and
//!   for the store's data structures alone.
//!
//! Run: `cargo bench -p apiary-core --bench core_list`

use apiary_core::storage::{StorageOp, StorageOutput};
mod support;

use apiary_core::{Config, Server};
use apiary_memory::MemoryStore;
use bytes::Bytes;
use std::time::{Duration, Instant};

const OBJECTS: usize = 10_000;
/// The size each object's stored JSON is padded to.
const OBJECT_BYTES: usize = 1024;
const ROUNDS: usize = 7;
const PAGE: usize = 500;
const PREFIX: &str = "/registry/configmaps/default/";

/// Counts the bytes allocated and not yet freed, to weigh the watch cache exactly.
struct Counting;

static LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only a counter is kept.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), std::sync::atomic::Ordering::Relaxed);
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        LIVE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, std::sync::atomic::Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn bootstrap() -> (Server, MemoryStore) {
    let server = Server::new(Config::default());
    let store = MemoryStore::new();
    support::bootstrap(&server, &store);
    (server, store)
}

fn name(i: usize) -> String {
    format!("cm-{i:05}")
}

fn configmap(name: &str, padding: usize) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","labels":{{"app":"bench"}}}},"data":{{"payload":"{}"}}}}"#,
        "x".repeat(padding)
    )
}

fn create(server: &Server, store: &MemoryStore, body: String) {
    let req = http::Request::post("/api/v1/namespaces/default/configmaps")
        .header("content-type", "application/json")
        .body(Bytes::from(body))
        .unwrap();
    let (r, _) = support::drive_timed(server, store, req);
    assert_eq!(r.status(), 201, "{:?}", r.body());
}

fn get(path: &str) -> http::Request<Bytes> {
    get_as(path, "application/json")
}

fn get_as(path: &str, accept: &str) -> http::Request<Bytes> {
    http::Request::get(path)
        .header("accept", accept)
        .body(Bytes::new())
        .unwrap()
}

/// The stored values under the namespace's prefix: how many and their total bytes.
fn stored(store: &MemoryStore) -> (usize, usize) {
    let op = StorageOp::List {
        prefix: PREFIX.to_owned(),
        revision: None,
        start_after: None,
        limit: None,
    };
    match store.apply(op) {
        Ok(StorageOutput::Listed(page)) => (
            page.items.len(),
            page.items.iter().map(|kv| kv.value.len()).sum(),
        ),
        other => panic!("list failed: {other:?}"),
    }
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

/// Return free heap pages to the OS, so RSS counts what is held rather than what glibc
/// keeps around from freed request bodies.
fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim only walks glibc's own heap; any pad value is valid.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Median, min and max.
fn stats(mut rounds: Vec<Duration>) -> (Duration, Duration, Duration) {
    rounds.sort();
    (
        rounds[rounds.len() / 2],
        rounds[0],
        rounds[rounds.len() - 1],
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// How many items a list body holds, and its `metadata.continue`, if any.
fn page_of(body: &[u8]) -> (usize, Option<String>) {
    let v: serde_json::Value = serde_json::from_slice(body).expect("list body is JSON");
    let items = v["items"].as_array().map_or(0, Vec::len);
    (items, v["metadata"]["continue"].as_str().map(str::to_owned))
}

fn main() {
    // Size the padding on a throwaway server so the stored JSON of each object is
    // OBJECT_BYTES (names all have the same length). This also warms the core (schemas,
    // lazily built tables) before the memory is measured.
    let padding = {
        let (server, store) = bootstrap();
        create(&server, &store, configmap(&name(0), 0));
        let (_, bytes) = stored(&store);
        OBJECT_BYTES
            .checked_sub(bytes)
            .expect("an empty ConfigMap fits in OBJECT_BYTES")
    };

    let (server, store) = bootstrap();
    trim();
    let rss_before = rss_kib();
    let start = Instant::now();
    for i in 0..OBJECTS {
        create(&server, &store, configmap(&name(i), padding));
    }
    let created_in = start.elapsed();
    let rss_untrimmed = rss_kib();
    trim();
    let rss_after = rss_kib();
    let (count, json_bytes) = stored(&store);
    assert_eq!(count, OBJECTS);
    let ratio = |after: u64| (after.saturating_sub(rss_before) * 1024) as f64 / json_bytes as f64;
    println!(
        "created {OBJECTS} ConfigMaps in {:.0} ms ({:.1} µs each); stored JSON {json_bytes} bytes ({:.0} bytes/object)",
        ms(created_in),
        created_in.as_secs_f64() * 1e6 / OBJECTS as f64,
        json_bytes as f64 / OBJECTS as f64
    );
    println!(
        "memory store resident cost: RSS {rss_before} KiB before, {rss_after} KiB after ({rss_untrimmed} KiB before malloc_trim) \
         → {:.2}× the JSON size ({:.2}× untrimmed), {:.0} bytes/object",
        ratio(rss_after),
        ratio(rss_untrimmed),
        (rss_after.saturating_sub(rss_before) * 1024) as f64 / OBJECTS as f64
    );

    // The store's data structures alone: the same number of values of the same size
    // written straight into a fresh store, no request processing in between (what is
    // left over from requests — heap fragmentation — is not counted here).
    {
        let template = {
            let op = StorageOp::Get {
                key: format!("{PREFIX}{}", name(0)),
            };
            match store.apply(op) {
                Ok(StorageOutput::Got { kv: Some(kv), .. }) => kv.value,
                other => panic!("get failed: {other:?}"),
            }
        };
        let direct = MemoryStore::new();
        trim();
        let before = rss_kib();
        for i in 0..OBJECTS {
            let op = StorageOp::Create {
                key: format!("{PREFIX}{}", name(i)),
                value: Bytes::copy_from_slice(&template),
            };
            assert!(direct.apply(op).is_ok());
        }
        trim();
        let after = rss_kib();
        let delta = after.saturating_sub(before) * 1024;
        println!(
            "memory store alone (values written directly): RSS +{} KiB for {} bytes of values → {:.2}×, {:.0} bytes/object",
            after.saturating_sub(before),
            template.len() * OBJECTS,
            delta as f64 / (template.len() * OBJECTS) as f64,
            delta as f64 / OBJECTS as f64
        );
    }

    // Feed the configmaps' watch cache the current state, as the adapter's reflector
    // does, so `resourceVersion=0` is served from it.
    let live_before = LIVE.load(std::sync::atomic::Ordering::Relaxed);
    let page = match store.apply(apiary_core::storage::StorageOp::List {
        prefix: "/registry/configmaps/".into(),
        revision: None,
        start_after: None,
        limit: None,
    }) {
        Ok(apiary_core::storage::StorageOutput::Listed(page)) => page,
        other => panic!("listing for the cache: {other:?}"),
    };
    let cache = server
        .watch_cache("/registry/configmaps/")
        .expect("a configmaps cache");
    cache.reset_with(page.items, page.revision);
    let cache_bytes = LIVE
        .load(std::sync::atomic::Ordering::Relaxed)
        .saturating_sub(live_before);
    println!(
        "watch cache of {OBJECTS} objects: {} KiB of its own (keys, revisions, map) beside the stored bytes it shares with the memory store; {:.2}× the objects' JSON size counting those bytes as its own",
        cache_bytes / 1024,
        (cache_bytes + json_bytes) as f64 / json_bytes as f64
    );

    // Unpaged LIST: the whole body in one response, as JSON and as protobuf, the two
    // alternating round by round.
    for (label, path) in [
        ("LIST (no limit)", "/api/v1/namespaces/default/configmaps"),
        (
            "LIST resourceVersion=0 (from the watch cache)",
            "/api/v1/namespaces/default/configmaps?resourceVersion=0",
        ),
    ] {
        let encodings = [("JSON", "application/json"), ("protobuf", "application/vnd.kubernetes.protobuf")];
        let mut rounds = vec![Vec::new(); 2];
        let mut storage = vec![Vec::new(); 2];
        let mut body_len = [0; 2];
        for _ in 0..ROUNDS {
            for (i, (_, accept)) in encodings.iter().enumerate() {
                let start = Instant::now();
                let (r, in_storage) = support::drive_timed(&server, &store, get_as(path, accept));
                let took = start.elapsed();
                assert_eq!(r.status(), 200);
                body_len[i] = r.body().len();
                drop(r);
                rounds[i].push(took);
                storage[i].push(in_storage);
            }
        }
        let mut medians = [Duration::ZERO; 2];
        for (i, (encoding, _)) in encodings.iter().enumerate() {
            let (median, min, max) = stats(rounds[i].clone());
            let (storage_median, _, _) = stats(storage[i].clone());
            medians[i] = median;
            println!(
                "core {label} of {OBJECTS} ConfigMaps as {encoding}: median {:.2} ms over {ROUNDS} rounds (min {:.2}, max {:.2}), \
                 of which storage {:.2} ms; body {} bytes ({:.2} MiB)",
                ms(median),
                ms(min),
                ms(max),
                ms(storage_median),
                body_len[i],
                body_len[i] as f64 / (1024.0 * 1024.0)
            );
        }
        println!(
            "core {label}: protobuf takes {:.2}× JSON's time for {:.2}× its bytes",
            medians[1].as_secs_f64() / medians[0].as_secs_f64(),
            body_len[1] as f64 / body_len[0] as f64
        );
    }

    // Paged LIST: limit=500, following continue tokens to the end.
    let mut rounds = Vec::new();
    let mut storage = Vec::new();
    let mut pages = 0;
    for _ in 0..ROUNDS {
        let mut token: Option<String> = None;
        let mut items = 0usize;
        let mut in_storage = Duration::ZERO;
        let mut parse = Duration::ZERO;
        pages = 0;
        let start = Instant::now();
        loop {
            let path = match &token {
                None => format!("/api/v1/namespaces/default/configmaps?limit={PAGE}"),
                Some(t) => {
                    format!("/api/v1/namespaces/default/configmaps?limit={PAGE}&continue={t}")
                }
            };
            let (r, s) = support::drive_timed(&server, &store, get(&path));
            assert_eq!(r.status(), 200);
            in_storage += s;
            pages += 1;
            // Reading the token back is the client's work; keep it out of the figure.
            let p = Instant::now();
            let (n, next) = page_of(r.body());
            items += n;
            token = next;
            parse += p.elapsed();
            if token.is_none() {
                break;
            }
        }
        assert_eq!(items, OBJECTS, "paging returned every object once");
        rounds.push(start.elapsed() - parse);
        storage.push(in_storage);
    }
    let (median, min, max) = stats(rounds);
    let (storage_median, _, _) = stats(storage);
    println!(
        "core LIST limit={PAGE}, all {pages} pages: median {:.2} ms over {ROUNDS} rounds (min {:.2}, max {:.2}), \
         of which storage {:.2} ms; {:.3} ms/page",
        ms(median),
        ms(min),
        ms(max),
        ms(storage_median),
        ms(median) / pages as f64
    );
}

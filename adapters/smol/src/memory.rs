//! Handing freed memory back to the operating system.
//!
//! Rust's allocations go to mimalloc (`main.rs`), which returns freed pages by itself
//! shortly after; what C code allocates (sqlite) goes to glibc's malloc, configured and
//! trimmed here. glibc keeps freed heap pages resident. Building a large one-off result — the OpenAPI
//! documents are built once, through a few tens of MB of intermediate values — would
//! otherwise leave that much resident for the life of the process.

/// How often a busy server returns the memory its requests freed.
pub const TRIM_INTERVAL: std::time::Duration = std::time::Duration::from_secs(10);

/// Serve large allocations (response bodies, TLS buffers of big documents) from their
/// own mappings, returned to the OS when freed. glibc otherwise raises its mmap
/// threshold after the first large free and serves later ones from the heap, where the
/// freed pages stay resident.
pub fn configure_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const M_MMAP_THRESHOLD: i32 = -3;
        extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        // SAFETY: mallopt only changes glibc's allocation policy; called before any
        // thread is started.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, 256 * 1024);
        }
    }
}

/// Return free heap pages to the OS. Costs well under a millisecond on Apiary's heap.
pub fn release_free_memory() {
    // SAFETY: asks mimalloc to free what it holds unused; callable from any thread.
    unsafe { libmimalloc_sys::mi_collect(true) };
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

/// Whether answering `path` in `took` built large one-off values worth releasing: the
/// first request for an OpenAPI document builds it (tens of ms); later ones are served
/// from the cache in microseconds and need no trim.
pub fn built_large_documents(path: &str, took: std::time::Duration) -> bool {
    path.starts_with("/openapi/") && took >= std::time::Duration::from_millis(10)
}

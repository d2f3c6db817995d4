//! `apiary`: a Kubernetes API server. See `apiary --help`.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `arena_eager_commit` (its option 4; the bindings name no constant for it).
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Committed on demand, mimalloc's arena costs nothing idle; committed eagerly (its
/// default on Linux) it adds about 8 MiB resident to an idle server. The option must be
/// set before the first allocation reserves the arena, which Rust's runtime makes
/// before `main`: so from the ELF initializers, which run before it.
#[used]
#[link_section = ".init_array"]
static ALLOCATOR_OPTIONS: extern "C" fn() = allocator_options;

extern "C" fn allocator_options() {
    // SAFETY: sets one integer option, which mimalloc allows at any time.
    unsafe { libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0) };
}

fn main() -> std::process::ExitCode {
    apiary_smol::main()
}

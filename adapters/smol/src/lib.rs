//! apiary-smol: the `apiary` binary's machinery as a library, so that tests and
//! benchmarks can start a server in-process.
//!
//! - [`flags`]: kube-apiserver-style flags, `--help` sections, validation.
//! - [`pki`]: the CA, serving and admin certificates, and the admin kubeconfig.
//! - [`service_accounts`]: the ServiceAccount token flags, read into the core's config.
//! - [`tls`]: the rustls server configuration.
//! - [`webhooks`]: the token and authorization webhook flags, read into the core's config.
//! - [`outbound`]: the HTTP(S) client for the core's outbound calls (aggregated APIs,
//!   webhooks).
//! - [`serve`]: the listener, TLS connections, the HTTP/1.1 codec and the driver loop
//!   that runs the core's [`Step`](apiary_core::Step)s against a storage backend.
//! - [`main`]: what the binary does, from the command line to the exit code.

pub mod audit_log;
pub mod flags;
pub mod front_proxy;
pub mod memory;
pub mod outbound;
pub mod pki;
pub mod serve;
pub mod service_accounts;
pub mod tls;
pub mod webhooks;

pub use flags::{Command, Options, StorageKind};
pub use serve::{drive, Apiary, StartError};

use apiary_core::storage::Storage;
use smol::stream::StreamExt as _;
use smol::Executor;
use std::process::ExitCode;
use std::sync::Arc;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// The binary: parse the flags, then serve until SIGTERM or SIGINT.
pub fn main() -> ExitCode {
    match flags::parse(std::env::args_os().skip(1)) {
        Ok(Command::Help) => {
            print!("{}", flags::help());
            ExitCode::SUCCESS
        }
        Ok(Command::Version) => {
            println!("{}", flags::version());
            ExitCode::SUCCESS
        }
        Ok(Command::Serve(options)) => {
            memory::configure_allocator();
            init_logging(options.verbosity);
            run(options)
        }
        Err(problems) => {
            for problem in problems {
                eprintln!("error: {problem}");
            }
            eprintln!("Run 'apiary --help' for the flags.");
            ExitCode::FAILURE
        }
    }
}

/// The h2 crate logs every frame at debug: only at trace verbosity (`-v=6` and up),
/// as Go logs HTTP/2 frames only when asked (GODEBUG=http2debug).
fn quiet_frames(targets: Targets, verbosity: u32) -> Targets {
    match verbosity {
        0..=5 => targets.with_target("h2", LevelFilter::INFO),
        _ => targets,
    }
}

/// Log to stderr: RUST_LOG's `target=level,…` directives when set, else the level
/// `--v` asks for (0-2 info, 3-5 debug, 6+ trace).
pub fn init_logging(verbosity: u32) {
    let level = match verbosity {
        0..=2 => LevelFilter::INFO,
        3..=5 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    };
    let mut bad_rust_log = None;
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => match spec.parse::<Targets>() {
            Ok(targets) => targets,
            Err(e) => {
                bad_rust_log = Some(format!("ignoring RUST_LOG={spec:?}: {e}"));
                quiet_frames(Targets::new().with_default(level), verbosity)
            }
        },
        _ => quiet_frames(Targets::new().with_default(level), verbosity),
    };
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_target(false),
        )
        .with(filter)
        .try_init();
    if let Some(warning) = bad_rust_log {
        tracing::warn!("{warning}");
    }
}

/// Serve with the storage backend `options` names, until SIGTERM or SIGINT.
pub fn run(options: Options) -> ExitCode {
    match options.storage {
        StorageKind::Memory => run_with(&options, apiary_memory::MemoryStore::new()),
        StorageKind::Etcd => {
            let etcd = apiary_etcd::EtcdOptions {
                servers: options.etcd_servers.clone(),
                tls: options.etcd_tls.clone(),
                ..Default::default()
            };
            match apiary_etcd::EtcdStore::new(etcd) {
                Ok(store) => run_with(&options, store),
                Err(e) => {
                    tracing::error!("--storage=etcd: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        StorageKind::Sqlite => {
            let sqlite = apiary_sqlite::SqliteOptions {
                synchronous: options.sqlite_synchronous,
                ..Default::default()
            };
            match apiary_sqlite::SqliteStore::open(options.sqlite_path(), sqlite) {
                Ok(store) => run_with(&options, store),
                Err(e) => {
                    // Never start over on a database that cannot be read: say why, stop.
                    tracing::error!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// Serve over `storage` until SIGTERM or SIGINT has drained the server: exit 0 then; 1
/// if startup failed or a second signal cut the drain short.
pub fn run_with<S: Storage>(options: &Options, storage: S) -> ExitCode {
    // Registered first, so that a signal during startup is not lost.
    let mut signals =
        match async_signal::Signals::new([async_signal::Signal::Term, async_signal::Signal::Int]) {
            Ok(signals) => signals,
            Err(e) => {
                tracing::error!("failed to handle signals: {e}");
                return ExitCode::FAILURE;
            }
        };
    let apiary = match Apiary::start(options, storage) {
        Ok(apiary) => Arc::new(apiary),
        Err(e) => {
            tracing::error!("{e}");
            return ExitCode::FAILURE;
        }
    };

    let executor = Arc::new(Executor::new());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // This thread runs the executor too, so one fewer worker.
    for i in 1..threads {
        let executor = executor.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("apiary-worker-{i}"))
            .spawn(move || smol::block_on(executor.run(smol::future::pending::<()>())));
        if let Err(e) = spawned {
            tracing::warn!("could not start worker thread {i}: {e}");
        }
    }

    smol::block_on(executor.run(async {
        executor
            .spawn({
                let apiary = apiary.clone();
                let executor = executor.clone();
                async move { apiary.serve(&executor).await }
            })
            .detach();
        // Each signal is an event of the lifecycle: the first begins graceful
        // termination, a second exits at once.
        let signalled = async {
            while let Some(signal) = signals.next().await {
                match signal {
                    Ok(signal) => tracing::info!(
                        "received {}, shutting down (send it again to exit at once)",
                        signal_name(signal)
                    ),
                    Err(e) => {
                        tracing::warn!("signal handling failed: {e}");
                        continue;
                    }
                }
                apiary
                    .lifecycle()
                    .event(apiary_core::lifecycle::Event::Terminate);
            }
            smol::future::pending::<i32>().await
        };
        let code = smol::future::or(apiary.lifecycle().exited(), signalled).await;
        if code == 0 {
            // The last frames of HTTP/2 answers (a watch's end) are out once their
            // connections, past GOAWAY, have closed.
            apiary.h2_connections_closed(std::time::Duration::from_secs(2)).await;
        }
        apiary.flush_audit_log();
        if code == 0 {
            tracing::info!("shut down cleanly");
        } else {
            tracing::warn!("exiting with {code} before requests drained");
        }
        ExitCode::from(code.clamp(0, 255) as u8)
    }))
}

fn signal_name(signal: async_signal::Signal) -> &'static str {
    match signal {
        async_signal::Signal::Term => "SIGTERM",
        async_signal::Signal::Int => "SIGINT",
        _ => "a signal",
    }
}

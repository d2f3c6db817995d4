//! apiary-core: every decision of the Apiary API server as plain data and pure
//! state machines. No sockets, no files, no clock, no async runtime: the adapter feeds
//! inputs (bytes, time, entropy, the verified peer certificate) and performs the
//! effects the core asks for.
//!
//! Modules follow the path of a request through the server: `http1` decodes it,
//! `request_info` says what it is about, `authn` who sent it, `server` routes it to
//! `nonresource` (health, version, discovery) or `rest` (the resource handlers, over
//! `registry`, `negotiation`, `validation` and `storage`), and `status` words failures.

pub mod admission;
pub mod aggregation;
pub mod apply;
pub mod audit;
pub mod authn;
pub mod authorization;
pub mod config;
pub mod deadline;
pub mod discovery;
pub mod duration;
pub mod effect;
pub mod exchange;
pub mod harness;
pub mod health;
pub mod http1;
pub mod metrics;
pub mod impersonation;
pub mod inflight;
pub mod lifecycle;
pub mod negotiation;
pub mod nonresource;
pub mod openapi;
pub mod patch;
pub mod protobuf;
pub mod query;
pub mod reflector;
pub mod registry;
pub mod request_info;
pub mod resources;
pub mod rest;
pub mod routing;
pub mod schema;
pub mod selection;
pub mod server;
pub(crate) mod shared;
pub mod status;
pub mod storage;
pub mod stored_json;
pub mod time;
pub mod validation;
pub mod version;
pub mod watch;
pub mod watch_cache;

pub use config::Config;
pub use effect::{Inputs, Pending, Step, WatchSource};
pub use server::Server;

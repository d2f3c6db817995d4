//! apiary-core: every decision of the Apiary API server as plain data and pure
//! state machines. No sockets, no files, no clock, no async runtime: the adapter feeds
//! inputs (bytes, time, entropy, the verified peer certificate) and performs the
//! effects the core asks for.
//!
//! Modules follow the path of a request through the server: `http1` decodes it;
//! `exchange` runs it through the chain — `request_info`, the `lifecycle` gate,
//! `metrics`, `audit`, `deadline`, the `inflight` limits, `authn`, `impersonation`,
//! `authorization`, `routing` (`aggregation`, then the `registry`'s resources, then not
//! found) — to `nonresource` (health, version, discovery, OpenAPI) or `rest` (the
//! resource handlers, asking each kind's strategy in `resources`, passing `admission`,
//! over `storage`); `status` words failures. `effect` holds what the chain asks the
//! adapter to do; `bootstrap` is what the server writes of itself at start;
//! `reflector` and `watch_cache` keep resources in memory; `harness`
//! drives the whole server deterministically.

pub mod admission;
pub mod aggregation;
pub mod apply;
pub mod audit;
pub mod authn;
pub mod authorization;
pub mod bootstrap;
pub mod cel;
pub mod config;
pub mod controllers;
pub mod deadline;
pub mod discovery;
pub(crate) mod dispatch;
pub(crate) mod gofmt;
pub mod duration;
pub mod effect;
pub mod exchange;
pub mod flowcontrol;
pub(crate) mod go_types;
pub mod harness;
pub mod health;
pub mod http1;
pub mod metrics;
pub mod impersonation;
pub mod jsonpath;
pub mod inflight;
pub mod lifecycle;
pub mod negotiation;
pub mod nonresource;
pub mod openapi;
pub mod patch;
pub mod protobuf;
pub mod query;
pub mod reflector;
pub(crate) mod regexp;
pub mod registry;
pub mod request_info;
pub mod resources;
pub mod rest;
pub mod routing;
pub mod schema;
pub mod selection;
pub mod server;
pub mod service_network;
pub(crate) mod shared;
pub mod status;
pub mod storage;
pub mod stored_json;
pub mod time;
pub mod typed_json;
pub mod validation;
pub mod version;
pub mod watch;
pub mod watch_cache;
pub mod webhook;

pub use config::Config;
pub use effect::{Inputs, Pending, Step, WatchSource};
pub use server::Server;

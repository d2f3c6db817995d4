//! The whole server driven synchronously over the memory backend, as the integration
//! tests use it: bootstrap, a fixed clock, fresh entropy per request.

#![allow(dead_code)]

use apiary_core::effect::WatchResponse;
use apiary_core::{Config, Inputs, Server, Step, WatchSource};
use apiary_memory::MemoryStore;
use bytes::Bytes;
use serde_json::Value;
use std::cell::Cell;
use std::time::{Duration, UNIX_EPOCH};

pub struct Harness {
    pub server: Server,
    pub store: MemoryStore,
    /// Seconds since the epoch that requests see as now.
    pub clock: Cell<u64>,
    seed: Cell<u8>,
}

/// A response, taken apart.
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub warnings: Vec<String>,
    pub body: Bytes,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    /// The `message` of a Status body.
    pub fn message(&self) -> String {
        self.json()["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

impl Harness {
    /// A server over an empty memory store, with the default namespaces created and the
    /// bootstrap post-start hook marked done.
    pub fn new() -> Harness {
        let h = Harness {
            server: Server::new(Config::default()),
            store: MemoryStore::new(),
            clock: Cell::new(1_795_000_000),
            seed: Cell::new(1),
        };
        let mut bootstrap = h.server.bootstrap();
        while let Some(req) = bootstrap.next_request() {
            let step = h.server.handle_as_system(req, h.inputs());
            let Step::Respond(response) = h.run_storage(step) else {
                panic!("a bootstrap request is answered");
            };
            bootstrap.answered(&response).expect("bootstrap writes succeed");
        }
        let health = h.server.health();
        health.set(apiary_core::health::BOOTSTRAP_HOOK, true);
        health.set(apiary_core::health::RBAC_HOOK, true);
        h
    }

    pub fn inputs(&self) -> Inputs {
        let seed = self.seed.get();
        self.seed.set(seed.wrapping_add(1));
        Inputs {
            now: UNIX_EPOCH + Duration::from_secs(self.clock.get()),
            monotonic: Duration::from_secs(self.clock.get()),
            entropy: [seed; 48],
            peer_certificates: Vec::new(),
            peer_certificates_rejected: false,
            request_header_common_name: None,
            remote_addr: None,
        }
    }

    /// Run a step's storage operations until it answers (or asks for something else).
    fn run_storage(&self, mut step: Step) -> Step {
        loop {
            step = match step {
                Step::Storage(op, pending) => pending.resume(self.store.apply(op)),
                other => return other,
            };
        }
    }

    /// Run a request to its response against the memory store.
    pub fn drive(&self, mut step: Step) -> Reply {
        loop {
            step = match step {
                Step::Respond(r) => {
                    let header = |name: &str| -> Vec<String> {
                        r.headers()
                            .get_all(name)
                            .iter()
                            .map(|v| String::from_utf8(v.as_bytes().to_vec()).unwrap())
                            .collect()
                    };
                    let content_type = header("content-type").pop().unwrap_or_default();
                    let warnings = header("warning");
                    return Reply {
                        status: r.status().as_u16(),
                        content_type,
                        warnings,
                        body: r.into_body(),
                    };
                }
                Step::Storage(op, pending) => pending.resume(self.store.apply(op)),
                Step::Call(_, pending) => pending.resume(Err(apiary_core::effect::CallError::Unreachable(
                    "the harness answers no outbound request".into(),
                ))),
                Step::Calls(out, pending) => pending.resume(
                    out.iter()
                        .map(|_| Err(apiary_core::effect::CallError::Unreachable("the harness answers no outbound request".into())))
                        .collect(),
                ),
                Step::Relay(_, pending) => {
                    pending.failed(apiary_core::effect::CallError::Unreachable("the harness answers no outbound request".into()))
                }
                Step::Watch(source, stream) => return self.watch_now(source, stream),
            }
        }
    }

    /// A watch's response as it stands now: its head, the initial frames and every event
    /// its source already holds after the watch's revision; then the watch is ended.
    fn watch_now(&self, source: WatchSource, mut stream: Box<dyn WatchResponse>) -> Reply {
        let head = stream.head();
        let mut body = Vec::new();
        for frame in stream.take_initial() {
            body.extend_from_slice(&frame);
        }
        let now = UNIX_EPOCH + Duration::from_secs(self.clock.get());
        let no_calls = |_: &apiary_core::effect::Outbound| {
            Err(apiary_core::effect::CallError::Unreachable("the harness answers no outbound request".into()))
        };
        apiary_core::harness::watch_frames(&self.store, source, &mut *stream, now, &no_calls, |frame| {
            body.extend_from_slice(&frame)
        });
        Reply {
            status: head.status.as_u16(),
            content_type: head.headers["content-type"].to_str().unwrap().to_owned(),
            warnings: Vec::new(),
            body: Bytes::from(body),
        }
    }

    /// The JSON frames of a watch response.
    pub fn frames(reply: &Reply) -> Vec<Value> {
        reply
            .body
            .split(|b| *b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_slice(line).unwrap())
            .collect()
    }

    /// Send a request as the server itself (no authentication).
    pub fn send(&self, method: &str, uri: &str, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut req = http::Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req.body(Bytes::from(body.to_owned())).unwrap();
        self.drive(self.server.handle_as_system(req, self.inputs()))
    }

    /// Send a JSON body (none for `Value::Null`).
    pub fn call(&self, method: &str, uri: &str, body: Value) -> Reply {
        let body = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        self.send(method, uri, &[("content-type", "application/json")], &body)
    }
}

/// `manager/operation` of each entry of an object's managed fields, in order.
pub fn managers(object: &Value) -> Vec<String> {
    object["metadata"]["managedFields"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|e| {
                    format!(
                        "{}/{}",
                        e["manager"].as_str().unwrap(),
                        e["operation"].as_str().unwrap()
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

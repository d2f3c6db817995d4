//! Custom resources converted by their CRD's webhook around storage, as upstream's
//! apiextensions server converts in its storage codec: what a request writes is
//! converted to the storage version before it is stored, and every object storage
//! answers (a get, a list, a write's result, a conflict's current object) to the
//! version the request is served in, before the handler sees it. So the handlers work
//! in the served version throughout, as they do for any other resource.
//!
//! Each conversion is one outbound call (a ConversionReview with every object that is
//! not in the wanted version yet; none when all are). A conversion that fails answers
//! 500 with upstream's words, and nothing is written.

use super::scope::Scope;
use crate::effect::{PendingCall, Step};
use crate::registry::Served;
use crate::resources::customresources::conversion_review::Review;
use crate::resources::customresources::{ConversionWebhook, Endpoints};
use crate::status::ApiError;
use crate::storage::{object_key, resource_prefix, Completion, KeyValue, StorageError, StorageOp, StorageOutput};
use serde_json::{json, Value};

/// What the handler does once storage answered, in the served version.
pub(super) type Next = Box<dyn FnOnce(Scope, Completion) -> Step + Send>;

/// Run `op` for a resource converted by `scope`'s webhook, then `next`.
pub(super) fn around_storage(scope: Scope, op: StorageOp, next: Next) -> Step {
    ToStorage { op, next }.start(scope)
}

/// A write's value on its way to the storage version.
struct ToStorage {
    op: StorageOp,
    next: Next,
}

impl ToStorage {
    fn start(mut self, scope: Scope) -> Step {
        let Some(value) = written_value(&mut self.op) else {
            return Stored { next: self.next }.store(scope, self.op);
        };
        let object = match serde_json::from_slice::<Value>(value) {
            Ok(object) => object,
            Err(e) => return scope.fail(ApiError::internal(e.to_string())),
        };
        let desired = webhook(&scope).stored.clone();
        match convert(&scope, object, &desired, 0) {
            Err(e) => scope.fail(ApiError::internal(e)),
            Ok(Ok(converted)) => self.converted(scope, Ok(converted)),
            Ok(Err((review, outbound))) => {
                Step::Call(outbound, PendingCall::new(move |outcome| self.converted(scope, review.outcome(outcome))))
            }
        }
    }

    fn converted(mut self, scope: Scope, converted: Result<Value, String>) -> Step {
        match converted {
            Ok(object) => {
                if let Some(value) = written_value(&mut self.op) {
                    *value = serde_json::to_vec(&object).unwrap_or_default().into();
                }
                Stored { next: self.next }.store(scope, self.op)
            }
            Err(e) => scope.fail(ApiError::internal(e)),
        }
    }
}

/// Storage's answer on its way to the served version.
struct Stored {
    next: Next,
}

impl Stored {
    fn store(self, scope: Scope, op: StorageOp) -> Step {
        Step::storage(op, move |done| self.answered(scope, done))
    }

    fn answered(self, scope: Scope, mut done: Completion) -> Step {
        let values = answered_values(&mut done);
        if values.is_empty() {
            return (self.next)(scope, done);
        }
        let objects: Result<Vec<Value>, String> =
            values.iter().map(|v| serde_json::from_slice::<Value>(v).map_err(|e| e.to_string())).collect();
        let objects = match objects {
            Ok(objects) => objects,
            Err(e) => return scope.fail(ApiError::internal(e)),
        };
        let count = objects.len();
        let hook = webhook(&scope);
        let (desired, stored) = (hook.served.clone(), hook.stored.clone());
        // One object is converted as one; several (a list, a write and its conflict) as
        // the items of a list, in one review.
        let input = if count == 1 {
            objects.into_iter().next().unwrap_or(Value::Null)
        } else {
            json!({"apiVersion": stored, "kind": format!("{}List", scope.resource().kind), "metadata": {}, "items": objects})
        };
        match convert(&scope, input, &desired, 1) {
            Err(e) => scope.fail(ApiError::internal(e)),
            Ok(Ok(converted)) => self.converted(scope, done, count, Ok(converted)),
            Ok(Err((review, outbound))) => Step::Call(
                outbound,
                PendingCall::new(move |outcome| self.converted(scope, done, count, review.outcome(outcome))),
            ),
        }
    }

    fn converted(self, scope: Scope, mut done: Completion, count: usize, converted: Result<Value, String>) -> Step {
        let converted = match converted {
            Ok(converted) if count == 1 => vec![converted],
            Ok(mut list) => match list.get_mut("items").map(Value::take) {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            },
            Err(e) => return scope.fail(ApiError::internal(e)),
        };
        for (value, object) in answered_values(&mut done).into_iter().zip(converted) {
            *value = serde_json::to_vec(&object).unwrap_or_default().into();
        }
        (self.next)(scope, done)
    }
}

/// The webhook of the request's resource (the caller checked there is one).
fn webhook(scope: &Scope) -> &ConversionWebhook {
    scope.resource().strategy.conversion_webhook().expect("only resources with a conversion webhook are converted here")
}

/// Start converting `input` to `desired` for this request; `n` tells the request's
/// reviews apart.
pub(super) fn convert(
    scope: &Scope,
    input: Value,
    desired: &str,
    n: u8,
) -> Result<Result<Value, (Review, crate::effect::Outbound)>, String> {
    let endpoints = CachedEndpoints { served: &scope.shared.served, root: &scope.shared.config.storage_prefix };
    webhook(scope).convert(input, desired, &review_uid(scope, n), &endpoints)
}

/// A review's UID: drawn from the request's entropy (its audit ID's bytes, which no
/// object gets), told apart by `n`.
fn review_uid(scope: &Scope, n: u8) -> String {
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&scope.inputs.entropy[32..48]);
    bytes[15] ^= n;
    super::object::uuid_v4(&bytes)
}

/// The value a write stores.
fn written_value(op: &mut StorageOp) -> Option<&mut bytes::Bytes> {
    match op {
        StorageOp::Create { value, .. } | StorageOp::Update { value, .. } => Some(value),
        _ => None,
    }
}

/// Every stored object in storage's answer, in order.
fn answered_values(done: &mut Completion) -> Vec<&mut bytes::Bytes> {
    let kvs: Vec<&mut KeyValue> = match done {
        Ok(StorageOutput::Got { kv: Some(kv), .. }) | Ok(StorageOutput::Written(kv)) => vec![kv],
        Ok(StorageOutput::Deleted { prev, .. }) => vec![prev],
        Ok(StorageOutput::Listed(page)) => page.items.iter_mut().collect(),
        Err(StorageError::Conflict { current, .. }) => vec![current],
        _ => Vec::new(),
    };
    kvs.into_iter().map(|kv| &mut kv.value).collect()
}

/// Services and their endpoints as the watch caches hold them.
pub(crate) struct CachedEndpoints<'a> {
    pub served: &'a Served,
    pub root: &'a str,
}

impl CachedEndpoints<'_> {
    pub(crate) fn object(&self, resource: &str, namespace: &str, name: &str) -> Result<Value, String> {
        let prefix = resource_prefix(self.root, "", resource, None);
        let key = object_key(self.root, "", resource, Some(namespace), name);
        let kv = self.served.caches().get(&prefix).and_then(|cache| cache.get(&key)).flatten();
        let kv = kv.ok_or_else(|| format!("{resource} {} not found", crate::schema::go_quote(name)))?;
        serde_json::from_slice(&kv.value).map_err(|e| e.to_string())
    }
}

/// Upstream's `ResolveEndpoint`: the Service's port of that number, then the first
/// endpoint address with a port of the same name. An ExternalName Service is its
/// external name at the port asked for, as upstream's default resolver
/// (`ResolveCluster`) has it: the way to reach a webhook on this machine, since
/// endpoints may not be loopback addresses.
impl Endpoints for CachedEndpoints<'_> {
    fn resolve(&self, namespace: &str, name: &str, port: i64) -> Result<String, String> {
        let service = self.object("services", namespace, name)?;
        let kind = service.pointer("/spec/type").and_then(Value::as_str).unwrap_or("ClusterIP");
        if kind == "ExternalName" {
            let host = service.pointer("/spec/externalName").and_then(Value::as_str).unwrap_or("");
            return Ok(format!("{host}:{port}"));
        }
        if !["ClusterIP", "LoadBalancer", "NodePort"].contains(&kind) {
            return Err(format!("unsupported service type {}", crate::schema::go_quote(kind)));
        }
        let port_name = service_port_name(&service, port)
            .ok_or_else(|| format!("no service port {port} found for service {}", crate::schema::go_quote(name)))?;
        let unavailable = || format!("no endpoints available for service {}", crate::schema::go_quote(name));
        let endpoints = self.object("endpoints", namespace, name).map_err(|_| unavailable())?;
        endpoint_address(&endpoints, port_name).ok_or_else(unavailable)
    }
}

/// The name of a Service's port numbered `port` (`""` when unnamed), if it has one.
pub(crate) fn service_port_name(service: &Value, port: i64) -> Option<&str> {
    let ports = service.pointer("/spec/ports").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    ports
        .iter()
        .find(|p| p.get("port").and_then(Value::as_i64) == Some(port))
        .map(|p| p.get("name").and_then(Value::as_str).unwrap_or(""))
}

/// `host:port` of the first address of an Endpoints object's subset that has a port
/// named `port_name`.
pub(crate) fn endpoint_address(endpoints: &Value, port_name: &str) -> Option<String> {
    let subsets = endpoints.get("subsets").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    subsets.iter().find_map(|subset| {
        let ip = subset.pointer("/addresses/0/ip").and_then(Value::as_str)?;
        let ports = subset.get("ports").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let matching = ports.iter().find(|p| p.get("name").and_then(Value::as_str).unwrap_or("") == port_name)?;
        let port = matching.get("port").and_then(Value::as_i64).unwrap_or(0);
        Some(if ip.contains(':') { format!("[{ip}]:{port}") } else { format!("{ip}:{port}") })
    })
}

//! What a resource handler knows about its request, and the answers and storage steps
//! every handler builds from it.

use super::object;
use super::read_at;
use super::response::{encoded, error_response};
use crate::authn::UserInfo;
use crate::effect::{Inputs, Step};
use crate::negotiation::{self, Output};
use crate::query::Query;
use crate::registry::{Resource, Snapshot};
use crate::resources::Handler;
use crate::schema;
use crate::shared::Shared;
use crate::status::ApiError;
use crate::storage::{Completion, KeyValue, StorageError, StorageOp, StorageOutput};
use bytes::Bytes;
use serde_json::Value;
use std::sync::Arc;

/// Everything a resource handler knows about its request.
pub(crate) struct Scope {
    pub shared: Arc<Shared>,
    /// The registry as it was when the request was routed: the request sees no
    /// resource join or leave.
    pub registry: Snapshot,
    /// The resource the request was routed to.
    pub resource: Arc<Resource>,
    pub namespace: Option<String>,
    pub name: String,
    pub subresource: String,
    pub query: Query,
    pub output: Output,
    pub inputs: Inputs,
    pub content_type: Option<String>,
    /// The User-Agent header: who a write is recorded as when it names no manager.
    pub user_agent: Option<String>,
    pub body: Bytes,
    /// Who the request acts as (after impersonation): what admission is told.
    pub user: UserInfo,
    /// What admission noted as the request went (warnings, audit annotations), sent
    /// with its answer.
    pub notes: Arc<std::sync::Mutex<crate::admission::Notes>>,
}

impl Scope {
    /// Keep what admission noted for the response.
    pub fn keep_notes(&self, notes: &crate::admission::Notes) {
        if let Ok(mut kept) = self.notes.lock() {
            for w in &notes.warnings {
                kept.warn(w.clone());
            }
            kept.audit_annotations.extend(notes.audit_annotations.clone());
        }
    }

    /// What a write that grants permissions is checked with.
    pub fn grants(&self) -> crate::authorization::escalation::Grants<'_> {
        crate::authorization::escalation::Grants {
            shared: &self.shared,
            user: &self.user,
            namespace: self.namespace.as_deref().unwrap_or(""),
            resource: &self.resource.plural,
            name: &self.name,
        }
    }

    pub fn resource(&self) -> &Resource {
        &self.resource
    }

    pub fn key(&self, name: &str) -> String {
        self.resource().storage_key(&self.shared.config.storage_prefix, self.namespace.as_deref(), name)
    }

    pub fn prefix(&self) -> String {
        self.resource().storage_prefix(&self.shared.config.storage_prefix, self.namespace.as_deref())
    }

    /// Who serves this request's subresource, as the resource's strategy says; `None`
    /// on the resource itself, or for a subresource it does not serve.
    pub fn subresource_handler(&self) -> Option<Handler> {
        if self.subresource.is_empty() {
            return None;
        }
        self.resource().strategy.subresource(&self.subresource)
    }

    /// The object at `key` as the watch cache of its resource holds it (`Some(None)`:
    /// none); `None` when no fed cache can tell.
    pub fn cached(&self, key: &str) -> Option<Option<KeyValue>> {
        self.shared.served.with_caches(|caches| caches.of_key(key)?.get(key))
    }

    /// The group, version and kind of the objects this request reads and writes: the
    /// resource's own, or its subresource's where that has a kind of its own (`Scale` of
    /// `autoscaling/v1` on `deployments/{name}/scale`).
    pub fn body_kind(&self) -> (&str, &str, &str) {
        let r = self.resource();
        match r.subresource(&self.subresource) {
            Some(sub) => (
                sub.group.as_deref().unwrap_or(&r.group),
                sub.version.as_deref().unwrap_or(&r.version),
                &sub.kind,
            ),
            None => (&r.group, &r.version, &r.kind),
        }
    }

    /// The apiVersion of [`Scope::body_kind`].
    fn body_api_version(&self) -> String {
        match self.body_kind() {
            ("", version, _) => version.to_owned(),
            (group, version, _) => format!("{group}/{version}"),
        }
    }

    /// Respond with `value` in the negotiated encoding: as metadata only when the
    /// client asked for PartialObjectMetadata(List), as upstream's transformResponseObject.
    pub fn respond(&self, code: u16, value: &Value) -> Step {
        match super::partial::transform(self.output.shape, value) {
            Ok(Some(partial)) => Step::Respond(encoded(self.output, code, &partial)),
            Ok(None) => Step::Respond(encoded(self.output, code, value)),
            Err(e) => self.fail(e),
        }
    }

    /// A stored object as this request's resource shows it now: in the served version,
    /// and for a custom resource shaped by its current schema (pruned and defaulted, so
    /// a default added to the CRD shows on objects stored before it).
    pub fn read(&self, kv: &KeyValue) -> Result<object::Object, String> {
        let mut obj = object::from_storage(kv)?;
        let resource = self.resource();
        resource.strategy.read_stored(&mut obj);
        resource.schema.shape_stored(&mut obj);
        // Objects stored before a default existed show it, as upstream's decoding
        // from etcd defaults them.
        resource.strategy.default(&mut obj);
        Ok(obj)
    }

    /// Whether this request's body is a whole object of the resource's own kind (the
    /// resource itself, its status, a part of its spec or a namespace's finalize), rather than another
    /// kind a subresource takes (a Scale).
    pub fn writes_whole_object(&self) -> bool {
        matches!(
            self.subresource_handler(),
            None | Some(Handler::Status | Handler::Approval | Handler::Finalize | Handler::Part(_))
        )
    }

    /// The bytes storage keeps for `obj`, as this request's resource stores it.
    pub fn stored(&self, mut obj: object::Object) -> Bytes {
        self.resource().strategy.write_stored(&mut obj);
        object::into_storage(obj)
    }

    /// `obj` as a read of it would show it once stored: what a dry run answers. The
    /// same object unless the resource converts what it stores (events.k8s.io Events
    /// stored as core Events show the fields Go's encoder writes for them).
    pub fn as_if_stored(&self, mut obj: object::Object) -> object::Object {
        let strategy = &self.resource().strategy;
        if strategy.transforms_reads() {
            strategy.write_stored(&mut obj);
            strategy.read_stored(&mut obj);
        }
        obj
    }

    /// Whether stored bytes may be served as they are (with the resourceVersion
    /// spliced in): not when the resource shows stored objects changed.
    pub fn splices(&self) -> bool {
        let resource = self.resource();
        !resource.strategy.transforms_reads() && resource.schema.serves_stored_as_is()
    }

    /// Whether this request's protobuf answer can be made from stored bytes alone: plain
    /// objects of a built-in kind, served as stored.
    pub fn protobuf_from_stored_bytes(&self) -> bool {
        self.output.format == negotiation::Format::Protobuf
            && self.output.shape == negotiation::Shape::Object
            && self.splices()
            && self.resource().has_protobuf()
    }

    /// The protobuf messages of `objects` (as list items: no envelope), made from their
    /// stored JSON: those the resource's watch cache kept, the rest made now and kept
    /// there until their object changes. `None` for one that cannot be made so.
    pub fn protobuf_items(&self, objects: &[KeyValue]) -> Vec<Option<Bytes>> {
        let cache = self.shared.watch_cache_of(self.resource());
        let r = self.resource();
        let (api_version, kind) = (r.api_version(), r.kind.clone());
        let mut items = match &cache {
            Some(cache) => cache.protobuf_items(objects, &api_version),
            None => vec![None; objects.len()],
        };
        let mut made = Vec::new();
        for (kv, item) in objects.iter().zip(items.iter_mut()).filter(|(_, item)| item.is_none()) {
            let encoded = crate::stored_json::serve(&kv.value, kv.mod_revision, false)
                .and_then(|json| serde_json::from_slice::<serde_json::Value>(&json).ok())
                .and_then(|object| crate::protobuf::encode_item(&api_version, &kind, &object).ok())
                .map(Bytes::from);
            if let Some(encoded) = &encoded {
                made.push((kv, encoded.clone()));
            }
            *item = encoded;
        }
        if let Some(cache) = cache.filter(|_| !made.is_empty()) {
            cache.keep_protobuf_items(made, &api_version);
        }
        items
    }

    /// Answer `code` with the object this request has just written: for plain JSON its
    /// stored bytes with the resourceVersion spliced in (no parse and re-encode; they
    /// are what the resource's schema made them already) unless the resource serves
    /// another version than it stores, otherwise decoded.
    pub fn respond_written(&self, code: u16, kv: &KeyValue) -> Step {
        if self.output == negotiation::Output::JSON && !self.resource().strategy.transforms_reads() {
            if let Some(mut body) = crate::stored_json::serve(&kv.value, kv.mod_revision, false) {
                body.push(b'\n');
                let response = http::Response::builder()
                    .status(code)
                    .header(http::header::CONTENT_TYPE, self.output.content_type())
                    .body(Bytes::from(body))
                    .expect("valid status and header");
                return Step::Respond(response);
            }
        }
        match self.read(kv) {
            Ok(stored) => self.respond(code, &Value::Object(stored)),
            Err(e) => self.fail(ApiError::internal(e)),
        }
    }

    /// Respond with an error Status, in the negotiated format.
    pub fn fail(&self, error: ApiError) -> Step {
        Step::Respond(error_response(&error, self.output))
    }

    /// The error a storage failure becomes for this request's object `name`.
    pub fn storage_error(&self, name: &str, error: StorageError) -> ApiError {
        let r = self.resource();
        match error {
            StorageError::AlreadyExists { .. } => ApiError::already_exists(&r.group, &r.plural, name),
            StorageError::NotFound { .. } => ApiError::not_found(&r.group, &r.plural, name),
            StorageError::Conflict { .. } => ApiError::modified(&r.group, &r.plural, name),
            StorageError::Compacted { .. } => {
                ApiError::gone("The resourceVersion for the provided list is too old.")
            }
            StorageError::FutureRevision { requested, current } => read_at::too_large(requested, current),
            StorageError::Unavailable(why) => ApiError::service_unavailable(why),
            StorageError::Internal(why) => ApiError::internal(why),
        }
    }

    /// Ask for a storage operation and continue with `next`.
    pub fn then(
        self,
        op: StorageOp,
        next: impl FnOnce(Scope, Completion) -> Step + Send + 'static,
    ) -> Step {
        if self.resource().strategy.conversion_webhook().is_some() {
            return super::conversion::around_storage(self, op, Box::new(next));
        }
        Step::storage(op, move |done| next(self, done))
    }

    /// Read the object this request names and continue with it; a missing object is
    /// answered with NotFound.
    pub fn with_current(self, next: impl FnOnce(Scope, KeyValue) -> Step + Send + 'static) -> Step {
        self.with_current_checked(read_at::ReadAt::Latest, next)
    }

    /// [`Scope::with_current`], failing when the store is older than `read_at` asks.
    pub fn with_current_checked(
        self,
        read_at: read_at::ReadAt,
        next: impl FnOnce(Scope, KeyValue) -> Step + Send + 'static,
    ) -> Step {
        let key = self.key(&self.name);
        self.then(StorageOp::Get { key }, move |scope, done| match done {
            Ok(StorageOutput::Got { kv, revision }) => match (read_at.check(revision), kv) {
                (Err(e), _) => scope.fail(e),
                (Ok(()), Some(current)) => next(scope, current),
                (Ok(()), None) => {
                    let r = scope.resource();
                    let e = ApiError::not_found(&r.group, &r.plural, &scope.name);
                    scope.fail(e)
                }
            },
            other => scope.fail_storage(&scope.name.clone(), other),
        })
    }

    /// Answer a storage outcome the handler did not expect: an error, or an answer of the
    /// wrong kind.
    pub fn fail_storage(&self, name: &str, outcome: Completion) -> Step {
        let e = match outcome {
            Err(e) => self.storage_error(name, e),
            Ok(other) => ApiError::internal(format!("unexpected storage answer {other:?}")),
        };
        self.fail(e)
    }

    /// Decode the request body as an object of this resource, as a create or update
    /// (`options` names its options kind: `CreateOptions`, `UpdateOptions`) decodes it:
    /// against the kind's schema under the request's `fieldValidation`. Returns the object
    /// and the warnings to send with the response.
    pub fn decode_body(&self, options: &str) -> Result<(object::Object, Vec<String>), ApiError> {
        let format = negotiation::negotiate_input(self.content_type.as_deref())?;
        self.decode_as(format, &self.body, options)
    }

    /// [`Scope::decode_body`] for bytes in a known format (a patched object).
    pub fn decode_as(
        &self,
        format: negotiation::Format,
        body: &[u8],
        options: &str,
    ) -> Result<(object::Object, Vec<String>), ApiError> {
        self.decode_with(format, body, options, false)
    }

    /// [`Scope::decode_as`] of a server-side apply configuration: without a custom
    /// resource's defaults, which the merged object gets instead.
    pub fn decode_apply_config(
        &self,
        format: negotiation::Format,
        body: &[u8],
    ) -> Result<(object::Object, Vec<String>), ApiError> {
        self.decode_with(format, body, "PatchOptions", true)
    }

    fn decode_with(
        &self,
        format: negotiation::Format,
        body: &[u8],
        options: &str,
        apply_config: bool,
    ) -> Result<(object::Object, Vec<String>), ApiError> {
        let (group, version, kind) = self.body_kind();
        let validation = schema::FieldValidation::from_query(self.query.get("fieldValidation"))
            .map_err(|e| ApiError::invalid("meta.k8s.io", options, "", vec![e]))?;
        let unrecognized = |e: &str| {
            ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: {e}"
            ))
        };
        // A resource's own schema describes its own kind; a subresource's kind of
        // another type (Scale) keeps the generated one.
        let r = &self.resource;
        let own_kind = group == r.group && version == r.version && kind == r.kind;
        let schema = if own_kind { &self.resource.schema } else { &schema::ResourceSchema::Builtin };
        let decoded = if apply_config {
            schema.decode_apply_config(format, body, (group, version, kind), validation)
        } else {
            schema.decode(format, body, (group, version, kind), validation)
        };
        let (obj, warnings) = match decoded {
            Ok(d) => (d.object, d.warnings),
            Err(e @ (schema::DecodeError::Syntax(_) | schema::DecodeError::NotAnObject)) => {
                return Err(unrecognized(&e.reason()))
            }
            Err(e) => {
                // The apiVersion and kind are checked before the body is decoded.
                if let Ok(Value::Object(plain)) = negotiation::decode(format, body) {
                    self.check_type_meta(&plain)?;
                }
                return Err(ApiError::bad_request(format!(
                    "{kind} in version \"{version}\" cannot be handled as a {kind}: {}",
                    e.reason()
                )));
            }
        };
        self.check_type_meta(&obj)?;
        let mut obj = obj;
        obj.insert("apiVersion".into(), Value::String(self.body_api_version()));
        obj.insert("kind".into(), Value::String(kind.to_owned()));
        if own_kind && !apply_config {
            r.strategy.decoded(&mut obj);
        }
        Ok((obj, warnings))
    }

    /// The apiVersion and kind of a body, when given, must be this resource's.
    fn check_type_meta(&self, obj: &object::Object) -> Result<(), ApiError> {
        let expected_kind = self.body_kind().2;
        let expected_version = self.body_api_version();
        let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        if !api_version.is_empty() && api_version != expected_version {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({expected_version})"
            )));
        }
        if !kind.is_empty() && kind != expected_kind {
            let version = api_version.rsplit('/').next().unwrap_or("");
            return Err(ApiError::bad_request(format!(
                "{kind} in version \"{version}\" cannot be handled as a {expected_kind}: no kind \"{kind}\" is registered for version \"{api_version}\" in scheme"
            )));
        }
        Ok(())
    }
}

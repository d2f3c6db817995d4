//! The OpenAPI documents: `/openapi/v2` (Swagger 2.0, as JSON and as gnostic protobuf)
//! and `/openapi/v3` (the discovery document and one OpenAPI 3.0 document per
//! group-version), built from the registry and the schema definitions.
//!
//! Nothing is built at startup. The first request for a version builds its documents,
//! encodes them, hashes them (SHA-512, as kube-openapi names them) and keeps only the
//! encoded bytes in a [`OnceLock`]; every later request is a lookup plus the conditional
//! GET logic in [`handler`]. The built-in registry's documents are built once per
//! process; a server whose registry changed keeps the documents of its latest
//! generation ([`DocumentCache`]), so each change costs one build, on first request.
//!
//! Resources that bring their own schema ([`crate::schema::ResourceSchema::Custom`])
//! add their definitions to the built-in ones.
//!
//! - [`spec`] builds the Swagger 2.0 document: paths for every operation of every
//!   resource of the registry, shared parameters, and the definitions;
//! - [`v3`] derives the OpenAPI 3.0 documents from it;
//! - [`gnostic`] is the protobuf form of v2 that kubectl downloads, and [`gnostic_v3`]
//!   that of each v3 document;
//! - [`handler`] answers the HTTP requests (content negotiation, ETag, 304, the
//!   hash-pinned URLs of v3).

pub mod gnostic;
pub mod gnostic_v3;
mod handler;
pub(crate) mod sha512;
pub mod spec;
pub mod v3;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod gnostic_v3_tests;

use crate::registry::{Registry, Snapshot};
use bytes::Bytes;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

pub use handler::{PROTOBUF_V2_CONTENT_TYPE, PROTOBUF_V2_MEDIA_TYPES};
pub use handler::{PROTOBUF_V3_CONTENT_TYPE, PROTOBUF_V3_MEDIA_TYPES};
pub use spec::{v2_document, KUBERNETES_VERSION};

/// The schema definitions of every built-in kind: the OpenAPI v2 `definitions` map,
/// generated into the `schema` module.
const BUILTIN_DEFINITIONS: &str = include_str!("../schema/definitions.json");

/// One encoded document and the hash that names it.
#[derive(Clone, Debug)]
pub struct Encoded {
    /// The document's bytes.
    pub bytes: Bytes,
    /// SHA-512 of the JSON, 128 upper-case hex digits: the ETag (quoted) and the
    /// `?hash=` value.
    pub hash: String,
}

/// `/openapi/v2`, encoded.
#[derive(Debug)]
pub struct V2 {
    /// The JSON document.
    pub json: Bytes,
    /// The gnostic protobuf encoding of the same document.
    pub protobuf: Bytes,
    /// The hash of the JSON, which names both encodings (responses vary by Accept).
    pub hash: String,
    /// When the documents were built (`Last-Modified`).
    pub built: SystemTime,
}

/// One `/openapi/v3/<key>` document, in both encodings.
#[derive(Clone, Debug)]
pub struct V3Document {
    /// The JSON document.
    pub bytes: Bytes,
    /// The gnostic protobuf encoding of the same document, made the first time a client
    /// asks for it (few do: kubectl and client-go read v3 as JSON) and kept.
    protobuf: std::sync::OnceLock<Bytes>,
    /// SHA-512 of the JSON, which names both encodings (kube-openapi gives the protobuf
    /// the JSON's ETag).
    pub hash: String,
}

impl V3Document {
    /// The gnostic protobuf encoding of the document.
    pub fn protobuf(&self) -> &Bytes {
        self.protobuf.get_or_init(|| {
            let doc: Value = serde_json::from_slice(&self.bytes).expect("the document is JSON Apiary wrote");
            Bytes::from(gnostic_v3::Document::encode_json(&doc))
        })
    }
}

/// `/openapi/v3`, encoded.
#[derive(Debug)]
pub struct V3 {
    /// The discovery document: `{"paths": {"<key>": {"serverRelativeURL": …}}}`.
    pub root: Encoded,
    /// One document per key (`api/v1`, `apis/apps/v1`, `apis`, `version`, …).
    pub documents: BTreeMap<String, V3Document>,
    /// When the documents were built (`Last-Modified`).
    pub built: SystemTime,
}

/// The OpenAPI documents of one registry, built on first use.
pub struct OpenApi {
    registry: Registry,
    definitions: &'static str,
    v2: OnceLock<V2>,
    v3: OnceLock<V3>,
}

impl OpenApi {
    /// The documents of `registry` with the built-in schema definitions.
    pub fn new(registry: Registry) -> OpenApi {
        OpenApi::with_definitions(registry, BUILTIN_DEFINITIONS)
    }

    /// The documents of `registry` with `definitions` (JSON: the v2 `definitions` map,
    /// bare or under a `definitions` key) as the schemas.
    pub fn with_definitions(registry: Registry, definitions: &'static str) -> OpenApi {
        OpenApi {
            registry,
            definitions,
            v2: OnceLock::new(),
            v3: OnceLock::new(),
        }
    }

    /// The registry the documents describe.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The schema definitions, parsed, with those of resources that bring their own.
    pub fn definitions(&self) -> Map<String, Value> {
        let mut definitions = self.parsed_definitions();
        crate::schema::enums::apply(&mut definitions);
        for r in self.registry.resources() {
            if let crate::schema::ResourceSchema::Custom(schema) = &r.schema {
                definitions.extend(schema.definitions(&r.group, &r.version, &r.kind));
            }
        }
        definitions
    }

    fn parsed_definitions(&self) -> Map<String, Value> {
        match serde_json::from_str::<Value>(self.definitions) {
            Ok(Value::Object(mut m)) => match m.remove("definitions") {
                Some(Value::Object(inner)) if m.is_empty() => inner,
                Some(other) => {
                    m.insert("definitions".into(), other);
                    m
                }
                None => m,
            },
            Ok(_) | Err(_) => {
                tracing::error!(
                    "the OpenAPI schema definitions are not a JSON object; serving none"
                );
                Map::new()
            }
        }
    }

    /// The Swagger 2.0 document as a JSON value (built afresh; not cached).
    pub fn v2_document(&self) -> Value {
        spec::v2_document(&self.registry, self.definitions())
    }

    /// The OpenAPI 3.0 documents as JSON values, by key (built afresh; not cached).
    pub fn v3_documents(&self) -> BTreeMap<String, Value> {
        v3::documents(&self.v2_document())
    }

    /// `/openapi/v2`, built and encoded on the first call; `now` is recorded as the
    /// build time.
    pub fn v2(&self, now: SystemTime) -> &V2 {
        self.v2.get_or_init(|| {
            let doc = self.v2_document();
            let json = serde_json::to_vec(&doc).expect("a JSON value serializes");
            let protobuf = prost::Message::encode_to_vec(&gnostic::Document::from_json(&doc));
            V2 {
                hash: sha512::hex_upper(&json),
                json: Bytes::from(json),
                protobuf: Bytes::from(protobuf),
                built: now,
            }
        })
    }

    /// `/openapi/v3`, built and encoded on the first call; `now` is recorded as the
    /// build time.
    pub fn v3(&self, now: SystemTime) -> &V3 {
        self.v3.get_or_init(|| {
            let mut documents: BTreeMap<String, V3Document> = BTreeMap::new();
            v3::each_document(&self.v2_document(), |key, doc| {
                let json = serde_json::to_vec(&doc).expect("a JSON value serializes");
                let encoded = V3Document {
                    hash: sha512::hex_upper(&json),
                    bytes: Bytes::from(json),
                    protobuf: std::sync::OnceLock::new(),
                };
                documents.insert(key, encoded);
            });
            V3 {
                root: index(&documents, &Map::new()),
                documents,
                built: now,
            }
        })
    }

    /// The `/openapi/v3` index with the entries of `remote` (extension servers'
    /// documents, by key) beside and over the server's own.
    pub(crate) fn v3_index(&self, now: SystemTime, remote: &Map<String, Value>) -> Encoded {
        index(&self.v3(now).documents, remote)
    }

    /// Whether the v2 documents have been built.
    pub fn v2_built(&self) -> bool {
        self.v2.get().is_some()
    }

    /// Whether the v3 documents have been built.
    pub fn v3_built(&self) -> bool {
        self.v3.get().is_some()
    }

    /// Answers a request for `/openapi/v2`, `/openapi/v3` or `/openapi/v3/<key>`;
    /// `None` for any other path.
    pub fn handle(
        &self,
        method: &http::Method,
        path: &str,
        query: &crate::query::Query,
        headers: &http::HeaderMap,
        now: SystemTime,
    ) -> Option<http::Response<Bytes>> {
        handler::handle(self, method, path, query, headers, now, &Map::new())
    }
}

/// The `/openapi/v3` index: `{"paths": {"<key>": {"serverRelativeURL": …}}}`, each of
/// `documents` named by its hash, then the entries of `remote` as they are. Keys are
/// in order, as Go writes a map.
fn index(documents: &BTreeMap<String, V3Document>, remote: &Map<String, Value>) -> Encoded {
    let mut paths: BTreeMap<&str, Value> = documents
        .iter()
        .map(|(key, doc)| {
            let url = handler::server_relative_url(key, &doc.hash);
            (key.as_str(), serde_json::json!({ "serverRelativeURL": url }))
        })
        .collect();
    paths.extend(remote.iter().map(|(key, entry)| (key.as_str(), entry.clone())));
    let root = serde_json::to_vec(&serde_json::json!({ "paths": paths })).expect("a JSON value serializes");
    Encoded {
        hash: sha512::hex_upper(&root),
        bytes: Bytes::from(root),
    }
}

/// The documents of the built-in registry, shared by every server in the process.
fn builtin() -> &'static Arc<OpenApi> {
    static BUILTIN: OnceLock<Arc<OpenApi>> = OnceLock::new();
    BUILTIN.get_or_init(|| Arc::new(OpenApi::new(Registry::builtin())))
}

/// The documents of the registry one server serves, kept for its latest generation.
#[derive(Default)]
pub(crate) struct DocumentCache {
    latest: Mutex<Option<(u64, Arc<OpenApi>)>>,
}

impl DocumentCache {
    /// Answer an OpenAPI request against `snapshot` (`None` when `path` is not an
    /// OpenAPI endpoint), with the documents kept for its generation, made (and
    /// kept, when it is the newest seen) on its first request. A registry equal to the
    /// built-in one uses the process-wide documents. The v3 index lists the entries of
    /// `remote` too (extension servers' documents, by key).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn serve(
        &self,
        snapshot: &Snapshot,
        method: &http::Method,
        path: &str,
        query: &crate::query::Query,
        headers: &http::HeaderMap,
        now: SystemTime,
        remote: &Map<String, Value>,
    ) -> Option<http::Response<Bytes>> {
        if !is_openapi_path(path) {
            return None;
        }
        handler::handle(&self.documents(snapshot), method, path, query, headers, now, remote)
    }

    fn documents(&self, snapshot: &Snapshot) -> Arc<OpenApi> {
        let mut latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
        match &*latest {
            Some((generation, docs)) if *generation == snapshot.generation() => return docs.clone(),
            // A request routed before the latest change: its own documents, not kept.
            Some((generation, _)) if *generation > snapshot.generation() => {
                drop(latest);
                return Arc::new(OpenApi::new(Registry::clone(snapshot)));
            }
            _ => {}
        }
        let builtin = builtin();
        // Documents are built lazily, on their first request, outside this lock.
        let docs = if builtin.registry() == &**snapshot {
            builtin.clone()
        } else {
            Arc::new(OpenApi::new(Registry::clone(snapshot)))
        };
        *latest = Some((snapshot.generation(), docs.clone()));
        docs
    }
}

/// Whether `path` is one of the OpenAPI endpoints.
pub fn is_openapi_path(path: &str) -> bool {
    path == "/openapi/v2" || path == "/openapi/v3" || path.starts_with("/openapi/v3/")
}


//! What plugins read before they decide: objects by key and lists by prefix, served
//! from the watch caches when they are fed (as upstream's plugins read their
//! informers' listers) and from storage otherwise, or when a write raced.

use crate::rest::object::Object;
use crate::storage::{KeyValue, Revision};

/// One read a plugin needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Read {
    /// The object at `key`, or that there is none.
    Object { key: String },
    /// Every object under `prefix`.
    Objects { prefix: String },
}

/// An object as read, with where it is stored and at which revision (what a
/// compare-and-swap of it names).
#[derive(Clone, Debug)]
pub struct Stored {
    pub key: String,
    pub revision: Revision,
    /// Shared with the watch cache that parsed it, when one did.
    pub object: std::sync::Arc<Object>,
}

impl Stored {
    /// Read from storage's bytes; `None` when they are not a JSON object.
    pub fn from_kv(kv: &KeyValue) -> Option<Stored> {
        let object = crate::rest::object::from_storage(kv).ok()?;
        Some(Stored { key: kv.key.clone(), revision: kv.mod_revision, object: std::sync::Arc::new(object) })
    }

    /// As a watch cache parsed it.
    pub fn parsed(kv: &KeyValue, object: std::sync::Arc<Object>) -> Stored {
        Stored { key: kv.key.clone(), revision: kv.mod_revision, object }
    }
}

/// The answer to a [`Read`].
#[derive(Clone, Debug)]
pub enum Answer {
    Object(Option<Stored>),
    Objects(Vec<Stored>),
}

impl Answer {
    /// The answer read from storage's values.
    pub fn from_kvs(read: &Read, kvs: &[KeyValue]) -> Answer {
        let stored = kvs.iter().filter_map(Stored::from_kv);
        match read {
            Read::Object { .. } => Answer::Object(stored.into_iter().next()),
            Read::Objects { .. } => Answer::Objects(stored.collect()),
        }
    }
}

/// Reads answered without storage: the watch caches. `None` when no fed cache can
/// tell. Webhooks' Services are resolved to endpoints through them too.
pub trait Lookup: crate::webhook::client_config::Endpoints {
    fn cached(&self, read: &Read) -> Option<Answer>;

    /// The resources served now; `None` when the caller has no registry.
    fn served(&self) -> Option<crate::registry::Snapshot> {
        None
    }

    /// Whether the server's authorizers allow `attributes` (from what they know
    /// without waiting: a webhook authorizer's kept answers); `false` without them.
    fn allows(&self, _attributes: crate::authorization::Attributes<'_>) -> bool {
        false
    }
}

/// No caches: every read goes to storage, and no Service resolves.
#[derive(Debug)]
pub struct NoCaches;

impl Lookup for NoCaches {
    fn cached(&self, _read: &Read) -> Option<Answer> {
        None
    }
}

impl crate::webhook::client_config::Endpoints for NoCaches {
    fn resolve(&self, _namespace: &str, name: &str, _port: i64) -> Result<String, String> {
        Err(format!("no endpoints available for service {name:?}"))
    }
}

/// The answers one plugin asked for.
#[derive(Clone, Debug, Default)]
pub struct Fetched {
    answers: Vec<(Read, Answer)>,
}

impl Fetched {
    pub fn has(&self, read: &Read) -> bool {
        self.answers.iter().any(|(r, _)| r == read)
    }

    pub fn put(&mut self, read: Read, answer: Answer) {
        self.answers.retain(|(r, _)| *r != read);
        self.answers.push((read, answer));
    }

    pub fn clear(&mut self) {
        self.answers.clear();
    }

    fn answer(&self, read: &Read) -> Option<&Answer> {
        self.answers.iter().find(|(r, _)| r == read).map(|(_, a)| a)
    }

    /// The object read at `key` (`None`: none there, or not read).
    pub fn object(&self, key: &str) -> Option<&Stored> {
        match self.answer(&Read::Object { key: key.to_owned() }) {
            Some(Answer::Object(found)) => found.as_ref(),
            _ => None,
        }
    }

    /// The objects read under `prefix`, in key order.
    pub fn objects(&self, prefix: &str) -> &[Stored] {
        match self.answer(&Read::Objects { prefix: prefix.to_owned() }) {
            Some(Answer::Objects(found)) => found,
            _ => &[],
        }
    }
}

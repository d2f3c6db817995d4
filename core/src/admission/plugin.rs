//! What one built-in admission plugin is to the chain: the reads it needs for a
//! request, then its mutation or validation over what was read. Each plugin lives in
//! its own file and is reached through [`super::plugins::built_in`].

use super::reads::{Fetched, Lookup, Read};
use super::request::Request;
use super::AdmissionChain;
use crate::rest::object::Object;
use crate::status::ApiError;
use crate::storage::Revision;
use std::collections::BTreeMap;

/// What plugins leave beside their verdict: warnings for the client, annotations for
/// the audit event, and writes to make before the object is stored (quota usage).
#[derive(Clone, Debug, Default)]
pub struct Notes {
    pub warnings: Vec<String>,
    pub audit_annotations: BTreeMap<String, String>,
}

impl Notes {
    /// A warning, once however often it is given (upstream's recorder drops repeats).
    pub fn warn(&mut self, warning: impl Into<String>) {
        let warning = warning.into();
        if !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
    }
}

/// A compare-and-swap a validating plugin needs made before the object is stored.
#[derive(Clone, Debug)]
pub struct Write {
    pub key: String,
    pub value: Object,
    pub expected_revision: Revision,
}

/// What a plugin decides with: the chain (its settings, where objects are stored)
/// and the server's live views (the watch caches, the resources served now), as
/// upstream's plugins are handed listers and a REST mapper. It reads as the chain.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub chain: &'a AdmissionChain,
    pub lookup: &'a dyn Lookup,
}

impl std::ops::Deref for Context<'_> {
    type Target = AdmissionChain;
    fn deref(&self) -> &AdmissionChain {
        self.chain
    }
}

impl std::fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("chain", self.chain).finish_non_exhaustive()
    }
}

/// One built-in plugin.
pub trait Plugin: Send + Sync + std::fmt::Debug {
    /// Whether it looks at this request at all.
    fn handles(&self, request: &Request) -> bool;

    /// Whether it has a mutating phase.
    fn mutates(&self) -> bool {
        false
    }

    /// Whether it has a validating phase.
    fn validates(&self) -> bool {
        false
    }

    /// What must be read before it decides on `object`.
    fn reads(&self, _chain: &Context, _request: &Request, _object: &Object) -> Vec<Read> {
        Vec::new()
    }

    /// What must be read once `fetched` holds what it asked for so far (a policy's
    /// params, known only once its bindings are read); asked again until it asks for
    /// nothing new.
    fn more_reads(&self, _chain: &Context, _request: &Request, _object: &Object, _fetched: &Fetched) -> Vec<Read> {
        Vec::new()
    }

    /// The calls it makes to other servers once it has read (the admission webhooks):
    /// `None` when it makes none for this request.
    fn calls(
        &self,
        _chain: &Context,
        _request: &Request,
        _object: &Object,
        _fetched: &Fetched,
    ) -> Result<Option<super::webhooks::WebhookCalls>, ApiError> {
        Ok(None)
    }

    /// The mutating phase.
    fn mutate(
        &self,
        _chain: &Context,
        _request: &Request,
        _object: &mut Object,
        _fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// The validating phase: accepts (with the writes to make first) or refuses.
    fn validate(
        &self,
        _chain: &Context,
        _request: &Request,
        _object: &Object,
        _fetched: &Fetched,
        _notes: &mut Notes,
    ) -> Result<Vec<Write>, ApiError> {
        Ok(Vec::new())
    }
}

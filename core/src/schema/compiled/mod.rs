//! The compiled schema of a served CRD version: its `openAPIV3Schema` read once into a
//! tree of [`Node`]s, and everything kube-apiserver's apiextensions server does with it
//! to the custom resources of that version:
//!
//! - [`StructuralSchema::shape_request`] and [`StructuralSchema::shape_stored`]: pruning
//!   of unknown fields, dropping of disallowed nulls, embedded resources' coercion and
//!   defaulting, on request bodies and on objects read from storage ([`shape`]);
//! - [`StructuralSchema::validate`] and [`StructuralSchema::validate_status`]: the
//!   OpenAPI value validation with kube-openapi's messages and v1.33's ratcheting
//!   ([`validate`], [`ratchet`], [`formats`], [`pattern`]);
//! - [`StructuralSchema::validate_embedded`]: the metadata rules of
//!   `x-kubernetes-embedded-resource` objects ([`embedded`]);
//! - [`StructuralSchema::validate_lists`]: uniqueness in `set` and `map` lists
//!   ([`listtype`]).
//!
//! Compiling is cheap (no regular expression is built until a value needs it), and the
//! walks allocate nothing for a valid object: paths live on the stack ([`path`]) and are
//! written out only for an error.
//!
//! # For CEL (`x-kubernetes-validations`)
//!
//! Each node keeps its rules as written ([`Node::rules`]) and exposes the tree
//! ([`Node::properties`], [`Node::items`], [`Node::additional_properties`]). A CEL
//! evaluator compiles them once per schema by walking the same tree from
//! [`StructuralSchema::root`] (a map from the node's address, `&Node as *const _`, or
//! from its path, to the compiled programs, held beside the schema in the strategy),
//! and evaluates after these checks, as upstream does, skipped when one of them found
//! an error of a blocking kind (`NotSupported`, `Required`, `TooLong`, `TooMany`,
//! `TypeInvalid`).

mod defaults;
mod embedded;
mod formats;
mod listtype;
mod node;
mod path;
mod pattern;
mod ratchet;
mod shape;
#[cfg(test)]
mod tests;
mod validate;

pub use node::Node;

use validate::Data;
use crate::validation::FieldError;
use serde_json::{Map, Value};

/// A CRD version's schema, compiled.
#[derive(Debug)]
pub struct StructuralSchema {
    root: Node,
}

/// What shaping a request body found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Shaped {
    /// The unknown fields dropped, as strict decoding errors (`unknown field
    /// "spec.foo"`): pruned ones first (sorted), then embedded resources' metadata's.
    pub unknown: Vec<String>,
}

impl StructuralSchema {
    /// Compile `openapi_v3`, a CRD version's `schema.openAPIV3Schema`.
    pub fn compile(openapi_v3: &Value) -> StructuralSchema {
        StructuralSchema { root: Node::compile(openapi_v3) }
    }

    /// The root node.
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// Shape a decoded request body; `report_unknown` names the unknown fields dropped
    /// (under `Warn` and `Strict`). Fails as decoding fails upstream, on an embedded
    /// resource that does not decode.
    pub fn shape_request(&self, object: &mut Map<String, Value>, report_unknown: bool) -> Result<Shaped, FieldError> {
        self.shape_body(object, report_unknown, true)
    }

    /// [`StructuralSchema::shape_request`] of a server-side apply configuration: no
    /// defaults (the merged object gets them, [`StructuralSchema::shape_stored`]).
    pub fn shape_apply_config(&self, object: &mut Map<String, Value>, report_unknown: bool) -> Result<Shaped, FieldError> {
        self.shape_body(object, report_unknown, false)
    }

    fn shape_body(&self, object: &mut Map<String, Value>, report_unknown: bool, defaults: bool) -> Result<Shaped, FieldError> {
        let mut shaper = shape::Shaper { report_unknown, without_defaults: !defaults, ..shape::Shaper::default() };
        shaper.resource(&self.root, object)?;
        shaper.unknown.sort();
        shaper.embedded_unknown.sort();
        let mut unknown: Vec<String> = shaper.unknown.iter().map(|path| format!("unknown field \"{path}\"")).collect();
        unknown.append(&mut shaper.embedded_unknown);
        Ok(Shaped { unknown })
    }

    /// Shape an object read from storage (written under an older schema, it is pruned
    /// and defaulted by this one, what does not decode dropped), or one the server
    /// made (a server-side apply's merged object).
    pub fn shape_stored(&self, object: &mut Map<String, Value>) {
        let mut shaper = shape::Shaper { lenient: true, ..shape::Shaper::default() };
        // Lenient shaping drops rather than fails.
        let _ = shaper.resource(&self.root, object);
    }

    /// The schema errors of `new`; on an update, errors of what `old` already had are
    /// ratcheted away.
    pub fn validate(&self, new: &Map<String, Value>, old: Option<&Map<String, Value>>) -> Vec<FieldError> {
        validate::validate(&self.root, Data::Object(new), old.map(Data::Object), None)
    }

    /// The schema errors of a status write: `status` against the schema of `status`
    /// (none when the schema declares none), named under `status`, ratcheted against
    /// the stored status.
    pub fn validate_status(&self, new: &Map<String, Value>, old: &Map<String, Value>) -> Vec<FieldError> {
        match (self.root.property("status"), new.get("status")) {
            (Some(schema), Some(status)) => {
                validate::validate(schema, Data::Value(status), old.get("status").map(Data::Value), Some("status"))
            }
            _ => Vec::new(),
        }
    }

    /// The errors of the embedded resources in `object`.
    pub fn validate_embedded(&self, object: &Map<String, Value>) -> Vec<FieldError> {
        embedded::validate(&self.root, object)
    }

    /// The duplicates in the `set` and `map` lists of `object`.
    pub fn validate_lists(&self, object: &Map<String, Value>) -> Vec<FieldError> {
        listtype::validate(&self.root, object)
    }

    /// Whether the schema declares no list that must hold unique items.
    pub fn has_keyed_lists(&self) -> bool {
        self.root.keyed_lists
    }
}

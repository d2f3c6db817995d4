//! CEL, the Common Expression Language, as Kubernetes runs it for the
//! `x-kubernetes-validations` rules of CustomResourceDefinitions: compiled once per
//! CRD version ([`compile_schema`]), evaluated on every write of a custom resource
//! ([`CompiledSchema::validate`]).
//!
//! Our own implementation, sans IO like the rest of the core. We did not take the
//! `cel` crate (0.15): it brings the antlr4rust runtime and chrono-tz into the core,
//! and it has neither a type checker nor a static cost estimator, while upstream
//! refuses a CRD whose rule does not type-check or whose *estimated* cost is too
//! high, in words this module must reproduce (`compilation failed: ERROR:
//! <input>:1:6: undefined field 'foo'`, `estimated rule cost exceeds budget by factor
//! of ...`).
//!
//! How the server uses it:
//! - CRD validation: `compile_schema(schema, "spec.versions[0].schema.openAPIV3Schema")`
//!   once the version's schema passed the structural checks (upstream compiles rules
//!   only then); its errors follow the schema's own.
//! - The custom resource strategy: `CompiledSchema::build(schema)` once per CRD version
//!   (lenient: a rule that fails to compile reports when objects are validated), then
//!   `validate(&object, None)` on create and `validate_with_warnings(&new, Some(&old))`
//!   on update (the warnings are the ratcheted failures, for `Warning` headers).
//!
//! The stages follow cel-go's: [`parser`] (with [`macros`] expanded, nesting and size
//! bounded as cel-go bounds them), [`checker`] (types from the schema node the rule
//! sits on, [`decl`]), [`cost`] (the static estimate and the runtime charges), and
//! [`eval`] over [`value`]s that read the object's JSON in place. The functions of
//! Kubernetes' environment live in [`lib`], one file per library.

pub mod ast;
pub mod checker;
pub mod compile;
pub mod cost;
pub mod decl;
pub mod escaping;
pub mod eval;
pub mod field_path;
pub mod issues;
pub mod lexer;
pub mod lib;
pub mod macros;
pub mod parser;
mod rule;
mod schema;
mod stack;
pub mod time;
pub mod types;
mod validate;
pub mod value;

pub use rule::{Reason, Rule};
pub use schema::{compile_schema, CompiledSchema};
pub use validate::Validation;

/// The most a single evaluation of a rule may cost (upstream's `PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// The most all rules of one object may cost together (`RuntimeCELCostBudget`).
pub const RUNTIME_COST_BUDGET: i64 = 10_000_000;
/// The most one rule may be estimated to cost (`StaticEstimatedCostLimit`).
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// The most all rules of one CRD version may be estimated to cost together
/// (`StaticEstimatedCRDCostLimit`).
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;
/// The longest message a `messageExpression` may produce.
pub const MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES: usize = 5 * 1024;

#[cfg(test)]
mod tests;

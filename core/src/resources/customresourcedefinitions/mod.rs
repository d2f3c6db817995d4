//! CustomResourceDefinitions (apiextensions.k8s.io/v1), with the rules of upstream's
//! registry strategy (`apiextensions-apiserver/pkg/registry/customresourcedefinition`):
//! v1 defaults and a fresh status on create ([`defaults`]), the stored status kept on
//! update with a new storage version added to `storedVersions`, spec changes counted
//! in `metadata.generation`, and the CRD validated as upstream validates it
//! ([`validation`], [`schema_rules`], [`schema_defaults`]) on create, update and status
//! update.
//!
//! For the next stages of issue 16 (kept `pub(crate)`):
//! - [`crate::schema::structural::violations`] tells whether a version's schema is
//!   structural, and why not (the `NonStructuralSchema` condition);
//! - [`validation::cel_rule_errors`] is where CEL rule compilation joins the causes;
//! - [`validation::column_path_errors`] is where printer columns' JSONPath is parsed;
//! - [`schema_defaults::value_errors`] is where the schema validator of custom
//!   resources checks defaults.

pub(crate) mod defaults;
mod conversion;
mod go_values;
mod internal;
pub(crate) mod schema_defaults;
mod schema_rules;
pub(crate) mod validation;

#[cfg(test)]
mod tests;

/// Upstream's webhook URL and Service checks, shared with admission webhooks.
pub(crate) use conversion::{webhook_service, webhook_url};

use super::Strategy;
use crate::rest::object::Object;
use crate::validation::FieldError;

pub struct CustomResourceDefinitions;

impl Strategy for CustomResourceDefinitions {
    fn name(&self) -> &'static str {
        "customresourcedefinitions"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::CREATED_AT
    }

    /// apiextensions validates metadata with apimachinery's generic rules.
    fn meta_rules(&self) -> crate::validation::object_meta::MetaRules {
        crate::validation::object_meta::MetaRules::Generic
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        defaults::apply(obj);
    }

    fn prepare_for_create(&self, new: &mut Object, _has_status: bool) {
        defaults::prepare_for_create(new);
    }

    fn prepare_for_update(&self, new: &mut Object, old: &Object, _has_status: bool) {
        defaults::prepare_for_update(new, old);
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validation::validate_create(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        validation::validate_update(new, old)
    }

    fn validate_status_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validation::validate_status_update(new)
    }

    /// Deleting a CRD first deletes its objects: it waits for them under its cleanup
    /// finalizer, `Terminating`.
    fn mark_deleting(&self, crd: &mut Object, now: &str) {
        crate::controllers::crds::mark_terminating(crd, now);
    }
}

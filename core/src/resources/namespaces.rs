//! Namespaces (core/v1): what upstream's namespace strategy, namespace lifecycle
//! admission and namespace controller do to them, as far as Apiary has them.
//!
//! A namespace is labelled with its own name, starts Active with the `kubernetes`
//! finalizer, cannot be deleted when the server keeps it for itself, and on delete
//! answers Terminating once everything in it is gone. Its path names it in the
//! namespace segment (`/api/v1/namespaces/{name}`).

use super::columns::{Columns, str_at, Column};
use super::{keep_status, AfterDelete, Strategy};
use crate::rest::object::{meta_mut, meta_str, Object};
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME};
use crate::status::ApiError;
use serde_json::{json, Value};

/// The group and resource of namespaces, which every namespaced object must name.
pub const GROUP: &str = "";
pub const RESOURCE: &str = "namespaces";

/// Namespaces the server keeps for itself.
const IMMORTAL: &[&str] = &["default", "kube-system", "kube-public"];

/// The label every namespace carries with its own name.
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

pub struct Namespaces;

impl Strategy for Namespaces {
    fn name(&self) -> &'static str {
        RESOURCE
    }

    fn prepare_for_create(&self, new: &mut Object, _has_status: bool) {
        label_with_name(new);
        let spec = new.entry("spec").or_insert_with(|| json!({}));
        if let Some(spec) = spec.as_object_mut() {
            spec.entry("finalizers").or_insert_with(|| json!(["kubernetes"]));
        }
        new.insert("status".into(), json!({"phase": "Active"}));
    }

    fn prepare_for_update(&self, new: &mut Object, old: &Object, has_status: bool) {
        if has_status {
            keep_status(new, old);
        }
        label_with_name(new);
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }

    fn check_delete(&self, name: &str) -> Result<(), ApiError> {
        if IMMORTAL.contains(&name) {
            return Err(ApiError::forbidden(GROUP, RESOURCE, name, "this namespace may not be deleted"));
        }
        Ok(())
    }

    fn after_delete(&self, deleted: &mut Object, now: &str) -> AfterDelete {
        meta_mut(deleted).insert("deletionTimestamp".into(), Value::String(now.to_owned()));
        deleted.insert("status".into(), json!({"phase": "Terminating"}));
        AfterDelete::EmptyNamespace
    }

    fn named_by_namespace_path(&self) -> bool {
        true
    }
}

/// Set the label that carries the namespace's name.
fn label_with_name(namespace: &mut Object) {
    let name = meta_str(namespace, "name").to_owned();
    let labels = meta_mut(namespace).entry("labels").or_insert_with(|| json!({}));
    if let Some(labels) = labels.as_object_mut() {
        labels.insert(NAME_LABEL.into(), Value::String(name));
    }
}

const COLUMNS: &[Column] = &[Column {
    name: "Status",
    kind: "string",
    description: "The status of the namespace",
    cell: |o| str_at(o, &["status", "phase"]),
}];

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[("status.phase", "status.phase"), NAME],
};

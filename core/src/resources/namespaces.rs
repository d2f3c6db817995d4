//! Namespaces (core/v1): what upstream's namespace strategy, namespace lifecycle
//! admission and namespace controller do to them, as far as Apiary has them.
//!
//! A namespace is labelled with its own name, starts Active with the `kubernetes`
//! finalizer in its spec, and cannot be deleted when the server keeps it for itself.
//! A DELETE makes it Terminating; the namespace controller
//! ([`crate::controllers::namespaces`]) empties it and takes its `kubernetes`
//! finalizer away through `finalize`, and the write that leaves it without finalizers
//! deletes it. Its path names it in the namespace segment (`/api/v1/namespaces/{name}`).

use super::columns::{Columns, str_at, Column};
use super::{keep_status, Handler, Strategy};
use crate::rest::finalizers::{self, Deletion, OnDelete};
use crate::rest::object::{meta_mut, meta_str, Object};
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME};
use crate::validation::FieldError;
use serde_json::{json, Value};

/// The group and resource of namespaces, which every namespaced object must name.
pub const GROUP: &str = "";
pub const RESOURCE: &str = "namespaces";

/// Namespaces the server keeps for itself.
pub const IMMORTAL: &[&str] = &["default", "kube-system", "kube-public"];

/// The label every namespace carries with its own name.
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

pub struct Namespaces;

impl Strategy for Namespaces {
    fn name(&self) -> &'static str {
        RESOURCE
    }

    /// Upstream's defaults: the name label (on a namespace that has a name), and an
    /// Active phase.
    fn default(&self, obj: &mut Object) {
        let name = meta_str(obj, "name");
        let labelled = obj
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(|l| l.get(NAME_LABEL))
            .and_then(Value::as_str)
            == Some(name);
        if !name.is_empty() && !labelled {
            label_with_name(obj);
        }
        if let Some(status) = super::defaults::object_or_new(obj, "status") {
            super::defaults::or_insert_str(status, "phase", "Active");
        }
    }

    fn prepare_for_create(&self, new: &mut Object, _has_status: bool) {
        label_with_name(new);
        // The `kubernetes` finalizer joins the spec's, as a sorted set.
        if let Some(spec) = super::defaults::object_or_new(new, "spec") {
            let mut finalizers: Vec<String> = crate::rest::object::strings(spec.get("finalizers"));
            finalizers.push("kubernetes".into());
            finalizers.sort();
            finalizers.dedup();
            spec.insert("finalizers".into(), json!(finalizers));
        }
        new.insert("status".into(), json!({"phase": "Active"}));
    }

    /// The spec's finalizers change only through `finalize`, as upstream keeps them.
    fn prepare_for_update(&self, new: &mut Object, old: &Object, has_status: bool) {
        if has_status {
            keep_status(new, old);
        }
        let kept = old.get("spec").and_then(|s| s.get("finalizers")).cloned();
        let spec = new.entry("spec").or_insert_with(|| json!({}));
        if let (Some(spec), Some(kept)) = (spec.as_object_mut(), kept) {
            spec.insert("finalizers".into(), kept);
        }
        label_with_name(new);
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }

    /// Upstream's namespace storage: the first DELETE marks the namespace Terminating
    /// (a `deletionTimestamp`, no grace period) and answers it; later ones answer it
    /// unchanged until its spec's finalizers are gone, then its own finalizers decide.
    fn on_delete(&self, obj: &Object, deletion: &Deletion<'_>) -> OnDelete {
        let now = deletion.now_text();
        let mut marked = obj.clone();
        deletion.propagation.apply(&mut marked, self.default_gc_policy());
        if !finalizers::deleting(obj) {
            meta_mut(&mut marked).insert("deletionTimestamp".into(), json!(now));
            let status = marked.entry("status").or_insert_with(|| json!({}));
            if let Some(status) = status.as_object_mut() {
                status.insert("phase".into(), json!("Terminating"));
            }
            return OnDelete::Wait(marked);
        }
        if !spec_finalizers(obj).is_empty() {
            return OnDelete::Wait(marked);
        }
        finalizers::wait_for_finalizers(marked, &now)
    }

    /// Gone once neither its spec nor its metadata holds a finalizer.
    fn finished_deleting(&self, obj: &Object) -> bool {
        finalizers::finished(obj) && spec_finalizers(obj).is_empty()
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        spec_finalizer_errors(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        spec_finalizer_errors(new)
    }

    fn finalize_update(&self, new: &Object, old: &Object) -> Object {
        finalized(new, old)
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        match name {
            "status" => Some(Handler::Status),
            "finalize" => Some(Handler::Finalize),
            _ => None,
        }
    }

    fn named_by_namespace_path(&self) -> bool {
        true
    }
}

/// Upstream's check of a namespace's `spec.finalizers`: each a finalizer name (errors
/// at the list, without an index).
fn spec_finalizer_errors(namespace: &Object) -> Vec<FieldError> {
    let names = spec_finalizers(namespace);
    names.iter().flat_map(|f| crate::validation::object_meta::finalizer_name("spec.finalizers", f)).collect()
}

/// The namespace's `spec.finalizers`.
pub(crate) fn spec_finalizers(namespace: &Object) -> Vec<String> {
    crate::rest::object::strings(namespace.get("spec").and_then(|s| s.get("finalizers")))
}

/// What a `finalize` write stores: the namespace as it is, with the spec's finalizers
/// the write gives (upstream's finalize strategy).
fn finalized(new: &Object, old: &Object) -> Object {
    let mut kept = old.clone();
    let finalizers = new.get("spec").and_then(|s| s.get("finalizers")).cloned().unwrap_or_else(|| json!([]));
    let spec = kept.entry("spec").or_insert_with(|| json!({}));
    if let Some(spec) = spec.as_object_mut() {
        spec.insert("finalizers".into(), finalizers);
    }
    kept
}

/// Set the label that carries the namespace's name.
fn label_with_name(namespace: &mut Object) {
    let name = meta_str(namespace, "name").to_owned();
    let meta = meta_mut(namespace);
    if !meta.get("labels").is_some_and(Value::is_object) {
        meta.insert("labels".into(), json!({}));
    }
    let labels = meta.get_mut("labels").expect("labels were just made");
    if let Some(labels) = labels.as_object_mut() {
        labels.insert(NAME_LABEL.into(), Value::String(name));
    }
}

const COLUMNS: &[Column] = &[Column {
    name: "Status",
    kind: "string",
    description: "The status of the namespace",
    format: "", priority: 0, cell: |o| str_at(o, &["status", "phase"]),
}];

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[("status.phase", "status.phase"), NAME],
};

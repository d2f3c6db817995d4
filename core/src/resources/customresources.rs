//! The objects of a CustomResourceDefinition's served version: the strategy a custom
//! resource's registry entry carries, made from the version's part of the CRD (its
//! schema, subresources, printer columns and selectable fields), as upstream's
//! apiextensions server builds a `customResourceStrategy` per served version.
//!
//! Everything the version declares is read once, when the CRD joins the registry; a
//! request only borrows it.

mod printer_columns;

pub use printer_columns::PrinterColumns;

use super::{Columns, Handler, Strategy};
use crate::rest::object::{meta_mut, spec_changed, Object};
use crate::selection::table::{DeclaredFields, FieldLabels};
use serde_json::{json, Value};

/// The rules of one served version of a CRD.
#[derive(Debug)]
pub struct CustomResources {
    /// The version as the CRD declares it (`spec.versions[i]`): two strategies made
    /// from equal declarations are the same strategy.
    definition: Value,
    /// Whether the version serves `status` (`subresources.status`).
    status: bool,
    /// The version's `subresources.scale`, when it serves one.
    scale: Option<ScalePaths>,
    /// The version's `additionalPrinterColumns`.
    columns: PrinterColumns,
    /// The version's `selectableFields`.
    fields: DeclaredFields,
}

/// Where the `scale` subresource of a custom resource reads and writes its object
/// (`subresources.scale`): JSON paths such as `.spec.replicas`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: Option<String>,
}

impl CustomResources {
    /// The strategy of `version`, one entry of a CRD's `spec.versions`, for objects
    /// in namespaces or not (`namespaced`).
    pub fn new(version: &Value, namespaced: bool) -> CustomResources {
        let subresources = version.get("subresources");
        let scale = subresources.and_then(|s| s.get("scale")).map(|scale| {
            let path = |key: &str| scale.get(key).and_then(Value::as_str).map(str::to_owned);
            ScalePaths {
                spec_replicas: path("specReplicasPath").unwrap_or_default(),
                status_replicas: path("statusReplicasPath").unwrap_or_default(),
                label_selector: path("labelSelectorPath"),
            }
        });
        let selectable = version.get("selectableFields").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let paths = selectable.iter().filter_map(|f| f.get("jsonPath").and_then(Value::as_str));
        CustomResources {
            definition: version.clone(),
            status: subresources.and_then(|s| s.get("status")).is_some(),
            scale,
            columns: PrinterColumns::of(version),
            fields: DeclaredFields::new(namespaced, paths),
        }
    }

    /// Whether the version serves the `status` subresource.
    pub fn serves_status(&self) -> bool {
        self.status
    }
}

impl Strategy for CustomResources {
    fn name(&self) -> &'static str {
        "customresources"
    }

    fn definition(&self) -> Option<&Value> {
        Some(&self.definition)
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    /// Upstream drops a new object's status when the status subresource owns it.
    fn prepare_for_create(&self, new: &mut Object, has_status: bool) {
        if has_status {
            new.remove("status");
        }
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        match name {
            "status" if self.status => Some(Handler::Status),
            "scale" if self.scale.is_some() => Some(Handler::CustomScale),
            _ => None,
        }
    }

    fn scale_paths(&self) -> Option<&ScalePaths> {
        self.scale.as_ref()
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Declared(&self.columns)
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Declared(&self.fields)
    }

    /// Upstream counts every change but metadata's in the generation, and status's
    /// too when no status subresource owns it.
    fn count_generation(&self, old: &Object, new: &mut Object) {
        let changed = spec_changed(old, new) || (!self.status && old.get("status") != new.get("status"));
        if changed {
            let generation = old
                .get("metadata")
                .and_then(|m| m.get("generation"))
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta_mut(new).insert("generation".into(), json!(generation + 1));
        }
    }
}

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
use crate::status::ApiError;
use crate::validation::FieldError;
use crate::rest::object::{spec_changed, Object};
use crate::selection::table::{DeclaredFields, FieldLabels};
use serde_json::{json, Value};

/// The rules of one served version of a CRD.
#[derive(Debug)]
pub struct CustomResources {
    /// The version as the CRD declares it (`spec.versions[i]`) with the facts of its
    /// CRD below: two strategies made from equal definitions are the same strategy.
    definition: Value,
    /// Whether the version serves `status` (`subresources.status`).
    status: bool,
    /// Whether the CRD is being deleted: no object may be created then.
    terminating: bool,
    /// The apiVersion of this version's objects, and of those storage keeps, when the
    /// CRD has other versions than this one (objects are then shown converted).
    versions: Option<(String, String)>,
    /// The version's `subresources.scale`, when it serves one.
    scale: Option<ScalePaths>,
    /// The version's `additionalPrinterColumns`.
    columns: PrinterColumns,
    /// The version's `selectableFields`.
    fields: DeclaredFields,
    /// The version's `x-kubernetes-validations` rules, compiled.
    rules: crate::cel::CompiledSchema,
}

/// What a version's strategy needs of its CRD besides the version itself.
#[derive(Debug)]
pub struct Crd<'a> {
    pub group: &'a str,
    /// The version objects are stored in.
    pub storage_version: &'a str,
    /// How many versions the CRD declares.
    pub versions: usize,
    /// Whether the CRD is being deleted.
    pub terminating: bool,
    /// Whether its objects live in namespaces.
    pub namespaced: bool,
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
    /// The strategy of `version`, one entry of the `spec.versions` of the CRD `of`.
    pub fn new(version: &Value, of: &Crd<'_>) -> CustomResources {
        let terminating = of.terminating;
        let subresources = version.get("subresources");
        let scale = subresources.and_then(|s| s.get("scale")).map(|scale| {
            let path = |key: &str| scale.get(key).and_then(Value::as_str).map(str::to_owned);
            ScalePaths {
                spec_replicas: path("specReplicasPath").unwrap_or_default(),
                status_replicas: path("statusReplicasPath").unwrap_or_default(),
                label_selector: path("labelSelectorPath"),
            }
        });
        let name = version.get("name").and_then(Value::as_str).unwrap_or("");
        let versions = (of.versions > 1).then(|| (format!("{}/{name}", of.group), format!("{}/{}", of.group, of.storage_version)));
        // All the strategy is made from: a CRD that changes any of it (starts
        // terminating, moves its storage version, adds a version) changes its resources.
        let definition = json!({
            "version": version,
            "group": of.group,
            "storageVersion": of.storage_version,
            "versions": of.versions,
            "terminating": terminating,
            "namespaced": of.namespaced,
        });
        let selectable = version.get("selectableFields").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let paths = selectable.iter().filter_map(|f| f.get("jsonPath").and_then(Value::as_str));
        CustomResources {
            definition,
            terminating,
            versions,
            status: subresources.and_then(|s| s.get("status")).is_some(),
            scale,
            columns: PrinterColumns::of(version),
            fields: DeclaredFields::new(of.namespaced, paths),
            rules: crate::cel::CompiledSchema::build(version.pointer("/schema/openAPIV3Schema").unwrap_or(&Value::Null)),
        }
    }

    /// The errors the CEL rules find in `new` (nothing to do for a CRD without rules).
    fn check_rules(&self, new: &Object, old: Option<&Object>) -> Vec<FieldError> {
        if self.rules.is_empty() {
            return Vec::new();
        }
        let old = old.map(|o| Value::Object(o.clone()));
        self.rules.validate(&Value::Object(new.clone()), old.as_ref())
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

    fn typed_list_items(&self) -> bool {
        true
    }

    /// The CRD's CEL rules (`x-kubernetes-validations`) on a new object.
    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        self.check_rules(new, None)
    }

    /// The CEL rules on an updated object; transition rules see the old one.
    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        self.check_rules(new, Some(old))
    }

    fn validate_status_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        self.check_rules(new, Some(old))
    }

    /// Objects of a CRD with several versions may be stored in another: they are
    /// converted, which (with `conversion.strategy: None`) renames their apiVersion.
    fn transforms_reads(&self) -> bool {
        self.versions.is_some()
    }

    fn read_stored(&self, obj: &mut Object) {
        if let Some((served, _)) = &self.versions {
            convert(obj, served);
        }
    }

    fn write_stored(&self, obj: &mut Object) {
        if let Some((_, stored)) = &self.versions {
            convert(obj, stored);
        }
    }

    fn check_create(&self, group: &str, resource: &str) -> Result<(), ApiError> {
        if self.terminating {
            let mut e = ApiError::method_not_supported(group, resource, "create");
            e.message = "create not allowed while custom resource definition is terminating".into();
            return Err(e);
        }
        Ok(())
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
        if spec_changed(old, new) || (!self.status && old.get("status") != new.get("status")) {
            super::next_generation(old, new);
        }
    }
}

/// Convert `obj` to `api_version` as `conversion.strategy: None` does: only the
/// apiVersion changes.
fn convert(obj: &mut Object, api_version: &str) {
    if obj.get("apiVersion").and_then(Value::as_str) != Some(api_version) {
        obj.insert("apiVersion".into(), json!(api_version));
    }
}

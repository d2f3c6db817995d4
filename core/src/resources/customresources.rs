//! The objects of a CustomResourceDefinition's served version: the strategy a custom
//! resource's registry entry carries, made from the version's part of the CRD (its
//! schema, subresources, printer columns and selectable fields), as upstream's
//! apiextensions server builds a `customResourceStrategy` per served version.
//!
//! Everything the version declares is read once, when the CRD joins the registry; a
//! request only borrows it. Its schema is compiled then ([`StructuralSchema`]), and
//! validates creates and updates as upstream's `customResourceStrategy` does: the
//! schema's checks (ratcheted on updates), the scale subresource's replicas and
//! selector, the embedded resources' metadata, then the uniqueness of `set` and `map`
//! lists (on an update, only when the stored object had no duplicates).

pub mod conversion_review;
mod conversion_webhook;
mod printer_columns;

pub use conversion_webhook::{ConversionWebhook, Endpoints};
pub use printer_columns::PrinterColumns;

use super::{Columns, Handler, Strategy};
use crate::gofmt::{self, GoType};
use crate::rest::object::{spec_changed, Object};
use crate::schema::compiled::StructuralSchema;
use crate::selection::table::{DeclaredFields, FieldLabels};
use crate::status::ApiError;
use crate::validation::{ErrorKind, FieldError};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The kinds of schema error after which CEL rules are not run (upstream's
/// `hasBlockingErr`).
const BLOCKS_RULES: &[ErrorKind] =
    &[ErrorKind::NotSupported, ErrorKind::Required, ErrorKind::TooLong, ErrorKind::TooMany, ErrorKind::TypeInvalid];

const RULES_NOT_CHECKED: &str =
    "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

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
    /// The CRD's conversion webhook, when it has one and other versions.
    webhook: Option<Arc<ConversionWebhook>>,
    /// The version's `subresources.scale`, when it serves one.
    scale: Option<ScalePaths>,
    /// The version's `schema.openAPIV3Schema`, compiled.
    schema: Arc<StructuralSchema>,
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
    /// Its `spec.conversion` (null when absent).
    pub conversion: &'a Value,
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
        let schema = StructuralSchema::compile(&Self::openapi_v3(version));
        let name = version.get("name").and_then(Value::as_str).unwrap_or("");
        let versions = (of.versions > 1).then(|| (format!("{}/{name}", of.group), format!("{}/{}", of.group, of.storage_version)));
        // A webhook converts around storage instead (`rest::conversion`).
        let webhook = versions
            .clone()
            .and_then(|(served, stored)| ConversionWebhook::of(of.conversion, served, stored))
            .map(Arc::new);
        let versions = if webhook.is_some() { None } else { versions };
        // All the strategy is made from: a CRD that changes any of it (starts
        // terminating, moves its storage version, adds a version) changes its resources.
        let definition = json!({
            "version": version,
            "group": of.group,
            "storageVersion": of.storage_version,
            "versions": of.versions,
            "terminating": terminating,
            "namespaced": of.namespaced,
            "conversion": of.conversion,
        });
        let selectable = version.get("selectableFields").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let paths = selectable.iter().filter_map(|f| f.get("jsonPath").and_then(Value::as_str));
        CustomResources {
            definition,
            terminating,
            versions,
            webhook,
            status: subresources.and_then(|s| s.get("status")).is_some(),
            scale,
            schema: Arc::new(schema),
            columns: PrinterColumns::of(version),
            fields: DeclaredFields::new(of.namespaced, paths),
            rules: crate::cel::CompiledSchema::build(version.pointer("/schema/openAPIV3Schema").unwrap_or(&Value::Null)),
        }
    }

    /// The schema a version declares (`schema.openAPIV3Schema`), or an object of
    /// anything for one that declares none.
    pub fn openapi_v3(version: &Value) -> Value {
        version.pointer("/schema/openAPIV3Schema").cloned().unwrap_or_else(|| json!({"type": "object"}))
    }

    /// `errors` and then what the CEL rules find in `new`; as upstream, the rules are
    /// not run over an object whose schema errors could mislead them (a missing, too
    /// long or mistyped value), and a cause says so.
    fn then_rules(&self, mut errors: Vec<FieldError>, new: &Object, old: Option<&Object>) -> Vec<FieldError> {
        if self.rules.is_empty() {
            return errors;
        }
        if errors.iter().any(|e| BLOCKS_RULES.contains(&e.kind)) {
            errors.push(FieldError::shown("<nil>", ErrorKind::Invalid, Some("\"null\""), RULES_NOT_CHECKED));
            return errors;
        }
        let old = old.map(|o| Value::Object(o.clone()));
        errors.extend(self.rules.validate(&Value::Object(new.clone()), old.as_ref()));
        errors
    }

    /// The version's schema, compiled.
    pub fn schema(&self) -> &Arc<StructuralSchema> {
        &self.schema
    }

    /// Upstream's `ValidateScaleSpec` and `ValidateScaleStatus`: the replicas the scale
    /// subresource reads are non-negative int32s, its selector a string.
    fn scale_errors(&self, obj: &Object, spec: bool) -> Vec<FieldError> {
        let Some(scale) = &self.scale else {
            return Vec::new();
        };
        let mut errors = Vec::new();
        if spec {
            replicas_errors(obj, &scale.spec_replicas, &mut errors);
        }
        replicas_errors(obj, &scale.status_replicas, &mut errors);
        if let Some(path) = &scale.label_selector {
            if let Err(e) = nested(obj, path, GoType::String, "string") {
                errors.push(FieldError::shown(path, ErrorKind::Invalid, Some("\"\""), &e));
            }
        }
        errors
    }

    /// The list-type errors of `new`, unless `old` already had some (upstream ratchets
    /// them whole).
    fn list_errors(&self, new: &Object, old: Option<&Object>) -> Vec<FieldError> {
        if !self.schema.has_keyed_lists() || old.is_some_and(|old| !self.schema.validate_lists(old).is_empty()) {
            return Vec::new();
        }
        self.schema.validate_lists(new)
    }
}

/// The replicas at `path` (`.spec.replicas`), when present, must be an int64 within
/// 0..=2^31-1.
fn replicas_errors(obj: &Object, path: &str, errors: &mut Vec<FieldError>) {
    let invalid = |value: &str, detail: &str| FieldError::shown(path, ErrorKind::Invalid, Some(value), detail);
    match nested(obj, path, GoType::Int, "int64") {
        Err(e) => errors.push(invalid("0", &e)),
        Ok(Some(n)) => {
            let n = n.as_i64().unwrap_or(0);
            if n < 0 {
                errors.push(invalid(&n.to_string(), "should be a non-negative integer"));
            } else if n > i64::from(i32::MAX) {
                errors.push(invalid(&n.to_string(), &format!("should be less than or equal to {}", i32::MAX)));
            }
        }
        Ok(None) => {}
    }
}

/// The value at a scale path (`.spec.replicas`), as apimachinery's `NestedInt64` and
/// `NestedString` read it: absent is fine; a value of another Go type than `want`,
/// or a step through something other than an object, is their error.
fn nested<'o>(obj: &'o Object, path: &str, want: GoType, want_name: &str) -> Result<Option<&'o Value>, String> {
    let fields: Vec<&str> = path.strip_prefix('.').unwrap_or(path).split('.').collect();
    let json_path = |upto: usize| format!(".{}", fields[..upto].join("."));
    let mut map: &Map<String, Value> = obj;
    for (i, field) in fields.iter().enumerate() {
        let Some(value) = map.get(*field) else {
            return Ok(None);
        };
        if i + 1 == fields.len() {
            if GoType::of(value) != want {
                let ty = GoType::of(value).name();
                return Err(format!("{} accessor error: {} is of the type {ty}, expected {want_name}", json_path(fields.len()), gofmt::v(value)));
            }
            return Ok(Some(value));
        }
        match value {
            Value::Object(next) => map = next,
            Value::Null => return Ok(None),
            other => {
                let ty = GoType::of(other).name();
                return Err(format!(
                    "{} accessor error: {} is of the type {ty}, expected map[string]interface{{}}",
                    json_path(i + 2),
                    gofmt::v(other)
                ));
            }
        }
    }
    Ok(None)
}

impl Strategy for CustomResources {
    fn name(&self) -> &'static str {
        "customresources"
    }

    /// apiextensions validates metadata with apimachinery's generic rules.
    fn meta_rules(&self) -> crate::validation::object_meta::MetaRules {
        crate::validation::object_meta::MetaRules::Generic
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

    /// The schema's checks, the scale paths', the embedded resources' and the lists'
    /// on a new object, then its CEL rules.
    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        let mut errors = self.schema.validate(new, None);
        errors.extend(self.scale_errors(new, true));
        errors.extend(self.schema.validate_embedded(new));
        errors.extend(self.list_errors(new, None));
        self.then_rules(errors, new, None)
    }

    /// As on create, ratcheted against the old object; transition rules see it.
    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errors = self.schema.validate(new, Some(old));
        errors.extend(self.scale_errors(new, true));
        errors.extend(self.schema.validate_embedded(new));
        errors.extend(self.list_errors(new, Some(old)));
        self.then_rules(errors, new, Some(old))
    }

    fn validate_status_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errors = self.schema.validate_status(new, old);
        errors.extend(self.scale_errors(new, false));
        errors.extend(self.list_errors(new, Some(old)));
        self.then_rules(errors, new, Some(old))
    }

    /// Objects of a CRD with several versions may be stored in another: they are
    /// converted, which (with `conversion.strategy: None`) renames their apiVersion.
    fn transforms_reads(&self) -> bool {
        self.versions.is_some() || self.webhook.is_some()
    }

    fn conversion_webhook(&self) -> Option<&ConversionWebhook> {
        self.webhook.as_deref()
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

//! A CRD checked as upstream checks it (`pkg/apis/apiextensions/validation`): its name,
//! group, scope and names, its versions (exactly one stored, names unique, schemas
//! present), per version or shared: the schema (`schema_rules`), subresources, printer
//! columns and selectable fields; conversion; the status' accepted and stored versions;
//! API approval for Kubernetes-owned groups. Errors come in upstream's order and words.

use super::internal::{self, list, present, text, Names, Spec, Version};
use super::{conversion, go_values, schema_rules};
use crate::rest::object::Object;
use crate::schema::structural::{self, field_path, Structural};
use crate::validation::names::{dns1035_label, dns1123_subdomain};
use crate::validation::{go_json, FieldError, FieldPath};
use serde_json::Value;

/// What upstream relaxes for a CRD that was stored before a rule existed (on update,
/// each rule applies only if the stored CRD already keeps it).
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub require_recognized_review_version: bool,
    /// `scope` and `names.kind` may not change (the stored CRD is established).
    pub require_immutable_names: bool,
    pub require_openapi_schema: bool,
    pub require_valid_property_type: bool,
    pub require_structural_schema: bool,
    pub require_pruned_defaults: bool,
    pub require_atomic_set_type: bool,
    pub require_map_list_keys_map_set_validation: bool,
    pub allow_invalid_ca_bundle: bool,
}

impl Options {
    /// Everything required: a new CRD.
    fn create() -> Options {
        Options {
            require_recognized_review_version: true,
            require_immutable_names: false,
            require_openapi_schema: true,
            require_valid_property_type: true,
            require_structural_schema: true,
            require_pruned_defaults: true,
            require_atomic_set_type: true,
            require_map_list_keys_map_set_validation: true,
            allow_invalid_ca_bundle: true,
        }
    }

    /// What an update of `old` must keep.
    fn update(old: &Object) -> Options {
        let old_value = Value::Object(old.clone());
        let spec = internal::spec(&old_value);
        let schemas = spec.schemas();
        let established = condition_true(old, "Established");
        Options {
            require_recognized_review_version: conversion::recognized_or_empty(spec.conversion),
            require_immutable_names: established,
            require_openapi_schema: all_versions_have_schemas(&spec),
            require_valid_property_type: !schemas.iter().any(|s| schema_rules::has_invalid_types(s)),
            require_structural_schema: schemas.iter().all(|s| structural::is_structural(s)),
            require_pruned_defaults: !schemas.iter().any(|s| schema_rules::has_unpruned_defaults(s)),
            require_atomic_set_type: !schemas.iter().any(|s| schema_rules::has_non_atomic_set_items(s)),
            require_map_list_keys_map_set_validation: !schemas.iter().any(|s| schema_rules::has_invalid_map_list_keys(s)),
            allow_invalid_ca_bundle: !established || old_ca_bundle_invalid(&spec),
        }
    }
}

/// A new CRD (upstream's `ValidateCustomResourceDefinition`).
pub(crate) fn validate_create(crd: &Object) -> Vec<FieldError> {
    let value = Value::Object(crd.clone());
    let spec = internal::spec(&value);
    let mut errors = name_is_plural_dot_group(crd, &spec);
    errors.extend(validate_spec(&spec, &Options::create(), &FieldPath::new("spec")));
    errors.extend(status(crd));
    errors.extend(stored_versions(crd, &spec));
    errors.extend(api_approval(crd, None));
    errors.extend(preserve_unknown_fields(&spec, None));
    errors
}

/// An update of `old` to `new` through the main resource.
pub(crate) fn validate_update(new: &Object, old: &Object) -> Vec<FieldError> {
    let new_value = Value::Object(new.clone());
    let old_value = Value::Object(old.clone());
    let spec = internal::spec(&new_value);
    let old_spec = internal::spec(&old_value);
    let opts = Options::update(old);
    let path = FieldPath::new("spec");
    let mut errors = validate_spec(&spec, &opts, &path);
    if opts.require_immutable_names {
        errors.extend(immutable(&path.child("scope"), spec.scope, old_spec.scope));
        errors.extend(immutable(&path.child("names").child("kind"), spec.names.get("kind"), old_spec.names.get("kind")));
    }
    errors.extend(immutable(&path.child("group"), spec.group, old_spec.group));
    errors.extend(immutable(&path.child("names").child("plural"), spec.names.get("plural"), old_spec.names.get("plural")));
    errors.extend(status(new));
    errors.extend(stored_versions(new, &spec));
    errors.extend(api_approval(new, Some(old)));
    errors.extend(preserve_unknown_fields(&spec, Some(&old_spec)));
    errors
}

/// A write to the status subresource: the accepted names must be names.
pub(crate) fn validate_status_update(new: &Object) -> Vec<FieldError> {
    status(new)
}

/// The name a CRD must have; for `generateName` too, which upstream checks alike.
fn name_is_plural_dot_group(crd: &Object, spec: &Spec<'_>) -> Vec<FieldError> {
    let required = format!("{}.{}", spec.names.get("plural"), spec.group);
    let meta = crd.get("metadata");
    ["generateName", "name"]
        .into_iter()
        .filter_map(|field| {
            let given = text(meta, field);
            (!given.is_empty() && given != required).then(|| {
                FieldError::invalid(&format!("metadata.{field}"), given, "must be spec.names.plural+\".\"+spec.group")
            })
        })
        .collect()
}

/// Upstream's `validateCustomResourceDefinitionSpec`.
fn validate_spec(spec: &Spec<'_>, opts: &Options, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let group = path.child("group");
    if spec.group.is_empty() {
        errors.push(FieldError::required(group.as_str(), ""));
    } else if let problems @ [_, ..] = dns1123_subdomain(spec.group).as_slice() {
        errors.push(FieldError::invalid(group.as_str(), spec.group, problems.join(",")));
    } else if !spec.group.contains('.') {
        errors.push(FieldError::invalid(group.as_str(), spec.group, "should be a domain with at least one dot"));
    }
    errors.extend(enum_string(&path.child("scope"), spec.scope, &["Cluster", "Namespaced"]));

    let mut opts = opts.clone();
    // Pruning (the v1 default) needs structural schemas, and so do defaults and the
    // Kubernetes extensions.
    if !spec.preserve_unknown_fields {
        opts.require_structural_schema = true;
    }
    let versions = path.child("versions");
    if opts.require_openapi_schema {
        if spec.validation.and_then(|v| present(Some(v), "openAPIV3Schema")).is_none() {
            for (i, v) in spec.versions.iter().flatten().enumerate() {
                if v.schema.and_then(|s| present(Some(s), "openAPIV3Schema")).is_none() {
                    // v1.35's wording (the recorded server's), without v1.33's "schemas are required".
                    errors.push(FieldError::required(versions.index(i).child("schema").child("openAPIV3Schema").as_str(), ""));
                }
            }
        }
    } else if !spec.preserve_unknown_fields && spec.validation.and_then(|v| present(Some(v), "openAPIV3Schema")).is_none() {
        for (i, v) in spec.versions.iter().flatten().enumerate() {
            if v.served && v.schema.and_then(|s| present(Some(s), "openAPIV3Schema")).is_none() {
                errors.push(FieldError::required(
                    versions.index(i).child("schema").child("openAPIV3Schema").as_str(),
                    "because otherwise all fields are pruned",
                ));
            }
        }
    }
    let schemas = spec.schemas();
    if schemas.iter().any(|s| schema_rules::has_defaults(s)) {
        opts.require_structural_schema = true;
        if spec.preserve_unknown_fields {
            errors.push(FieldError::invalid_unquoted(
                path.child("preserveUnknownFields").as_str(),
                "true",
                "must be false in order to use defaults in the schema",
            ));
        }
    }
    if schemas.iter().any(|s| schema_rules::has_kubernetes_extensions(s)) {
        opts.require_structural_schema = true;
    }

    let mut storage_count = 0;
    let mut seen: Vec<&str> = Vec::new();
    let mut unique = true;
    for (i, version) in spec.versions.iter().flatten().enumerate() {
        if version.storage {
            storage_count += 1;
        }
        if seen.contains(&version.name) {
            unique = false;
        } else {
            seen.push(version.name);
        }
        let version_path = versions.index(i);
        errors.extend(not_dns1035(&version_path.child("name"), version.name));
        let status_enabled = internal::has_status(spec.subresources_of(version.name));
        errors.extend(validate_version(version, &version_path, status_enabled, &opts));
    }
    // The top-level and per-version forms cannot both be set, nor all versions carry
    // the same values, in an object converted from v1: upstream's checks of those never
    // fire here.
    let versions_value = || go_values::versions(spec.versions.as_deref());
    if !unique {
        errors.push(FieldError::invalid_unquoted(versions.as_str(), &versions_value(), "must contain unique version names"));
    }
    if storage_count != 1 {
        errors.push(FieldError::invalid_unquoted(
            versions.as_str(),
            &versions_value(),
            "must have exactly one version marked as storage version",
        ));
    }
    if !spec.version.is_empty() {
        errors.extend(not_dns1035(&path.child("version"), spec.version));
    }

    let names = path.child("names");
    for required in ["plural", "singular", "kind", "listKind"] {
        if spec.names.get(required).is_empty() {
            errors.push(FieldError::required(names.child(required).as_str(), ""));
        }
    }
    errors.extend(validate_names(spec.names, &names));
    errors.extend(schema_rules::validate_validation(spec.validation, spec.any_status(), &opts, &path.child("validation")));
    errors.extend(validate_subresources(spec.subresources, &path.child("subresources")));
    for (i, column) in spec.columns.iter().enumerate() {
        errors.extend(validate_column(column, &path.child("additionalPrinterColumns").index(i)));
    }
    if !spec.selectable_fields.is_empty() {
        errors.extend(shared_selectable_fields(spec, path));
    }
    let strategy = text(spec.conversion, "strategy");
    if spec.conversion.is_some() && strategy != "None" && spec.preserve_unknown_fields {
        errors.push(FieldError::invalid(
            path.child("conversion").child("strategy").as_str(),
            strategy,
            "must be None if spec.preserveUnknownFields is true",
        ));
    }
    errors.extend(conversion::validate(spec.conversion, &opts, &path.child("conversion")));
    errors
}

/// Upstream's `validateCustomResourceDefinitionVersion`.
fn validate_version(version: &Version<'_>, path: &FieldPath, status_enabled: bool, opts: &Options) -> Vec<FieldError> {
    let warning = version.deprecation_warning.unwrap_or("");
    let mut errors: Vec<FieldError> = deprecation_warning_errors(version.deprecated, version.deprecation_warning)
        .into_iter()
        .map(|problem| FieldError::invalid(path.child("deprecationWarning").as_str(), warning, problem))
        .collect();
    errors.extend(schema_rules::validate_validation(version.schema, status_enabled, opts, &path.child("schema")));
    errors.extend(validate_subresources(version.subresources, &path.child("subresources")));
    for (i, column) in version.columns.unwrap_or(&[]).iter().enumerate() {
        errors.extend(validate_column(column, &path.child("additionalPrinterColumns").index(i)));
    }
    let selectable = version.selectable_fields.unwrap_or(&[]);
    if !selectable.is_empty() {
        let fields = path.child("selectableFields");
        match version.schema.and_then(|s| present(Some(s), "openAPIV3Schema")) {
            None => errors.push(FieldError::invalid(
                fields.as_str(),
                "",
                "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
            )),
            Some(schema) => {
                let structural = Structural::from_json(schema);
                if let Err(reason) = &structural {
                    errors.push(FieldError::invalid(path.child("schema.openAPIV3Schema").as_str(), "", reason.clone()));
                }
                errors.extend(selectable_fields(selectable, structural.as_ref().ok(), &fields));
            }
        }
    }
    errors
}

/// The selectable fields all versions share, checked against the shared schema.
fn shared_selectable_fields(spec: &Spec<'_>, path: &FieldPath) -> Vec<FieldError> {
    let fields = path.child("selectableFields");
    let Some(validation) = spec.validation else {
        return vec![FieldError::invalid(
            fields.as_str(),
            "",
            "selectableFields may only be set when validations.schema is included",
        )];
    };
    let mut errors = Vec::new();
    let structural = present(Some(validation), "openAPIV3Schema").map(Structural::from_json).transpose();
    if let Err(reason) = &structural {
        errors.push(FieldError::invalid(path.child("schema.openAPIV3Schema").as_str(), "", reason.clone()));
    }
    let schema = structural.ok().flatten();
    errors.extend(selectable_fields(spec.selectable_fields, schema.as_ref(), &fields));
    errors
}

/// At most 8 fields a field selector may name: strings, booleans or integers outside
/// `metadata`, each once.
fn selectable_fields(fields: &[Value], schema: Option<&Structural>, path: &FieldPath) -> Vec<FieldError> {
    const MAX: usize = 8;
    let mut errors = Vec::new();
    let mut unique: Vec<String> = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let json_path = text(Some(field), "jsonPath");
        let at = path.index(i).child("jsonPath");
        if json_path.is_empty() {
            errors.push(FieldError::required(at.as_str(), ""));
            continue;
        }
        let (resolved, found) = match field_path::resolve(json_path, schema, false) {
            Ok(found) => found,
            Err(reason) => {
                errors.push(FieldError::invalid(at.as_str(), json_path, format!("is an invalid path: {reason}")));
                continue;
            }
        };
        if resolved.root() == "metadata" {
            errors.push(FieldError::invalid(at.as_str(), json_path, "must not point to fields in metadata"));
        }
        if !found.is_some_and(|s| matches!(s.generic.ty.as_str(), "string" | "boolean" | "integer")) {
            errors.push(FieldError::invalid(
                at.as_str(),
                json_path,
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
        }
        if unique.contains(&resolved.to_string()) {
            errors.push(FieldError::duplicate(at.as_str(), json_path));
        } else {
            unique.push(resolved.to_string());
        }
    }
    if unique.len() > MAX {
        errors.push(FieldError::too_many(path.as_str(), unique.len(), MAX));
    }
    errors
}

/// A deprecation warning: only on deprecated versions, 1 to 256 printable characters.
fn deprecation_warning_errors(deprecated: bool, warning: Option<&str>) -> Vec<String> {
    let Some(warning) = warning else {
        return Vec::new();
    };
    if !deprecated {
        return vec!["can only be set for deprecated versions".to_owned()];
    }
    let mut problems = Vec::new();
    if warning.len() > 256 {
        problems.push("must be <= 256 characters long".to_owned());
    }
    if warning.is_empty() {
        problems.push("must not be an empty string".to_owned());
    }
    // Control characters are not printable either, so upstream's separate word for
    // them is never reached.
    if let Some((i, _)) = warning.char_indices().find(|(_, c)| !is_printable(*c)) {
        problems.push(format!("must only contain printable UTF-8 characters; non-printable character found at index {i}"));
    }
    problems
}

/// Go's `unicode.IsPrint`, near enough: letters, marks, numbers, punctuation, symbols
/// and the ASCII space.
fn is_printable(c: char) -> bool {
    c == ' ' || !(c.is_control() || c.is_whitespace() || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{fff9}'..='\u{fffb}' | '\u{feff}'))
}

/// Upstream's `ValidateCustomResourceDefinitionNames`, for the spec's names and the
/// status' accepted ones.
fn validate_names(names: Names<'_>, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for field in ["plural", "singular"] {
        let name = names.get(field);
        if !name.is_empty() {
            errors.extend(not_dns1035(&path.child(field), name));
        }
    }
    for field in ["kind", "listKind"] {
        let name = names.get(field);
        let problems = dns1035_label(&name.to_lowercase());
        if !name.is_empty() && !problems.is_empty() {
            errors.push(FieldError::invalid(
                path.child(field).as_str(),
                name,
                format!("may have mixed case, but should otherwise match: {}", problems.join(",")),
            ));
        }
    }
    for (i, short) in names.list("shortNames").iter().enumerate() {
        errors.extend(not_dns1035(&path.child("shortNames").index(i), short.as_str().unwrap_or("")));
    }
    let kind = names.get("kind");
    if !kind.is_empty() && kind == names.get("listKind") {
        errors.push(FieldError::invalid(path.child("listKind").as_str(), kind, "kind and listKind may not be the same"));
    }
    for (i, category) in names.list("categories").iter().enumerate() {
        errors.extend(not_dns1035(&path.child("categories").index(i), category.as_str().unwrap_or("")));
    }
    errors
}

/// The status' accepted names.
fn status(crd: &Object) -> Vec<FieldError> {
    let accepted = crd.get("status").and_then(|s| present(Some(s), "acceptedNames"));
    validate_names(Names(accepted), &FieldPath::new("status").child("acceptedNames"))
}

const COLUMN_TYPES: [&str; 5] = ["boolean", "date", "integer", "number", "string"];
const COLUMN_FORMATS: [&str; 8] = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"];

/// One printer column (upstream's `ValidateCustomResourceColumnDefinition`).
fn validate_column(column: &Value, path: &FieldPath) -> Vec<FieldError> {
    let c = Some(column);
    let mut errors = Vec::new();
    if text(c, "name").is_empty() {
        errors.push(FieldError::required(path.child("name").as_str(), ""));
    }
    let ty = text(c, "type");
    let types = format!("must be one of {}", COLUMN_TYPES.join(","));
    if ty.is_empty() {
        errors.push(FieldError::required(path.child("type").as_str(), types));
    } else if !COLUMN_TYPES.contains(&ty) {
        errors.push(FieldError::invalid(path.child("type").as_str(), ty, types));
    }
    let format = text(c, "format");
    if !format.is_empty() && !COLUMN_FORMATS.contains(&format) {
        errors.push(FieldError::invalid(
            path.child("format").as_str(),
            format,
            format!("must be one of {}", COLUMN_FORMATS.join(",")),
        ));
    }
    let json_path = text(c, "jsonPath");
    // Upstream names the field by its Go name here.
    let at = path.child("JSONPath");
    if json_path.is_empty() {
        errors.push(FieldError::required(at.as_str(), ""));
    } else {
        let simple = simple_json_path(json_path, &at);
        if simple.is_empty() {
            errors.extend(column_path_errors(json_path, &at));
        }
        errors.extend(simple);
    }
    errors
}

/// The errors of compiling the `x-kubernetes-validations` rules of `schema` — a
/// version's whole `openAPIV3Schema`, structural and otherwise valid — and of their
/// estimated cost against upstream's limits, at `path` (the schema's own path,
/// `spec.versions[0].schema.openAPIV3Schema`). Upstream reports them after the
/// schema's other errors, only when there are none.
pub(crate) fn cel_rule_errors(schema: &Value, path: &FieldPath) -> Vec<FieldError> {
    crate::cel::compile_schema(schema, path.as_str()).err().unwrap_or_default()
}

/// HOOK (printer columns' JSONPath): the errors of parsing a column's `jsonPath` in
/// kubectl's JSONPath dialect (`core/src/jsonpath/`, being written). Upstream v1.33
/// refuses no parsable-looking path at this point — a path it cannot parse fails the
/// Table of the resource later — so this returns nothing until the parser is connected
/// and a decision is made to refuse early.
pub(crate) fn column_path_errors(_json_path: &str, _path: &FieldPath) -> Vec<FieldError> {
    Vec::new()
}

/// A path of the form `.a.b` (upstream's `validateSimpleJSONPath`).
fn simple_json_path(s: &str, path: &FieldPath) -> Vec<FieldError> {
    if s.is_empty() {
        vec![FieldError::invalid(path.as_str(), s, "must not be empty")]
    } else if !s.starts_with('.') {
        vec![FieldError::invalid(path.as_str(), s, "must be a simple json path starting with .")]
    } else {
        Vec::new()
    }
}

/// Upstream's `ValidateCustomResourceDefinitionSubresources`: the scale subresource's
/// paths point into `.spec` and `.status`.
fn validate_subresources(subresources: Option<&Value>, path: &FieldPath) -> Vec<FieldError> {
    let Some(scale) = present(subresources, "scale") else {
        return Vec::new();
    };
    let s = Some(scale);
    let mut errors = Vec::new();
    for (field, prefix, under) in [
        ("specReplicasPath", ".spec.", "should be a json path under .spec"),
        ("statusReplicasPath", ".status.", "should be a json path under .status"),
    ] {
        let at = path.child(&format!("scale.{field}"));
        let value = text(s, field);
        if value.is_empty() {
            errors.push(FieldError::required(at.as_str(), ""));
        } else if let simple @ [_, ..] = simple_json_path(value, &at).as_slice() {
            errors.extend(simple.iter().cloned());
        } else if !value.starts_with(prefix) {
            errors.push(FieldError::invalid(at.as_str(), value, under));
        }
    }
    let selector = text(s, "labelSelectorPath");
    if !selector.is_empty() {
        let at = path.child("scale.labelSelectorPath");
        if let simple @ [_, ..] = simple_json_path(selector, &at).as_slice() {
            errors.extend(simple.iter().cloned());
        } else if !selector.starts_with(".spec.") && !selector.starts_with(".status.") {
            errors.push(FieldError::invalid(at.as_str(), selector, "should be a json path under either .spec or .status"));
        }
    }
    errors
}

/// `status.storedVersions`: never empty, holding the storage version, and naming only
/// versions the spec still lists.
fn stored_versions(crd: &Object, spec: &Spec<'_>) -> Vec<FieldError> {
    let path = FieldPath::new("status").child("storedVersions");
    let listed = crd.get("status").and_then(|s| present(Some(s), "storedVersions"));
    let stored: Vec<&str> = listed.and_then(Value::as_array).into_iter().flatten().map(|v| v.as_str().unwrap_or("")).collect();
    let shown = || go_json(listed.unwrap_or(&Value::Null));
    if stored.is_empty() {
        return vec![FieldError::invalid_unquoted(path.as_str(), &shown(), "must have at least one stored version")];
    }
    let mut errors = Vec::new();
    let versions = spec.versions.as_deref().unwrap_or(&[]);
    for v in versions {
        if v.storage && !stored.contains(&v.name) {
            errors.push(FieldError::invalid_unquoted(path.as_str(), &shown(), &format!("must have the storage version {}", v.name)));
        }
    }
    // Upstream walks a map (each name at its last index); the order here is the list's.
    for (i, name) in stored.iter().enumerate() {
        let last = stored.iter().rposition(|n| n == name) == Some(i);
        if last && !versions.iter().any(|v| v.name == *name) {
            errors.push(FieldError::invalid(
                path.index(i).as_str(),
                name,
                format!("missing from spec.versions; {name} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {name} and removes {name} from status.storedVersions"),
            ));
        }
    }
    errors
}

const APPROVAL: &str = "api-approved.kubernetes.io";

/// Groups under `k8s.io` and `kubernetes.io` are the Kubernetes project's: a CRD there
/// must say where its API was approved (or that it was not).
fn api_approval(new: &Object, old: Option<&Object>) -> Vec<FieldError> {
    let group = text(new.get("spec"), "group");
    let protected = ["k8s.io", "kubernetes.io"].iter().any(|g| group == *g || group.ends_with(&format!(".{g}")));
    if !protected {
        return Vec::new();
    }
    let annotation = |crd: &Object| text(crd.get("metadata").and_then(|m| m.get("annotations")), APPROVAL).to_owned();
    let state = approval_state(&annotation(new));
    if old.is_some_and(|old| approval_state(&annotation(old)).0 == state.0) {
        return Vec::new();
    }
    let path = FieldPath::new("metadata").child("annotations").key(APPROVAL);
    match state {
        (Approval::Approved | Approval::Bypassed, _) => Vec::new(),
        (Approval::Missing, reason) => vec![FieldError::required(path.as_str(), reason)],
        (Approval::Invalid, reason) => vec![FieldError::invalid(path.as_str(), &annotation(new), reason)],
    }
}

/// What the approval annotation says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Approval {
    Invalid,
    Approved,
    Bypassed,
    Missing,
}

fn approval_state(annotation: &str) -> (Approval, String) {
    let url = conversion::Url::parse(annotation).ok();
    if annotation.is_empty() {
        (Approval::Missing, format!("protected groups must have approval annotation {}, see https://github.com/kubernetes/enhancements/pull/1111", crate::schema::go_quote(APPROVAL)))
    } else if annotation.starts_with("unapproved") {
        (Approval::Bypassed, format!("not approved: {}", crate::schema::go_quote(annotation)))
    } else if url.is_some_and(|u| !u.scheme.is_empty() && !u.host.is_empty()) {
        (Approval::Approved, format!("approved in {annotation}"))
    } else {
        (Approval::Invalid, format!("protected groups must have approval annotation {} with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111", crate::schema::go_quote(APPROVAL)))
    }
}

/// `spec.preserveUnknownFields: true` is only kept by CRDs that already had it.
fn preserve_unknown_fields(spec: &Spec<'_>, old: Option<&Spec<'_>>) -> Vec<FieldError> {
    if old.is_some_and(|o| o.preserve_unknown_fields) || !spec.preserve_unknown_fields {
        return Vec::new();
    }
    vec![FieldError::invalid_unquoted(
        "spec.preserveUnknownFields",
        "true",
        "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
    )]
}

/// A required value out of a fixed set (upstream's `validateEnumStrings`).
pub(super) fn enum_string(path: &FieldPath, value: &str, accepted: &[&str]) -> Vec<FieldError> {
    if value.is_empty() {
        vec![FieldError::required(path.as_str(), "")]
    } else if accepted.contains(&value) {
        Vec::new()
    } else {
        vec![FieldError::not_supported(path.as_str(), value, accepted)]
    }
}

/// Why `value` is not a DNS-1035 label, as one error, if it is not.
fn not_dns1035(path: &FieldPath, value: &str) -> Option<FieldError> {
    let problems = dns1035_label(value);
    (!problems.is_empty()).then(|| FieldError::invalid(path.as_str(), value, problems.join(",")))
}

fn immutable(path: &FieldPath, new: &str, old: &str) -> Vec<FieldError> {
    if new == old {
        Vec::new()
    } else {
        vec![FieldError::invalid(path.as_str(), new, "field is immutable")]
    }
}

/// Whether the CRD's condition `kind` is `True`.
pub(crate) fn condition_true(crd: &Object, kind: &str) -> bool {
    list(crd.get("status"), "conditions")
        .iter()
        .any(|c| text(Some(c), "type") == kind && text(Some(c), "status") == "True")
}

fn all_versions_have_schemas(spec: &Spec<'_>) -> bool {
    let has = |v: Option<&Value>| v.and_then(|v| present(Some(v), "openAPIV3Schema")).is_some();
    has(spec.validation) || spec.versions.iter().flatten().all(|v| has(v.schema))
}

/// Whether the stored CRD's conversion webhook CA bundle is itself invalid (then a new
/// invalid one is let through).
fn old_ca_bundle_invalid(spec: &Spec<'_>) -> bool {
    let config = present(present(spec.conversion, "webhook"), "clientConfig");
    let bundle = text(config, "caBundle");
    !bundle.is_empty() && !conversion::ca_bundle_errors(&FieldPath::default(), bundle).is_empty()
}

//! A CRD as upstream's validation sees it: in apiextensions' internal form, into which
//! kube-apiserver converts every `apiextensions.k8s.io/v1` object before checking it.
//!
//! The conversion matters for what errors say: when every version carries the same
//! schema (or the same subresources, printer columns or selectable fields, or none),
//! the internal form holds it once at the top (`spec.validation`, `spec.subresources`,
//! …) and not per version, so errors in it are reported at `spec.validation.
//! openAPIV3Schema…` and an error value listing the versions shows their schemas as
//! `null`. `spec.version` is the first version's name.

use super::go_values;
use serde_json::Value;

/// The spec of a CRD in internal form, borrowed from the v1 object.
#[derive(Debug)]
pub(crate) struct Spec<'a> {
    pub group: &'a str,
    /// The first version's name (`""` without versions).
    pub version: &'a str,
    pub names: Names<'a>,
    pub scope: &'a str,
    /// The schema all versions share (a `CustomResourceValidation`: `{openAPIV3Schema}`).
    pub validation: Option<&'a Value>,
    /// The subresources all versions share.
    pub subresources: Option<&'a Value>,
    /// The printer columns all versions share.
    pub columns: &'a [Value],
    /// The selectable fields all versions share.
    pub selectable_fields: &'a [Value],
    /// `None` when `spec.versions` is absent.
    pub versions: Option<Vec<Version<'a>>>,
    pub conversion: Option<&'a Value>,
    pub preserve_unknown_fields: bool,
}

/// One version in internal form: what it does not share with the others.
#[derive(Debug)]
pub(crate) struct Version<'a> {
    pub name: &'a str,
    pub served: bool,
    pub storage: bool,
    pub deprecated: bool,
    pub deprecation_warning: Option<&'a str>,
    pub schema: Option<&'a Value>,
    pub subresources: Option<&'a Value>,
    /// `None` when shared (or absent), else the version's own list.
    pub columns: Option<&'a [Value]>,
    pub selectable_fields: Option<&'a [Value]>,
}

/// The names of a CRD's resources (spec) or the names accepted for them (status).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Names<'a>(pub Option<&'a Value>);

impl<'a> Names<'a> {
    pub fn get(self, key: &str) -> &'a str {
        text(self.0, key)
    }

    pub fn list(self, key: &str) -> &'a [Value] {
        list(self.0, key)
    }
}

/// The spec of `crd` in internal form.
pub(crate) fn spec(crd: &Value) -> Spec<'_> {
    let spec = crd.get("spec");
    let raw_versions = spec.and_then(|s| s.get("versions")).and_then(Value::as_array);
    let all = raw_versions.map(Vec::as_slice).unwrap_or(&[]);
    let shared = |key: &str| shared(all, key);
    let (validation, schema_shared) = shared("schema");
    let (subresources, subresources_shared) = shared("subresources");
    let (columns, columns_shared) = shared("additionalPrinterColumns");
    let (selectable, selectable_shared) = shared("selectableFields");
    let versions = raw_versions.map(|given| {
        given
            .iter()
            .map(|v| Version {
                name: text(Some(v), "name"),
                served: flag(Some(v), "served"),
                storage: flag(Some(v), "storage"),
                deprecated: flag(Some(v), "deprecated"),
                deprecation_warning: present(Some(v), "deprecationWarning").and_then(Value::as_str),
                schema: if schema_shared { None } else { present(Some(v), "schema") },
                subresources: if subresources_shared { None } else { present(Some(v), "subresources") },
                columns: (!columns_shared).then(|| list(Some(v), "additionalPrinterColumns")),
                selectable_fields: (!selectable_shared).then(|| list(Some(v), "selectableFields")),
            })
            .collect()
    });
    Spec {
        group: text(spec, "group"),
        version: all.first().map(|v| text(Some(v), "name")).unwrap_or(""),
        names: Names(present(spec, "names")),
        scope: text(spec, "scope"),
        validation,
        subresources,
        columns: columns.and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]),
        selectable_fields: selectable.and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]),
        versions,
        conversion: present(spec, "conversion"),
        preserve_unknown_fields: flag(spec, "preserveUnknownFields"),
    }
}

/// The value of `key` all versions share (as upstream compares them: nil and empty
/// lists alike), and whether they share it.
fn shared<'a>(versions: &'a [Value], key: &str) -> (Option<&'a Value>, bool) {
    let Some(first) = versions.first() else {
        return (None, false);
    };
    let value = present(Some(first), key);
    let same = versions
        .iter()
        .all(|v| go_values::semantically_equal(key, value, present(Some(v), key)));
    (if same { value } else { None }, same)
}

impl Spec<'_> {
    /// The subresources that apply to the version called `name`.
    pub fn subresources_of(&self, name: &str) -> Option<&Value> {
        let per_version = self.versions.iter().flatten().any(|v| v.subresources.is_some());
        if !per_version {
            return self.subresources;
        }
        self.versions.iter().flatten().find(|v| v.name == name).and_then(|v| v.subresources)
    }

    /// Whether any version has a status subresource.
    pub fn any_status(&self) -> bool {
        has_status(self.subresources) || self.versions.iter().flatten().any(|v| has_status(v.subresources))
    }

    /// Every schema the CRD carries: the shared one, or each version's.
    pub fn schemas(&self) -> Vec<&Value> {
        let shared = self.validation.and_then(|v| present(Some(v), "openAPIV3Schema"));
        let own = self.versions.iter().flatten().filter_map(|v| v.schema.and_then(|s| present(Some(s), "openAPIV3Schema")));
        shared.into_iter().chain(own).collect()
    }
}

/// Whether subresources include `status`.
pub(crate) fn has_status(subresources: Option<&Value>) -> bool {
    present(subresources, "status").is_some()
}

/// A field present and not `null`.
pub(crate) fn present<'a>(v: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    v.and_then(|v| v.get(key)).filter(|v| !v.is_null())
}

pub(crate) fn text<'a>(v: Option<&'a Value>, key: &str) -> &'a str {
    present(v, key).and_then(Value::as_str).unwrap_or("")
}

pub(crate) fn flag(v: Option<&Value>, key: &str) -> bool {
    present(v, key).and_then(Value::as_bool).unwrap_or(false)
}

pub(crate) fn list<'a>(v: Option<&'a Value>, key: &str) -> &'a [Value] {
    present(v, key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

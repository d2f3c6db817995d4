//! IngressClasses (networking.k8s.io/v1). Defaults: parameters without a scope are
//! cluster-scoped.
//!
//! A controller is named by a domain-prefixed path
//! that never changes, parameters that reference an object in the scope they say
//! (upstream's `ValidateIngressClass*`).

use super::columns::{self as cols, Column};
use super::defaults::{object_at, or_insert};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::{names, FieldError};
use serde_json::{json, Value};

pub struct IngressClasses;

impl Strategy for IngressClasses {
    fn name(&self) -> &'static str {
        "ingressclasses"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    /// Upstream's strategy starts the generation at 1 and counts spec changes.
    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        if let Some(parameters) = object_at(obj, &["spec", "parameters"]) {
            or_insert(parameters, "scope", || json!("Cluster"));
        }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if controller(new) != controller(old) {
            errs.push(FieldError::invalid("spec.controller", controller(new), "field is immutable"));
        }
        errs.extend(validate(new));
        errs
    }
}

const CONTROLLER_MAX: usize = 250;
const SCOPES: [&str; 2] = ["Cluster", "Namespace"];

fn controller(ic: &Object) -> &str {
    ic.get("spec").and_then(|s| s.get("controller")).and_then(Value::as_str).unwrap_or("")
}

fn validate(ic: &Object) -> Vec<FieldError> {
    const FIELD: &str = "spec.controller";
    let c = controller(ic);
    let mut errs = Vec::new();
    if c.len() > CONTROLLER_MAX {
        errs.push(FieldError::shown(FIELD, crate::validation::ErrorKind::TooLong, None, &format!("may not be more than {CONTROLLER_MAX} bytes")));
    }
    errs.extend(domain_prefixed_path(FIELD, c));
    if let Some(params) = ic.get("spec").and_then(|s| s.get("parameters")).filter(|p| !p.is_null()) {
        errs.extend(parameters(params));
    }
    errs
}

/// `host/path`: the host a DNS subdomain, the path of URL path characters.
fn domain_prefixed_path(field: &str, value: &str) -> Vec<FieldError> {
    if value.is_empty() {
        return vec![FieldError::required(field, "")];
    }
    let Some((host, path)) = value.split_once('/').filter(|(h, p)| !h.is_empty() && !p.is_empty()) else {
        return vec![FieldError::invalid(field, value, "must be a domain-prefixed path (such as \"acme.io/foo\")")];
    };
    let mut errs: Vec<FieldError> = names::dns1123_subdomain(host).into_iter().map(|m| FieldError::invalid(field, host, m)).collect();
    let path_char = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !path.chars().all(path_char) {
        errs.push(FieldError::invalid(field, path, "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"));
    }
    errs
}

/// The parameters' reference, with a namespace exactly when their scope is `Namespace`
/// (`Cluster` when unset, as upstream defaults it).
fn parameters(params: &Value) -> Vec<FieldError> {
    let mut errs = super::ingresses::typed_reference(params, "spec.parameters");
    let scope = params.get("scope").and_then(Value::as_str).unwrap_or(SCOPES[0]);
    let namespace = params.get("namespace").filter(|n| !n.is_null()).map(|n| n.as_str().unwrap_or(""));
    match (scope, namespace) {
        ("Namespace", None) => errs.push(FieldError::required("spec.parameters.namespace", "`parameters.scope` is set to 'Namespace'")),
        ("Namespace", Some(ns)) => {
            errs.extend(names::dns1123_label(ns).into_iter().map(|m| FieldError::invalid("spec.parameters.namespace", ns, m)))
        }
        ("Cluster", Some(_)) => errs.push(FieldError::forbidden("spec.parameters.namespace", "`parameters.scope` is set to 'Cluster'")),
        ("Cluster", None) => {}
        (other, _) => errs.push(FieldError::not_supported("spec.parameters.scope", other, &SCOPES)),
    }
    errs
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Controller", kind: "string", description: "Controller that is responsible for handling this class", format: "", priority: 0, cell: |o| cols::str_at(o, &["spec", "controller"]) },
    Column { name: "Parameters", kind: "string", description: "A reference to a resource with additional parameters", format: "", priority: 0, cell: parameters_cell },
];

/// PARAMETERS: the parameters' Kind.group/name, `<none>` without them.
fn parameters_cell(class: &Object) -> Value {
    let Some(p) = cols::at(class, &["spec", "parameters"]).filter(|p| !p.is_null()) else {
        return json!("<none>");
    };
    let field = |k: &str| p.get(k).and_then(Value::as_str);
    let mut shown = field("kind").unwrap_or("").to_owned();
    if let Some(group) = field("apiGroup") {
        shown = format!("{shown}.{group}");
    }
    json!(format!("{shown}/{}", field("name").unwrap_or("")))
}

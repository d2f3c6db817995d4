//! The OpenAPI 3.0 documents of `/openapi/v3`, one per discovery path, derived from the
//! Swagger 2.0 document.
//!
//! kube-apiserver serves one document per group-version (`api/v1`, `apis/apps/v1`) plus
//! one per discovery endpoint (`api`, `apis`, `apis/<group>`, `version`). Each carries
//! the paths under its prefix and, in `components.schemas`, exactly the schemas those
//! paths reference, directly or through other schemas. The differences from v2 are
//! those of OpenAPI 3.0 and of kube's v3 builder:
//!
//! - references point at `#/components/schemas/<name>`, and a reference with siblings
//!   (`description`, `default`) is wrapped as `allOf: [{$ref}]` beside them;
//! - parameters are written inline with a `schema` holding their type, bodies become
//!   `requestBody` with one entry per accepted media type, and responses list one
//!   entry per produced media type;
//! - `IntOrString` and `Quantity` are `oneOf` their alternatives rather than strings.

use super::spec::KUBERNETES_VERSION;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

const DEFINITIONS_PREFIX: &str = "#/definitions/";
const SCHEMAS_PREFIX: &str = "#/components/schemas/";
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// The key of the v3 document a v2 path belongs to: `api`, `api/v1`, `apis`,
/// `apis/apps`, `apis/apps/v1`, `version`.
pub fn document_key(path: &str) -> Option<String> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    Some(match parts.as_slice() {
        [] | [""] => return None,
        ["api"] => "api".to_owned(),
        ["api", version, ..] => format!("api/{version}"),
        ["apis"] => "apis".to_owned(),
        ["apis", group] => format!("apis/{group}"),
        ["apis", group, version, ..] => format!("apis/{group}/{version}"),
        [first, ..] => (*first).to_owned(),
    })
}

/// A schema in v3 form: references re-pointed, references with siblings wrapped in
/// `allOf`. Extension values (`x-…`) and other data are copied unchanged.
pub fn schema(v: &Value) -> Value {
    let Value::Object(m) = v else {
        return v.clone();
    };
    let mut out = Map::new();
    for (key, value) in m {
        let converted = match key.as_str() {
            "$ref" => match value.as_str() {
                Some(r) => Value::from(reference(r)),
                None => value.clone(),
            },
            "properties" | "patternProperties" => match value {
                Value::Object(props) => {
                    Value::Object(props.iter().map(|(k, s)| (k.clone(), schema(s))).collect())
                }
                _ => value.clone(),
            },
            "items" => match value {
                Value::Array(xs) => Value::Array(xs.iter().map(schema).collect()),
                other => schema(other),
            },
            "additionalProperties" | "not" => schema(value),
            "allOf" | "anyOf" | "oneOf" => match value {
                Value::Array(xs) => Value::Array(xs.iter().map(schema).collect()),
                _ => value.clone(),
            },
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    if out.len() > 1 {
        if let Some(r) = out.remove("$ref") {
            out.insert("allOf".into(), json!([{ "$ref": r }]));
        }
    }
    Value::Object(out)
}

fn reference(r: &str) -> String {
    match r.strip_prefix(DEFINITIONS_PREFIX) {
        Some(name) => format!("{SCHEMAS_PREFIX}{name}"),
        None => r.to_owned(),
    }
}

/// A definition in v3 form, with kube's v3 shapes for the two polymorphic scalars.
fn definition(name: &str, v: &Value) -> Value {
    let mut out = schema(v);
    let alternatives = match name {
        INT_OR_STRING => Some(json!([{ "type": "integer" }, { "type": "string" }])),
        QUANTITY => Some(json!([{ "type": "string" }, { "type": "number" }])),
        _ => None,
    };
    if let (Some(alternatives), Value::Object(o)) = (alternatives, &mut out) {
        if o.get("type").and_then(Value::as_str) == Some("string") {
            o.remove("type");
            o.insert("oneOf".into(), alternatives);
        }
    }
    out
}

/// Every `#/components/schemas/` name referenced inside `v`.
fn collect_references(v: &Value, found: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x.as_str()) {
                    ("$ref", Some(r)) => {
                        if let Some(name) = r.strip_prefix(SCHEMAS_PREFIX) {
                            found.insert(name.to_owned());
                        }
                    }
                    // A property called `$ref` (JSONSchemaProps has one) is a schema.
                    _ => collect_references(x, found),
                }
            }
        }
        Value::Array(xs) => xs.iter().for_each(|x| collect_references(x, found)),
        _ => {}
    }
}

/// A v2 parameter (references resolved) in v3 form; `None` for a body parameter.
fn parameter(p: &Value) -> Option<Value> {
    let o = p.as_object()?;
    if o.get("in").and_then(Value::as_str) == Some("body") {
        return None;
    }
    let mut out = Map::new();
    let mut schema = Map::new();
    for (k, v) in o {
        match k.as_str() {
            "name" | "in" | "description" | "required" | "deprecated" | "allowEmptyValue" => {
                out.insert(k.clone(), v.clone());
            }
            k if k.starts_with("x-") => {
                out.insert(k.to_owned(), v.clone());
            }
            _ => {
                schema.insert(k.clone(), v.clone());
            }
        }
    }
    out.insert("schema".into(), Value::Object(schema));
    Some(Value::Object(out))
}

/// Resolves `#/parameters/<key>` against the v2 document's shared parameters.
fn resolve<'a>(p: &'a Value, shared: &'a Map<String, Value>) -> &'a Value {
    p.get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/parameters/"))
        .and_then(|key| shared.get(key))
        .unwrap_or(p)
}

fn content(types: &[Value], schema: &Value) -> Value {
    Value::Object(
        types
            .iter()
            .filter_map(Value::as_str)
            .map(|t| (t.to_owned(), json!({ "schema": schema })))
            .collect(),
    )
}

/// One v2 operation in v3 form.
fn operation(op: &Value, shared: &Map<String, Value>) -> Value {
    let Some(o) = op.as_object() else {
        return op.clone();
    };
    let empty = Vec::new();
    let consumes = o
        .get("consumes")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let produces = o
        .get("produces")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let mut out = Map::new();
    for (k, v) in o {
        match k.as_str() {
            "consumes" | "produces" | "schemes" => {}
            "parameters" => {
                let list = v.as_array().unwrap_or(&empty);
                let mut params = Vec::new();
                for p in list {
                    let p = resolve(p, shared);
                    if p.get("in").and_then(Value::as_str) == Some("body") {
                        let mut body = Map::new();
                        let s = schema(p.get("schema").unwrap_or(&Value::Null));
                        body.insert("content".into(), content(consumes, &s));
                        if p.get("required").and_then(Value::as_bool) == Some(true) {
                            body.insert("required".into(), true.into());
                        }
                        out.insert("requestBody".into(), Value::Object(body));
                    } else if let Some(p) = parameter(p) {
                        params.push(p);
                    }
                }
                if !params.is_empty() {
                    out.insert("parameters".into(), Value::Array(params));
                }
            }
            "responses" => {
                let mut responses = Map::new();
                for (code, r) in v.as_object().into_iter().flatten() {
                    let mut response = Map::new();
                    if let Some(d) = r.get("description") {
                        response.insert("description".into(), d.clone());
                    }
                    if let Some(s) = r.get("schema") {
                        response.insert("content".into(), content(produces, &schema(s)));
                    }
                    responses.insert(code.clone(), Value::Object(response));
                }
                out.insert("responses".into(), Value::Object(responses));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// One v2 path item in v3 form.
fn path_item(item: &Value, shared: &Map<String, Value>) -> Value {
    let Some(o) = item.as_object() else {
        return item.clone();
    };
    let mut out = Map::new();
    for (k, v) in o {
        if k == "parameters" {
            let params: Vec<Value> = v
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| parameter(resolve(p, shared)))
                .collect();
            if !params.is_empty() {
                out.insert(k.clone(), Value::Array(params));
            }
        } else if matches!(
            k.as_str(),
            "get" | "put" | "post" | "delete" | "patch" | "head" | "options"
        ) {
            out.insert(k.clone(), operation(v, shared));
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// Every v3 document of a Swagger 2.0 document, by key (`api/v1`, `apis/apps/v1`, …).
pub fn documents(v2: &Value) -> BTreeMap<String, Value> {
    let mut all = BTreeMap::new();
    each_document(v2, |key, doc| {
        all.insert(key, doc);
    });
    all
}

/// Build the documents one at a time, handing each to `emit` before building the next,
/// so that only one document is ever held at once.
pub fn each_document(v2: &Value, mut emit: impl FnMut(String, Value)) {
    let empty = Map::new();
    let shared = v2
        .get("parameters")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let definitions = v2
        .get("definitions")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut paths_by_key: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for (path, item) in v2.get("paths").and_then(Value::as_object).unwrap_or(&empty) {
        if let Some(key) = document_key(path) {
            paths_by_key
                .entry(key)
                .or_default()
                .insert(path.clone(), path_item(item, shared));
        }
    }
    // Definitions in v3 form, converted once and shared by every document.
    let mut converted: BTreeMap<&str, (Value, BTreeSet<String>)> = BTreeMap::new();
    for (name, def) in definitions {
        let v = definition(name, def);
        let mut refs = BTreeSet::new();
        collect_references(&v, &mut refs);
        converted.insert(name.as_str(), (v, refs));
    }
    let security_schemes = v2.get("securityDefinitions").cloned().unwrap_or(json!({}));
    for (key, paths) in paths_by_key {
        let paths = Value::Object(paths);
        let mut pending = BTreeSet::new();
        collect_references(&paths, &mut pending);
        let mut schemas = Map::new();
        while let Some(name) = pending.pop_first() {
            if schemas.contains_key(&name) {
                continue;
            }
            if let Some((v, refs)) = converted.get(name.as_str()) {
                pending.extend(refs.iter().filter(|r| !schemas.contains_key(*r)).cloned());
                schemas.insert(name, v.clone());
            }
        }
        let doc = json!({
            "components": {
                "schemas": Value::Object(schemas),
                "securitySchemes": security_schemes,
            },
            "info": { "title": "Kubernetes", "version": KUBERNETES_VERSION },
            "openapi": "3.0.0",
            "paths": paths,
        });
        emit(key, doc);
    }
}

//! The `scale` subresource of the kinds whose strategy serves one (deployments,
//! replicasets and statefulsets of apps/v1, replicationcontrollers of v1): an
//! `autoscaling/v1` `Scale` made from the parent object, whose `spec.replicas` writes
//! the parent's. How the parent's selector reads and how a missing parent is named
//! are the kind's [`ScaleRules`].
//!
//! A Scale is a view, never stored. GET shows it; PUT and PATCH go through the parent's
//! guaranteed update ([`super::update`]): the Scale is made from the stored parent, the
//! client's Scale (or the patched one) is checked, and its replicas are written back into
//! the parent, as kube-apiserver's ScaleREST does. A resourceVersion on the Scale is the
//! parent's, so a stale one conflicts like a stale PUT of the parent.

use super::object::{meta_str, Object};
use super::scope::Scope;
use crate::negotiation::Shape;
use crate::resources::customresources::ScalePaths;
use crate::resources::{Handler, ScaleRules, SelectorShape};
use crate::effect::Step;
use crate::status::ApiError;
use crate::storage::{StorageOp, StorageOutput};
use crate::validation::FieldError;
use serde_json::{json, Map, Value};

/// The replicas a parent has when its spec does not say: the v1 defaulting of all four
/// kinds sets 1.
const DEFAULT_REPLICAS: i64 = 1;

/// How a Scale reads and writes its parent: by its kind's rules, or by the paths its
/// CRD declares.
#[derive(Clone, Debug)]
pub(super) enum Source {
    Kind(ScaleRules),
    Paths(ScalePaths),
}

/// The source of the Scale a request's subresource serves, if it serves one.
pub(super) fn source(scope: &Scope) -> Option<Source> {
    match scope.subresource_handler()? {
        Handler::Scale(rules) => Some(Source::Kind(rules)),
        Handler::CustomScale => scope.resource().strategy.scale_paths().cloned().map(Source::Paths),
        _ => None,
    }
}

/// The fields a JSON path of a CRD's scale (`.spec.replicas`) names, in order.
fn fields(path: &str) -> impl Iterator<Item = &str> {
    path.split('.').filter(|f| !f.is_empty())
}

fn at<'a>(object: &'a Object, path: &str) -> Option<&'a Value> {
    let mut fields = fields(path);
    let first = object.get(fields.next()?)?;
    fields.try_fold(first, |v, f| v.get(f))
}

/// The Scale of `parent`, read as `source` says.
pub(super) fn of(source: &Source, parent: &Object) -> Result<Object, ApiError> {
    let mut metadata = Map::new();
    let parent_meta = parent.get("metadata").and_then(Value::as_object);
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = parent_meta.and_then(|m| m.get(field)) {
            metadata.insert(field.into(), v.clone());
        }
    }
    let (replicas, status_replicas, selector) = match source {
        Source::Kind(rules) => {
            let spec = parent.get("spec");
            let replicas = spec
                .and_then(|s| s.get("replicas"))
                .and_then(Value::as_i64)
                .unwrap_or(DEFAULT_REPLICAS);
            let status_replicas = parent
                .get("status")
                .and_then(|s| s.get("replicas"))
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let selector = spec.and_then(|s| s.get("selector"));
            let selector = match rules.selector {
                SelectorShape::LabelSet => Ok(set_selector(selector.and_then(Value::as_object))),
                SelectorShape::LabelSelector => label_selector(selector),
            }
            .map_err(ApiError::bad_request)?;
            (replicas, status_replicas, selector)
        }
        // Upstream reads a missing count as 0 and the selector as the string stored.
        Source::Paths(paths) => {
            let int = |path: &str| at(parent, path).and_then(Value::as_i64).unwrap_or(0);
            let selector = paths.label_selector.as_deref().and_then(|p| at(parent, p)).and_then(Value::as_str);
            (int(&paths.spec_replicas), int(&paths.status_replicas), selector.unwrap_or("").to_owned())
        }
    };

    // Scale's JSON leaves out a zero spec.replicas and an empty selector; status.replicas
    // is always written.
    let mut scale_spec = Map::new();
    if replicas != 0 {
        scale_spec.insert("replicas".into(), json!(replicas));
    }
    let mut status = Map::new();
    status.insert("replicas".into(), json!(status_replicas));
    if !selector.is_empty() {
        status.insert("selector".into(), Value::String(selector));
    }
    let mut scale = Map::new();
    scale.insert("kind".into(), json!("Scale"));
    scale.insert("apiVersion".into(), json!("autoscaling/v1"));
    scale.insert("metadata".into(), Value::Object(metadata));
    scale.insert("spec".into(), Value::Object(scale_spec));
    scale.insert("status".into(), Value::Object(status));
    Ok(scale)
}

/// The parent once `scale` (a client's Scale, decoded) is written to it: its replicas
/// set, its generation counted up when that changed its spec.
pub(super) fn write_back(
    scope: &Scope,
    parent: &Object,
    scale: &Object,
) -> Result<Object, ApiError> {
    let r = scope.resource();
    let replicas = scale
        .get("spec")
        .and_then(|s| s.get("replicas"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let name = meta_str(parent, "name");
    if replicas < 0 {
        let errs = vec![FieldError::invalid_unquoted(
            "spec.replicas",
            &replicas.to_string(),
            "must be greater than or equal to 0",
        )];
        return Err(ApiError::invalid("autoscaling", "Scale", name, errs));
    }
    let (given_uid, uid) = (meta_str(scale, "uid"), meta_str(parent, "uid"));
    if !given_uid.is_empty() && given_uid != uid {
        let why = format!(
            "Precondition failed: UID in precondition: {given_uid}, UID in object meta: {uid}"
        );
        let resource = format!("{}/scale", r.plural);
        return Err(ApiError::conflict(&r.group, &resource, name, &why));
    }
    let mut updated = parent.clone();
    let path = match r.strategy.scale_paths() {
        Some(paths) => paths.spec_replicas.clone(),
        None => ".spec.replicas".to_owned(),
    };
    set(&mut updated, &path, json!(replicas));
    r.strategy.count_generation(parent, &mut updated);
    Ok(updated)
}

/// Set the field `path` names to `value`, making the objects on its way.
fn set(object: &mut Object, path: &str, value: Value) {
    let names: Vec<&str> = fields(path).collect();
    let Some((last, parents)) = names.split_last() else {
        return;
    };
    let mut here = object;
    for name in parents {
        let next = here.entry(name.to_string()).or_insert_with(|| json!({}));
        if !next.is_object() {
            *next = json!({});
        }
        here = next.as_object_mut().expect("made an object above");
    }
    here.insert(last.to_string(), value);
}

/// GET of a Scale. A missing parent is NotFound as the kind's upstream ScaleREST words
/// it: the parent resource, or what the rules name instead.
pub(super) fn get(scope: Scope, source: Source) -> Step {
    let read_at = match super::read_at::for_get(&scope.query) {
        Ok(r) => r,
        Err(e) => return scope.fail(e),
    };
    let key = scope.key(&scope.name);
    scope.then(StorageOp::Get { key }, move |scope, done| match done {
        Ok(StorageOutput::Got { kv, revision }) => match (read_at.check(revision), kv) {
            (Err(e), _) => scope.fail(e),
            (Ok(()), Some(kv)) => {
                let shown = scope.read(&kv)
                    .map_err(ApiError::internal)
                    .and_then(|parent| of(&source, &parent));
                match (shown, scope.output.shape) {
                    (Ok(scale), Shape::Table(version)) => {
                        let t = table(&scope, version, &scale, &kv.mod_revision.to_string());
                        scope.respond(200, &t)
                    }
                    (Ok(scale), _) => scope.respond(200, &Value::Object(scale)),
                    (Err(e), _) => scope.fail(e),
                }
            }
            (Ok(()), None) => {
                let r = scope.resource();
                let not_found_as = match &source {
                    Source::Kind(rules) => rules.not_found_as,
                    Source::Paths(_) => None,
                };
                let (group, resource) = not_found_as.unwrap_or((&r.group, &r.plural));
                let e = ApiError::not_found(group, resource, &scope.name);
                scope.fail(e)
            }
        },
        other => scope.fail_storage(&scope.name.clone(), other),
    })
}

/// A Scale as the Table `kubectl get --subresource=scale` asks for: Name, Desired
/// (spec.replicas), Available (status.replicas) and Age, as upstream prints a Scale.
fn table(scope: &Scope, version: &str, scale: &Object, rv: &str) -> Value {
    let int_at = |section: &str| {
        scale
            .get(section)
            .and_then(|s| s.get("replicas"))
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };
    let age = super::table::age(scope, scale);
    let column = |name: &str, kind: &str, description: &str| json!({"name": name, "type": kind, "format": "", "description": description, "priority": 0});
    let cells = json!([
        meta_str(scale, "name"),
        int_at("spec"),
        int_at("status"),
        age
    ]);
    let row = match scope.query.get("includeObject").unwrap_or("Metadata") {
        "None" => json!({ "cells": cells }),
        "Object" => json!({ "cells": cells, "object": scale }),
        _ => json!({
            "cells": cells,
            "object": {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": scale.get("metadata").cloned().unwrap_or_else(|| json!({})),
            },
        }),
    };
    json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": {"resourceVersion": rv},
        "columnDefinitions": [
            column("Name", "string", "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"),
            column("Desired", "integer", "replicas is the desired number of instances for the scaled object."),
            column("Available", "integer", "replicas is the actual number of observed instances of the scaled object."),
            column("Age", "string", "CreationTimestamp is a timestamp representing the server time when this object was created."),
        ],
        "rows": [row],
    })
}

/// A label set as a selector string: `key=value` pairs sorted by key, comma-separated.
fn set_selector(labels: Option<&Map<String, Value>>) -> String {
    let mut pairs: Vec<String> = labels
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    pairs.sort();
    pairs.join(",")
}

/// A metav1 LabelSelector as the selector string upstream prints for it: one
/// requirement per label and expression, sorted by key, values of `in` and `notin`
/// sorted. A missing or empty selector is the empty string.
fn label_selector(selector: Option<&Value>) -> Result<String, String> {
    let Some(selector) = selector.and_then(Value::as_object) else {
        return Ok(String::new());
    };
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (key, value) in labels {
            let value = value.as_str().unwrap_or("");
            requirements.push((key.clone(), format!("{key}={value}")));
        }
    }
    let expressions = selector.get("matchExpressions").and_then(Value::as_array);
    for expression in expressions.into_iter().flatten() {
        let key = expression.get("key").and_then(Value::as_str).unwrap_or("");
        let operator = expression
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or("");
        let mut values: Vec<&str> = expression
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let text = match operator {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            other => {
                return Err(format!(
                    "{} is not a valid label selector operator",
                    crate::schema::go_quote(other)
                ))
            }
        };
        requirements.push((key.to_owned(), text));
    }
    // Stable: requirements of one key keep the order they were given in.
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(requirements
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(","))
}

/// The stored object as a request shows it: itself, or its `Scale` on `…/scale`.
pub(super) fn view(scope: &Scope, stored: Object) -> Result<Object, ApiError> {
    match source(scope) {
        Some(source) => of(&source, &stored),
        None => Ok(stored),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_print_as_upstream_prints_them() {
        let s = json!({
            "matchLabels": {"tier": "web", "app": "shop"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                {"key": "zone", "operator": "NotIn", "values": ["b"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "team", "operator": "Exists"}
            ]
        });
        assert_eq!(
            label_selector(Some(&s)).unwrap(),
            "app=shop,!canary,env in (dev,prod),team,tier=web,zone notin (b)"
        );
        assert_eq!(label_selector(None).unwrap(), "");
        assert_eq!(label_selector(Some(&json!({}))).unwrap(), "");
        let bad = json!({"matchExpressions": [{"key": "a", "operator": "Near"}]});
        assert_eq!(
            label_selector(Some(&bad)).unwrap_err(),
            "\"Near\" is not a valid label selector operator"
        );
        let set = json!({"b": "2", "a": "1"});
        assert_eq!(set_selector(set.as_object()), "a=1,b=2");
    }
}

//! Kinds whose objects are never stored but made on each read from what the server
//! knows (ComponentStatuses): `get` and `list`, as objects or Tables, with the kind's
//! warning; any other verb is refused as upstream refuses a verb its storage lacks.

use super::object::{meta_str, Object};
use super::scope::Scope;
use super::table;
use crate::controllers::enabled::Controller;
use crate::effect::Step;
use crate::negotiation::Shape;
use crate::request_info::RequestInfo;
use crate::resources::ServerFacts;
use crate::status::ApiError;
use serde_json::{json, Value};

pub(super) fn handle(info: &RequestInfo, scope: Scope) -> Step {
    let r = scope.resource();
    let warnings: Vec<String> = r.strategy.warning().into_iter().map(str::to_owned).collect();
    let step = match info.verb.as_str() {
        "get" => get(&scope),
        "list" => list(&scope),
        verb => scope.fail(ApiError::method_not_supported(&r.group, &r.plural, verb)),
    };
    super::response::warned(step, warnings)
}

fn facts(scope: &Scope) -> ServerFacts {
    let shared = &scope.shared;
    let storage_healthy = match shared.config.storage_check.as_deref() {
        Some(check) => shared.health.passes(check).unwrap_or(true),
        None => true,
    };
    ServerFacts {
        storage_healthy,
        controllers_run: Controller::ALL.iter().any(|c| shared.config.controllers.runs(*c)),
    }
}

fn get(scope: &Scope) -> Step {
    let r = scope.resource();
    let objects = r.strategy.computed(&facts(scope));
    let Some(obj) = objects.into_iter().find(|o| meta_str(o, "name") == scope.name) else {
        return scope.fail(ApiError::not_found(&r.group, &r.plural, &scope.name));
    };
    match scope.output.shape {
        Shape::Table(version) => scope.respond(200, &table::table(scope, version, std::slice::from_ref(&obj), "", None)),
        // The object itself, or its metadata only (the response's transform makes it).
        _ => scope.respond(200, &Value::Object(obj)),
    }
}

fn list(scope: &Scope) -> Step {
    let r = scope.resource();
    let objects: Vec<Object> = r.strategy.computed(&facts(scope));
    if let Shape::Table(version) = scope.output.shape {
        return scope.respond(200, &table::table(scope, version, &objects, "", None));
    }
    // A typed list's items carry no kind of their own.
    let items: Vec<Value> = objects
        .into_iter()
        .map(|mut o| {
            o.remove("kind");
            o.remove("apiVersion");
            Value::Object(o)
        })
        .collect();
    let api_version = if r.group.is_empty() { r.version.clone() } else { format!("{}/{}", r.group, r.version) };
    scope.respond(200, &json!({"kind": format!("{}List", r.kind), "apiVersion": api_version, "metadata": {}, "items": items}))
}

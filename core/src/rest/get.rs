//! GET of one object.

use super::{object, table, Scope};
use crate::negotiation::Shape;
use crate::status::ApiError;
use crate::storage::{StorageOp, StorageOutput};
use crate::server::Step;
use serde_json::Value;

pub(super) fn get(scope: Scope) -> Step {
    let key = scope.key(&scope.name);
    scope.then(StorageOp::Get { key }, |scope, done| {
        let kv = match done {
            Ok(StorageOutput::Got { kv: Some(kv), .. }) => kv,
            Ok(StorageOutput::Got { kv: None, .. }) => {
                let r = scope.resource();
                return scope.fail(ApiError::not_found(&r.group, &r.plural, &scope.name));
            }
            Ok(other) => return scope.fail(ApiError::internal(format!("unexpected storage answer {other:?}"))),
            Err(e) => {
                let e = scope.storage_error(&scope.name, e);
                return scope.fail(e);
            }
        };
        match object::from_storage(&kv) {
            Ok(obj) => match scope.output.shape {
                Shape::Table(version) => {
                    let rv = kv.mod_revision.to_string();
                    let t = table::table(&scope, version, std::slice::from_ref(&obj), &rv, None);
                    scope.respond(200, &t)
                }
                Shape::Object => scope.respond(200, &Value::Object(obj)),
            },
            Err(e) => scope.fail(ApiError::internal(e)),
        }
    })
}

//! GET of one object.

use super::scope::Scope;
use super::table;
use crate::negotiation::Shape;
use crate::status::ApiError;
use crate::effect::Step;
use serde_json::Value;

pub(super) fn get(scope: Scope) -> Step {
    if let Some(source) = super::scale::source(&scope) {
        return super::scale::get(scope, source);
    }
    let read_at = match super::read_at::for_get(&scope.query) {
        Ok(r) => r,
        Err(e) => return scope.fail(e),
    };
    scope.with_current_checked(read_at, |scope, kv| {
        if scope.protobuf_from_stored_bytes() {
            if let Some(Some(item)) = scope.protobuf_items(std::slice::from_ref(&kv)).pop() {
                let r = scope.resource();
                let body = crate::protobuf::envelope(&r.api_version(), &r.kind, &item);
                return Step::Respond(
                    http::Response::builder()
                        .status(200)
                        .header(http::header::CONTENT_TYPE, scope.output.content_type())
                        .body(bytes::Bytes::from(body))
                        .expect("valid response"),
                );
            }
        }
        match scope.read(&kv) {
            Ok(obj) => match scope.output.shape {
                Shape::Table(version) => {
                    let rv = kv.mod_revision.to_string();
                    let t = table::table(&scope, version, std::slice::from_ref(&obj), &rv, None);
                    scope.respond(200, &t)
                }
                // The object itself, or its metadata only (`respond` makes it so).
                _ => scope.respond(200, &Value::Object(obj)),
            },
            Err(e) => scope.fail(ApiError::internal(e)),
        }
    })
}

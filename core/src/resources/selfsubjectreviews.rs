//! SelfSubjectReviews (authentication.k8s.io/v1, `kubectl auth whoami`): who the
//! requester is, after impersonation. Never stored: a create answers with a new review
//! stamped with the time and holding the user in `status.userInfo`, as upstream's does
//! (whatever the request's object held is not echoed).

use super::reviews::user_info;
use super::{CreateRequest, Handler, Strategy};
use crate::rest::object::{self, Object};
use crate::status::ApiError;
use serde_json::{json, Value};

pub struct SelfSubjectReviews;

impl Strategy for SelfSubjectReviews {
    fn name(&self) -> &'static str {
        "selfsubjectreviews"
    }

    fn handler(&self) -> Option<Handler> {
        Some(Handler::CreateOnly)
    }

    fn answer_create(&self, request: &dyn CreateRequest, review: Object) -> Result<Object, ApiError> {
        let answer = json!({
            "apiVersion": review.get("apiVersion"),
            "kind": review.get("kind"),
            "metadata": {"creationTimestamp": object::rfc3339(request.now())},
            "status": {"userInfo": user_info(request.user())},
        });
        let Value::Object(answer) = answer else { unreachable!("an object literal") };
        Ok(answer)
    }
}

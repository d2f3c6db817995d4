//! SelfSubjectAccessReviews (authorization.k8s.io/v1, `kubectl auth can-i`): may I
//! (the requester, after impersonation) do this? Never stored: a create answers with
//! the review and the authorizers' decision in `status`, as upstream's answers it.

use super::reviews::{spec_of, access_status, attributes, invalid, validate_metadata, validate_spec};
use super::{CreateRequest, Handler, Strategy};
use crate::rest::object::Object;
use crate::status::ApiError;

pub struct SelfSubjectAccessReviews;

impl Strategy for SelfSubjectAccessReviews {
    fn name(&self) -> &'static str {
        "selfsubjectaccessreviews"
    }

    fn handler(&self) -> Option<Handler> {
        Some(Handler::CreateOnly)
    }

    fn answer_create(&self, request: &dyn CreateRequest, mut review: Object) -> Result<Object, ApiError> {
        let spec = spec_of(&review);
        let mut errors = validate_spec(&spec, false);
        errors.extend(validate_metadata(&review, false));
        if !errors.is_empty() {
            return Err(invalid(errors));
        }
        let decision = request.authorize(attributes(request.user(), &spec));
        review.insert("status".into(), access_status(&decision));
        Ok(review)
    }
}

//! SubjectAccessReviews (authorization.k8s.io/v1): may this user (`spec.user`,
//! `groups`, `uid`, `extra`) do this (`spec.resourceAttributes` or
//! `nonResourceAttributes`)? Never stored: a create answers with the review and the
//! authorizers' decision in `status`, as upstream's SubjectAccessReview REST answers it.

use super::reviews::{spec_of, access_status, attributes, invalid, subject, validate_metadata, validate_spec};
use super::{CreateRequest, Handler, Strategy};
use crate::rest::object::Object;
use crate::status::ApiError;

pub struct SubjectAccessReviews;

impl Strategy for SubjectAccessReviews {
    fn name(&self) -> &'static str {
        "subjectaccessreviews"
    }

    fn handler(&self) -> Option<Handler> {
        Some(Handler::CreateOnly)
    }

    fn answer_create(&self, request: &dyn CreateRequest, mut review: Object) -> Result<Object, ApiError> {
        let spec = spec_of(&review);
        let mut errors = validate_spec(&spec, true);
        errors.extend(validate_metadata(&review, false));
        if !errors.is_empty() {
            return Err(invalid(errors));
        }
        let user = subject(&spec);
        let decision = request.authorize(attributes(&user, &spec));
        review.insert("status".into(), access_status(&decision));
        Ok(review)
    }
}

//! LocalSubjectAccessReviews (authorization.k8s.io/v1): a SubjectAccessReview posted
//! in a namespace, about resources of that namespace only, so that a namespace's
//! policy can grant the asking. Never stored; answered as upstream's REST answers it.
//! The review's namespace is the request's (a different one is refused before this),
//! and its resource attributes must name the same.

use super::reviews::{spec_of, 
    access_status, attributes, go_non_resource, invalid, subject, text, validate_metadata, validate_spec,
};
use super::{CreateRequest, Handler, Strategy};
use crate::rest::object::{meta_str, Object};
use crate::status::ApiError;
use crate::validation::FieldError;
use serde_json::Value;

pub struct LocalSubjectAccessReviews;

impl Strategy for LocalSubjectAccessReviews {
    fn name(&self) -> &'static str {
        "localsubjectaccessreviews"
    }

    fn handler(&self) -> Option<Handler> {
        Some(Handler::CreateOnly)
    }

    fn answer_create(&self, request: &dyn CreateRequest, mut review: Object) -> Result<Object, ApiError> {
        let spec = spec_of(&review);
        let mut errors = validate_spec(&spec, true);
        errors.extend(validate_metadata(&review, true));
        let namespace = meta_str(&review, "namespace");
        if let Some(r) = spec.get("resourceAttributes").and_then(Value::as_object) {
            if text(r, "namespace") != namespace {
                errors.push(FieldError::invalid(
                    "spec.resourceAttributes.namespace",
                    text(r, "namespace"),
                    "must match metadata.namespace",
                ));
            }
        }
        if let Some(n) = spec.get("nonResourceAttributes").and_then(Value::as_object) {
            errors.push(FieldError::invalid_unquoted(
                "spec.nonResourceAttributes",
                &go_non_resource(n),
                "disallowed on this kind of request",
            ));
        }
        if !errors.is_empty() {
            return Err(invalid(errors));
        }
        let user = subject(&spec);
        let decision = request.authorize(attributes(&user, &spec));
        review.insert("status".into(), access_status(&decision));
        Ok(review)
    }
}

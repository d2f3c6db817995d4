//! TokenReviews (authentication.k8s.io/v1): who a bearer token names, asked by another
//! server (a webhook authenticator's caller). Never stored: a create answers with the
//! review and its `status` (`authenticated`, `user`, `audiences`, `error`), as
//! upstream's TokenReview REST answers it, through the same door the request chain's
//! bearer tokens pass ([`crate::authn::Authenticators::authenticate_token`]). The
//! audiences asked are `spec.audiences`, or else the API's.

use super::reviews::{spec_of, text, user_info};
use super::{CreateRequest, Handler, Strategy};
use crate::rest::object::Object;
use crate::status::ApiError;
use serde_json::json;

pub struct TokenReviews;

impl Strategy for TokenReviews {
    fn name(&self) -> &'static str {
        "tokenreviews"
    }

    fn handler(&self) -> Option<Handler> {
        Some(Handler::CreateOnly)
    }

    fn answer_create(&self, request: &dyn CreateRequest, mut review: Object) -> Result<Object, ApiError> {
        let spec = spec_of(&review);
        let token = text(&spec, "token");
        if token.is_empty() {
            return Err(ApiError::bad_request("token is required for TokenReview in authentication"));
        }
        let asked = crate::rest::object::strings(spec.get("audiences"));
        let named = (!asked.is_empty()).then_some(asked.as_slice());
        let audiences = match named {
            Some(asked) => asked.to_vec(),
            None => request.api_audiences(),
        };
        let status = match request.authenticate_token(token, named) {
            Some(found) => {
                // A token accepted for none of the audiences asked is the server's fault.
                if !audiences.is_empty() && !found.audiences.iter().any(|a| audiences.contains(a)) {
                    return Err(ApiError::internal("error validating audiences"));
                }
                let mut status = json!({"authenticated": true, "user": user_info(&found.user)});
                if !found.audiences.is_empty() {
                    status["audiences"] = json!(found.audiences);
                }
                status
            }
            None => json!({"user": {}, "error": "invalid bearer token"}),
        };
        review.insert("status".into(), status);
        Ok(review)
    }
}

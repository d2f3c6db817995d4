//! SelfSubjectRulesReviews (authorization.k8s.io/v1, `kubectl auth can-i --list`):
//! everything I (the requester, after impersonation) may do in `spec.namespace`, as far
//! as the authorizers can list it. Never stored: a create answers with a new review
//! holding only the rules in `status`, as upstream's does.

use super::reviews::{spec_of, text};
use super::{CreateRequest, Handler, Strategy};
use crate::authorization::Rules;
use crate::rest::object::Object;
use crate::status::ApiError;
use serde_json::{json, Value};

pub struct SelfSubjectRulesReviews;

impl Strategy for SelfSubjectRulesReviews {
    fn name(&self) -> &'static str {
        "selfsubjectrulesreviews"
    }

    fn handler(&self) -> Option<Handler> {
        Some(Handler::CreateOnly)
    }

    fn answer_create(&self, request: &dyn CreateRequest, review: Object) -> Result<Object, ApiError> {
        let spec = spec_of(&review);
        let namespace = text(&spec, "namespace");
        if namespace.is_empty() {
            return Err(ApiError::bad_request("no namespace on request"));
        }
        let rules = request.rules_for(request.user(), namespace);
        let answer = json!({
            "apiVersion": review.get("apiVersion"),
            "kind": review.get("kind"),
            "metadata": {},
            "spec": {},
            "status": rules_status(&rules),
        });
        let Value::Object(answer) = answer else { unreachable!("an object literal") };
        Ok(answer)
    }
}

/// A `SubjectRulesReviewStatus`: both rule lists always written, empty lists of a rule
/// left out but its verbs.
fn rules_status(rules: &Rules) -> Value {
    let mut status = json!({
        "resourceRules": rules.resource_rules.iter().map(|r| {
            let mut rule = json!({"verbs": r.verbs});
            for (field, values) in [("apiGroups", &r.api_groups), ("resources", &r.resources), ("resourceNames", &r.resource_names)] {
                if !values.is_empty() {
                    rule[field] = json!(values);
                }
            }
            rule
        }).collect::<Vec<_>>(),
        "nonResourceRules": rules.non_resource_rules.iter().map(|r| {
            let mut rule = json!({"verbs": r.verbs});
            if !r.non_resource_urls.is_empty() {
                rule["nonResourceURLs"] = json!(r.non_resource_urls);
            }
            rule
        }).collect::<Vec<_>>(),
        "incomplete": rules.incomplete,
    });
    if !rules.evaluation_error.is_empty() {
        status["evaluationError"] = json!(rules.evaluation_error);
    }
    status
}

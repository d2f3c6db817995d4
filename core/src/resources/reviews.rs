//! What the review kinds share: reading the attributes and subject an access review
//! asks about, upstream's checks of them, and writing a decision or a user the way
//! `authorization.k8s.io/v1` and `authentication.k8s.io/v1` write them.

use crate::authn::UserInfo;
use crate::authorization::{Attributes, Decision};
use crate::rest::object::Object;
use crate::status::ApiError;
use crate::validation::FieldError;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The group of the access reviews.
pub const AUTHORIZATION_GROUP: &str = "authorization.k8s.io";

/// The 422 of an access review. Upstream names no kind in it (its decoded object has
/// none), only the group: `.authorization.k8s.io "" is invalid: …`.
pub fn invalid(errors: Vec<FieldError>) -> ApiError {
    ApiError::invalid(AUTHORIZATION_GROUP, "", "", errors)
}

/// A review's `spec`: empty when it has none.
pub fn spec_of(review: &Object) -> Map<String, Value> {
    review.get("spec").and_then(Value::as_object).cloned().unwrap_or_default()
}

/// The string at `field` of `map`; empty when absent.
pub fn text<'a>(map: &'a Map<String, Value>, field: &str) -> &'a str {
    map.get(field).and_then(Value::as_str).unwrap_or("")
}

/// The strings at `field` of `map`.
fn strings(map: &Map<String, Value>, field: &str) -> Vec<String> {
    crate::rest::object::strings(map.get(field))
}

/// The user a SubjectAccessReview's spec names: its user, groups, uid and extra, as
/// given (no group is added).
pub fn subject(spec: &Map<String, Value>) -> UserInfo {
    let extra: BTreeMap<String, Vec<String>> = spec
        .get("extra")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let values = v.as_array().into_iter().flatten();
            (k.clone(), values.filter_map(Value::as_str).map(str::to_owned).collect())
        })
        .collect();
    UserInfo {
        name: text(spec, "user").to_owned(),
        uid: text(spec, "uid").to_owned(),
        groups: strings(spec, "groups"),
        extra,
    }
}

/// What `user` is asked about by a spec's `resourceAttributes` (an empty version
/// meaning every version) or else its `nonResourceAttributes`; the spec was validated,
/// so it has one of them.
pub fn attributes<'a>(user: &'a UserInfo, spec: &'a Map<String, Value>) -> Attributes<'a> {
    if let Some(r) = spec.get("resourceAttributes").and_then(Value::as_object) {
        let version = match text(r, "version") {
            "" => "*",
            version => version,
        };
        return Attributes {
            user,
            verb: text(r, "verb"),
            resource_request: true,
            namespace: text(r, "namespace"),
            api_group: text(r, "group"),
            api_version: version,
            resource: text(r, "resource"),
            subresource: text(r, "subresource"),
            name: text(r, "name"),
            path: "",
        };
    }
    let n = spec.get("nonResourceAttributes").and_then(Value::as_object);
    let field = |f: &str| n.map_or("", |n| text(n, f));
    Attributes::of_path(user, field("verb"), field("path"))
}

/// Upstream's checks of a (Self)SubjectAccessReview spec: exactly one kind of
/// attributes, well-formed selectors in resource attributes, and (`with_subject`, not
/// for a self review) a user or groups.
pub fn validate_spec(spec: &Map<String, Value>, with_subject: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let resource = spec.get("resourceAttributes").and_then(Value::as_object);
    let non_resource = spec.get("nonResourceAttributes").and_then(Value::as_object);
    match (resource, non_resource) {
        (Some(_), Some(n)) => errors.push(FieldError::invalid_unquoted(
            "spec.nonResourceAttributes",
            &go_non_resource(n),
            "cannot be specified in combination with resourceAttributes",
        )),
        (None, None) => errors.push(FieldError::invalid_unquoted(
            "spec.resourceAttributes",
            "null",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )),
        _ => {}
    }
    if with_subject && text(spec, "user").is_empty() && strings(spec, "groups").is_empty() {
        errors.push(FieldError::invalid(
            "spec.user",
            text(spec, "user"),
            "at least one of user or group must be specified",
        ));
    }
    if let Some(r) = resource {
        for selector in ["fieldSelector", "labelSelector"] {
            if let Some(s) = r.get(selector).and_then(Value::as_object) {
                errors.extend(validate_selector(s, &format!("spec.resourceAttributes.{selector}")));
            }
        }
    }
    errors
}

/// A selector of resource attributes has a raw selector or requirements, not both.
/// (Each requirement's own checks are not made.)
fn validate_selector(selector: &Map<String, Value>, path: &str) -> Vec<FieldError> {
    let raw = text(selector, "rawSelector");
    let has_requirements = selector
        .get("requirements")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    match (raw.is_empty(), has_requirements) {
        (false, true) => vec![FieldError::invalid(
            &format!("{path}.rawSelector"),
            raw,
            "may not specified at the same time as requirements",
        )],
        (true, false) => vec![FieldError::required(
            &format!("{path}.requirements"),
            format!("when {path} is specified, requirements or rawSelector is required"),
        )],
        _ => Vec::new(),
    }
}

/// Non-resource attributes as upstream's error prints its internal struct: JSON with
/// Go's field names.
pub fn go_non_resource(n: &Map<String, Value>) -> String {
    let mut out = Map::new();
    out.insert("Path".into(), json!(text(n, "path")));
    out.insert("Verb".into(), json!(text(n, "verb")));
    Value::Object(out).to_string()
}

/// Upstream's check that a review's metadata is empty but for its managed fields (and,
/// with `namespace_allowed`, its namespace); the value shown is the metadata as sent.
pub fn validate_metadata(object: &Object, namespace_allowed: bool) -> Vec<FieldError> {
    let Some(meta) = object.get("metadata").and_then(Value::as_object) else {
        return Vec::new();
    };
    let set = |key: &str, v: &Value| {
        let ignored = key == "managedFields" || (namespace_allowed && key == "namespace");
        !ignored && !matches!(v, Value::Null) && v != &json!("") && v != &json!(0)
            && v != &json!([]) && v != &json!({})
    };
    if !meta.iter().any(|(k, v)| set(k, v)) {
        return Vec::new();
    }
    let detail = match namespace_allowed {
        true => "must be empty except for namespace",
        false => "must be empty",
    };
    vec![FieldError::invalid_unquoted("metadata", &Value::Object(meta.clone()).to_string(), detail)]
}

/// A SubjectAccessReviewStatus for `decision`. The authorizers' refusals are upstream's
/// "no opinion" (only a webhook can deny outright), so `denied` is never set.
pub fn access_status(decision: &Decision) -> Value {
    match decision {
        Decision::Allow => json!({"allowed": true}),
        Decision::Deny(reason) if reason.is_empty() => json!({"allowed": false}),
        Decision::Deny(reason) => json!({"allowed": false, "reason": reason}),
    }
}

/// `authentication.k8s.io/v1` `UserInfo`: empty fields left out.
pub fn user_info(user: &UserInfo) -> Value {
    let mut out = Map::new();
    if !user.name.is_empty() {
        out.insert("username".into(), json!(user.name));
    }
    if !user.uid.is_empty() {
        out.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        out.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        out.insert("extra".into(), json!(user.extra));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn specs_are_checked_as_upstream_checks_them() {
        let messages = |s: Value, with_subject: bool| -> Vec<String> {
            validate_spec(&spec(s), with_subject).iter().map(ToString::to_string).collect()
        };
        assert_eq!(
            messages(json!({"user": "alice"}), true),
            ["spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"]
        );
        assert_eq!(
            messages(json!({"user": "a", "resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x", "verb": "get"}}), true),
            [r#"spec.nonResourceAttributes: Invalid value: {"Path":"/x","Verb":"get"}: cannot be specified in combination with resourceAttributes"#]
        );
        assert_eq!(
            messages(json!({"resourceAttributes": {"verb": "get"}}), true),
            [r#"spec.user: Invalid value: "": at least one of user or group must be specified"#]
        );
        assert!(messages(json!({"resourceAttributes": {"verb": "get"}}), false).is_empty());
        assert_eq!(
            messages(json!({"groups": ["g"], "resourceAttributes": {"fieldSelector": {}, "labelSelector": {"rawSelector": "a=b", "requirements": [{}]}}}), true),
            [
                "spec.resourceAttributes.fieldSelector.requirements: Required value: when spec.resourceAttributes.fieldSelector is specified, requirements or rawSelector is required",
                r#"spec.resourceAttributes.labelSelector.rawSelector: Invalid value: "a=b": may not specified at the same time as requirements"#,
            ]
        );
    }

    #[test]
    fn resource_attributes_ask_every_version_unless_one_is_named() {
        let user = UserInfo::named("u", vec![]);
        let s = spec(json!({"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "n"}}));
        let a = attributes(&user, &s);
        assert_eq!((a.verb, a.resource, a.namespace, a.api_version, a.resource_request), ("get", "pods", "n", "*", true));
        let s = spec(json!({"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}));
        let a = attributes(&user, &s);
        assert_eq!((a.verb, a.path, a.resource_request), ("get", "/healthz", false));
    }

    #[test]
    fn metadata_must_be_empty_but_for_managed_fields() {
        let object = |meta: Value| spec(json!({"metadata": meta}));
        assert!(validate_metadata(&object(json!({"managedFields": [{"manager": "m"}]})), false).is_empty());
        assert!(validate_metadata(&object(json!({"namespace": "n"})), true).is_empty());
        let errors = validate_metadata(&object(json!({"name": "x"})), false);
        assert_eq!(errors[0].to_string(), r#"metadata: Invalid value: {"name":"x"}: must be empty"#);
    }
}

#[cfg(test)]
mod answers {
    use super::*;
    use crate::authorization::{Mode, Rules};
    use crate::resources::{CreateRequest, Strategy};

    /// A request answered by one always-allow or always-deny authorizer, as `admin`.
    struct Asked(Mode, UserInfo);

    impl CreateRequest for Asked {
        fn user(&self) -> &UserInfo {
            &self.1
        }
        fn now(&self) -> std::time::SystemTime {
            std::time::UNIX_EPOCH
        }
        fn authorize(&self, _: Attributes<'_>) -> Decision {
            match self.0 {
                Mode::AlwaysAllow => Decision::Allow,
                _ => Decision::Deny("Everything is forbidden.".to_owned()),
            }
        }
        fn rules_for(&self, _: &UserInfo, _: &str) -> Rules {
            match self.0 {
                Mode::AlwaysAllow => Rules::everything(),
                _ => Rules::default(),
            }
        }
        fn authenticate_token(&self, _: &str, _: Option<&[String]>) -> Option<crate::authn::TokenUser> {
            unreachable!("access reviews authenticate no one")
        }
        fn api_audiences(&self) -> Vec<String> {
            Vec::new()
        }
    }

    fn answer(strategy: &dyn Strategy, authorizer: Mode, review: Value) -> Value {
        let asked = Asked(authorizer, UserInfo::named("admin", vec![]));
        let Value::Object(review) = review else { panic!() };
        Value::Object(strategy.answer_create(&asked, review).unwrap())
    }

    #[test]
    fn a_refusal_is_no_opinion_with_its_reason() {
        use crate::resources::{selfsubjectaccessreviews, selfsubjectrulesreviews, subjectaccessreviews};
        let sar = json!({"spec": {"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods"}}});
        let ssar = json!({"spec": {"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}});
        let refused = json!({"allowed": false, "reason": "Everything is forbidden."});
        for (strategy, review) in [
            (&subjectaccessreviews::SubjectAccessReviews as &dyn Strategy, sar),
            (&selfsubjectaccessreviews::SelfSubjectAccessReviews, ssar),
        ] {
            assert_eq!(answer(strategy, Mode::AlwaysDeny, review.clone())["status"], refused);
            assert_eq!(answer(strategy, Mode::AlwaysAllow, review)["status"], json!({"allowed": true}));
        }
        let rules = answer(
            &selfsubjectrulesreviews::SelfSubjectRulesReviews,
            Mode::AlwaysDeny,
            json!({"spec": {"namespace": "default"}}),
        );
        assert_eq!(rules["status"], json!({"resourceRules": [], "nonResourceRules": [], "incomplete": false}));
    }
}

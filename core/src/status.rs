//! Errors as kube-apiserver reports them: a `Status` object with reason, message,
//! details and code. Every failure a client can see is built here.

use serde::Serialize;

/// Go's `http.Error`: `message` and a newline as plain text, never sniffed. What
/// upstream's filters answer outside the API's `Status`: a failed authorizer, the
/// priority-and-fairness 429, the aggregator's proxy errors, a panic.
pub fn plain_text(code: http::StatusCode, message: &str) -> http::Response<bytes::Bytes> {
    http::Response::builder()
        .status(code)
        .header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("x-content-type-options", "nosniff")
        .body(bytes::Bytes::from(format!("{message}\n")))
        .expect("static parts")
}

/// One field-level cause of an error (`details.causes[]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cause {
    #[serde(rename = "reason", skip_serializing_if = "str::is_empty")]
    pub kind: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub message: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub field: String,
}

/// `details` of a Status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Details {
    #[serde(skip_serializing_if = "str::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub group: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub kind: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<Cause>,
    #[serde(rename = "retryAfterSeconds", skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u32>,
}

/// The reasons `metav1.StatusReason` defines.
const REASONS: &[&str] = &[
    "Unauthorized", "Forbidden", "NotFound", "AlreadyExists", "Conflict", "Gone", "Invalid",
    "ServerTimeout", "StoreReadError", "Timeout", "TooManyRequests", "BadRequest", "MethodNotAllowed",
    "NotAcceptable", "RequestEntityTooLarge", "UnsupportedMediaType", "InternalError", "Expired",
    "ServiceUnavailable",
];

/// A failed request, carried as a value until it is written as a `Status`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    /// Boxed: errors travel in every `Result` of the request path, keep them small.
    pub details: Option<Box<Details>>,
}

/// The `Status` object on the wire.
#[derive(Serialize)]
struct StatusBody<'a> {
    kind: &'static str,
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    metadata: Empty,
    status: &'static str,
    message: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<&'a Details>,
    code: u16,
}

#[derive(Serialize)]
struct Empty {}

/// Who an error is about: the resource (plural) for most errors, the kind for Invalid.
fn qualified(name: &str, group: &str) -> String {
    if group.is_empty() {
        name.to_owned()
    } else {
        format!("{name}.{group}")
    }
}

fn about(name: &str, group: &str, kind: &str) -> Option<Box<Details>> {
    Some(Box::new(Details {
        name: name.to_owned(),
        group: group.to_owned(),
        kind: kind.to_owned(),
        ..Details::default()
    }))
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    pub fn not_found(group: &str, resource: &str, name: &str) -> ApiError {
        ApiError {
            details: about(name, group, resource),
            ..Self::new(404, "NotFound", format!("{} \"{name}\" not found", qualified(resource, group)))
        }
    }

    /// A path or resource this server does not serve.
    pub fn no_such_path() -> ApiError {
        ApiError {
            details: Some(Box::default()),
            ..Self::new(404, "NotFound", "the server could not find the requested resource")
        }
    }

    /// A method the path does not serve (go-restful's 405, as kube-apiserver words it).
    pub fn method_not_allowed() -> ApiError {
        ApiError {
            details: Some(Box::default()),
            ..Self::new(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        }
    }

    /// go-restful's answer to an Accept header no route of the path produces, listing
    /// what they do, as kube-apiserver passes it on.
    pub fn not_acceptable_by_route(produces: &[&str]) -> ApiError {
        ApiError {
            details: Some(Box::default()),
            ..Self::new(
                406,
                "NotAcceptable",
                format!("406: Not Acceptable\n\nAvailable representations: {}", produces.join(", ")),
            )
        }
    }

    pub fn already_exists(group: &str, resource: &str, name: &str) -> ApiError {
        ApiError {
            details: about(name, group, resource),
            ..Self::new(409, "AlreadyExists", format!("{} \"{name}\" already exists", qualified(resource, group)))
        }
    }

    pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> ApiError {
        ApiError {
            details: about(name, group, resource),
            ..Self::new(
                409,
                "Conflict",
                format!("Operation cannot be fulfilled on {} \"{name}\": {why}", qualified(resource, group)),
            )
        }
    }

    /// The stale-resourceVersion conflict of an update or delete.
    pub fn modified(group: &str, resource: &str, name: &str) -> ApiError {
        Self::conflict(
            group,
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// The 409 of a server-side apply that conflicts with other managers: causes
    /// name each field and its manager.
    pub fn apply_conflict(message: String, causes: Vec<Cause>) -> ApiError {
        ApiError {
            details: Some(Box::new(Details {
                causes,
                ..Details::default()
            })),
            ..Self::new(409, "Conflict", message)
        }
    }

    /// 422 Invalid, listing every field error.
    pub fn invalid(group: &str, kind: &str, name: &str, errors: Vec<crate::validation::FieldError>) -> ApiError {
        let listed = crate::validation::aggregate(&errors);
        let causes = errors
            .iter()
            .map(|e| Cause {
                kind: e.kind.cause_type().to_owned(),
                message: e.body(),
                field: e.field.clone(),
            })
            .collect();
        ApiError {
            details: about(name, group, kind).map(|d| Box::new(Details { causes, ..*d })),
            ..Self::new(422, "Invalid", format!("{} \"{name}\" is invalid: {listed}", qualified(kind, group)))
        }
    }

    /// A `Status` another server answered (an admission webhook's refusal), as it
    /// gave it: code, message, and details; a reason Kubernetes does not define is
    /// dropped (the type holds only upstream's reasons).
    pub fn from_status(code: u16, status: &serde_json::Map<String, serde_json::Value>, message: String) -> ApiError {
        use serde_json::Value;
        let reason = status.get("reason").and_then(Value::as_str).unwrap_or("");
        let reason = REASONS.iter().find(|r| **r == reason).copied().unwrap_or("");
        let details = status.get("details").and_then(Value::as_object).map(|d| {
            let text = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let causes = d.get("causes").and_then(Value::as_array).into_iter().flatten();
            Box::new(Details {
                name: text("name"),
                group: text("group"),
                kind: text("kind"),
                causes: causes
                    .map(|c| {
                        let text = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                        Cause { kind: text("reason"), message: text("message"), field: text("field") }
                    })
                    .collect(),
                retry_after_seconds: d.get("retryAfterSeconds").and_then(Value::as_u64).map(|s| s as u32),
            })
        });
        ApiError { code, reason, message, details }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        Self::new(400, "BadRequest", message)
    }

    pub fn method_not_supported(group: &str, resource: &str, action: &str) -> ApiError {
        ApiError {
            details: about("", group, resource),
            ..Self::new(
                405,
                "MethodNotAllowed",
                format!("{action} is not supported on resources of kind \"{}\"", qualified(resource, group)),
            )
        }
    }

    /// Upstream's `NewForbidden`: about `name` of `resource` in `group`, or about no
    /// resource (`""`: a path); no name, none quoted.
    pub fn forbidden(group: &str, resource: &str, name: &str, why: &str) -> ApiError {
        let message = match (resource, name) {
            ("", _) => format!("forbidden: {why}"),
            (_, "") => format!("{} is forbidden: {why}", qualified(resource, group)),
            _ => format!("{} \"{name}\" is forbidden: {why}", qualified(resource, group)),
        };
        ApiError {
            details: about(name, group, resource),
            ..Self::new(403, "Forbidden", message)
        }
    }

    pub fn unauthorized() -> ApiError {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    pub fn not_acceptable(accepted: &[&str]) -> ApiError {
        Self::new(
            406,
            "NotAcceptable",
            format!("only the following media types are accepted: {}", accepted.join(", ")),
        )
    }

    /// 406 with a message of its own: upstream's answer when what the client asked for
    /// cannot be made of this response (PartialObjectMetadata of a list).
    pub fn not_acceptable_because(message: impl Into<String>) -> ApiError {
        Self::new(406, "NotAcceptable", message)
    }

    pub fn unsupported_media_type(accepted: &[&str]) -> ApiError {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
        )
    }

    /// go-restful's answer to a body its route does not consume (a built-in
    /// resource's PATCH of another type), as kube-apiserver passes it on.
    pub fn unsupported_media_type_of_route() -> ApiError {
        ApiError {
            details: Some(Box::default()),
            ..Self::new(415, "UnsupportedMediaType", "415: Unsupported Media Type")
        }
    }

    /// An error kube-apiserver passes on without a status of its own: 500, no
    /// reason, the error's text as the message.
    pub fn unclassified(message: impl Into<String>) -> ApiError {
        Self::new(500, "", message)
    }

    pub fn internal(message: impl std::fmt::Display) -> ApiError {
        ApiError {
            details: Some(Box::new(Details {
                causes: vec![Cause {
                    kind: "UnexpectedServerResponse".to_owned(),
                    message: message.to_string(),
                    field: String::new(),
                }],
                ..Details::default()
            })),
            ..Self::new(500, "InternalError", format!("Internal error occurred: {message}"))
        }
    }

    /// 422 for a request well formed but not applicable, such as a JSON patch whose
    /// `test` fails.
    pub fn unprocessable(message: impl Into<String>) -> ApiError {
        Self::new(422, "Invalid", message)
    }

    pub fn service_unavailable(message: impl Into<String>) -> ApiError {
        Self::new(503, "ServiceUnavailable", message)
    }

    /// 504: the request did not finish within its time (`--request-timeout`).
    pub fn timeout(message: impl std::fmt::Display) -> ApiError {
        ApiError {
            details: Some(Box::default()),
            ..Self::new(504, "Timeout", format!("Timeout: {message}"))
        }
    }

    /// 429 with `details.retryAfterSeconds`: try again later.
    pub fn too_many_requests(message: impl Into<String>, retry_after_seconds: u32) -> ApiError {
        ApiError {
            details: Some(Box::new(Details {
                retry_after_seconds: Some(retry_after_seconds),
                ..Details::default()
            })),
            ..Self::new(429, "TooManyRequests", message)
        }
    }

    pub fn gone(message: impl Into<String>) -> ApiError {
        Self::new(410, "Expired", message)
    }

    /// The `Status` object as JSON.
    pub fn to_json(&self) -> Vec<u8> {
        let body = StatusBody {
            kind: "Status",
            api_version: "v1",
            metadata: Empty {},
            status: "Failure",
            message: &self.message,
            reason: self.reason,
            details: self.details.as_deref(),
            code: self.code,
        };
        serde_json::to_vec(&body).expect("a Status always serializes")
    }

    /// The `Status` object as a serde value, for encoding in another format.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_slice(&self.to_json()).expect("a Status is valid JSON")
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn status(e: &ApiError) -> serde_json::Value {
        serde_json::from_slice(&e.to_json()).unwrap()
    }

    #[test]
    fn not_found_of_a_core_resource() {
        assert_eq!(
            status(&ApiError::not_found("", "configmaps", "a")),
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                   "message":"configmaps \"a\" not found","reason":"NotFound",
                   "details":{"name":"a","kind":"configmaps"},"code":404})
        );
    }

    #[test]
    fn grouped_resources_are_qualified() {
        let e = ApiError::already_exists("apps", "deployments", "d");
        assert_eq!(e.message, "deployments.apps \"d\" already exists");
        assert_eq!(status(&e)["details"], json!({"name":"d","group":"apps","kind":"deployments"}));
        let e = ApiError::modified("", "configmaps", "a");
        assert_eq!(e.code, 409);
        assert_eq!(
            e.message,
            "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again"
        );
    }

    #[test]
    fn unauthorized_has_no_details() {
        assert_eq!(
            status(&ApiError::unauthorized()),
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                   "message":"Unauthorized","reason":"Unauthorized","code":401})
        );
    }
}

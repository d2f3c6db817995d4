//! One request's audit record and the `audit.k8s.io/v1` `Event` lines written for it,
//! shaped as kube-apiserver writes them: who (user, source IPs, user agent), what (verb,
//! URI, objectRef), the policy's level, and per stage the response status and, at the
//! levels that allow it, the request and response bodies.

use super::policy::{AuditConfig, Level, Stage};
use crate::authn::UserInfo;
use crate::request_info::RequestInfo;
use bytes::Bytes;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::time::{SystemTime, UNIX_EPOCH};

/// The request header carrying a caller's audit ID, echoed in the response.
pub const AUDIT_ID_HEADER: &str = "Audit-ID";

/// The longest user agent recorded; longer ones are cut and marked, as upstream does.
const MAX_USER_AGENT: usize = 1024;

/// The audit ID of a request: the caller's `Audit-ID` header when it sent one, as is;
/// otherwise a fresh UUID from `random`.
pub fn audit_id(headers: &http::HeaderMap, random: [u8; 16]) -> String {
    match headers
        .get(AUDIT_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
    {
        Some(id) => id.to_owned(),
        None => crate::rest::object::uuid_v4(&random),
    }
}

/// What an event says about the object a request is about.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

/// What is known of a request when it arrives; see [`Record::new`].
pub struct Arrival<'a> {
    pub request: &'a http::Request<Bytes>,
    pub info: &'a RequestInfo,
    /// The authenticated user; `None` when authentication failed (the request will be
    /// answered 401).
    pub user: Option<&'a UserInfo>,
    pub remote_addr: Option<SocketAddr>,
    pub now: SystemTime,
    pub audit_id: String,
}

/// One request's audit record: everything its events share. Made when the request
/// arrives; each stage renders one JSON line.
#[derive(Clone, Debug)]
pub struct Record {
    config: AuditConfig,
    audit_id: String,
    request_uri: String,
    verb: String,
    /// Who the authenticators say sent the request.
    user: Option<UserInfo>,
    /// Who it acts as, when it impersonates another user.
    impersonated: Option<UserInfo>,
    /// What authorization decided and why (`allow`/`forbid`), once it has.
    authorization: Option<(&'static str, String)>,
    source_ips: Vec<String>,
    user_agent: Option<String>,
    object_ref: Option<ObjectRef>,
    request_object: Option<Value>,
    received: SystemTime,
    long_running: bool,
    resource_request: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Event<'a> {
    kind: &'static str,
    api_version: &'static str,
    level: Level,
    #[serde(rename = "auditID")]
    audit_id: &'a str,
    stage: Stage,
    #[serde(rename = "requestURI")]
    request_uri: &'a str,
    verb: &'a str,
    user: User<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    impersonated_user: Option<User<'a>>,
    #[serde(rename = "sourceIPs", skip_serializing_if = "<[String]>::is_empty")]
    source_ips: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    user_agent: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    object_ref: Option<&'a ObjectRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_status: Option<ResponseStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_object: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_object: Option<Value>,
    request_received_timestamp: String,
    stage_timestamp: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    annotations: BTreeMap<&'a str, &'a str>,
}

/// Annotations a handler adds to its request's audit events (admission plugins'),
/// carried to the audit record in the response's extensions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditAnnotations(pub BTreeMap<String, String>);

/// `authentication.k8s.io/v1` `UserInfo`, as an event names a user.
#[derive(Default, Serialize)]
struct User<'a> {
    #[serde(skip_serializing_if = "str::is_empty")]
    username: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    uid: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    groups: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<&'a BTreeMap<String, Vec<String>>>,
}

impl<'a> User<'a> {
    fn of(user: &'a UserInfo) -> User<'a> {
        User {
            username: &user.name,
            uid: &user.uid,
            groups: &user.groups,
            extra: (!user.extra.is_empty()).then_some(&user.extra),
        }
    }
}

/// `metav1.Status` as an event's `responseStatus`: the code, and for a `Status` body
/// its bounded fields.
#[derive(Default, Serialize)]
struct ResponseStatus {
    metadata: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<Value>,
    #[serde(skip_serializing_if = "is_zero")]
    code: u16,
}

fn is_zero(code: &u16) -> bool {
    *code == 0
}

impl ResponseStatus {
    fn code(code: u16) -> ResponseStatus {
        ResponseStatus {
            code,
            ..ResponseStatus::default()
        }
    }

    /// The status of a response: its code, and the fields of a `Status` body.
    fn of(code: u16, body: Option<&Value>) -> ResponseStatus {
        let mut status = ResponseStatus::code(code);
        let Some(Value::Object(body)) = body else {
            return status;
        };
        if body.get("kind").and_then(Value::as_str) != Some("Status") {
            return status;
        }
        let text = |key: &str| {
            body.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        status.status = text("status");
        status.message = text("message");
        status.reason = text("reason");
        status.details = body.get("details").filter(|d| !d.is_null()).cloned();
        if let Some(c) = body.get("code").and_then(Value::as_u64) {
            status.code = u16::try_from(c).unwrap_or(code);
        }
        status
    }
}

/// Whether a request is long-running, as kube-apiserver's check says: watches and the
/// streaming subresources.
fn long_running(info: &RequestInfo) -> bool {
    info.is_resource_request
        && (info.verb == "watch"
            || matches!(
                info.subresource.as_str(),
                "proxy" | "log" | "exec" | "attach" | "portforward"
            ))
}

/// Upstream's source IPs: the X-Forwarded-For chain, X-Real-Ip unless already in it,
/// then the peer address unless it is the chain's last.
fn source_ips(headers: &http::HeaderMap, remote: Option<SocketAddr>) -> Vec<String> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let mut ips: Vec<IpAddr> = header("X-Forwarded-For")
        .unwrap_or("")
        .split(',')
        .filter_map(|part| part.trim().parse().ok())
        .collect();
    if let Some(ip) = header("X-Real-Ip").and_then(|v| v.trim().parse().ok()) {
        if !ips.contains(&ip) {
            ips.push(ip);
        }
    }
    if let Some(remote) = remote.map(|r| r.ip()) {
        if ips.last() != Some(&remote) {
            ips.push(remote);
        }
    }
    ips.iter().map(ToString::to_string).collect()
}

/// A request or response body as JSON, when it is JSON (or protobuf, read as the JSON
/// it stands for).
fn body_json(content_type: Option<&str>, body: &[u8]) -> Option<Value> {
    if body.is_empty() {
        return None;
    }
    if content_type.is_some_and(crate::protobuf::is_protobuf) {
        return crate::protobuf::decode(body).ok();
    }
    if let Ok(value) = serde_json::from_slice(body) {
        return Some(value);
    }
    // Apply patches may be YAML.
    if content_type.is_some_and(|t| t.contains("yaml")) {
        return serde_yaml::from_slice(body).ok();
    }
    None
}

/// Leave `metadata.managedFields` out of an object, or of each item of a list.
fn strip_managed_fields(value: &mut Value) {
    let Value::Object(object) = value else { return };
    if let Some(Value::Object(meta)) = object.get_mut("metadata") {
        meta.remove("managedFields");
    }
    if let Some(Value::Array(items)) = object.get_mut("items") {
        items.iter_mut().for_each(strip_managed_fields);
    }
}

/// Microseconds, as `metav1.MicroTime` writes them.
fn micro_time(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds =
        crate::time::rfc3339(UNIX_EPOCH + std::time::Duration::from_secs(since.as_secs()));
    format!(
        "{}.{:06}Z",
        seconds.trim_end_matches('Z'),
        since.subsec_micros()
    )
}

impl Record {
    /// The record of a request the policy audits; `None` when its level is None.
    pub fn new(policy: &super::Policy, arrival: Arrival<'_>) -> Option<Record> {
        let Arrival {
            request,
            info,
            user,
            remote_addr,
            now,
            audit_id,
        } = arrival;
        let no_groups = Vec::new();
        let config = policy.evaluate(&super::Attributes {
            user: user.map_or("", |u| u.name.as_str()),
            groups: user.map_or(&no_groups, |u| &u.groups),
            verb: &info.verb,
            resource_request: info.is_resource_request,
            namespace: &info.namespace,
            group: &info.api_group,
            resource: &info.resource,
            subresource: &info.subresource,
            name: &info.name,
            path: request.uri().path(),
        });
        if config.level == Level::None {
            return None;
        }
        let headers = request.headers();
        let user_agent = headers
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .map(|ua| match ua.char_indices().nth(MAX_USER_AGENT) {
                Some((cut, _)) => format!("{}...TRUNCATED", &ua[..cut]),
                None => ua.to_owned(),
            });
        let mut object_ref = info.is_resource_request.then(|| ObjectRef {
            resource: info.resource.clone(),
            namespace: info.namespace.clone(),
            name: info.name.clone(),
            api_group: info.api_group.clone(),
            api_version: info.api_version.clone(),
            subresource: info.subresource.clone(),
        });
        let writes = matches!(
            info.verb.as_str(),
            "create" | "update" | "patch" | "delete" | "deletecollection"
        );
        let content_type = headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        let mut request_object = None;
        if user.is_some() && writes && object_ref.is_some() {
            let body = body_json(content_type, request.body());
            // The object's name and namespace complete the reference at every level
            // (a create names its object in the body); the body itself is kept only
            // at Request and above.
            if let (Some(reference), Some(Value::Object(object))) = (object_ref.as_mut(), &body) {
                let meta = object.get("metadata").and_then(Value::as_object);
                let field = |key: &str| {
                    meta.and_then(|m| m.get(key))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                if info.verb != "patch" {
                    if reference.namespace.is_empty() {
                        reference.namespace = field("namespace");
                    }
                    if reference.name.is_empty() {
                        reference.name = field("name");
                    }
                }
            }
            if config.level >= Level::Request {
                request_object = body.map(|mut body| {
                    if config.omit_managed_fields {
                        strip_managed_fields(&mut body);
                    }
                    body
                });
            }
        }
        Some(Record {
            audit_id,
            request_uri: request.uri().path_and_query().map_or_else(
                || request.uri().path().to_owned(),
                |p| p.as_str().to_owned(),
            ),
            verb: info.verb.clone(),
            user: user.cloned(),
            impersonated: None,
            authorization: None,
            source_ips: source_ips(headers, remote_addr),
            user_agent,
            object_ref,
            request_object,
            received: now,
            long_running: long_running(info),
            resource_request: info.is_resource_request,
            config,
        })
    }

    pub fn audit_id(&self) -> &str {
        &self.audit_id
    }

    /// The request acts as `user` (upstream's `LogImpersonatedUser`): the events from
    /// now on name it beside the authenticated user.
    /// The user became known after the record began (the token webhook answered).
    pub fn authenticated(&mut self, user: &UserInfo) {
        self.user = Some(user.clone());
    }

    /// What authorization decided, for the events' annotations.
    pub fn authorized(&mut self, decision: &'static str, reason: String) {
        self.authorization = Some((decision, reason));
    }

    pub fn impersonated(&mut self, user: &UserInfo) {
        self.impersonated = Some(user.clone());
    }

    pub fn level(&self) -> Level {
        self.config.level
    }

    /// Whether the request streams (a watch): it has a ResponseStarted stage.
    pub fn is_long_running(&self) -> bool {
        self.long_running
    }

    fn event(
        &self,
        stage: Stage,
        now: SystemTime,
        status: Option<ResponseStatus>,
        response_object: Option<Value>,
        more: Option<&AuditAnnotations>,
    ) -> Option<String> {
        if !self.config.records(stage) {
            return None;
        }
        let event = Event {
            kind: "Event",
            api_version: "audit.k8s.io/v1",
            level: self.config.level,
            audit_id: &self.audit_id,
            stage,
            request_uri: &self.request_uri,
            verb: &self.verb,
            user: self.user.as_ref().map(User::of).unwrap_or_default(),
            impersonated_user: self.impersonated.as_ref().map(User::of),
            source_ips: &self.source_ips,
            user_agent: self.user_agent.as_deref(),
            object_ref: self.object_ref.as_ref(),
            response_status: status,
            request_object: self.request_object.as_ref(),
            response_object,
            request_received_timestamp: micro_time(self.received),
            stage_timestamp: micro_time(now),
            annotations: {
                let mut all: BTreeMap<&str, &str> = more.iter().flat_map(|m| m.0.iter()).map(|(k, v)| (k.as_str(), v.as_str())).collect();
                if let Some((decision, reason)) = &self.authorization {
                    all.insert("authorization.k8s.io/decision", decision);
                    all.insert("authorization.k8s.io/reason", reason);
                }
                all
            },
        };
        let mut line = serde_json::to_string(&event).expect("events serialize");
        line.push('\n');
        Some(line)
    }

    /// The RequestReceived event, before the request is handled; none for a request
    /// that failed authentication (upstream logs it once, when answered).
    pub fn request_received(&self, now: SystemTime) -> Option<String> {
        self.user.as_ref()?;
        self.event(Stage::RequestReceived, now, None, None, None)
    }

    /// The ResponseStarted event of a long-running request, when its head is written.
    pub fn response_started(&self, code: u16, now: SystemTime) -> Option<String> {
        self.event(
            Stage::ResponseStarted,
            now,
            Some(ResponseStatus::code(code)),
            None,
            None,
        )
    }

    /// The event of a whole response: ResponseComplete, with the response's status and,
    /// at RequestResponse, its body. A request that failed authentication gets the one
    /// event upstream writes for it, at ResponseStarted.
    pub fn response_complete(
        &self,
        response: &http::Response<Bytes>,
        now: SystemTime,
    ) -> Option<String> {
        let code = response.status().as_u16();
        if self.user.is_none() {
            return self.event(
                Stage::ResponseStarted,
                now,
                Some(ResponseStatus::code(code)),
                None,
            None,
            );
        }
        if !self.config.records(Stage::ResponseComplete) {
            return None;
        }
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        // A resource handler's body is an object (or a Status); non-resource answers
        // are not objects upstream logs.
        let object = (self.resource_request
            && (self.config.level >= Level::RequestResponse
                || code >= 300
                || self.verb.starts_with("delete")))
        .then(|| body_json(content_type, response.body()))
        .flatten();
        let status = ResponseStatus::of(code, object.as_ref());
        let response_object = if self.config.level >= Level::RequestResponse {
            object.map(|mut object| {
                if self.config.omit_managed_fields {
                    strip_managed_fields(&mut object);
                }
                object
            })
        } else {
            None
        };
        self.event(Stage::ResponseComplete, now, Some(status), response_object, response.extensions().get::<AuditAnnotations>())
    }

    /// The ResponseComplete event of a long-running request that answered `code`.
    pub fn stream_complete(&self, code: u16, now: SystemTime) -> Option<String> {
        self.event(
            Stage::ResponseComplete,
            now,
            Some(ResponseStatus::code(code)),
            None,
            None,
        )
    }

    /// The Panic event of a request whose handler panicked with `message`.
    pub fn panic(&self, message: &str, now: SystemTime) -> Option<String> {
        let status = ResponseStatus {
            status: Some("Failure".to_owned()),
            message: Some(format!("APIServer panic'd: {message}")),
            reason: Some("InternalError".to_owned()),
            code: 500,
            ..ResponseStatus::default()
        };
        self.event(Stage::Panic, now, Some(status), None, None)
    }
}

//! What the simulated clients send and how they read the answers: ConfigMaps in the
//! `sim` namespace whose `data.v` is the value a write carries.

use crate::object::{Action, Output, Version};
use crate::watch_order::{Change, ChangeKind, Delivered};
use apiary_core::storage::WatchEvent;
use apiary_core::harness::{json_request, Reply};
use serde_json::{json, Value};

pub const NAMESPACE: &str = "sim";
/// Where the simulation's objects are stored (the ground truth's prefix).
pub const STORE_PREFIX: &str = "/registry/configmaps/sim/";
const COLLECTION: &str = "/api/v1/namespaces/sim/configmaps";

/// The request for `action` on ConfigMap `name`; `merge` makes an update a merge patch.
pub fn request(name: &str, action: &Action, merge: bool) -> Vec<u8> {
    let object = |value: u64, version: Option<Version>| {
        let mut o = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": value.to_string()}});
        if let Some(v) = version {
            o["metadata"]["resourceVersion"] = json!(v.to_string());
        }
        o.to_string()
    };
    let path = format!("{COLLECTION}/{name}");
    match action {
        Action::Create { value } => json_request("POST", COLLECTION, "", &object(*value, None)),
        Action::Update { value, precondition: None } if merge => {
            let body = json!({"data": {"v": value.to_string()}}).to_string();
            patch(&path, "application/merge-patch+json", &body)
        }
        Action::Update { value, precondition } => json_request("PUT", &path, "", &object(*value, *precondition)),
        // JSON is YAML: the apply configuration as kubectl would send it.
        Action::Apply { value } => patch(&format!("{path}?fieldManager=sim&force=true"), "application/apply-patch+yaml", &object(*value, None)),
        Action::Delete { precondition } => {
            let body = match precondition {
                Some(v) => json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"resourceVersion": v.to_string()}}).to_string(),
                None => String::new(),
            };
            json_request("DELETE", &path, "", &body)
        }
        Action::Read => json_request("GET", &path, "", ""),
    }
}

/// A PATCH of `path` with `body` as `content_type`.
pub fn patch(path: &str, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "PATCH {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A consistent LIST of the namespace's ConfigMaps.
pub fn list() -> Vec<u8> {
    json_request("GET", COLLECTION, "", "")
}

/// One page of a consistent LIST: the first (no `token`) or the one a continue token
/// names.
pub fn list_page(limit: u32, token: Option<&str>) -> Vec<u8> {
    let query = match token {
        Some(token) => format!("limit={limit}&continue={token}"),
        None => format!("limit={limit}"),
    };
    json_request("GET", &format!("{COLLECTION}?{query}"), "", "")
}

/// A LIST with `resourceVersion=0`: any version the server has, however old.
pub fn list_any_version() -> Vec<u8> {
    json_request("GET", &format!("{COLLECTION}?resourceVersion=0"), "", "")
}

/// A list as answered.
#[derive(Debug)]
pub struct Listed {
    /// (name, value, version) of each item.
    pub items: Vec<(String, u64, Version)>,
    pub version: Option<Version>,
    /// The continue token of a page that has more after it.
    pub token: Option<String>,
}

/// The list in a LIST's answer.
pub fn list_of(body: &Value) -> Listed {
    Listed {
        items: body["items"].as_array().into_iter().flatten().filter_map(value_of).collect(),
        version: body.pointer("/metadata/resourceVersion").and_then(Value::as_str).and_then(|v| v.parse().ok()),
        token: body.pointer("/metadata/continue").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_owned),
    }
}

/// A request refused before it could do anything (429): it is left out of the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused;

/// A WATCH of the namespace's ConfigMaps after `version`.
pub fn watch(version: Version) -> Vec<u8> {
    json_request("GET", &format!("{COLLECTION}?watch=1&resourceVersion={version}"), "", "")
}

/// The value and resourceVersion of a ConfigMap as served.
pub fn value_of(object: &Value) -> Option<(String, u64, Version)> {
    let name = object.pointer("/metadata/name")?.as_str()?.to_owned();
    let value = object.pointer("/data/v")?.as_str()?.parse().ok()?;
    let version = object.pointer("/metadata/resourceVersion")?.as_str()?.parse().ok()?;
    Some((name, value, version))
}

/// What an answer says happened: `None` when it is not known (a server error, a
/// timeout: the write may or may not have been made); `Err` when the request was
/// refused before it could do anything (429), so it is left out of the history.
pub fn outcome(action: &Action, reply: &Reply) -> Result<Option<Output>, Refused> {
    let body = reply.json();
    Ok(Some(match (reply.status, action) {
        (200 | 201, Action::Delete { .. }) => Output::Deleted,
        (200, Action::Read) => match value_of(&body) {
            Some((_, value, version)) => Output::Read { value, version },
            None => return Ok(None),
        },
        (200 | 201, _) => match value_of(&body) {
            Some((_, _, version)) => Output::Written(version),
            None => return Ok(None),
        },
        (status, _) => return failed(status, body.pointer("/reason").and_then(Value::as_str).unwrap_or("")),
    }))
}

/// What an answer other than success says happened, by its code and reason: refused
/// before anything was done (429), a known failure (404, 409), or not known (a server
/// error, a timeout). Real clients' answers are read by the same rule.
pub fn failed(status: u16, reason: &str) -> Result<Option<Output>, Refused> {
    Ok(Some(match (status, reason) {
        (429, _) => return Err(Refused),
        (404, _) => Output::NotFound,
        (409, "AlreadyExists") => Output::Exists,
        (409, _) => Output::Conflict,
        _ => return Ok(None),
    }))
}

/// The Status of an ERROR event that ended a watch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchError {
    /// 410 when the version watched from is gone.
    pub code: u64,
    pub message: String,
}

/// The watch events in `lines` (newline-separated JSON), bookmarks left out, and the
/// ERROR event that ended the watch, if one did.
pub fn events(lines: &[u8]) -> (Vec<Delivered>, Option<WatchError>) {
    let mut out = Vec::new();
    for line in lines.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(event) = serde_json::from_slice::<Value>(line) else { continue };
        let kind = match event["type"].as_str() {
            Some("ADDED") => ChangeKind::Added,
            Some("MODIFIED") => ChangeKind::Modified,
            Some("DELETED") => ChangeKind::Deleted,
            Some("ERROR") => {
                let code = event.pointer("/object/code").and_then(Value::as_u64).unwrap_or(0);
                let message = event.pointer("/object/message").and_then(Value::as_str).unwrap_or("").to_owned();
                return (out, Some(WatchError { code, message }));
            }
            _ => continue,
        };
        if let Some((key, value, revision)) = value_of(&event["object"]) {
            out.push(Delivered { kind, key: format!("{STORE_PREFIX}{key}"), revision, value });
        }
    }
    (out, None)
}

/// A store's change as the watch checker reads it: its kind, key, revision, and the
/// `data.v` it wrote (or, for a delete, removed; 0 for objects without one).
pub fn change_of(event: &WatchEvent) -> Change {
    let (kind, kv, revision) = match event {
        WatchEvent::Put { kv, prev } => (if prev.is_some() { ChangeKind::Modified } else { ChangeKind::Added }, kv, kv.mod_revision),
        WatchEvent::Delete { prev, revision } => (ChangeKind::Deleted, prev, *revision),
    };
    let value = serde_json::from_slice::<Value>(&kv.value)
        .ok()
        .and_then(|o| o.pointer("/data/v").and_then(Value::as_str).and_then(|v| v.parse().ok()))
        .unwrap_or(0);
    Change { revision, key: kv.key.clone(), kind, value }
}

//! The AdmissionReview a webhook is sent (`admission.k8s.io/v1`, or `v1beta1` when it
//! is the only version the webhook accepts) and the checks its answer must pass, in
//! upstream's words (`VerifyAdmissionResponse`).

use crate::admission::{Operation, Request};
use crate::rest::object::Object;
use base64::Engine;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The review versions Apiary sends, in the order it prefers them.
const VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// The first version of `accepted` Apiary speaks.
pub fn version(accepted: &[String]) -> Result<&'static str, String> {
    accepted
        .iter()
        .find_map(|v| VERSIONS.iter().find(|known| **known == v.as_str()).copied())
        .ok_or_else(|| "webhook does not accept known AdmissionReview versions (v1, v1beta1)".to_owned())
}

/// What the request is presented to a webhook as: the resource and kind its rules
/// matched (an equivalent one under `matchPolicy: Equivalent`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Presented {
    pub group: String,
    pub version: String,
    pub resource: String,
    pub kind: String,
}

impl Presented {
    /// The request as the webhook's rules matched it.
    pub fn matched(matched: &crate::admission::matching::Matched) -> Presented {
        Presented {
            group: matched.resource.group.clone(),
            version: matched.resource.version.clone(),
            resource: matched.resource.resource.clone(),
            kind: matched.kind.kind.clone(),
        }
    }

    /// The request as it was made.
    pub fn as_requested(request: &Request) -> Presented {
        Presented {
            group: request.group.clone(),
            version: request.version.clone(),
            resource: request.resource.clone(),
            kind: request.kind.clone(),
        }
    }
}

/// The review of `request` for a webhook, with `object` as admission holds it now.
pub fn request_body(version: &str, uid: &str, request: &Request, presented: &Presented, object: &Object) -> Value {
    let user = &request.user;
    let mut user_info = Map::new();
    user_info.insert("username".into(), json!(user.name));
    if !user.uid.is_empty() {
        user_info.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        user_info.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        user_info.insert("extra".into(), json!(user.extra));
    }
    let (object, old_object) = match request.operation {
        Operation::Delete => (Value::Null, request.old_object.clone().map_or(Value::Null, Value::Object)),
        _ => (Value::Object(object.clone()), request.old_object.clone().map_or(Value::Null, Value::Object)),
    };
    let options_kind = match request.operation {
        Operation::Create => "CreateOptions",
        Operation::Update => "UpdateOptions",
        Operation::Delete => "DeleteOptions",
        Operation::Connect => "",
    };
    let mut options = if options_kind.is_empty() {
        Value::Null
    } else {
        json!({"kind": options_kind, "apiVersion": "meta.k8s.io/v1"})
    };
    if request.dry_run && !options.is_null() {
        options["dryRun"] = json!(["All"]);
    }
    let gvk = |group: &str, version: &str, kind: &str| json!({"group": group, "version": version, "kind": kind});
    let gvr = |group: &str, version: &str, resource: &str| json!({"group": group, "version": version, "resource": resource});
    json!({
        "kind": "AdmissionReview",
        "apiVersion": format!("admission.k8s.io/{version}"),
        "request": {
            "uid": uid,
            "kind": gvk(&presented.group, &presented.version, &presented.kind),
            "resource": gvr(&presented.group, &presented.version, &presented.resource),
            "subResource": request.subresource,
            "requestKind": gvk(&request.group, &request.version, &request.kind),
            "requestResource": gvr(&request.group, &request.version, &request.resource),
            "requestSubResource": request.subresource,
            "name": request.name,
            "namespace": request.namespace(),
            "operation": request.operation.as_str(),
            "userInfo": user_info,
            "object": object,
            "oldObject": old_object,
            "dryRun": request.dry_run,
            "options": options,
        },
    })
}

/// A webhook's answer, checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Response {
    pub allowed: bool,
    /// The Status it refused with.
    pub result: Option<Map<String, Value>>,
    /// A JSON Patch (decoded from base64).
    pub patch: Option<Value>,
    pub warnings: Vec<String>,
    pub audit_annotations: BTreeMap<String, String>,
}

/// Read and check a webhook's answer to the review `uid` sent as `version`.
pub fn verify(body: &[u8], version: &str, uid: &str, mutating: bool) -> Result<Response, String> {
    let review: Value = serde_json::from_slice(body).map_err(|e| format!("couldn't decode the response: {e}"))?;
    let Some(response) = review.get("response").filter(|r| r.is_object()) else {
        return Err("webhook response was absent".into());
    };
    let patch_text = response.get("patch").and_then(Value::as_str).filter(|p| !p.is_empty());
    let patch_type = response.get("patchType").filter(|t| !t.is_null());
    if version == "v1" {
        let got_uid = response.get("uid").and_then(Value::as_str).unwrap_or("");
        if got_uid != uid {
            return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
        }
        let api_version = review.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = review.get("kind").and_then(Value::as_str).unwrap_or("");
        if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
            return Err(format!("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {}", go_gvk(api_version, kind)));
        }
        if mutating {
            match (patch_text, patch_type) {
                (Some(_), None) => return Err("webhook returned response.patch but not response.patchType".into()),
                (None, Some(_)) => return Err("webhook returned response.patchType but not response.patch".into()),
                (_, Some(t)) if t.as_str().is_none_or(str::is_empty) => {
                    return Err(format!("webhook returned invalid response.patchType of {:?}", t.as_str().unwrap_or("")));
                }
                (_, Some(t)) if t.as_str() != Some("JSONPatch") => {
                    return Err(format!("unsupported patch type {:?}", t.as_str().unwrap_or("")));
                }
                _ => {}
            }
        } else if patch_text.is_some() {
            return Err("validating webhook may not return response.patch".into());
        } else if patch_type.is_some() {
            return Err("validating webhook may not return response.patchType".into());
        }
    }
    let patch = match patch_text.filter(|_| mutating) {
        None => None,
        Some(text) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| format!("received undecodable patch in webhook response: {e}"))?;
            let patch: Value = serde_json::from_slice(&bytes).map_err(|e| format!("received undecodable patch in webhook response: {e}"))?;
            if !patch.is_array() {
                return Err("received undecodable patch in webhook response: json: cannot unmarshal object into Go value of type jsonpatch.Patch".into());
            }
            Some(patch)
        }
    };
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
    };
    Ok(Response {
        allowed: response.get("allowed").and_then(Value::as_bool).unwrap_or(false),
        result: response.get("status").and_then(Value::as_object).cloned(),
        patch,
        warnings: strings(response.get("warnings")),
        audit_annotations: response
            .get("auditAnnotations")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect(),
    })
}

/// Go's `schema.GroupVersionKind.String()`.
fn go_gvk(api_version: &str, kind: &str) -> String {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(response: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})).unwrap()
    }

    #[test]
    fn answers_are_checked_in_upstreams_words() {
        let ok = verify(&answer(json!({"uid": "u", "allowed": true})), "v1", "u", true).unwrap();
        assert!(ok.allowed && ok.patch.is_none());
        let wrong = verify(&answer(json!({"uid": "x", "allowed": true})), "v1", "u", true).unwrap_err();
        assert_eq!(wrong, r#"expected response.uid="u", got "x""#);
        let absent = verify(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#, "v1", "u", true).unwrap_err();
        assert_eq!(absent, "webhook response was absent");
        let kind = verify(br#"{"apiVersion":"v1","kind":"Nope","response":{"uid":"u"}}"#, "v1", "u", true).unwrap_err();
        assert_eq!(kind, "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /v1, Kind=Nope");
        let patch = base64::engine::general_purpose::STANDARD.encode(br#"[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]"#);
        let untyped = verify(&answer(json!({"uid": "u", "allowed": true, "patch": patch})), "v1", "u", true).unwrap_err();
        assert_eq!(untyped, "webhook returned response.patch but not response.patchType");
        let validating = verify(&answer(json!({"uid": "u", "allowed": true, "patch": patch, "patchType": "JSONPatch"})), "v1", "u", false).unwrap_err();
        assert_eq!(validating, "validating webhook may not return response.patch");
        let patched = verify(&answer(json!({"uid": "u", "allowed": true, "patch": patch, "patchType": "JSONPatch", "warnings": ["w"]})), "v1", "u", true).unwrap();
        assert_eq!(patched.patch.unwrap()[0]["op"], "add");
        assert_eq!(patched.warnings, ["w"]);
        // v1beta1 answers are not checked for uid or kind, and a patch is a JSON Patch.
        let beta = verify(br#"{"response":{"allowed":false,"status":{"message":"no"}}}"#, "v1beta1", "u", true).unwrap();
        assert_eq!(beta.result.unwrap()["message"], "no");
    }

    #[test]
    fn the_first_known_version_is_spoken() {
        assert_eq!(version(&["v2".into(), "v1beta1".into(), "v1".into()]), Ok("v1beta1"));
        assert!(version(&["v2".into()]).is_err());
    }
}

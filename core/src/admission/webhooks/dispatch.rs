//! Calling the webhooks that matched a request, as upstream's dispatchers do:
//! mutating webhooks one after another, each seeing the object as the ones before
//! left it, with a second round for `reinvocationPolicy: IfNeeded` webhooks whose
//! object a later webhook changed; validating webhooks all asked at once about the
//! same object, the first refusal (in their order) answered. A webhook that cannot
//! be called (down, slow past its `timeoutSeconds`, or answering nonsense) fails the
//! request or is passed over as its `failurePolicy` says.

use super::admission_review::{self, Presented};
use crate::admission::{Notes, Request};
use crate::effect::{CallError, CallOutcome, Outbound};
use crate::rest::object::Object;
use crate::status::ApiError;
use crate::webhook::client_config::{ClientConfig, Endpoints};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::Duration;

/// One webhook that matched, and how it is to be called.
#[derive(Clone, Debug)]
pub struct Hook {
    pub configuration: String,
    pub name: String,
    pub client: Option<ClientConfig>,
    pub presented: Presented,
    /// `failurePolicy: Ignore`.
    pub ignore_failures: bool,
    /// `sideEffects` is `None` or `NoneOnDryRun`: it may see dry runs.
    pub dry_run_safe: bool,
    pub timeout: Duration,
    pub review_versions: Vec<String>,
    /// `reinvocationPolicy: IfNeeded`.
    pub reinvoke_if_needed: bool,
}

impl Hook {
    /// Read from a webhook of a configuration (defaulted as stored).
    pub fn of(configuration: &str, webhook: &Value, presented: Presented) -> Hook {
        let text = |k: &str| webhook.get(k).and_then(Value::as_str).unwrap_or("");
        Hook {
            configuration: configuration.to_owned(),
            name: text("name").to_owned(),
            client: webhook.get("clientConfig").and_then(ClientConfig::of),
            presented,
            ignore_failures: text("failurePolicy") == "Ignore",
            dry_run_safe: matches!(text("sideEffects"), "None" | "NoneOnDryRun"),
            timeout: Duration::from_secs(webhook.get("timeoutSeconds").and_then(Value::as_u64).unwrap_or(10).clamp(1, 30)),
            review_versions: webhook
                .get("admissionReviewVersions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            reinvoke_if_needed: text("reinvocationPolicy") == "IfNeeded",
        }
    }
}

/// The call in flight.
#[derive(Debug)]
struct InFlight {
    hook: usize,
    uid: String,
    version: &'static str,
    url: String,
}

/// The calls of one webhook plugin over one request.
#[derive(Debug)]
pub struct WebhookCalls {
    mutating: bool,
    hooks: Vec<Hook>,
    /// The hooks of this round, in order, and how many were called.
    order: Vec<usize>,
    at: usize,
    /// 0, then 1 when mutating webhooks are invoked again.
    round: u8,
    in_flight: Vec<InFlight>,
    /// IfNeeded webhooks called so far, and those a later change asks to call again.
    reinvocable: Vec<usize>,
    reinvoke: BTreeSet<usize>,
    /// Validating webhooks' refusals and failures, the first one answered.
    errors: Vec<ApiError>,
    /// Calls made: each review's uid is drawn from the request's entropy and this.
    calls: u32,
}

/// The prefixes of the audit annotations the webhooks leave.
const MUTATION_ANNOTATION: &str = "mutation.webhook.admission.k8s.io/";
const MUTATION_FAILED_OPEN: &str = "failed-open.mutation.webhook.admission.k8s.io/";
const VALIDATION_FAILED_OPEN: &str = "failed-open.validating.webhook.admission.k8s.io/";

impl WebhookCalls {
    pub fn new(mutating: bool, hooks: Vec<Hook>) -> WebhookCalls {
        let order = (0..hooks.len()).collect();
        WebhookCalls {
            mutating,
            hooks,
            order,
            at: 0,
            round: 0,
            in_flight: Vec::new(),
            reinvocable: Vec::new(),
            reinvoke: BTreeSet::new(),
            errors: Vec::new(),
            calls: 0,
        }
    }

    /// The next calls to make: one mutating webhook, or every validating one side by
    /// side; none once every webhook has answered (or the first validating refusal as
    /// the error, once all have).
    pub fn next(
        &mut self,
        request: &Request,
        object: &Object,
        endpoints: &dyn Endpoints,
        notes: &mut Notes,
    ) -> Result<Vec<Outbound>, ApiError> {
        let mut calls = Vec::new();
        loop {
            let Some(&index) = self.order.get(self.at) else {
                if !calls.is_empty() {
                    return Ok(calls);
                }
                if self.mutating && self.round == 0 && !self.reinvoke.is_empty() {
                    self.round = 1;
                    self.order = std::mem::take(&mut self.reinvoke).into_iter().collect();
                    self.at = 0;
                    continue;
                }
                return match self.errors.is_empty() {
                    true => Ok(Vec::new()),
                    false => Err(self.errors.remove(0)),
                };
            };
            self.at += 1;
            let hook = &self.hooks[index];
            if request.dry_run && !hook.dry_run_safe {
                let e = ApiError::bad_request(format!("admission webhook {:?} does not support dry run", hook.name));
                self.refused(e)?;
                continue;
            }
            let version = match admission_review::version(&hook.review_versions) {
                Ok(v) => v,
                Err(e) => {
                    self.failed(index, format!("could not create admission objects: {e}"), notes)?;
                    continue;
                }
            };
            let url = match hook.client.as_ref().ok_or_else(|| "no client config".to_owned()).and_then(|c| c.url(endpoints)) {
                Ok(url) => url,
                Err(e) => {
                    self.failed(index, format!("could not get REST client: {e}"), notes)?;
                    continue;
                }
            };
            // Upstream tells the webhook how long it has, rounded up to seconds.
            let separator = if url.contains('?') { '&' } else { '?' };
            let url = format!("{url}{separator}timeout={}s", hook.timeout.as_secs());
            self.calls += 1;
            let uid = uid(&request.entropy, self.calls);
            let body = admission_review::request_body(version, &uid, request, &hook.presented, object);
            let tls = hook.client.as_ref().map(|c| c.tls.clone()).unwrap_or_default();
            let mut outbound = crate::webhook::Webhook { url: url.clone(), tls, token: None }
                .post(serde_json::to_vec(&body).expect("JSON values serialize"));
            outbound.timeout = hook.timeout;
            self.in_flight.push(InFlight { hook: index, uid, version, url });
            calls.push(outbound);
            if self.mutating {
                return Ok(calls);
            }
        }
    }

    /// The answers to the calls [`WebhookCalls::next`] asked for, in their order:
    /// `object` patched by a mutating webhook; a refusal or failure is the error (a
    /// validating webhook's, once all are called).
    pub fn answered(
        &mut self,
        outcomes: Vec<CallOutcome>,
        request: &Request,
        object: &mut Object,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let calls: Vec<InFlight> = self.in_flight.drain(..).collect();
        for (call, outcome) in calls.into_iter().zip(outcomes) {
            self.answered_one(call, outcome, request, object, notes)?;
        }
        Ok(())
    }

    fn answered_one(
        &mut self,
        call: InFlight,
        outcome: CallOutcome,
        request: &Request,
        object: &mut Object,
        notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let hook = self.hooks[call.hook].clone();
        let response = match outcome {
            Err(CallError::TimedOut) => {
                let why = format!("failed to call webhook: Post {:?}: context deadline exceeded", call.url);
                return self.failed(call.hook, why, notes);
            }
            Err(CallError::Unreachable(e)) => {
                return self.failed(call.hook, format!("failed to call webhook: Post {:?}: {e}", call.url), notes);
            }
            Ok(r) if !r.status().is_success() => {
                let body = String::from_utf8_lossy(r.body()).into_owned();
                let why = format!("failed to call webhook: an error on the server ({body:?}) has prevented the request from succeeding");
                return self.failed(call.hook, why, notes);
            }
            Ok(r) => match admission_review::verify(r.body(), call.version, &call.uid, self.mutating) {
                Ok(response) => response,
                Err(e) => return self.failed(call.hook, format!("received invalid webhook response: {e}"), notes),
            },
        };
        for (key, value) in &response.audit_annotations {
            notes.audit_annotations.insert(format!("{}/{key}", hook.name), value.clone());
        }
        for warning in &response.warnings {
            notes.warn(warning.clone());
        }
        if !response.allowed {
            return self.refused(rejection(&hook.name, response.result.as_ref()));
        }
        let mut changed = false;
        if let Some(patch) = response.patch.as_ref().filter(|p| p.as_array().is_some_and(|ops| !ops.is_empty())) {
            if request.operation == crate::admission::Operation::Delete {
                let why = format!("admission webhook {:?} attempted to modify the object, which is not supported for this operation", hook.name);
                return Err(ApiError::internal(why));
            }
            let before = Value::Object(std::mem::take(object));
            let patched = crate::patch::json_patch(&before, patch);
            let patched = match patched {
                Ok(Value::Object(map)) => map,
                Ok(_) => {
                    *object = before.as_object().cloned().unwrap_or_default();
                    return Err(ApiError::internal("the patched object is not an object"));
                }
                Err(crate::patch::PatchError::Malformed(e) | crate::patch::PatchError::NotApplicable(e) | crate::patch::PatchError::Internal(e)) => {
                    *object = before.as_object().cloned().unwrap_or_default();
                    return Err(ApiError::internal(e));
                }
            };
            changed = Value::Object(patched.clone()) != before;
            *object = patched;
        }
        if self.mutating {
            let key = format!("{MUTATION_ANNOTATION}round_{}_index_{}", self.round, call.hook);
            let value = json!({"configuration": hook.configuration, "webhook": hook.name, "mutated": changed});
            notes.audit_annotations.insert(key, value.to_string());
            if changed && self.round == 0 {
                self.reinvoke.extend(self.reinvocable.iter().copied());
            }
            if hook.reinvoke_if_needed && self.round == 0 {
                self.reinvocable.push(call.hook);
            }
        }
        Ok(())
    }

    /// A webhook that could not be called: passed over under `failurePolicy: Ignore`
    /// (with an audit annotation), otherwise an internal error.
    fn failed(&mut self, index: usize, reason: String, notes: &mut Notes) -> Result<(), ApiError> {
        let hook = &self.hooks[index];
        if hook.ignore_failures {
            let prefix = if self.mutating { MUTATION_FAILED_OPEN } else { VALIDATION_FAILED_OPEN };
            notes.audit_annotations.insert(format!("{prefix}round_{}_index_{index}", self.round), hook.name.clone());
            return Ok(());
        }
        self.refused(ApiError::internal(format!("failed calling webhook {:?}: {reason}", hook.name)))
    }

    /// A mutating webhook's refusal ends the request; a validating one's waits for the
    /// others to be asked.
    fn refused(&mut self, e: ApiError) -> Result<(), ApiError> {
        if self.mutating {
            return Err(e);
        }
        self.errors.push(e);
        Ok(())
    }
}

/// A webhook's refusal as the client sees it (upstream's `ToStatusErr`): its Status
/// with `admission webhook "<name>" denied the request` in front of its message, at
/// least 400.
fn rejection(name: &str, result: Option<&serde_json::Map<String, Value>>) -> ApiError {
    let empty = serde_json::Map::new();
    let result = result.unwrap_or(&empty);
    let denied = format!("admission webhook {name:?} denied the request");
    let text = |k: &str| result.get(k).and_then(Value::as_str).unwrap_or("");
    let message = match (text("message"), text("reason")) {
        ("", "") => format!("{denied} without explanation"),
        ("", reason) => format!("{denied}: {reason}"),
        (message, _) => format!("{denied}: {message}"),
    };
    let code = result.get("code").and_then(Value::as_u64).filter(|c| *c >= 400 && *c < 600).unwrap_or(400) as u16;
    ApiError::from_status(code, result, message)
}

/// A review's uid: a v4 UUID drawn from the request's entropy and the call's number.
fn uid(entropy: &[u8; 8], call: u32) -> String {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(entropy);
    bytes[8..12].copy_from_slice(&call.to_be_bytes());
    bytes[12..].copy_from_slice(&(call.wrapping_mul(0x9E37_79B9) ^ u32::from_le_bytes([entropy[0], entropy[3], entropy[5], entropy[7]])).to_le_bytes());
    crate::rest::object::uuid_v4(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::{NoCaches, Operation};
    use crate::authn::UserInfo;

    fn request(dry_run: bool) -> Request {
        Request {
            operation: Operation::Create,
            group: String::new(),
            version: "v1".into(),
            resource: "configmaps".into(),
            subresource: String::new(),
            kind: "ConfigMap".into(),
            namespaced: true,
            namespace: Some("default".into()),
            name: "cm".into(),
            user: UserInfo::default(),
            dry_run,
            old_object: None,
            now: std::time::UNIX_EPOCH,
            entropy: [1; 8],
        }
    }

    /// A webhook stored by an older API version, where `sideEffects: Some` was allowed.
    fn hook(side_effects: &str) -> Hook {
        let webhook = json!({"name": "effects.example.com", "clientConfig": {"url": "https://h.example/"}, "sideEffects": side_effects, "admissionReviewVersions": ["v1"]});
        Hook::of("c", &webhook, Presented::as_requested(&request(false)))
    }

    #[test]
    fn a_dry_run_is_refused_by_a_webhook_with_side_effects() {
        let object = Object::new();
        let mut notes = Notes::default();
        let mut calls = WebhookCalls::new(false, vec![hook("Some")]);
        let refused = calls.next(&request(true), &object, &NoCaches, &mut notes).unwrap_err();
        assert_eq!((refused.code, refused.message.as_str()), (400, "admission webhook \"effects.example.com\" does not support dry run"));
        // Without a dry run it is called; with sideEffects None a dry run is too.
        assert_eq!(WebhookCalls::new(false, vec![hook("Some")]).next(&request(false), &object, &NoCaches, &mut notes).unwrap().len(), 1);
        assert_eq!(WebhookCalls::new(false, vec![hook("None")]).next(&request(true), &object, &NoCaches, &mut notes).unwrap().len(), 1);
    }

    #[test]
    fn validating_webhooks_are_called_together_and_mutating_ones_in_turn() {
        let object = Object::new();
        let mut notes = Notes::default();
        let three = || vec![hook("None"), hook("None"), hook("None")];
        assert_eq!(WebhookCalls::new(false, three()).next(&request(false), &object, &NoCaches, &mut notes).unwrap().len(), 3);
        assert_eq!(WebhookCalls::new(true, three()).next(&request(false), &object, &NoCaches, &mut notes).unwrap().len(), 1);
    }
}

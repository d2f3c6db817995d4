//! MutatingAdmissionWebhook and ValidatingAdmissionWebhook as plugins of the chain:
//! each reads its configurations (from the watch cache, so a configuration written a
//! moment ago takes effect on the next request), picks the webhooks that match the
//! request as upstream's `ShouldCallHook` does (selectors, rules, then match
//! conditions), and hands them to the [`super::dispatch`]er.

use super::admission_review::Presented;
use super::dispatch::{Hook, WebhookCalls};
use crate::admission::configurations::{self, ServedResources, GROUP};
use crate::admission::matching::{self, GroupVersionKind};
use crate::admission::policy::{self, FailurePolicy, MatchConditionsOutcome, NamedExpression};
use crate::admission::{Context, Fetched, Plugin, Read, Request};
use crate::rest::object::Object;
use crate::status::ApiError;
use serde_json::Value;

/// One of the two webhook plugins.
#[derive(Debug)]
pub(crate) struct AdmissionWebhooks {
    mutating: bool,
    /// The configuration resource it reads.
    resource: &'static str,
}

pub(crate) static MUTATING: AdmissionWebhooks = AdmissionWebhooks { mutating: true, resource: "mutatingwebhookconfigurations" };
pub(crate) static VALIDATING: AdmissionWebhooks = AdmissionWebhooks { mutating: false, resource: "validatingwebhookconfigurations" };

/// The match conditions of each webhook of one configuration, compiled.
type Conditions = Vec<Vec<NamedExpression>>;

impl Plugin for AdmissionWebhooks {
    /// Webhooks are never called about the admission configurations themselves, so
    /// that a broken webhook cannot lock its own configuration.
    fn handles(&self, request: &Request) -> bool {
        request.group != GROUP
            || !matching::is_exempt_configuration_resource(&GroupVersionKind::new(&request.group, &request.version, &request.kind))
    }

    fn mutates(&self) -> bool {
        self.mutating
    }

    fn validates(&self) -> bool {
        !self.mutating
    }

    fn reads(&self, chain: &Context, _request: &Request, _object: &Object) -> Vec<Read> {
        vec![configurations::read_all(chain, self.resource)]
    }

    fn more_reads(&self, chain: &Context, request: &Request, _object: &Object, fetched: &Fetched) -> Vec<Read> {
        match configurations::stored(chain, fetched, self.resource).is_empty() {
            true => Vec::new(),
            false => configurations::namespace_read(chain, request).into_iter().collect(),
        }
    }

    fn calls(&self, chain: &Context, request: &Request, object: &Object, fetched: &Fetched) -> Result<Option<WebhookCalls>, ApiError> {
        let stored = configurations::stored(chain, fetched, self.resource);
        chain.compiled.forget_others(self.resource, stored);
        if stored.is_empty() {
            return Ok(None);
        }
        let served = ServedResources::new(chain.lookup);
        let m = configurations::matching_request(request, object);
        let namespace = configurations::namespace(chain, fetched, request);
        let mut hooks = Vec::new();
        for configuration in stored {
            let webhooks = configuration.object.get("webhooks").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
            let conditions: std::sync::Arc<Conditions> = chain
                .compiled
                .get(self.resource, configuration, || webhooks.iter().map(policy::compile_webhook_match_conditions).collect());
            let name = crate::rest::object::meta_str(&configuration.object, "name");
            for (webhook, conditions) in webhooks.iter().zip(conditions.iter()) {
                let Some(matched) = matching::webhook_matches(webhook, &m, namespace, &served).map_err(|e| e.to_api_error())? else {
                    continue;
                };
                if !conditions.is_empty() {
                    match policy::match_conditions(conditions, FailurePolicy::of(Some(webhook)), &m, &matched) {
                        MatchConditionsOutcome::Match => {}
                        MatchConditionsOutcome::NoMatch { .. } => continue,
                        // Upstream fails closed here whatever the failure policy: the
                        // conditions already applied it to their own errors.
                        MatchConditionsOutcome::Error(e) => {
                            return Err(ApiError::forbidden(&request.group, &request.resource, &request.name, &e));
                        }
                    }
                }
                hooks.push(Hook::of(name, webhook, Presented::matched(&matched)));
            }
        }
        Ok((!hooks.is_empty()).then(|| WebhookCalls::new(self.mutating, hooks)))
    }
}

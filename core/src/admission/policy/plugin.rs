//! ValidatingAdmissionPolicy as a plugin of the chain: it reads the policies and their
//! bindings (from the watch caches), then the request's namespace and the param
//! objects of the policies that have a `paramKind`, and runs every matching policy
//! under each of its matching bindings as upstream's validating dispatcher does: the
//! first denial of all refuses the request, every warning reaches the client, audit
//! annotations reach the audit event.

use super::{compile, configuration_error, evaluate, publish_audit_annotations, CompiledPolicy, Decision, Denial, FailurePolicy, Input, ParamLookup};
use super::VALIDATION_FAILURE_ANNOTATION;
use crate::admission::configurations::{self, ServedResources};
use crate::admission::matching;
use crate::admission::reads::Stored;
use crate::admission::{Context, Fetched, Notes, Plugin, Read, Request, Write};
use crate::rest::object::{meta_str, Object};
use crate::status::ApiError;
use serde_json::Value;

#[derive(Debug)]
pub(crate) struct ValidatingAdmissionPolicy;

const POLICIES: &str = "validatingadmissionpolicies";
const BINDINGS: &str = "validatingadmissionpolicybindings";

/// Where the param objects of `policy` are stored: `None` when it has no
/// `paramKind`, `Some(None)` when that kind is not served.
fn param_prefix(chain: &Context, served: &ServedResources, policy: &Object) -> Option<Option<(String, bool)>> {
    let kind = policy.get("spec")?.get("paramKind").filter(|k| k.is_object())?;
    let text = |k: &str| kind.get(k).and_then(Value::as_str).unwrap_or("");
    let (group, version) = text("apiVersion").split_once('/').unwrap_or(("", text("apiVersion")));
    let resource = served.snapshot().and_then(|s| s.lookup_kind(group, version, text("kind")));
    Some(resource.map(|r| (r.storage_prefix(chain.storage_root(), None), r.namespaced)))
}

fn bound_to<'s>(bindings: &'s [Stored], policy: &'s str) -> impl Iterator<Item = &'s Stored> + 's {
    bindings.iter().filter(move |b| b.object.get("spec").and_then(|s| s.get("policyName")).and_then(Value::as_str) == Some(policy))
}

/// A policy's param objects as read.
struct StoredParams<'a> {
    namespaced: Option<bool>,
    stored: &'a [Stored],
}

impl ParamLookup for StoredParams<'_> {
    fn namespaced(&self) -> Option<bool> {
        self.namespaced
    }
    fn list(&self, namespace: &str) -> Vec<&Object> {
        super::evaluate::params_in(self.namespaced, self.stored.iter().map(|s| &*s.object), namespace)
    }
}

/// A policy that could not be set up for this request (`failed to configure …`):
/// a denial under `failurePolicy: Fail`, nothing under `Ignore`.
fn configuration_denial(policy: &CompiledPolicy, binding: Option<&str>, error: impl std::fmt::Display) -> Option<Denial> {
    if policy.failure_policy == FailurePolicy::Ignore {
        return None;
    }
    let what = if binding.is_some() { "binding" } else { "policy" };
    Some(Denial {
        policy: policy.name.clone(),
        binding: binding.map(str::to_owned),
        message: format!("failed to configure {what}: {error}"),
        reason: None,
    })
}

impl Plugin for ValidatingAdmissionPolicy {
    /// Unlike webhooks, policies see requests for the admission configurations too.
    fn handles(&self, _request: &Request) -> bool {
        true
    }

    fn validates(&self) -> bool {
        true
    }

    fn reads(&self, chain: &Context, _request: &Request, _object: &Object) -> Vec<Read> {
        vec![configurations::read_all(chain, POLICIES), configurations::read_all(chain, BINDINGS)]
    }

    fn more_reads(&self, chain: &Context, request: &Request, _object: &Object, fetched: &Fetched) -> Vec<Read> {
        let policies = configurations::stored(chain, fetched, POLICIES);
        let bindings = configurations::stored(chain, fetched, BINDINGS);
        if policies.is_empty() || bindings.is_empty() {
            return Vec::new();
        }
        let served = ServedResources::new(chain.lookup);
        let mut reads: Vec<Read> = configurations::namespace_read(chain, request).into_iter().collect();
        for policy in policies {
            if bound_to(bindings, meta_str(&policy.object, "name")).next().is_none() {
                continue;
            }
            if let Some(Some((prefix, _))) = param_prefix(chain, &served, &policy.object) {
                reads.push(Read::Objects { prefix });
            }
        }
        reads
    }

    fn validate(&self, chain: &Context, request: &Request, object: &Object, fetched: &Fetched, notes: &mut Notes) -> Result<Vec<Write>, ApiError> {
        let policies = configurations::stored(chain, fetched, POLICIES);
        chain.compiled.forget_others(POLICIES, policies);
        let bindings = configurations::stored(chain, fetched, BINDINGS);
        if policies.is_empty() || bindings.is_empty() {
            return Ok(Vec::new());
        }
        let served = ServedResources::new(chain.lookup);
        let m = configurations::matching_request(request, object);
        let namespace = configurations::namespace(chain, fetched, request);
        // A binding that applies cannot be judged without the namespace it sees.
        let missing_namespace = match (request.namespace.as_deref(), namespace) {
            (Some(ns), None) if !request.is_namespace() => Some(ns),
            _ => None,
        };
        let mut denials: Vec<Denial> = Vec::new();
        let mut failures: Vec<String> = Vec::new();
        for stored in policies {
            let name = meta_str(&stored.object, "name");
            let mut bound = bound_to(bindings, name).peekable();
            if bound.peek().is_none() {
                continue;
            }
            let policy = chain.compiled.get(POLICIES, stored, || compile(&stored.object));
            let constraints = stored.object.get("spec").and_then(|s| s.get("matchConstraints")).unwrap_or(&Value::Null);
            let matched = match matching::policy_matches(constraints, &m, namespace, &served) {
                Ok(Some(matched)) => matched,
                Ok(None) => continue,
                Err(e) => {
                    denials.extend(configuration_denial(&policy, None, e));
                    continue;
                }
            };
            let prefix = param_prefix(chain, &served, &stored.object);
            let params = StoredParams {
                namespaced: match &prefix {
                    None => Some(false),
                    Some(p) => p.as_ref().map(|(_, namespaced)| *namespaced),
                },
                stored: match &prefix {
                    Some(Some((p, _))) => fetched.objects(p),
                    _ => &[],
                },
            };
            if let Some(denial) = configuration_error(&policy, &params) {
                denials.push(denial);
                continue;
            }
            let input = Input { request: &m, matched: &matched, namespace };
            let mut decisions: Vec<Decision> = Vec::new();
            for binding in bound {
                match matching::binding_matches(&binding.object, &m, namespace, &served) {
                    Ok(true) => match missing_namespace {
                        Some(ns) => return Err(ApiError::not_found("", crate::resources::namespaces::RESOURCE, ns)),
                        None => decisions.push(evaluate(&policy, &binding.object, &input, &params)),
                    },
                    Ok(false) => {}
                    Err(e) => denials.extend(configuration_denial(&policy, Some(meta_str(&binding.object, "name")), e)),
                }
            }
            for decision in &decisions {
                denials.extend(decision.denials.iter().cloned());
                for warning in &decision.warnings {
                    notes.warn(warning.clone());
                }
                failures.extend(decision.validation_failures.iter().cloned());
            }
            for (key, value) in publish_audit_annotations(name, &decisions) {
                notes.audit_annotations.insert(key, value);
            }
        }
        if !failures.is_empty() {
            // One list of every failure, as upstream publishes them.
            let items: Vec<&str> = failures.iter().map(|f| f.trim_start_matches('[').trim_end_matches(']')).collect();
            notes.audit_annotations.insert(VALIDATION_FAILURE_ANNOTATION.to_owned(), format!("[{}]", items.join(",")));
        }
        match denials.first() {
            Some(denial) => Err(denial.to_api_error(&m)),
            None => Ok(Vec::new()),
        }
    }
}

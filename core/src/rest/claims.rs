//! Driving a kind's claims and releases ([`crate::resources::claims`]) from the REST
//! handlers: each storage operation the claim asks for runs as a step of the request.

use super::object::Object;
use super::scope::Scope;
use crate::effect::Step;
use crate::resources::claims::{Claim, ClaimContext};
use crate::status::ApiError;

impl Scope {
    /// What this request's claims may know.
    pub fn claim_context(&self) -> ClaimContext {
        ClaimContext {
            network: self.shared.config.service_network.clone(),
            storage_prefix: self.shared.config.storage_prefix.clone(),
            now: self.inputs.now,
            entropy: self.inputs.entropy,
            dry_run: self.dry_run(),
        }
    }
}

/// Run `claim` to its end, then continue with `next`.
pub(super) fn drive(
    scope: Scope,
    claim: Claim,
    next: impl FnOnce(Scope, Result<Object, ApiError>) -> Step + Send + 'static,
) -> Step {
    match claim {
        Claim::Done(obj) => next(scope, Ok(obj)),
        Claim::Refused(e) => next(scope, Err(e)),
        Claim::Storage(op, state) => Step::storage(op, move |done| drive(scope, state.resume(done), next)),
    }
}

/// Run a release, if there is one, then continue with `next`. A release that fails
/// part-way has logged what it could not give back; the request goes on.
pub(super) fn released(scope: Scope, release: Option<Claim>, next: impl FnOnce(Scope) -> Step + Send + 'static) -> Step {
    match release {
        None => next(scope),
        Some(claim) => drive(scope, claim, move |scope, _| next(scope)),
    }
}

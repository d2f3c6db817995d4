//! Admission as the REST handlers run it: a phase's [`Review`] driven to its end, its
//! reads answered from the watch caches when they can be and from storage
//! otherwise, its warnings kept for the response; then the handler's next state
//! ([`Admitted`]) goes on with the object as admission left it.

use super::object::Object;
use super::scope::Scope;
use crate::admission::{Answer, Lookup, Next, Notes, Operation, Phase, Read, Request, Review, Stored};
use crate::effect::{Continuation, PendingCall, PendingCalls, Step};
use crate::webhook::client_config::Endpoints;
use crate::shared::Shared;
use crate::status::ApiError;
use crate::storage::Completion;

/// What a handler does once a phase of admission has ended.
pub(super) trait Admitted: Send + 'static {
    /// Every plugin admitted `object` (as the mutating ones left it).
    fn admitted(self: Box<Self>, scope: Scope, object: Object) -> Step;

    /// A plugin refused it, or a read it needed failed.
    fn refused(self: Box<Self>, scope: Scope, error: ApiError) -> Step {
        scope.fail(error)
    }
}

impl Scope {
    /// What admission is told about this request's `operation` of a write; `old` is
    /// the stored object of an update or delete.
    pub(super) fn admission_request(&self, operation: Operation, name: &str, old: Option<Object>) -> Request {
        let r = self.resource();
        let (_, _, kind) = self.body_kind();
        let mut entropy = [0u8; 8];
        entropy.copy_from_slice(&self.inputs.entropy[24..32]);
        Request {
            operation,
            group: r.group.clone(),
            version: r.version.clone(),
            resource: r.plural.clone(),
            subresource: self.subresource.clone(),
            kind: kind.to_owned(),
            namespaced: r.namespaced,
            namespace: self.namespace.clone(),
            name: name.to_owned(),
            user: self.user.clone(),
            dry_run: self.dry_run(),
            old_object: old,
            now: self.inputs.now,
            entropy,
        }
    }

    /// Run admission's `phase` over `object` (the stored object of a delete), then
    /// `then`.
    pub(super) fn admit(self, phase: Phase, request: Request, object: Object, then: Box<dyn Admitted>) -> Step {
        drive(self, Review::new(phase, request, object, Notes::default()), then)
    }
}

fn drive(scope: Scope, review: Review, then: Box<dyn Admitted>) -> Step {
    let next = review.step(&scope.shared.admission, &Caches(&scope.shared));
    match next {
        Next::Done(review) => {
            scope.keep_notes(&review.notes);
            then.admitted(scope, review.object)
        }
        Next::Refused(e, notes) => {
            scope.keep_notes(&notes);
            then.refused(scope, e)
        }
        Next::Storage(op, review) => Step::storage(op, Reviewing { scope, review, then }),
        Next::Call(outbound, review) => Step::Call(
            outbound,
            PendingCall::new(move |outcome| called(scope, review, vec![outcome], then)),
        ),
        Next::Calls(outbound, review) => Step::Calls(
            outbound,
            PendingCalls::new(move |outcomes| called(scope, review, outcomes, then)),
        ),
    }
}

/// Go on once the review's calls are answered.
fn called(scope: Scope, review: Review, outcomes: Vec<crate::effect::CallOutcome>, then: Box<dyn Admitted>) -> Step {
    match review.resume_calls(outcomes) {
        Ok(review) => drive(scope, review, then),
        Err((e, notes)) => {
            scope.keep_notes(&notes);
            then.refused(scope, e)
        }
    }
}

/// A review waiting for storage.
struct Reviewing {
    scope: Scope,
    review: Review,
    then: Box<dyn Admitted>,
}

impl Continuation for Reviewing {
    fn resume(self: Box<Self>, done: Completion) -> Step {
        let Reviewing { scope, review, then } = *self;
        match review.resume(done) {
            Ok(review) => drive(scope, review, then),
            Err(e) => then.refused(scope, e),
        }
    }
}

/// Reads answered by the watch caches, when the resource's cache is fed.
struct Caches<'a>(&'a Shared);

impl Endpoints for Caches<'_> {
    fn resolve(&self, namespace: &str, name: &str, port: i64) -> Result<String, String> {
        let endpoints = super::conversion::CachedEndpoints { served: &self.0.served, root: &self.0.config.storage_prefix };
        endpoints.resolve(namespace, name, port)
    }
}

impl Lookup for Caches<'_> {
    fn served(&self) -> Option<crate::registry::Snapshot> {
        Some(self.0.served.snapshot())
    }

    fn allows(&self, attributes: crate::authorization::Attributes<'_>) -> bool {
        self.0.authorize(attributes) == crate::authorization::Decision::Allow
    }

    fn cached(&self, read: &Read) -> Option<Answer> {
        self.0.served.with_caches(|caches| match read {
            Read::Object { key } => {
                let found = caches.of_key(key)?.parsed_one(key)?;
                Some(Answer::Object(found.map(|(kv, object)| Stored::parsed(&kv, object))))
            }
            Read::Objects { prefix } => {
                let found = caches.of_key(prefix)?.parsed(prefix)?;
                Some(Answer::Objects(found.into_iter().map(|(kv, object)| Stored::parsed(&kv, object)).collect()))
            }
        })
    }
}

//! The guaranteed update: read an object, change it, compare-and-swap it in on the
//! revision read, and on a lost race make the change again on the newer object — as
//! kube-apiserver's store does for every write that starts from the stored object.
//!
//! Update, patch and apply (and through them the status and scale subresources),
//! binding a pod, and both writes of an eviction (the budget, then the pod) run this
//! one loop; each says only what its change is and what its outcome answers.

use super::admit::Admitted;
use super::object::Object;
use super::scope::Scope;
use crate::admission::{Operation, Phase};
use crate::effect::Step;
use crate::status::ApiError;
use crate::storage::{Completion, KeyValue, StorageError, StorageOp, StorageOutput};

/// How many times a lost race is tried again unless a caller says otherwise.
pub(super) const DEFAULT_RETRIES: u32 = 16;

/// How a guaranteed update ended.
#[derive(Debug)]
pub(super) enum Outcome {
    /// The change is written: the value as stored now.
    Stored(KeyValue),
    /// The change leaves the stored bytes as they are: nothing written, and this is the
    /// value it was made from.
    Unchanged(KeyValue),
    /// A dry run: the changed object and the stored value it was made from; nothing
    /// written.
    DryRun { changed: Object, current: KeyValue },
    /// The change refused the object (or the stored object could not be read).
    Refused(ApiError),
    /// The write failed, or lost its last race: the storage's last answer.
    Failed(Completion),
}

/// One guaranteed update in flight: its change and where its retries stand.
pub(super) struct GuaranteedUpdate<C> {
    change: C,
    dry_run: bool,
    /// Writes tried so far that lost their race.
    attempt: u32,
    /// How many lost races are tried again before the update gives up.
    retries: u32,
    /// The change is a client's write of the object (update, patch, apply): admission
    /// and the kind's update strategy run on it ([`super::update::after_mutation`]).
    admitted: bool,
}

impl<C> std::fmt::Debug for GuaranteedUpdate<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuaranteedUpdate")
            .field("dry_run", &self.dry_run)
            .field("attempt", &self.attempt)
            .field("retries", &self.retries)
            .field("admitted", &self.admitted)
            .finish_non_exhaustive()
    }
}

impl<C> GuaranteedUpdate<C>
where
    C: FnMut(&Scope, &Object, &KeyValue) -> Result<Object, ApiError> + Send + 'static,
{
    /// An update that makes `change` of the stored object (given the value it was read
    /// as), written for real, retried [`DEFAULT_RETRIES`] times.
    pub(super) fn new(change: C) -> Self {
        GuaranteedUpdate {
            change,
            dry_run: false,
            attempt: 0,
            retries: DEFAULT_RETRIES,
            admitted: false,
        }
    }

    /// Run admission and the kind's update strategy on each change made.
    pub(super) fn admitted(mut self) -> Self {
        self.admitted = true;
        self
    }

    /// Try again up to `retries` times after losing a race.
    pub(super) fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    /// Make and check the change but do not write it.
    pub(super) fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// Read the object the request names (NotFound when missing), then run.
    pub(super) fn read(
        self,
        scope: Scope,
        finish: impl FnOnce(Scope, Outcome) -> Step + Send + 'static,
    ) -> Step {
        scope.with_current(move |scope, current| self.run(scope, current, finish))
    }

    /// Run from `current`, a value already read: make the change, admit it when asked
    /// to, claim what it needs, then write.
    pub(super) fn run(
        mut self,
        scope: Scope,
        current: KeyValue,
        finish: impl FnOnce(Scope, Outcome) -> Step + Send + 'static,
    ) -> Step {
        let old = match scope.read(&current) {
            Ok(old) => old,
            Err(e) => return finish(scope, Outcome::Refused(ApiError::internal(e))),
        };
        let changed = match (self.change)(&scope, &old, &current) {
            Ok(changed) => changed,
            Err(e) => return finish(scope, Outcome::Refused(e)),
        };
        if self.admitted {
            let request = scope.admission_request(Operation::Update, &scope.name, Some(old.clone()));
            let then = Mutated { update: self, current, old, finish };
            return scope.admit(Phase::Mutating, request, changed, Box::new(then));
        }
        self.claim(scope, current, old, changed, finish)
    }

    /// Claim what the change needs (a Service's new cluster IPs and node ports), then
    /// write.
    fn claim(
        self,
        scope: Scope,
        current: KeyValue,
        old: Object,
        changed: Object,
        finish: impl FnOnce(Scope, Outcome) -> Step + Send + 'static,
    ) -> Step {
        let mut ctx = scope.claim_context();
        ctx.dry_run = self.dry_run;
        let claim = scope.resource().strategy.claim(&ctx, changed, Some(&old));
        super::claims::drive(scope, claim, move |scope, claimed| match claimed {
            Ok(changed) => self.write(scope, current, old, changed, finish),
            Err(e) => finish(scope, Outcome::Refused(e)),
        })
    }

    /// Write `changed` over `current` (read as `old`), and give back what the
    /// object no longer holds once written, or what was claimed for it when the write
    /// does not happen.
    fn write(
        mut self,
        scope: Scope,
        current: KeyValue,
        old: Object,
        changed: Object,
        finish: impl FnOnce(Scope, Outcome) -> Step + Send + 'static,
    ) -> Step {
        if self.dry_run {
            return finish(scope, Outcome::DryRun { changed, current });
        }
        let strategy = scope.resource.strategy.clone();
        let ctx = scope.claim_context();
        if strategy.finished_deleting(&changed) {
            let release = strategy.release(&ctx, &old, None);
            return self.delete_finished(scope, current, release, finish);
        }
        let written = strategy.release(&ctx, &old, Some(&changed));
        let not_written = strategy.release(&ctx, &changed, Some(&old));
        let value = scope.stored(changed);
        if value == current.value {
            return finish(scope, Outcome::Unchanged(current));
        }
        let op = StorageOp::Update {
            key: current.key.clone(),
            value,
            expected_revision: current.mod_revision,
        };
        scope.then(op, move |scope, done| match done {
            Ok(StorageOutput::Written(kv)) => {
                super::claims::released(scope, written, move |scope| finish(scope, Outcome::Stored(kv)))
            }
            Err(StorageError::Conflict { current, .. }) if self.attempt < self.retries => {
                self.attempt += 1;
                super::claims::released(scope, not_written, move |scope| self.run(scope, current, finish))
            }
            other => super::claims::released(scope, not_written, move |scope| finish(scope, Outcome::Failed(other))),
        })
    }

    /// The change took the last finalizer from an object being deleted: delete it,
    /// and answer with the object as it was last stored, as upstream's store does.
    fn delete_finished(
        mut self,
        scope: Scope,
        current: KeyValue,
        release: Option<crate::resources::claims::Claim>,
        finish: impl FnOnce(Scope, Outcome) -> Step + Send + 'static,
    ) -> Step {
        let op = StorageOp::Delete {
            key: current.key.clone(),
            expected_revision: Some(current.mod_revision),
        };
        scope.then(op, move |scope, done| match done {
            Ok(StorageOutput::Deleted { prev, .. }) => {
                super::claims::released(scope, release, move |scope| finish(scope, Outcome::Stored(prev)))
            }
            Err(StorageError::Conflict { current, .. }) if self.attempt < self.retries => {
                self.attempt += 1;
                self.run(scope, current, finish)
            }
            other => finish(scope, Outcome::Failed(other)),
        })
    }
}

/// A change in mutating admission.
struct Mutated<C, F> {
    update: GuaranteedUpdate<C>,
    current: KeyValue,
    old: Object,
    finish: F,
}

/// A change the kind's strategy made, in validating admission.
struct Validated<C, F> {
    update: GuaranteedUpdate<C>,
    current: KeyValue,
    old: Object,
    finish: F,
}

impl<C, F> std::fmt::Debug for Mutated<C, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mutated").field("update", &self.update).field("revision", &self.current.mod_revision).finish_non_exhaustive()
    }
}

impl<C, F> std::fmt::Debug for Validated<C, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validated").field("update", &self.update).field("revision", &self.current.mod_revision).finish_non_exhaustive()
    }
}

impl<C, F> Admitted for Mutated<C, F>
where
    C: FnMut(&Scope, &Object, &KeyValue) -> Result<Object, ApiError> + Send + 'static,
    F: FnOnce(Scope, Outcome) -> Step + Send + 'static,
{
    fn admitted(self: Box<Self>, scope: Scope, changed: Object) -> Step {
        let Mutated { update, current, old, finish } = *self;
        match super::update::after_mutation(&scope, &old, changed) {
            Ok(changed) => {
                let request = scope.admission_request(Operation::Update, &scope.name, Some(old.clone()));
                let then = Validated { update, current, old, finish };
                scope.admit(Phase::Validating, request, changed, Box::new(then))
            }
            Err(e) => finish(scope, Outcome::Refused(e)),
        }
    }

    fn refused(self: Box<Self>, scope: Scope, error: ApiError) -> Step {
        (self.finish)(scope, Outcome::Refused(error))
    }
}

impl<C, F> Admitted for Validated<C, F>
where
    C: FnMut(&Scope, &Object, &KeyValue) -> Result<Object, ApiError> + Send + 'static,
    F: FnOnce(Scope, Outcome) -> Step + Send + 'static,
{
    fn admitted(self: Box<Self>, scope: Scope, mut changed: Object) -> Step {
        let Validated { update, current, old, finish } = *self;
        // The writer owns what it sent, not what admission or the strategy added.
        scope.record_update(Some(&old), &mut changed);
        update.claim(scope, current, old, changed, finish)
    }

    fn refused(self: Box<Self>, scope: Scope, error: ApiError) -> Step {
        (self.finish)(scope, Outcome::Refused(error))
    }
}

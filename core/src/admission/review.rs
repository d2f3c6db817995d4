//! One admission phase over one write, as a state machine: each enabled plugin in
//! turn gathers what it reads (from the caches, else by asking the caller to read
//! storage), decides, and for a validating plugin has its writes made (each a
//! compare-and-swap; a lost race reads again from storage and decides again).
//! The caller drives it with [`Review::step`] until it is [`Next::Done`] or
//! [`Next::Refused`].

use super::plugin::{Context, Notes, Plugin, Write};
use super::reads::{Answer, Fetched, Lookup, Read};
use super::request::Request;
use super::webhooks::WebhookCalls;
use super::AdmissionChain;
use crate::effect::{CallOutcome, Outbound};
use crate::rest::object::Object;
use crate::status::ApiError;
use crate::storage::{Completion, StorageError, StorageOp, StorageOutput};
use std::collections::VecDeque;

/// How many lost races a plugin's writes are tried again after.
const WRITE_RETRIES: u32 = 16;

/// Which phase a review runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Mutating,
    Validating,
}

/// Where the current plugin stands.
#[derive(Debug)]
enum Stage {
    /// Not yet asked what it reads.
    Start,
    /// Reading what it asked for; those not yet answered.
    Reading { wanted: Vec<Read> },
    /// Calling webhooks; one call in flight when the caller holds the review.
    Calling { calls: WebhookCalls },
    /// Its writes, the first one in flight when the caller holds the review.
    Writing { writes: VecDeque<Write> },
}

/// A phase of admission in progress.
#[derive(Debug)]
pub struct Review {
    phase: Phase,
    /// The current plugin: its index among the phase's plugins.
    plugin: usize,
    stage: Stage,
    /// Read from storage, not the caches: a write of this plugin lost a race.
    fresh: bool,
    lost_races: u32,
    fetched: Fetched,
    pub request: Request,
    pub object: Object,
    pub notes: Notes,
}

/// What a review needs next.
#[derive(Debug)]
pub enum Next {
    /// Every plugin admitted the object (as the mutating ones left it).
    Done(Review),
    Refused(ApiError, Notes),
    /// Run this storage read or write, then [`Review::resume`].
    Storage(StorageOp, Review),
    /// Send this request, then [`Review::resume_calls`] with its answer.
    Call(Outbound, Review),
    /// Send these requests side by side, then [`Review::resume_calls`].
    Calls(Vec<Outbound>, Review),
}

impl Review {
    /// A review of `object` (the stored object for a delete) in `phase`.
    pub fn new(phase: Phase, request: Request, object: Object, notes: Notes) -> Review {
        Review {
            phase,
            plugin: 0,
            stage: Stage::Start,
            fresh: false,
            lost_races: 0,
            fetched: Fetched::default(),
            request,
            object,
            notes,
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Go as far as possible without storage.
    pub fn step(mut self, chain: &AdmissionChain, lookup: &dyn Lookup) -> Next {
        let chain = &Context { chain, lookup };
        loop {
            let Some(plugin) = chain.phase_plugins(self.phase).get(self.plugin).copied() else {
                return Next::Done(self);
            };
            match std::mem::replace(&mut self.stage, Stage::Start) {
                Stage::Start => {
                    if !plugin.handles(&self.request) {
                        self.plugin += 1;
                        continue;
                    }
                    let wanted = plugin.reads(chain, &self.request, &self.object);
                    self.stage = Stage::Reading { wanted };
                }
                Stage::Reading { mut wanted } => {
                    while let Some(read) = wanted.first().cloned() {
                        if self.fetched.has(&read) {
                            wanted.remove(0);
                            continue;
                        }
                        // An object the cache does not hold is looked up in storage, as
                        // upstream's plugins look a namespace up live when their lister
                        // lacks it: this server's cache may not have caught up with a
                        // write made through another server.
                        let cached = match self.fresh {
                            true => None,
                            false => lookup.cached(&read).filter(|answer| !matches!(answer, Answer::Object(None))),
                        };
                        match cached {
                            Some(answer) => {
                                self.fetched.put(read, answer);
                                wanted.remove(0);
                            }
                            None => {
                                let op = match &read {
                                    Read::Object { key } => StorageOp::Get { key: key.clone() },
                                    Read::Objects { prefix } => StorageOp::list_latest(prefix.clone()),
                                };
                                self.stage = Stage::Reading { wanted };
                                return Next::Storage(op, self);
                            }
                        }
                    }
                    let more: Vec<Read> = plugin
                        .more_reads(chain, &self.request, &self.object, &self.fetched)
                        .into_iter()
                        .filter(|r| !self.fetched.has(r))
                        .collect();
                    if !more.is_empty() {
                        self.stage = Stage::Reading { wanted: more };
                        continue;
                    }
                    match plugin.calls(chain, &self.request, &self.object, &self.fetched) {
                        Ok(Some(calls)) => {
                            self.stage = Stage::Calling { calls };
                            continue;
                        }
                        Ok(None) => {}
                        Err(e) => return Next::Refused(e, self.notes),
                    }
                    match self.decide(chain, plugin) {
                        Ok(writes) if writes.is_empty() || self.request.dry_run => self.next_plugin(),
                        Ok(writes) => self.stage = Stage::Writing { writes: writes.into() },
                        Err(e) => return Next::Refused(e, self.notes),
                    }
                }
                Stage::Calling { mut calls } => match calls.next(&self.request, &self.object, lookup, &mut self.notes) {
                    Ok(mut outbound) if outbound.len() == 1 => {
                        self.stage = Stage::Calling { calls };
                        return Next::Call(outbound.remove(0), self);
                    }
                    Ok(outbound) if !outbound.is_empty() => {
                        self.stage = Stage::Calling { calls };
                        return Next::Calls(outbound, self);
                    }
                    Ok(_) => match self.decide(chain, plugin) {
                        Ok(_) => self.next_plugin(),
                        Err(e) => return Next::Refused(e, self.notes),
                    },
                    Err(e) => return Next::Refused(e, self.notes),
                },
                Stage::Writing { writes } => {
                    let Some(write) = writes.front() else {
                        self.next_plugin();
                        continue;
                    };
                    let op = StorageOp::Update {
                        key: write.key.clone(),
                        value: bytes::Bytes::from(serde_json::to_vec(&write.value).expect("JSON values serialize")),
                        expected_revision: write.expected_revision,
                    };
                    self.stage = Stage::Writing { writes };
                    return Next::Storage(op, self);
                }
            }
        }
    }

    /// Continue with the outcome of the storage operation the last step asked for.
    pub fn resume(mut self, done: Completion) -> Result<Review, ApiError> {
        match std::mem::replace(&mut self.stage, Stage::Start) {
            Stage::Reading { mut wanted } => {
                let read = wanted.remove(0);
                let answer = match done {
                    Ok(StorageOutput::Got { kv, .. }) => Answer::from_kvs(&read, kv.as_slice()),
                    Ok(StorageOutput::Listed(page)) => Answer::from_kvs(&read, &page.items),
                    Ok(other) => return Err(ApiError::internal(format!("unexpected storage answer {other:?}"))),
                    Err(e) => return Err(ApiError::internal(e)),
                };
                self.fetched.put(read, answer);
                self.stage = Stage::Reading { wanted };
            }
            Stage::Writing { mut writes } => match done {
                Ok(_) => {
                    writes.pop_front();
                    self.stage = Stage::Writing { writes };
                }
                Err(StorageError::Conflict { .. }) if self.lost_races < WRITE_RETRIES => {
                    // Someone else changed what this plugin wrote: decide again on
                    // what storage holds now.
                    self.lost_races += 1;
                    self.fresh = true;
                    self.fetched.clear();
                    self.stage = Stage::Start;
                }
                Err(e) => return Err(ApiError::internal(e)),
            },
            calling @ Stage::Calling { .. } => self.stage = calling,
            Stage::Start => {}
        }
        Ok(self)
    }

    /// Continue with the answers to the calls the last step asked for, in order.
    pub fn resume_calls(mut self, outcomes: Vec<CallOutcome>) -> Result<Review, (ApiError, Notes)> {
        if let Stage::Calling { calls } = &mut self.stage {
            if let Err(e) = calls.answered(outcomes, &self.request, &mut self.object, &mut self.notes) {
                return Err((e, self.notes));
            }
        }
        Ok(self)
    }

    /// Run the current plugin over what it read.
    fn decide(&mut self, chain: &Context, plugin: &dyn Plugin) -> Result<Vec<Write>, ApiError> {
        match self.phase {
            Phase::Mutating => plugin
                .mutate(chain, &self.request, &mut self.object, &self.fetched, &mut self.notes)
                .map(|()| Vec::new()),
            Phase::Validating => plugin.validate(chain, &self.request, &self.object, &self.fetched, &mut self.notes),
        }
    }

    fn next_plugin(&mut self) {
        self.plugin += 1;
        self.stage = Stage::Start;
        self.fresh = false;
        self.fetched.clear();
    }
}

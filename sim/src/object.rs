//! The sequential model of one object in the API, as a client sees it: created once,
//! then replaced (optionally only at a given resourceVersion) until deleted; every
//! write that changes it gets a resourceVersion above every one before it; a
//! consistent read sees the latest write.
//!
//! Values are write identities (each write carries a value of its own), so a read says
//! which write it saw. A write whose outcome is not known may have set the value
//! without the client learning its resourceVersion: the state then holds the value with
//! its version unknown, and the first read that sees it learns it.

use crate::linearizability::Model;

/// A resourceVersion (the store's revision of the write).
pub type Version = u64;

/// What a client asked of an object (named by `key`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub key: String,
    pub action: Action,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Create with `value`.
    Create { value: u64 },
    /// Replace with `value` (update or patch), if the object is at `precondition`.
    Update { value: u64, precondition: Option<Version> },
    /// Server-side apply with `force`: create with `value`, or replace with it.
    Apply { value: u64 },
    /// Delete, if the object is at `precondition`.
    Delete { precondition: Option<Version> },
    /// A consistent read (GET, or the object's entry in a consistent LIST).
    Read,
}

/// What the server answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Created or updated: the object's new resourceVersion.
    Written(Version),
    Deleted,
    /// 409 AlreadyExists (create).
    Exists,
    /// 409 Conflict (a precondition that did not hold).
    Conflict,
    NotFound,
    /// The value read, and its resourceVersion.
    Read { value: u64, version: Version },
}

/// The object as it stands: absent, or a value at a version (not known yet when set by
/// a write whose answer was lost); and the highest version it has had.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct State {
    pub current: Option<(u64, Option<Version>)>,
    pub highest: Version,
}

/// The model of one object; operations on different keys are independent.
#[derive(Debug, Default)]
pub struct ObjectModel;

impl ObjectModel {
    /// `state` with `value` written at `version` (unknown: `None`), if the version is
    /// above every one before.
    fn written(state: &State, value: u64, version: Option<Version>) -> Option<State> {
        if version.is_some_and(|v| v <= state.highest) {
            return None;
        }
        Some(State { current: Some((value, version)), highest: version.unwrap_or(state.highest).max(state.highest) })
    }

    /// Whether `precondition` holds for the current version; one not yet known may be it.
    fn holds(current: Option<Version>, precondition: Option<Version>) -> bool {
        match (precondition, current) {
            (None, _) | (Some(_), None) => true,
            (Some(p), Some(c)) => p == c,
        }
    }
}

impl Model for ObjectModel {
    type State = State;
    type Input = Input;
    type Output = Output;

    fn init(&self) -> State {
        State::default()
    }

    fn step(&self, state: &State, input: &Input, output: Option<&Output>) -> Option<State> {
        let current = state.current;
        match (&input.action, output) {
            (Action::Create { value }, Some(Output::Written(v))) if current.is_none() => Self::written(state, *value, Some(*v)),
            (Action::Create { .. }, Some(Output::Exists)) if current.is_some() => Some(state.clone()),
            (Action::Create { value }, None) => match current {
                None => Self::written(state, *value, None),
                Some(_) => Some(state.clone()),
            },
            (Action::Update { value, precondition }, Some(Output::Written(v))) => {
                let (_, at) = current?;
                // A precondition met by a version not yet known fixes it.
                if !Self::holds(at, *precondition) {
                    return None;
                }
                Self::written(state, *value, Some(*v))
            }
            (Action::Update { precondition, .. } | Action::Delete { precondition }, Some(Output::Conflict)) => {
                let (_, at) = current?;
                // A version not yet known might have been any other.
                (precondition.is_some() && !(at.is_some() && at == *precondition)).then(|| state.clone())
            }
            (Action::Update { .. } | Action::Delete { .. } | Action::Read, Some(Output::NotFound)) => {
                current.is_none().then(|| state.clone())
            }
            (Action::Update { value, precondition }, None) => match current {
                Some((_, at)) if Self::holds(at, *precondition) => Self::written(state, *value, None),
                _ => Some(state.clone()),
            },
            (Action::Delete { precondition }, Some(Output::Deleted)) => {
                let (_, at) = current?;
                Self::holds(at, *precondition).then_some(State { current: None, highest: state.highest })
            }
            (Action::Delete { precondition }, None) => match current {
                Some((_, at)) if Self::holds(at, *precondition) => Some(State { current: None, highest: state.highest }),
                _ => Some(state.clone()),
            },
            (Action::Read, Some(Output::Read { value, version })) => match current {
                Some((v, Some(at))) if v == *value && at == *version => Some(state.clone()),
                // The first read of a value whose write's answer was lost learns its version.
                Some((v, None)) if v == *value && *version > state.highest => {
                    Some(State { current: Some((v, Some(*version))), highest: *version })
                }
                _ => None,
            },
            (Action::Apply { value }, Some(Output::Written(v))) => Self::written(state, *value, Some(*v)),
            (Action::Apply { value }, None) => Self::written(state, *value, None),
            (Action::Read, None) => Some(state.clone()),
            _ => None,
        }
    }

    fn partition(&self, input: &Input) -> String {
        input.key.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linearizability::{check, Operation, Verdict};

    fn op(action: Action, output: Option<Output>, call: u64, ret: Option<u64>) -> Operation<Input, Output> {
        Operation { client: 0, input: Input { key: "default/a".into(), action }, output, call, ret }
    }

    #[test]
    fn a_create_update_read_delete_history_is_linearizable() {
        let history = [
            op(Action::Create { value: 1 }, Some(Output::Written(5)), 0, Some(1)),
            op(Action::Update { value: 2, precondition: Some(5) }, Some(Output::Written(7)), 2, Some(3)),
            op(Action::Update { value: 3, precondition: Some(5) }, Some(Output::Conflict), 4, Some(5)),
            op(Action::Read, Some(Output::Read { value: 2, version: 7 }), 6, Some(7)),
            op(Action::Delete { precondition: None }, Some(Output::Deleted), 8, Some(9)),
            op(Action::Read, Some(Output::NotFound), 10, Some(11)),
        ];
        assert_eq!(check(&ObjectModel, &history, 100_000), Verdict::Linearizable);
    }

    #[test]
    fn an_apply_creates_or_replaces_and_a_lost_one_may_not_have_happened() {
        let history = [
            op(Action::Apply { value: 1 }, Some(Output::Written(5)), 0, Some(1)),
            op(Action::Apply { value: 2 }, Some(Output::Written(7)), 2, Some(3)),
            op(Action::Apply { value: 3 }, None, 4, None),
            op(Action::Read, Some(Output::Read { value: 2, version: 7 }), 6, Some(7)),
        ];
        assert_eq!(check(&ObjectModel, &history, 100_000), Verdict::Linearizable);
        let stale = [
            op(Action::Apply { value: 1 }, Some(Output::Written(5)), 0, Some(1)),
            op(Action::Apply { value: 2 }, Some(Output::Written(7)), 2, Some(3)),
            op(Action::Read, Some(Output::Read { value: 1, version: 5 }), 4, Some(5)),
        ];
        assert!(matches!(check(&ObjectModel, &stale, 100_000), Verdict::Illegal { .. }));
    }

    #[test]
    fn versions_only_grow() {
        let history = [
            op(Action::Create { value: 1 }, Some(Output::Written(5)), 0, Some(1)),
            op(Action::Update { value: 2, precondition: None }, Some(Output::Written(5)), 2, Some(3)),
        ];
        assert!(matches!(check(&ObjectModel, &history, 100_000), Verdict::Illegal { .. }));
    }

    #[test]
    fn a_lost_answer_is_learnt_from_a_later_read() {
        let history = [
            op(Action::Create { value: 1 }, Some(Output::Written(5)), 0, Some(1)),
            op(Action::Update { value: 2, precondition: Some(5) }, None, 2, None),
            op(Action::Read, Some(Output::Read { value: 2, version: 9 }), 10, Some(11)),
            op(Action::Update { value: 3, precondition: Some(9) }, Some(Output::Written(12)), 12, Some(13)),
        ];
        assert_eq!(check(&ObjectModel, &history, 100_000), Verdict::Linearizable);
    }
}
